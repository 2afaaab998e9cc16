"""Integrations of fa2gen with other libraries (each imported on its own)."""

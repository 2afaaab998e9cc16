#!/bin/sh
# Prints the path of a Python that imports PyTorch, for make test's PyTorch
# layer tests (tests/python_torch); or says on stderr why there is none and
# exits 1. In order: $FA2_TORCH_PYTHON; python3 when it has torch; the
# virtual environment in the cache folder; else it installs PyTorch there
# (pip, about a minute and 4.6 GB: PyPI's Linux wheel brings the CUDA
# libraries, which the tests load but never use), unless FA2_NO_TORCH_INSTALL=1.
set -u
TORCH_VERSION=2.11.0
has_torch() { "$1" -c 'import torch' >/dev/null 2>&1; }

if [ -n "${FA2_TORCH_PYTHON:-}" ]; then
  has_torch "$FA2_TORCH_PYTHON" && { echo "$FA2_TORCH_PYTHON"; exit 0; }
  echo "FA2_TORCH_PYTHON=$FA2_TORCH_PYTHON cannot import torch" >&2
  exit 1
fi
if has_torch python3; then command -v python3; exit 0; fi
venv=${XDG_CACHE_HOME:-$HOME/.cache}/fa2gen/torch-venv-$TORCH_VERSION
if has_torch "$venv/bin/python"; then echo "$venv/bin/python"; exit 0; fi
if [ "${FA2_NO_TORCH_INSTALL:-0}" = 1 ]; then
  echo "PyTorch not found and FA2_NO_TORCH_INSTALL=1 (set FA2_TORCH_PYTHON, or unset it to install torch==$TORCH_VERSION into $venv)" >&2
  exit 1
fi
echo "installing torch==$TORCH_VERSION into $venv (once; about a minute)" >&2
if python3 -m venv "$venv" >&2 && "$venv/bin/pip" install -q "torch==$TORCH_VERSION" >&2 &&
   has_torch "$venv/bin/python"; then
  echo "$venv/bin/python"
  exit 0
fi
rm -rf "$venv"
echo "could not install torch==$TORCH_VERSION with pip into $venv (no network or no python3-venv?): pip install torch==$TORCH_VERSION, or set FA2_TORCH_PYTHON" >&2
exit 1

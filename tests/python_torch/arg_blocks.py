"""The argument blocks libfa2rt receives, compared across paths (the Python operators, the
native module's eager functions and its dispatcher kernels): a helper of the tests here."""


def fields(args, outputs):
    """args' fields, each pointer to a named tensor (allocated per call) replaced by its name."""
    out = {}
    for name, _ in type(args)._fields_:
        value = getattr(args, name)
        if hasattr(value, "_fields_"):
            value = tuple(getattr(value, f) for f, _ in value._fields_)
            if value[0] in outputs:
                value = (outputs[value[0]],) + value[1:]
        elif name in ("lse", "workspace") or value in outputs:
            value = name if value else value  # fresh per call: only whether it is set
        out[name] = value
    return out

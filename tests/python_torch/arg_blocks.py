"""The argument blocks libfa2rt receives, compared across paths (the Python operators, the
native module's eager functions and its dispatcher kernels): helpers of the tests here."""
import ctypes

from fa2gen._lib import BwdArgs, FwdArgs, lib

FAKE_CONTEXT = 0x1000  # a non-null fa2_context* the recorders never read
_ENTRY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


def address(fn):
    """A ctypes function's address, as the native module's init takes it."""
    return ctypes.cast(fn, ctypes.c_void_p).value


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


class Recorder:
    """ctypes stand-ins for fa2_forward and fa2_backward: each call's (kind, (ctx, stream),
    a copy of its block) in .calls, .status returned. python_context(): an fa2gen.Context for
    the Python implementations (patched in as _ops._context) that hands its blocks to the
    same stand-ins, counted in .python_calls."""

    def __init__(self):
        self.calls, self.python_calls, self.status = [], [], 0
        self.entries = (self._entry("forward", FwdArgs), self._entry("backward", BwdArgs))

    def _entry(self, kind, Args):
        def entry(ctx, args, stream):  # (an exception here would be printed, not raised)
            block = Args.from_buffer_copy(ctypes.string_at(args, ctypes.sizeof(Args)))
            self.calls.append((kind, (ctx, stream), block))
            return self.status
        return _ENTRY(entry)

    def init(self, module):
        """module's libfa2rt entry points: these stand-ins beside the library's own workspace
        size and last error; device 0's context FAKE_CONTEXT."""
        h = lib()
        module.init(address(self.entries[0]), address(self.entries[1]),
                    address(h.fa2_backward_workspace_size), address(h.fa2_last_error))
        module.set_context(0, FAKE_CONTEXT)

    def python_context(self):
        recorder = self

        class PythonContext:
            def forward(self, args, stream):
                recorder.python_calls.append("forward")
                recorder.entries[0](FAKE_CONTEXT, ctypes.addressof(args), None)

            def backward(self, args, stream):
                recorder.python_calls.append("backward")
                recorder.entries[1](FAKE_CONTEXT, ctypes.addressof(args), None)
        return PythonContext()

// fa2gen's operators in C++: what _ops.fwd and _ops.varlen_fwd's implementations do
// (outputs, alignment copies, the argument block, the launch) and the autograd node whose
// backward does what _ops.bwd's does, with no Python between the call and the launch and
// none in the autograd engine's backward; and the four attention operators' CUDA kernels
// for the dispatcher (compiled graphs). At 0.1-0.3 ms of GPU work the Python path's host
// time (150-230 us a call on an H200's host) was the difference to FlashAttention-2
// (bench/NOTES.md "Session 24").
//
// Built on first use by _native.py against the PyTorch that imports it. Python keeps
// every check with a message: an argument this code would not take as the Python
// implementation does (another device, dtype, shape of rng or sinks, a device without a
// context yet) returns None, and the caller runs the Python implementation, which raises
// the same error or makes the context. A failed fa2_* call returns its status (int), which
// Python turns into Fa2Error with fa2_last_error's message. The tracing paths (Dynamo,
// AOTAutograd, modes, functorch) go through torch.ops' dispatcher, whose CUDA kernels are
// register_kernels' (below).
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros_like.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/library.h>

#include "fa2.h"

namespace py = pybind11;
using at::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

namespace {

// libfa2rt's entry points, from the library Python loaded (ctypes), or a test's recorder.
struct Api {
  fa2_status (*forward)(fa2_context *, const fa2_fwd_args *, void *);
  fa2_status (*backward)(fa2_context *, const fa2_bwd_args *, void *);
  size_t (*workspace_size)(const fa2_bwd_args *);
  const char *(*last_error)(void);
} api;

// Each device's shared fa2gen.Context (fa2gen.context(index)), set by Python.
constexpr int kMaxDevices = 64;
std::array<fa2_context *, kMaxDevices> contexts{};

struct Failure {  // an fa2_* call's status
  int status;
};

// Fa2Error for an fa2_* status, as the Python implementation raises it (fa2gen._lib.check).
// From the autograd node too: the engine hands a pybind11 error to backward()'s caller as it is.
[[noreturn]] void raise_status(int status) {
  py::gil_scoped_acquire gil;
  py::module_::import("fa2gen._lib").attr("check")(status);
  throw std::logic_error("fa2gen._lib.check returned on a failed status");
}

// The operators' arguments but the differentiable tensors (q, k, v, sinks), which
// Function::apply must see one by one. An undefined Tensor is None.
struct Call {
  bool varlen = false;
  Tensor cu_q, cu_k;
  int64_t max_q = 0, max_k = 0;
  bool causal = false;
  int stab = 0;
  double beta = 0, eps = 0, scale = 0;
  bool want_o32 = false, deterministic = false;
  int64_t window_left = -1, window_right = -1;
  Tensor alibi;
  double softcap = 0, dropout_p = 0;
  Tensor rng;
};

int stab_code(const std::string &name) {
  static const char *const names[] = {"none", "paper", "robust", "tuned", "balanced"};
  for (int i = 0; i < 5; i++)
    if (name == names[i]) return i;
  return -1;
}

fa2_dtype dtype_code(const Tensor &t) {
  return t.scalar_type() == at::kHalf ? FA2_FP16 : FA2_BF16;
}

int device_index(const Tensor &t) {  // CPU tensors: bench/host_path.py and the tests
  return t.is_cuda() ? t.device().index() : 0;
}

// The tensor as the kernels can read it: last dim contiguous, 16-byte aligned rows
// (a copy only when it is not; packed QKV views pass as they are). _ops._aligned.
Tensor aligned(const Tensor &t) {
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  const int64_t last = t.dim() - 1;
  bool ok = strides[last] == 1 && reinterpret_cast<uintptr_t>(t.const_data_ptr()) % 16 == 0;
  for (int64_t i = 0; ok && i < last; i++) ok = sizes[i] <= 1 || strides[i] % 8 == 0;
  return ok ? t : t.clone(at::MemoryFormat::Contiguous);
}

fa2_tensor c_tensor(const Tensor &t, bool varlen) {  // (B, N, H, d) or (total, H, d)
  const auto s = t.strides();
  void *data = const_cast<void *>(t.const_data_ptr());
  if (varlen) return fa2_tensor{data, dtype_code(t), 0, s[0], s[1]};
  return fa2_tensor{data, dtype_code(t), s[0], s[1], s[2]};
}

template <class T>
T *ptr(const Tensor &t) {
  return t.defined() ? static_cast<T *>(const_cast<void *>(t.const_data_ptr())) : nullptr;
}

// The fields fa2_fwd_args and fa2_bwd_args share: sizes, mode and modifiers.
template <class Args>
void fill_call(Args &a, const Call &c, const Tensor &q, const Tensor &k, const Tensor &sinks) {
  if (c.varlen) {
    a.batch = static_cast<int>(c.cu_q.size(0) - 1);
    a.seqlen_q = static_cast<int>(c.max_q);
    a.seqlen_k = static_cast<int>(c.max_k);
    a.heads_q = static_cast<int>(q.size(1));
    a.heads_kv = static_cast<int>(k.size(1));
    a.head_dim = static_cast<int>(q.size(2));
    a.cu_seqlens_q = ptr<const int>(c.cu_q);
    a.cu_seqlens_k = ptr<const int>(c.cu_k);
    a.total_q = static_cast<int>(q.size(0));
    a.total_k = static_cast<int>(k.size(0));
  } else {
    a.batch = static_cast<int>(q.size(0));
    a.seqlen_q = static_cast<int>(q.size(1));
    a.seqlen_k = static_cast<int>(k.size(1));
    a.heads_q = static_cast<int>(q.size(2));
    a.heads_kv = static_cast<int>(k.size(2));
    a.head_dim = static_cast<int>(q.size(3));
  }
  a.scale = static_cast<float>(c.scale);
  a.causal = c.causal;
  a.stab = static_cast<fa2_stab>(c.stab);
  a.beta = c.beta;
  a.eps = c.eps;
  a.window = c.window_left >= 0 || c.window_right >= 0;
  a.window_left = static_cast<int>(c.window_left);
  a.window_right = static_cast<int>(c.window_right);
  a.alibi_slopes = ptr<const float>(c.alibi);
  a.alibi_batch_stride = c.alibi.defined() && c.alibi.dim() == 2 ? c.alibi.stride(0) : 0;
  a.softcap = static_cast<float>(c.softcap);
  // balanced draws its rounding from rng: with p = 0 there, rng seeds only that
  a.dropout = c.rng.defined() && !(c.stab == FA2_STAB_BALANCED && c.dropout_p == 0);
  a.dropout_p = static_cast<float>(c.dropout_p);
  a.dropout_rng = ptr<const unsigned long long>(c.rng);
  a.sinks = ptr<const float>(sinks);
}

// fn on the current stream of q's device, with that device current (PyTorch's rule for
// its own operators, as the Python path's torch.cuda.device).
template <class Args>
void launch(fa2_status (*fn)(fa2_context *, const Args *, void *), const Args &a, const Tensor &q) {
  fa2_context *ctx = contexts[device_index(q)];
  TORCH_CHECK(ctx != nullptr, "fa2gen: no context for ", q.device());
  void *stream = nullptr;
  c10::OptionalDeviceGuard guard;
  if (q.is_cuda()) {
    guard.reset_device(q.device());
    const auto *impl = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
    stream = impl->getStreamNativeHandle(impl->getStream(q.device()));
  }
  const fa2_status status = fn(ctx, &a, stream);
  if (status != FA2_OK) throw Failure{status};
}

// _ops.fwd / _ops.varlen_fwd's implementation: o, lse, o32.
variable_list run_forward(const Tensor &q0, const Tensor &k0, const Tensor &v0,
                          const Tensor &sinks, const Call &c) {
  const auto f32 = q0.options().dtype(at::kFloat);
  Tensor o = at::empty(q0.sizes(), q0.options());
  Tensor lse = c.varlen ? at::empty({q0.size(1), q0.size(0)}, f32)
                        : at::empty({q0.size(0), q0.size(2), q0.size(1)}, f32);
  Tensor o32 = c.want_o32 ? at::empty(q0.sizes(), f32) : at::empty({0}, f32);
  const Tensor q = aligned(q0), k = aligned(k0), v = aligned(v0);
  fa2_fwd_args a{};
  a.q = c_tensor(q, c.varlen);
  a.k = c_tensor(k, c.varlen);
  a.v = c_tensor(v, c.varlen);
  a.o = c_tensor(o, c.varlen);
  a.lse = ptr<float>(lse);
  a.o_fp32 = c.want_o32 ? ptr<float>(o32) : nullptr;
  fill_call(a, c, q, k, sinks);
  launch(api.forward, a, q);
  return {o, lse, o32};
}

// _ops.bwd / _ops.varlen_bwd's implementation: dq, dk, dv, dsinks.
variable_list run_backward(const Tensor &dout0, const Tensor &q0, const Tensor &k0,
                           const Tensor &v0, const Tensor &o0, const Tensor &lse,
                           const Tensor &o32, const Tensor &sinks, const Call &c) {
  // contiguous whatever the inputs' strides: the kernels write whole 16-byte rows
  Tensor dq = at::empty(q0.sizes(), q0.options());
  Tensor dk = at::empty(k0.sizes(), k0.options());
  Tensor dv = at::empty(v0.sizes(), v0.options());
  const auto f32 = q0.options().dtype(at::kFloat);
  Tensor dsinks = sinks.defined() ? at::empty(sinks.sizes(), f32) : at::empty({0}, f32);
  const Tensor q = aligned(q0), k = aligned(k0), v = aligned(v0), o = aligned(o0),
               dout = aligned(dout0);
  const bool precise = o32.numel() > 0;
  fa2_bwd_args a{};
  a.q = c_tensor(q, c.varlen);
  a.k = c_tensor(k, c.varlen);
  a.v = c_tensor(v, c.varlen);
  a.o = c_tensor(o, c.varlen);
  a.dout = c_tensor(dout, c.varlen);
  a.dq = c_tensor(dq, c.varlen);
  a.dk = c_tensor(dk, c.varlen);
  a.dv = c_tensor(dv, c.varlen);
  a.lse = ptr<const float>(lse);
  a.delta = precise ? FA2_DELTA_FP32 : FA2_DELTA_LOWP;
  a.o_fp32 = precise ? ptr<const float>(o32) : nullptr;
  a.deterministic = c.deterministic;
  fill_call(a, c, q, k, sinks);
  a.dsinks = sinks.defined() ? ptr<float>(dsinks) : nullptr;
  // from PyTorch's allocator: inside a CUDA-graph capture, the graph's pool
  Tensor ws = at::empty({static_cast<int64_t>(api.workspace_size(&a))},
                        q0.options().dtype(at::kByte));
  a.workspace = ptr<void>(ws);
  a.workspace_bytes = static_cast<size_t>(ws.numel());
  launch(api.backward, a, q);
  return {dq, dk, dv, dsinks};
}

}  // namespace

namespace fa2gen {  // the node's name in a graph: torch::autograd::CppNode<fa2gen::Attention>

// The forward with its autograd node: _ops' setup_context and backward in C++.
struct Attention : torch::autograd::Function<Attention> {
  static variable_list forward(AutogradContext *ctx, const Tensor &q, const Tensor &k,
                               const Tensor &v, const std::optional<Tensor> &sinks,
                               const Call *c) {
    const Tensor s = sinks.value_or(Tensor());
    variable_list out = run_forward(q, k, v, s, *c);
    // rng: the forward's mask
    ctx->save_for_backward({q, k, v, out[0], out[1], out[2], s, c->alibi, c->rng, c->cu_q,
                            c->cu_k});
    auto &d = ctx->saved_data;
    d["varlen"] = c->varlen;
    d["max_q"] = c->max_q;
    d["max_k"] = c->max_k;
    d["causal"] = c->causal;
    d["stab"] = static_cast<int64_t>(c->stab);
    d["beta"] = c->beta;
    d["eps"] = c->eps;
    d["scale"] = c->scale;
    d["deterministic"] = c->deterministic;
    d["window_left"] = c->window_left;
    d["window_right"] = c->window_right;
    d["softcap"] = c->softcap;
    d["dropout_p"] = c->dropout_p;
    ctx->mark_non_differentiable({out[1], out[2]});
    ctx->set_materialize_grads(false);  // nobody's gradient of lse or o32: no zeros made
    return out;
  }

  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    const variable_list s = ctx->get_saved_variables();
    const auto &d = ctx->saved_data;
    Call c;
    c.varlen = d.at("varlen").toBool();
    c.max_q = d.at("max_q").toInt();
    c.max_k = d.at("max_k").toInt();
    c.causal = d.at("causal").toBool();
    c.stab = static_cast<int>(d.at("stab").toInt());
    c.beta = d.at("beta").toDouble();
    c.eps = d.at("eps").toDouble();
    c.scale = d.at("scale").toDouble();
    c.deterministic = d.at("deterministic").toBool();
    c.window_left = d.at("window_left").toInt();
    c.window_right = d.at("window_right").toInt();
    c.softcap = d.at("softcap").toDouble();
    c.dropout_p = d.at("dropout_p").toDouble();
    c.alibi = s[7];
    c.rng = s[8];
    c.cu_q = s[9];
    c.cu_k = s[10];
    const Tensor &o = s[3], &sinks = s[6];
    const Tensor dout = grads[0].defined() ? grads[0] : at::zeros_like(o);  // only lse/o32 used
    variable_list g;
    try {
      g = run_backward(dout, s[0], s[1], s[2], o, s[4], s[5], sinks, c);
    } catch (const Failure &f) {
      raise_status(f.status);  // Fa2Error, as the Python path's backward raised it
    }
    return {g[0], g[1], g[2], sinks.defined() ? g[3] : Tensor(), Tensor()};
  }
};

}  // namespace fa2gen

namespace {

bool one_device(const Tensor &q, std::initializer_list<const Tensor *> others) {
  for (const Tensor *t : others)
    if (t->defined() && t->device() != q.device()) return false;
  return true;
}

bool rank_is(int64_t dims, std::initializer_list<const Tensor *> tensors) {
  for (const Tensor *t : tensors)
    if (t->dim() != dims) return false;
  return true;
}

bool has_context(const Tensor &q) {
  const int index = device_index(q);
  return index >= 0 && index < kMaxDevices && contexts[index] != nullptr;
}

bool sinks_fit(const Tensor &sinks, int64_t heads) {
  return !sinks.defined() || (sinks.scalar_type() == at::kFloat && sinks.dim() == 1 &&
                              sinks.size(0) == heads && sinks.stride(0) == 1);
}

// What both passes need to be taken here (after their tensors' ranks): a known mode, a
// kernel dtype, sinks of one fp32 logit a head, a context for q's device.
bool call_takes(const Tensor &q, const Tensor &sinks, const Call &c) {
  const auto dtype = q.scalar_type();
  return c.stab >= 0 && (dtype == at::kBFloat16 || dtype == at::kHalf) &&
         sinks_fit(sinks, q.size(c.varlen ? 1 : 2)) && has_context(q);
}

// Whether this code takes a forward as the Python implementation would: else the Python
// implementation runs (its checks' errors, or the device's first context).
bool forward_takes(const Tensor &q, const Tensor &k, const Tensor &v, const Tensor &sinks,
                   const Call &c) {
  if (!rank_is(c.varlen ? 3 : 4, {&q, &k, &v})) return false;
  const bool rng_ok = !c.rng.defined() || (c.rng.scalar_type() == at::kLong &&
                                           c.rng.dim() == 1 && c.rng.size(0) == 2 &&
                                           c.rng.stride(0) == 1);
  return rng_ok && call_takes(q, sinks, c) &&
         one_device(q, {&k, &v, &sinks, &c.alibi, &c.rng, &c.cu_q, &c.cu_k});
}

// The same for a backward (whose Python implementation does not check rng).
bool backward_takes(const Tensor &dout, const Tensor &q, const Tensor &k, const Tensor &v,
                    const Tensor &o, const Tensor &lse, const Tensor &o32, const Tensor &sinks,
                    const Call &c) {
  return rank_is(c.varlen ? 3 : 4, {&dout, &q, &k, &v, &o}) && call_takes(q, sinks, c) &&
         one_device(q, {&dout, &k, &v, &o, &lse, &o32, &sinks, &c.alibi, &c.rng, &c.cu_q,
                        &c.cu_k});
}

// The forward of an eager call: (o, lse, o32), an fa2_* status, or None for the Python
// implementation (an argument it must check with its message, or no context yet).
py::object take_forward(const Tensor &q, const Tensor &k, const Tensor &v, const Tensor &sinks,
                        const std::string &stab, Call &c) {
  c.stab = stab_code(stab);
  if (!forward_takes(q, k, v, sinks, c)) return py::none();
  const bool grad = at::GradMode::is_enabled() &&
                    (q.requires_grad() || k.requires_grad() || v.requires_grad() ||
                     (sinks.defined() && sinks.requires_grad()));
  variable_list out;
  int status = FA2_OK;
  {
    // without the GIL, as ctypes called libfa2rt: a variant's first call compiles it (NVRTC,
    // seconds), and the program's other threads run meanwhile
    py::gil_scoped_release no_gil;
    try {
      if (grad) {
        std::optional<Tensor> s;
        if (sinks.defined()) s = sinks;
        out = fa2gen::Attention::apply(q, k, v, s, &c);
      } else {
        out = run_forward(q, k, v, sinks, c);
      }
    } catch (const Failure &f) {
      status = f.status;
    }
  }
  if (status != FA2_OK) return py::int_(status);
  return py::make_tuple(out[0], out[1], out[2]);
}

Tensor or_undefined(const std::optional<Tensor> &t) { return t.value_or(Tensor()); }

// The arguments fwd and varlen_fwd share, after their tensors and sizes.
Call shared_call(bool causal, double beta, double eps, double scale, bool want_o32,
                 bool deterministic, int64_t window_left, int64_t window_right,
                 const std::optional<Tensor> &alibi, double softcap, double dropout_p,
                 const std::optional<Tensor> &rng) {
  Call c;
  c.causal = causal;
  c.beta = beta;
  c.eps = eps;
  c.scale = scale;
  c.want_o32 = want_o32;
  c.deterministic = deterministic;
  c.window_left = window_left;
  c.window_right = window_right;
  c.alibi = or_undefined(alibi);
  c.softcap = softcap;
  c.dropout_p = dropout_p;
  c.rng = or_undefined(rng);
  return c;
}

// The varlen operators' sequences: offsets and longest lengths.
Call with_sequences(Call c, const Tensor &cu_q, const Tensor &cu_k, int64_t max_q, int64_t max_k) {
  c.varlen = true;
  c.cu_q = cu_q;
  c.cu_k = cu_k;
  c.max_q = max_q;
  c.max_k = max_k;
  return c;
}

// ---- The operators' kernels for the dispatcher (torch.compile's graphs, modes, tracing's
// real calls): the same code, registered for the CUDA key in place of the Python ones
// (_ops.use_native_kernels). What the code does not take goes to the Python implementation
// under the GIL, whose exceptions (ValueError, Fa2Error, ...) reach the caller as they are.
struct PythonImpls {
  py::object fwd, bwd, varlen_fwd, varlen_bwd;
};
PythonImpls *python_impls = nullptr;  // never freed: a kernel may run at interpreter exit

using Fwd = std::tuple<Tensor, Tensor, Tensor>;
using Bwd = std::tuple<Tensor, Tensor, Tensor, Tensor>;
using OptTensor = std::optional<Tensor>;

Fwd forward_kernel(const Tensor &q, const Tensor &k, const Tensor &v, Call &c,
                   const std::string &stab, const OptTensor &sinks,
                   const std::function<py::object()> &call_python) {
  c.stab = stab_code(stab);
  const Tensor s = or_undefined(sinks);
  if (forward_takes(q, k, v, s, c)) {
    try {
      variable_list out = run_forward(q, k, v, s, c);
      return {out[0], out[1], out[2]};
    } catch (const Failure &f) {
      raise_status(f.status);
    }
  }
  py::gil_scoped_acquire gil;
  return call_python().cast<Fwd>();
}

Fwd fwd_kernel(const Tensor &q, const Tensor &k, const Tensor &v, bool causal,
               c10::string_view stab, double beta, double eps, double scale, bool want_o32,
               bool deterministic, int64_t window_left, int64_t window_right,
               const OptTensor &alibi, double softcap, double dropout_p, const OptTensor &rng,
               const OptTensor &sinks) {
  Call c = shared_call(causal, beta, eps, scale, want_o32, deterministic, window_left,
                       window_right, alibi, softcap, dropout_p, rng);
  const std::string name(stab);
  return forward_kernel(q, k, v, c, name, sinks, [&] {
    return python_impls->fwd(q, k, v, causal, name, beta, eps, scale, want_o32, deterministic,
                             window_left, window_right, alibi, softcap, dropout_p, rng, sinks);
  });
}

Fwd varlen_fwd_kernel(const Tensor &q, const Tensor &k, const Tensor &v, const Tensor &cu_q,
                      const Tensor &cu_k, int64_t max_q, int64_t max_k, bool causal,
                      c10::string_view stab, double beta, double eps, double scale,
                      bool want_o32, bool deterministic, int64_t window_left,
                      int64_t window_right, const OptTensor &alibi, double softcap,
                      double dropout_p, const OptTensor &rng, const OptTensor &sinks) {
  Call c = with_sequences(shared_call(causal, beta, eps, scale, want_o32, deterministic,
                                      window_left, window_right, alibi, softcap, dropout_p, rng),
                          cu_q, cu_k, max_q, max_k);
  const std::string name(stab);
  return forward_kernel(q, k, v, c, name, sinks, [&] {
    return python_impls->varlen_fwd(q, k, v, cu_q, cu_k, max_q, max_k, causal, name, beta, eps,
                                    scale, want_o32, deterministic, window_left, window_right,
                                    alibi, softcap, dropout_p, rng, sinks);
  });
}

Bwd backward_kernel(const Tensor &dout, const Tensor &q, const Tensor &k, const Tensor &v,
                    const Tensor &o, const Tensor &lse, const Tensor &o32, Call &c,
                    const std::string &stab, const OptTensor &sinks,
                    const std::function<py::object()> &call_python) {
  c.stab = stab_code(stab);
  const Tensor s = or_undefined(sinks);
  if (backward_takes(dout, q, k, v, o, lse, o32, s, c)) {
    try {
      variable_list g = run_backward(dout, q, k, v, o, lse, o32, s, c);
      return {g[0], g[1], g[2], g[3]};
    } catch (const Failure &f) {
      raise_status(f.status);
    }
  }
  py::gil_scoped_acquire gil;
  return call_python().cast<Bwd>();
}

Bwd bwd_kernel(const Tensor &dout, const Tensor &q, const Tensor &k, const Tensor &v,
               const Tensor &o, const Tensor &lse, const Tensor &o32, bool causal,
               c10::string_view stab, double beta, double eps, double scale, bool deterministic,
               int64_t window_left, int64_t window_right, const OptTensor &alibi, double softcap,
               double dropout_p, const OptTensor &rng, const OptTensor &sinks) {
  Call c = shared_call(causal, beta, eps, scale, false, deterministic, window_left, window_right,
                       alibi, softcap, dropout_p, rng);
  const std::string name(stab);
  return backward_kernel(dout, q, k, v, o, lse, o32, c, name, sinks, [&] {
    return python_impls->bwd(dout, q, k, v, o, lse, o32, causal, name, beta, eps, scale,
                             deterministic, window_left, window_right, alibi, softcap, dropout_p,
                             rng, sinks);
  });
}

Bwd varlen_bwd_kernel(const Tensor &dout, const Tensor &q, const Tensor &k, const Tensor &v,
                      const Tensor &o, const Tensor &lse, const Tensor &o32, const Tensor &cu_q,
                      const Tensor &cu_k, int64_t max_q, int64_t max_k, bool causal,
                      c10::string_view stab, double beta, double eps, double scale,
                      bool deterministic, int64_t window_left, int64_t window_right,
                      const OptTensor &alibi, double softcap, double dropout_p,
                      const OptTensor &rng, const OptTensor &sinks) {
  Call c = with_sequences(shared_call(causal, beta, eps, scale, false, deterministic,
                                      window_left, window_right, alibi, softcap, dropout_p, rng),
                          cu_q, cu_k, max_q, max_k);
  const std::string name(stab);
  return backward_kernel(dout, q, k, v, o, lse, o32, c, name, sinks, [&] {
    return python_impls->varlen_bwd(dout, q, k, v, o, lse, o32, cu_q, cu_k, max_q, max_k, causal,
                                    name, beta, eps, scale, deterministic, window_left,
                                    window_right, alibi, softcap, dropout_p, rng, sinks);
  });
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "fa2gen's operators in C++: the eager forward, its autograd node, the dispatcher's "
            "kernels (_native.py builds it)";
  m.def("init", [](uintptr_t forward, uintptr_t backward, uintptr_t workspace_size,
                   uintptr_t last_error) {
    api.forward = reinterpret_cast<decltype(api.forward)>(forward);
    api.backward = reinterpret_cast<decltype(api.backward)>(backward);
    api.workspace_size = reinterpret_cast<decltype(api.workspace_size)>(workspace_size);
    api.last_error = reinterpret_cast<decltype(api.last_error)>(last_error);
  }, "libfa2rt's fa2_forward, fa2_backward, fa2_backward_workspace_size, fa2_last_error");
  m.def("set_context", [](int index, uintptr_t ctx) {
    TORCH_CHECK(index >= 0 && index < kMaxDevices, "fa2gen: device index ", index,
                " out of 0..", kMaxDevices - 1);
    contexts[index] = reinterpret_cast<fa2_context *>(ctx);
  }, "the fa2_context of a device (0: none)");
  m.def("fwd", [](const Tensor &q, const Tensor &k, const Tensor &v, bool causal,
                  const std::string &stab, double beta, double eps, double scale, bool want_o32,
                  bool deterministic, int64_t window_left, int64_t window_right,
                  const std::optional<Tensor> &alibi, double softcap, double dropout_p,
                  const std::optional<Tensor> &rng, const std::optional<Tensor> &sinks) {
    Call c = shared_call(causal, beta, eps, scale, want_o32, deterministic, window_left,
                         window_right, alibi, softcap, dropout_p, rng);
    return take_forward(q, k, v, or_undefined(sinks), stab, c);
  }, "torch.ops.fa2gen.fwd's eager call");
  m.def("varlen_fwd", [](const Tensor &q, const Tensor &k, const Tensor &v, const Tensor &cu_q,
                         const Tensor &cu_k, int64_t max_q, int64_t max_k, bool causal,
                         const std::string &stab, double beta, double eps, double scale,
                         bool want_o32, bool deterministic, int64_t window_left,
                         int64_t window_right, const std::optional<Tensor> &alibi,
                         double softcap, double dropout_p, const std::optional<Tensor> &rng,
                         const std::optional<Tensor> &sinks) {
    Call c = with_sequences(shared_call(causal, beta, eps, scale, want_o32, deterministic,
                                        window_left, window_right, alibi, softcap, dropout_p,
                                        rng),
                            cu_q, cu_k, max_q, max_k);
    return take_forward(q, k, v, or_undefined(sinks), stab, c);
  }, "torch.ops.fa2gen.varlen_fwd's eager call");
  m.def("register_kernels", [](py::object fwd, py::object bwd, py::object varlen_fwd,
                               py::object varlen_bwd, const std::string &key) {
    // the Python implementations, for what this code leaves to them
    if (!python_impls) python_impls = new PythonImpls{fwd, bwd, varlen_fwd, varlen_bwd};
    static std::vector<std::unique_ptr<torch::Library>> registrations;
    auto lib = std::make_unique<torch::Library>(torch::Library::IMPL, "fa2gen",
                                                c10::parseDispatchKey(key), __FILE__, __LINE__);
    lib->impl("fwd", TORCH_FN(fwd_kernel));
    lib->impl("bwd", TORCH_FN(bwd_kernel));
    lib->impl("varlen_fwd", TORCH_FN(varlen_fwd_kernel));
    lib->impl("varlen_bwd", TORCH_FN(varlen_bwd_kernel));
    registrations.push_back(std::move(lib));
  }, "the four operators' kernels for dispatch key `key` (\"CUDA\"), the Python implementations "
     "(fwd, bwd, varlen_fwd, varlen_bwd) taking what they leave");
}

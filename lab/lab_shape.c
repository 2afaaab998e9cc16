/* Shapes: sizes, the softmax scale and the causal mask (bottom-right aligned). */
#include <math.h>

#include "lab.h"

double lab_scale(const lab_shape *s) { return s->scale != 0 ? s->scale : 1.0 / sqrt((double)s->head_dim); }

long long lab_q_elems(const lab_shape *s) {
  return (long long)s->batch * s->seqlen_q * s->heads_q * s->head_dim;
}

long long lab_kv_elems(const lab_shape *s) {
  return (long long)s->batch * s->seqlen_k * s->heads_kv * s->head_dim;
}

long long lab_rows(const lab_shape *s) { return (long long)s->batch * s->heads_q * s->seqlen_q; }

int lab_visible(const lab_shape *s, int i) {
  if (!s->causal) return s->seqlen_k;
  long long n = (long long)i + s->seqlen_k - s->seqlen_q + 1;
  return n < 0 ? 0 : n > s->seqlen_k ? s->seqlen_k : (int)n;
}

const char *lab_dtype_name(lab_dtype t) { return t == LAB_FP16 ? "fp16" : "bf16"; }

const char *lab_mode_name(lab_mode m) {
  return m == LAB_PAPER ? "paper" : m == LAB_ROBUST ? "robust" : "none";
}

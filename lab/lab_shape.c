/* Shapes: sizes, the softmax scale, the masks (causal, window; bottom-right aligned)
 * and the score modifiers (softcap, ALiBi). */
#include <math.h>
#include <stdio.h>

#include "lab.h"

double lab_scale(const lab_shape *s) { return s->scale != 0 ? s->scale : 1.0 / sqrt((double)s->head_dim); }

long long lab_q_elems(const lab_shape *s) {
  return (long long)s->batch * s->seqlen_q * s->heads_q * s->head_dim;
}

long long lab_kv_elems(const lab_shape *s) {
  return (long long)s->batch * s->seqlen_k * s->heads_kv * s->head_dim;
}

long long lab_rows(const lab_shape *s) { return (long long)s->batch * s->heads_q * s->seqlen_q; }

void lab_key_range(const lab_shape *s, int i, int *lo, int *hi) {
  const long long diag = (long long)s->seqlen_k - s->seqlen_q;
  long long a = 0, b = s->seqlen_k; /* [a, b) */
  if (s->causal && i + diag + 1 < b) b = i + diag + 1;
  if (s->window && s->window_right >= 0 && i + diag + s->window_right + 1 < b)
    b = i + diag + s->window_right + 1;
  if (s->window && s->window_left >= 0 && i + diag - s->window_left > a) a = i + diag - s->window_left;
  if (b < 0) b = 0;
  if (a > b) a = b;
  *lo = (int)a, *hi = (int)b;
}

int lab_visible(const lab_shape *s, int i) {
  int lo, hi;
  lab_key_range(s, i, &lo, &hi);
  return hi - lo;
}

double lab_modified(const lab_shape *s, int h, int i, int j, double x) {
  if (s->softcap > 0) x = s->softcap * tanh(x / s->softcap);
  if (s->alibi) x -= s->alibi[h] * fabs((double)i + s->seqlen_k - s->seqlen_q - j);
  return x;
}

float lab_modified_raw(const lab_shape *s, int h, int i, int j, float raw) {
  const float scale = (float)lab_scale(s);
  if (s->softcap > 0) {
    const float cap_in = scale / (float)s->softcap, cap_out = (float)s->softcap / scale;
    raw = cap_out * tanhf(raw * cap_in);
  }
  if (s->alibi) raw -= s->alibi[h] / scale * fabsf((float)(i + s->seqlen_k - s->seqlen_q - j));
  return raw;
}

const char *lab_dtype_name(lab_dtype t) { return t == LAB_FP16 ? "fp16" : "bf16"; }

const char *lab_mode_name(lab_mode m) {
  return m == LAB_PAPER ? "paper" : m == LAB_ROBUST ? "robust" : m == LAB_BALANCED ? "balanced" : "none";
}

void lab_mode_label(lab_mode m, const lab_numerics *n, char *buf, int size) {
  const lab_norm l = n ? n->norm : LAB_NORM_FP32;
  snprintf(buf, (size_t)size, "%s%s%s", lab_mode_name(m),
           l == LAB_NORM_ROUNDED ? "+lrnd" : l == LAB_NORM_MAXRES ? "+lmax" : "",
           !n || m == LAB_BALANCED ? "" /* its own rounding */
           : n->out == LAB_OUT_SR  ? "+sr"
           : n->out == LAB_OUT_SRH ? "+srh"
           : n->out == LAB_OUT_ROW ? "+row"
                                   : "");
}

/* The backward kernels' arithmetic on the CPU (templates/bwd.cu.tpl):
 * delta in fp32 from the O it is given, P recomputed from the fp32 LSE,
 * P and dS rounded to the dtype before their products, fp32 accumulators,
 * each gradient rounded once at the end (dQ and dK after the scale).
 * Modifiers as the kernels apply them: softcap then ALiBi on the raw score,
 * dS times softcap's derivative 1 - tanh^2 (tanh from the capped score), the
 * window's keys only; dsinks from LSE and delta with float64 sums (fa2_bwd_sink). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

static float dot32(const float *a, const float *b, int d) {
  double s = 0; /* one rounding to fp32 stands for the tensor cores' fp32 sum */
  for (int i = 0; i < d; i++) s += (double)a[i] * b[i];
  return (float)s;
}

void lab_fa2_delta(const lab_shape *s, const float *o, const float *dout, float *delta) {
  const int d = s->head_dim;
  for (int b = 0; b < s->batch; b++)
    for (int h = 0; h < s->heads_q; h++)
      for (int i = 0; i < s->seqlen_q; i++) {
        const long long off = (((long long)b * s->seqlen_q + i) * s->heads_q + h) * d;
        float sum = 0.f;
        for (int t = 0; t < d; t++) sum = fmaf(dout[off + t], o[off + t], sum);
        delta[((long long)b * s->heads_q + h) * s->seqlen_q + i] = sum;
      }
}

int lab_fa2_backward(const lab_shape *s, lab_dtype t, const float *q, const float *k,
                     const float *v, const float *dout, const float *lse, const float *delta,
                     float *dq, float *dk, float *dv) {
  const int d = s->head_dim, group = s->heads_q / s->heads_kv;
  const float scale = (float)lab_scale(s), c = scale * 1.44269504f;
  const long long nkv = lab_kv_elems(s);
  float *acc_k = calloc((size_t)nkv, sizeof(float)), *acc_v = calloc((size_t)nkv, sizeof(float));
  float *acc_q = malloc(sizeof(float) * d);
  int rc = -1;
  if (!acc_k || !acc_v || !acc_q) goto out;
  for (int b = 0; b < s->batch; b++)
    for (int h = 0; h < s->heads_q; h++)
      for (int i = 0; i < s->seqlen_q; i++) {
        const long long qo = (((long long)b * s->seqlen_q + i) * s->heads_q + h) * d;
        const long long r = ((long long)b * s->heads_q + h) * s->seqlen_q + i;
        const float l2 = lse[r] * 1.44269504f, dl = delta[r];
        int lo, hi;
        lab_key_range(s, i, &lo, &hi);
        memset(acc_q, 0, sizeof(float) * d);
        for (int j = lo; j < hi; j++) {
          const long long ko = (((long long)b * s->seqlen_k + j) * s->heads_kv + h / group) * d;
          float sc = dot32(q + qo, k + ko, d), dcap = 1.f;
          if (s->softcap > 0) { /* the capped score first: the derivative comes from it */
            const float cap_in = scale / (float)s->softcap, cap_out = (float)s->softcap / scale;
            sc = cap_out * tanhf(sc * cap_in);
            dcap = 1.f - (sc * cap_in) * (sc * cap_in);
          }
          if (s->alibi) sc -= s->alibi[h] / scale * fabsf((float)(i + s->seqlen_k - s->seqlen_q - j));
          const float p = exp2f(fmaf(sc, c, -l2));
          const float ds = p * (dot32(dout + qo, v + ko, d) - dl) * dcap;
          const float pr = lab_round(p, t), dsr = lab_round(ds, t);
          for (int x = 0; x < d; x++) { /* exact products: one rounding, as fused */
            acc_v[ko + x] += pr * dout[qo + x];
            acc_k[ko + x] += dsr * q[qo + x];
            acc_q[x] += dsr * k[ko + x];
          }
        }
        for (int x = 0; x < d; x++) dq[qo + x] = lab_round(acc_q[x] * scale, t);
      }
  for (long long x = 0; x < nkv; x++) {
    dk[x] = lab_round(acc_k[x] * scale, t);
    dv[x] = lab_round(acc_v[x], t);
  }
  rc = 0;
out:
  free(acc_k);
  free(acc_v);
  free(acc_q);
  return rc;
}

void lab_fa2_dsinks(const lab_shape *s, const float *lse, const float *delta, float *dsinks) {
  for (int h = 0; h < s->heads_q; h++) {
    double sum = 0;
    for (int b = 0; b < s->batch; b++)
      for (int i = 0; i < s->seqlen_q; i++) {
        const long long r = ((long long)b * s->heads_q + h) * s->seqlen_q + i;
        sum += (double)(exp2f((s->sinks[h] - lse[r]) * 1.44269504f) * delta[r]);
      }
    dsinks[h] = (float)-sum;
  }
}

/* The float64 reference: the forward against closed forms and a naive
 * softmax written here, the LSE against log(sum(exp)), and every gradient
 * element against finite differences of L = sum(dO * O). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

/* Element offset of row `pos` of head `h` in (batch, seqlen, heads, head_dim). */
static long long idx(int b, int pos, int h, int seqlen, int heads, int d) {
  return (((long long)b * seqlen + pos) * heads + h) * d;
}

static void *xcalloc(long long n, size_t size) {
  void *p = calloc((size_t)n, size);
  cr_assert_not_null(p);
  return p;
}

/* Multiples of 2^-12 in [-2, 2): a step of 2^-10 or 2^-11 either way stays
 * exactly representable in float. */
static void fill(float *x, long long n, lab_rng *r) {
  for (long long i = 0; i < n; i++) x[i] = (float)(floor(lab_rng_uniform(r) * 16384) / 4096 - 2);
}

typedef struct inputs {
  lab_shape s;
  float *q, *k, *v, *dout;
} inputs;

static inputs make(lab_shape s, uint64_t seed) {
  inputs in = {.s = s};
  lab_rng r;
  lab_rng_seed(&r, seed);
  in.q = xcalloc(lab_q_elems(&s), sizeof(float));
  in.k = xcalloc(lab_kv_elems(&s), sizeof(float));
  in.v = xcalloc(lab_kv_elems(&s), sizeof(float));
  in.dout = xcalloc(lab_q_elems(&s), sizeof(float));
  fill(in.q, lab_q_elems(&s), &r);
  fill(in.k, lab_kv_elems(&s), &r);
  fill(in.v, lab_kv_elems(&s), &r);
  fill(in.dout, lab_q_elems(&s), &r);
  return in;
}

static void release(inputs *in) {
  free(in->q), free(in->k), free(in->v), free(in->dout);
}

/* Keys query i sees, written out here rather than taken from lab_visible. */
static int sees(const lab_shape *s, int i, int j) {
  const int diag = s->seqlen_k - s->seqlen_q;
  if (s->window && ((s->window_left >= 0 && j < i + diag - s->window_left) ||
                    (s->window_right >= 0 && j > i + diag + s->window_right)))
    return 0;
  return !s->causal || j <= i + diag;
}

/* Straight from the definition, one query row at a time: the scaled score
 * capped (c tanh(x / c)), ALiBi's penalty, the sink a term of the sum. */
static void naive_forward(const lab_shape *s, const float *q, const float *k, const float *v,
                          double *o, double *lse) {
  const int d = s->head_dim, nq = s->seqlen_q, nk = s->seqlen_k;
  const double scale = s->scale != 0 ? s->scale : 1 / sqrt(d);
  double *sc = xcalloc(nk, sizeof(double));
  for (int b = 0; b < s->batch; b++)
    for (int h = 0; h < s->heads_q; h++)
      for (int i = 0; i < nq; i++) {
        const int hk = h / (s->heads_q / s->heads_kv);
        const float *qi = q + idx(b, i, h, nq, s->heads_q, d);
        double *oi = o + idx(b, i, h, nq, s->heads_q, d), m = -INFINITY, sum = 0;
        for (int j = 0; j < nk; j++) {
          if (!sees(s, i, j)) continue;
          const float *kj = k + idx(b, j, hk, nk, s->heads_kv, d);
          double dot = 0;
          for (int c = 0; c < d; c++) dot += (double)qi[c] * kj[c];
          sc[j] = scale * dot;
          if (s->softcap > 0) sc[j] = s->softcap * tanh(sc[j] / s->softcap);
          if (s->alibi) sc[j] -= s->alibi[h] * fabs((double)(i + nk - nq - j));
          m = fmax(m, sc[j]);
        }
        if (s->sinks) m = fmax(m, s->sinks[h]);
        for (int c = 0; c < d; c++) oi[c] = 0;
        for (int j = 0; j < nk; j++)
          if (sees(s, i, j)) sum += exp(sc[j] - m);
        if (s->sinks) sum += exp(s->sinks[h] - m);
        for (int j = 0; j < nk; j++) {
          if (!sees(s, i, j)) continue;
          const float *vj = v + idx(b, j, hk, nk, s->heads_kv, d);
          for (int c = 0; c < d; c++) oi[c] += exp(sc[j] - m) / sum * vj[c];
        }
        lse[((long long)b * s->heads_q + h) * nq + i] = sum > 0 ? m + log(sum) : INFINITY;
      }
  free(sc);
}

/* Query heads 2:2 and 1 batch, then batches, GQA, causal both ways, blocks
 * of more than 16 rows, head dims that are not multiples of 8. */
static const lab_shape shapes[] = {
    {.batch = 1, .seqlen_q = 3, .seqlen_k = 4, .heads_q = 2, .heads_kv = 2, .head_dim = 8},
    {.batch = 2, .seqlen_q = 5, .seqlen_k = 7, .heads_q = 4, .heads_kv = 2, .head_dim = 12},
    {.batch = 1, .seqlen_q = 37, .seqlen_k = 29, .heads_q = 4, .heads_kv = 1, .head_dim = 5},
    {.batch = 2, .seqlen_q = 37, .seqlen_k = 29, .heads_q = 2, .heads_kv = 2, .head_dim = 16,
     .causal = 1},
    {.batch = 1, .seqlen_q = 20, .seqlen_k = 45, .heads_q = 6, .heads_kv = 3, .head_dim = 64,
     .causal = 1},
    {.batch = 1, .seqlen_q = 33, .seqlen_k = 33, .heads_q = 2, .heads_kv = 1, .head_dim = 3,
     .causal = 1, .scale = 0.7},
};

/* Each K row is 2 e_j and the scale 1/2, so the scores of query row q are
 * q[0..3]; V rows are j + c/8. Softmax weights w give O[c] = sum_j w_j j + c/8. */
Test(lab_ref, forward_closed_form) {
  lab_shape s = {.batch = 1, .seqlen_q = 3, .seqlen_k = 4, .heads_q = 2, .heads_kv = 2,
                 .head_dim = 8, .scale = 0.5};
  float q[3 * 2 * 8] = {0}, k[4 * 2 * 8] = {0}, v[4 * 2 * 8];
  for (int h = 0; h < 2; h++)
    for (int j = 0; j < 4; j++) {
      k[idx(0, j, h, 4, 2, 8) + j] = 2;
      for (int c = 0; c < 8; c++) v[idx(0, j, h, 4, 2, 8) + c] = (float)(j + c / 8.0);
    }
  /* Head 0: Q = 0, uniform weights. Head 1: scores 0, (1, 0, 0, 0), (0, 0, 0, 2). */
  q[idx(0, 1, 1, 3, 2, 8) + 0] = 1;
  q[idx(0, 2, 1, 3, 2, 8) + 3] = 2;
  const double e = exp(1.0), e2 = exp(2.0);
  const double mean[2][3] = {{1.5, 1.5, 1.5}, {1.5, 6 / (e + 3), (3 + 3 * e2) / (3 + e2)}};
  const double lse[2][3] = {{log(4.0), log(4.0), log(4.0)}, {log(4.0), log(e + 3), log(e2 + 3)}};
  double o[3 * 2 * 8], l[2 * 3];
  lab_ref_forward(&s, q, k, v, o, l);
  for (int h = 0; h < 2; h++)
    for (int i = 0; i < 3; i++) {
      cr_expect(fabs(l[h * 3 + i] - lse[h][i]) < 1e-14, "lse h%d i%d: %.17g vs %.17g", h, i,
                l[h * 3 + i], lse[h][i]);
      for (int c = 0; c < 8; c++) {
        double got = o[idx(0, i, h, 3, 2, 8) + c], want = mean[h][i] + c / 8.0;
        cr_expect(fabs(got - want) < 1e-14, "o h%d i%d c%d: %.17g vs %.17g", h, i, c, got, want);
      }
    }
}

/* lab_ref_forward against naive_forward on each shape, inputs seeded seed0 + t. */
static void expect_naive(const lab_shape *shapes_, size_t n, uint64_t seed0) {
  for (size_t t = 0; t < n; t++) {
    inputs in = make(shapes_[t], seed0 + t);
    const lab_shape *s = &in.s;
    double *o = xcalloc(lab_q_elems(s), sizeof(double)), *l = xcalloc(lab_rows(s), sizeof(double));
    double *on = xcalloc(lab_q_elems(s), sizeof(double));
    double *ln = xcalloc(lab_rows(s), sizeof(double));
    lab_ref_forward(s, in.q, in.k, in.v, o, l);
    naive_forward(s, in.q, in.k, in.v, on, ln);
    double eo = 0, el = 0;
    for (long long i = 0; i < lab_q_elems(s); i++) eo = fmax(eo, fabs(o[i] - on[i]));
    for (long long i = 0; i < lab_rows(s); i++)
      el = fmax(el, isinf(ln[i]) ? (l[i] == ln[i] ? 0 : INFINITY) : fabs(l[i] - ln[i]));
    cr_expect(eo < 1e-13 && el < 1e-13, "shape %zu: max |dO| %g, max |dLSE| %g", t, eo, el);
    free(o), free(l), free(on), free(ln);
    release(&in);
  }
}

Test(lab_ref, forward_matches_naive_softmax) { expect_naive(shapes, sizeof shapes / sizeof shapes[0], 100); }

/* Bottom-right causal with more queries than keys: query i sees keys
 * j <= i - 2, so rows 0 and 1 see none and row 2 sees key 0 only. */
Test(lab_ref, causal_row_without_keys) {
  lab_shape s = {.batch = 1, .seqlen_q = 5, .seqlen_k = 3, .heads_q = 2, .heads_kv = 1,
                 .head_dim = 4, .causal = 1};
  inputs in = make(s, 7);
  double o[5 * 2 * 4], l[2 * 5], dq[5 * 2 * 4], dk[3 * 4], dv[3 * 4];
  for (int i = 0; i < 40; i++) o[i] = dq[i] = NAN; /* every output must be written */
  lab_ref_forward(&s, in.q, in.k, in.v, o, l);
  lab_ref_backward(&s, in.q, in.k, in.v, in.dout, dq, dk, dv, NULL);
  for (int h = 0; h < 2; h++) {
    for (int i = 0; i < 2; i++) {
      cr_expect(isinf(l[h * 5 + i]) && l[h * 5 + i] > 0, "lse h%d i%d = %g", h, i, l[h * 5 + i]);
      for (int c = 0; c < 4; c++) {
        cr_expect_eq(o[idx(0, i, h, 5, 2, 4) + c], 0.0, "o h%d i%d c%d", h, i, c);
        cr_expect_eq(dq[idx(0, i, h, 5, 2, 4) + c], 0.0, "dq h%d i%d c%d", h, i, c);
      }
    }
    /* One key: P = 1, O = V_0, LSE = its score. */
    double score = 0;
    for (int c = 0; c < 4; c++) score += (double)in.q[idx(0, 2, h, 5, 2, 4) + c] * in.k[c];
    cr_expect(fabs(l[h * 5 + 2] - score / 2) < 1e-15, "lse h%d i2", h);
    for (int c = 0; c < 4; c++) cr_expect_eq(o[idx(0, 2, h, 5, 2, 4) + c], (double)in.v[c]);
    for (int i = 3; i < 5; i++) cr_expect(isfinite(l[h * 5 + i]));
  }
  release(&in);
}

/* Scores in the thousands: exp overflows unless the row maximum comes off
 * first. Key j scores 1000 (j + 1), so key 3 takes all the weight. */
Test(lab_ref, large_scores_stay_finite) {
  lab_shape s = {.batch = 1, .seqlen_q = 2, .seqlen_k = 4, .heads_q = 1, .heads_kv = 1,
                 .head_dim = 2, .scale = 1};
  float q[4] = {10, 0, -10, 0}, k[8] = {100, 1, 200, 2, 300, 3, 400, 4};
  float v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  double o[4], l[2];
  lab_ref_forward(&s, q, k, v, o, l);
  cr_expect(o[0] == 7 && o[1] == 8 && l[0] == 4000, "row 0: o %g %g, lse %g", o[0], o[1], l[0]);
  cr_expect(o[2] == 1 && o[3] == 2 && l[1] == -1000, "row 1: o %g %g, lse %g", o[2], o[3], l[1]);
}

/* LSE = log(sum_j exp(scale * q . k_j)), summed here without the max. */
Test(lab_ref, lse_is_log_sum_exp) {
  for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
    inputs in = make(shapes[t], 200 + t);
    const lab_shape *s = &in.s;
    const int d = s->head_dim, nq = s->seqlen_q, nk = s->seqlen_k;
    const double scale = s->scale != 0 ? s->scale : 1 / sqrt(d);
    double *o = xcalloc(lab_q_elems(s), sizeof(double)), *l = xcalloc(lab_rows(s), sizeof(double));
    lab_ref_forward(s, in.q, in.k, in.v, o, l);
    double err = 0;
    for (int b = 0; b < s->batch; b++)
      for (int h = 0; h < s->heads_q; h++)
        for (int i = 0; i < nq; i++) {
          double sum = 0;
          for (int j = 0; j < nk; j++) {
            if (!sees(s, i, j)) continue;
            double dot = 0;
            for (int c = 0; c < d; c++)
              dot += (double)in.q[idx(b, i, h, nq, s->heads_q, d) + c] *
                     in.k[idx(b, j, h / (s->heads_q / s->heads_kv), nk, s->heads_kv, d) + c];
            sum += exp(scale * dot);
          }
          double got = l[((long long)b * s->heads_q + h) * nq + i];
          err = fmax(err, sum == 0 ? (got == INFINITY ? 0 : INFINITY) : fabs(got - log(sum)));
        }
    cr_expect(err <= 1e-12, "shape %zu: max |LSE - log(sum(exp))| = %g", t, err);
    free(o), free(l);
    release(&in);
  }
}

/* ---- gradients against finite differences ---------------------------------------- */

static double loss(const inputs *in, double *o, double *l) {
  lab_ref_forward(&in->s, in->q, in->k, in->v, o, l);
  double sum = 0;
  for (long long i = 0; i < lab_q_elems(&in->s); i++) sum += in->dout[i] * o[i];
  return sum;
}

/* dL/dx[e] by central differences with float-exact steps h and h/2 and one
 * Richardson step, (4 D(h/2) - D(h)) / 3: the h^2 error term cancels, what
 * is left (h^4 terms, rounding / h) is about 1e-11 here. */
static double numeric(const inputs *in, float *x, long long e, double *o, double *l) {
  const float x0 = x[e];
  double dh[2];
  for (int t = 0; t < 2; t++) {
    const double h = t ? 0x1p-11 : 0x1p-10;
    x[e] = (float)(x0 + h);
    cr_assert_eq((double)x[e], x0 + h, "step not exact at %a", (double)x0);
    double up = loss(in, o, l);
    x[e] = (float)(x0 - h);
    cr_assert_eq((double)x[e], x0 - h, "step not exact at %a", (double)x0);
    double down = loss(in, o, l);
    dh[t] = (up - down) / (2 * h);
  }
  x[e] = x0;
  return (4 * dh[1] - dh[0]) / 3;
}

/* Every element of g against the finite difference of x; tolerance 1e-8 of
 * the tensor's largest gradient. */
static void check_tensor(const inputs *in, float *x, const double *g, long long n, const char *name,
                         double *o, double *l) {
  double gmax = 0, err = 0;
  long long worst = 0;
  for (long long e = 0; e < n; e++) gmax = fmax(gmax, fabs(g[e]));
  cr_assert(gmax > 0.01, "%s: gradient is (nearly) zero", name);
  for (long long e = 0; e < n; e++) {
    double diff = fabs(numeric(in, x, e, o, l) - g[e]);
    if (diff > err) err = diff, worst = e;
  }
  cr_expect(err <= 1e-8 * gmax, "%s: max |fd - analytic| = %g at %lld (max |g| %g)", name, err,
            worst, gmax);
}

static void check_gradients(lab_shape s, uint64_t seed) {
  inputs in = make(s, seed);
  long long nq = lab_q_elems(&s), nkv = lab_kv_elems(&s);
  double *dq = xcalloc(nq, sizeof(double)), *dk = xcalloc(nkv, sizeof(double));
  double *dv = xcalloc(nkv, sizeof(double)), *o = xcalloc(nq, sizeof(double));
  double *l = xcalloc(lab_rows(&s), sizeof(double));
  lab_ref_backward(&s, in.q, in.k, in.v, in.dout, dq, dk, dv, NULL);
  check_tensor(&in, in.q, dq, nq, "dQ", o, l);
  check_tensor(&in, in.k, dk, nkv, "dK", o, l);
  check_tensor(&in, in.v, dv, nkv, "dV", o, l);
  free(dq), free(dk), free(dv), free(o), free(l);
  release(&in);
}

/* Shapes as (batch, seqlen_q, seqlen_k, heads_q, heads_kv, head_dim, causal, scale). */
static lab_shape shape(int b, int nq, int nk, int hq, int hkv, int d, int causal, double scale) {
  return (lab_shape){.batch = b, .seqlen_q = nq, .seqlen_k = nk, .heads_q = hq, .heads_kv = hkv,
                     .head_dim = d, .causal = causal, .scale = scale};
}

Test(lab_ref, gradients_plain) { check_gradients(shape(1, 4, 5, 2, 2, 4, 0, 0), 1); }

Test(lab_ref, gradients_gqa_4_2_scale) { check_gradients(shape(2, 3, 4, 4, 2, 3, 0, 0.7), 2); }

/* More queries than keys: rows 0 and 1 see no key (zero gradient). */
Test(lab_ref, gradients_causal_more_queries_gqa) {
  check_gradients(shape(1, 5, 3, 4, 2, 4, 1, 0.7), 3);
}

Test(lab_ref, gradients_causal_more_keys_mqa) { check_gradients(shape(1, 3, 6, 2, 1, 5, 1, 0), 4); }

/* More than one block of query rows (the reference takes 16 at a time), the
 * last one partial. */
Test(lab_ref, gradients_causal_two_blocks) { check_gradients(shape(1, 19, 7, 2, 1, 9, 1, 1.3), 5); }

/* ---- score modifiers ---------------------------------------------------------------- */

static const float slopes4[4] = {0.5f, 0.25f, 1.0f, 0.125f};
static const float sinks4[4] = {0.75f, -1.5f, 0.25f, 1.25f};

/* Each modifier and all of them together against the naive definition, on shapes
 * with GQA, more queries than keys (rows that see no key) and blocks of 16 rows. */
Test(lab_ref, modifiers_match_the_definition) {
  lab_shape mods[] = {
      {.batch = 2, .seqlen_q = 37, .seqlen_k = 29, .heads_q = 4, .heads_kv = 2, .head_dim = 8,
       .softcap = 1.5},
      {.batch = 1, .seqlen_q = 20, .seqlen_k = 33, .heads_q = 4, .heads_kv = 1, .head_dim = 5,
       .alibi = slopes4},
      {.batch = 1, .seqlen_q = 37, .seqlen_k = 29, .heads_q = 2, .heads_kv = 2, .head_dim = 16,
       .window = 1, .window_left = 5, .window_right = 2},
      {.batch = 1, .seqlen_q = 37, .seqlen_k = 29, .heads_q = 2, .heads_kv = 2, .head_dim = 16,
       .window = 1, .window_left = -1, .window_right = 0},
      {.batch = 2, .seqlen_q = 37, .seqlen_k = 29, .heads_q = 4, .heads_kv = 2, .head_dim = 12,
       .causal = 1, .sinks = sinks4},
      {.batch = 1, .seqlen_q = 33, .seqlen_k = 40, .heads_q = 4, .heads_kv = 2, .head_dim = 8,
       .scale = 0.7, .window = 1, .window_left = 7, .window_right = 0, .softcap = 2, .alibi = slopes4,
       .sinks = sinks4},
  };
  expect_naive(mods, sizeof mods / sizeof mods[0], 300);
}

/* Exact values: K rows 2 e_j with scale 1/2 make the scores of a row its first four
 * q entries; V rows j + c/8; 4 queries and 4 keys. */
typedef struct closed {
  lab_shape s;
  float q[4 * 8], k[4 * 8], v[4 * 8];
  double o[4 * 8], l[4];
} closed;

static void closed_run(closed *c) {
  c->s.batch = 1, c->s.seqlen_q = c->s.seqlen_k = 4, c->s.heads_q = c->s.heads_kv = 1;
  c->s.head_dim = 8, c->s.scale = 0.5;
  for (int j = 0; j < 4; j++) {
    c->k[j * 8 + j] = 2;
    for (int x = 0; x < 8; x++) c->v[j * 8 + x] = (float)(j + x / 8.0);
  }
  lab_ref_forward(&c->s, c->q, c->k, c->v, c->o, c->l);
}

/* Row i's output and LSE against weights w[4] (unnormalized) and the sum z. */
static void expect_row(const closed *c, int i, const double *w, double z, const char *what) {
  double mean = 0;
  for (int j = 0; j < 4; j++) mean += w[j] / z * j;
  double wsum = 0;
  for (int j = 0; j < 4; j++) wsum += w[j] / z;
  cr_expect(fabs(c->l[i] - log(z)) < 1e-14, "%s row %d: lse %.17g vs %.17g", what, i, c->l[i], log(z));
  for (int x = 0; x < 8; x++)
    cr_expect(fabs(c->o[i * 8 + x] - (mean + wsum * x / 8.0)) < 1e-14, "%s row %d col %d: %.17g vs %.17g",
              what, i, x, c->o[i * 8 + x], mean + wsum * x / 8.0);
}

Test(lab_ref, modifiers_closed_form) {
  /* sinks: scores 0 and the sink log 4: every key 1/8, O = (6 + c/2) / 8, LSE = log 8;
   * a sink of -inf is no sink */
  closed c = {0};
  const float sink_log4[1] = {(float)log(4.0)};
  c.s.sinks = sink_log4;
  closed_run(&c);
  const double ones[4] = {1, 1, 1, 1};
  for (int i = 0; i < 4; i++) expect_row(&c, i, ones, 4 + exp((double)sink_log4[0]), "sinks");
  /* softcap 1: row 1 scores (1, 0, 0, 0) become (tanh 1, 0, 0, 0) */
  memset(&c, 0, sizeof c);
  c.s.softcap = 1;
  c.q[1 * 8 + 0] = 1;
  closed_run(&c);
  const double wcap[4] = {exp(tanh(1.0)), 1, 1, 1};
  expect_row(&c, 1, wcap, wcap[0] + 3, "softcap");
  expect_row(&c, 0, ones, 4, "softcap");
  /* ALiBi 1/2, scores 0: row i weights exp(-|i - j| / 2) */
  memset(&c, 0, sizeof c);
  const float half[1] = {0.5f};
  c.s.alibi = half;
  closed_run(&c);
  for (int i = 0; i < 4; i++) {
    double w[4], z = 0;
    for (int j = 0; j < 4; j++) z += w[j] = exp(-0.5 * abs(i - j));
    expect_row(&c, i, w, z, "alibi");
  }
  /* a window (1, 0), scores 0: row i averages keys max(0, i - 1) .. i */
  memset(&c, 0, sizeof c);
  c.s.window = 1, c.s.window_left = 1, c.s.window_right = 0;
  closed_run(&c);
  for (int i = 0; i < 4; i++) {
    double w[4] = {0};
    for (int j = i - 1 < 0 ? 0 : i - 1; j <= i; j++) w[j] = 1;
    expect_row(&c, i, w, i ? 2 : 1, "window");
  }
  /* rows that see no key (causal, 3 queries, 1 key) with a sink: O = 0, LSE = the
   * sink; the last row's one key against the sink: weights 1 and 4 */
  lab_shape e = {.batch = 1, .seqlen_q = 3, .seqlen_k = 1, .heads_q = 1, .heads_kv = 1, .head_dim = 8,
                 .causal = 1, .scale = 0.5, .sinks = sink_log4};
  float q[3 * 8] = {0}, k[8] = {2}, v[8];
  double o[3 * 8], l[3];
  for (int x = 0; x < 8; x++) v[x] = (float)(x / 8.0);
  lab_ref_forward(&e, q, k, v, o, l);
  for (int i = 0; i < 2; i++) {
    cr_expect_eq(l[i], (double)sink_log4[0], "row %d: LSE %.17g", i, l[i]);
    for (int x = 0; x < 8; x++) cr_expect_eq(o[i * 8 + x], 0.0);
  }
  const double z = 1 + exp((double)sink_log4[0]);
  cr_expect(fabs(l[2] - log(z)) < 1e-14, "row 2: LSE %.17g", l[2]);
  for (int x = 0; x < 8; x++) cr_expect(fabs(o[16 + x] - x / 8.0 / z) < 1e-15, "row 2 col %d", x);
}

/* The sinks' gradient against finite differences of L in each sink, and the other
 * gradients with every modifier on (softcap's derivative, ALiBi, a window). */
static void check_modifier_gradients(lab_shape s, uint64_t seed) {
  float sinks[8], slopes[8];
  for (int h = 0; h < s.heads_q; h++)
    sinks[h] = (float)(h % 3) * 0.5f - 0.75f, slopes[h] = 0.125f * (float)(h + 1);
  if (s.sinks) s.sinks = sinks;
  if (s.alibi) s.alibi = slopes;
  inputs in = make(s, seed);
  long long nq = lab_q_elems(&s), nkv = lab_kv_elems(&s);
  double *dq = xcalloc(nq, sizeof(double)), *dk = xcalloc(nkv, sizeof(double));
  double *dv = xcalloc(nkv, sizeof(double)), *o = xcalloc(nq, sizeof(double));
  double *l = xcalloc(lab_rows(&s), sizeof(double)), ds[8] = {0};
  lab_ref_backward(&s, in.q, in.k, in.v, in.dout, dq, dk, dv, s.sinks ? ds : NULL);
  check_tensor(&in, in.q, dq, nq, "dQ", o, l);
  check_tensor(&in, in.k, dk, nkv, "dK", o, l);
  check_tensor(&in, in.v, dv, nkv, "dV", o, l);
  if (s.sinks) check_tensor(&in, sinks, ds, s.heads_q, "dsinks", o, l);
  free(dq), free(dk), free(dv), free(o), free(l);
  release(&in);
}

static const float on[1] = {1}; /* "set" for the pointers check_modifier_gradients fills */

Test(lab_ref, gradients_with_sinks) {
  lab_shape s = shape(2, 5, 6, 4, 2, 4, 0, 0.7);
  s.sinks = on;
  check_modifier_gradients(s, 6);
}

/* Rows 0 and 1 see no key: their sink takes the whole row, O = 0, no gradient. */
Test(lab_ref, gradients_with_sinks_causal_empty_rows) {
  lab_shape s = shape(1, 5, 3, 2, 1, 4, 1, 0);
  s.sinks = on;
  check_modifier_gradients(s, 7);
}

Test(lab_ref, gradients_with_every_modifier) {
  lab_shape s = shape(1, 19, 9, 4, 2, 8, 0, 0.9);
  s.window = 1, s.window_left = 4, s.window_right = 1, s.softcap = 1.25;
  s.alibi = on, s.sinks = on;
  check_modifier_gradients(s, 8);
}

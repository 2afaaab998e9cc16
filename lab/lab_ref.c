/* float64 reference attention, the oracle every emulation and kernel is
 * measured against: plain softmax(scale * Q K^T) V per query row, max
 * subtracted, no tiling of the keys and no online rescaling; the score
 * modifiers straight from their definitions (lab.h: softcap, ALiBi, windows,
 * sinks). Concessions to
 * speed, which change nothing but the order of float64 additions: inner
 * loops run over head_dim (contiguous) and are unrolled so that -O2
 * vectorizes them; K and V are held as float64 per kv head; query rows go
 * in blocks of ROWS so that each K and V row fetched from memory serves the
 * whole block (a row at a time streams all of K and V per query and is
 * memory-bound). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

enum { ROWS = 16 };

/* Eight partial sums: one chain of dependent adds is latency-bound. */
static double dot(const double *a, const double *b, int n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    s0 += a[i] * b[i], s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2], s3 += a[i + 3] * b[i + 3];
    s4 += a[i + 4] * b[i + 4], s5 += a[i + 5] * b[i + 5];
    s6 += a[i + 6] * b[i + 6], s7 += a[i + 7] * b[i + 7];
  }
  for (; i < n; i++) s0 += a[i] * b[i];
  return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
}

/* y += a x; unrolled by four, as the plain loop stays scalar at -O2. */
static void axpy(double a, const double *restrict x, double *restrict y, int n) {
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    y[i] += a * x[i], y[i + 1] += a * x[i + 1];
    y[i + 2] += a * x[i + 2], y[i + 3] += a * x[i + 3];
  }
  for (; i < n; i++) y[i] += a * x[i];
}

/* Element offset of row `pos` of head `h` in a (batch, seqlen, heads, head_dim) tensor. */
static long long at(int b, int pos, int h, int seqlen, int heads, int d) {
  return (((long long)b * seqlen + pos) * heads + h) * d;
}

/* Rows pos0..pos0+n-1 of head h of batch b as float64 rows ld apart. */
static void load(const float *t, int b, int pos0, int n, int h, int seqlen, int heads, int d,
                 double *out, int ld) {
  for (int r = 0; r < n; r++) {
    const float *src = t + at(b, pos0 + r, h, seqlen, heads, d);
    for (int c = 0; c < d; c++) out[(long long)r * ld + c] = src[c];
  }
}

/* The inverse of load, for float64 results. */
static void store(const double *in, int ld, int b, int pos0, int n, int h, int seqlen, int heads,
                  int d, double *t) {
  for (int r = 0; r < n; r++)
    memcpy(t + at(b, pos0 + r, h, seqlen, heads, d), in + (long long)r * ld, sizeof(double) * d);
}

/* Everything one kv head and one block of query rows need: k, v (seqlen_k
 * rows), q, dout, acc (ROWS rows; acc collects O or dQ), rows ld = d + 8
 * apart; p, ds (ROWS rows of seqlen_k, ldp = seqlen_k + 8 apart). The pad
 * keeps rows off power-of-two strides, where a block's rows would share one
 * L1 set and loads would falsely wait on stores a multiple of 4 KiB away. */
typedef struct work {
  double *k, *v, *p, *ds, *q, *dout, *acc;
  int ld, ldp;
  int rows;       /* rows in this block, <= ROWS */
  int lo[ROWS], hi[ROWS]; /* keys row r sees: lo[r] .. hi[r] - 1 (lab_key_range) */
  int j0, j1;     /* keys any row of the block sees: j0 .. j1 - 1 (edges only move down) */
} work;

/* Does row r of the block see key j? */
static int sees(const work *w, int r, int j) { return j >= w->lo[r] && j < w->hi[r]; }

static int work_alloc(work *w, const lab_shape *s) {
  size_t nk = (size_t)s->seqlen_k, ld = (size_t)s->head_dim + 8, ldp = nk + 8;
  double *m = malloc(sizeof(double) * (2 * nk * ld + 2 * ROWS * ldp + 3 * ROWS * ld));
  if (!m) return -1;
  w->ld = (int)ld, w->ldp = (int)ldp;
  w->k = m, w->v = w->k + nk * ld, w->p = w->v + nk * ld, w->ds = w->p + ROWS * ldp;
  w->q = w->ds + ROWS * ldp, w->dout = w->q + ROWS * ld, w->acc = w->dout + ROWS * ld;
  return 0;
}

/* Row i of a work array with rows `ld` apart. */
static double *row(double *base, int i, int ld) { return base + (long long)i * ld; }

/* Block of query rows i0.. of head h: visible keys, Q, acc = 0. */
static void block_init(work *w, const lab_shape *s, const float *q, int b, int h, int i0) {
  w->rows = s->seqlen_q - i0 < ROWS ? s->seqlen_q - i0 : ROWS;
  w->j0 = s->seqlen_k, w->j1 = 0;
  for (int r = 0; r < w->rows; r++) {
    lab_key_range(s, i0 + r, &w->lo[r], &w->hi[r]);
    if (w->lo[r] < w->hi[r]) {
      w->j0 = w->lo[r] < w->j0 ? w->lo[r] : w->j0;
      w->j1 = w->hi[r] > w->j1 ? w->hi[r] : w->j1;
    }
  }
  load(q, b, i0, w->rows, h, s->seqlen_q, s->heads_q, s->head_dim, w->q, w->ld);
  memset(w->acc, 0, sizeof(double) * w->rows * w->ld);
}

/* P = softmax of the modified scaled scores of every row of the block (rows
 * i0.. of head h), the sink a column of its own; lse[r] is the row's LSE, +inf for
 * a row that sees no key (without a sink). Key-major so each K row is read once
 * per block. */
static void block_softmax(work *w, const lab_shape *s, int h, int i0, double *lse) {
  const int d = s->head_dim;
  const double scale = lab_scale(s);
  for (int j = w->j0; j < w->j1; j++)
    for (int r = 0; r < w->rows; r++)
      if (sees(w, r, j))
        row(w->p, r, w->ldp)[j] =
            lab_modified(s, h, i0 + r, j, scale * dot(row(w->q, r, w->ld), row(w->k, j, w->ld), d));
  for (int r = 0; r < w->rows; r++) {
    double *p = row(w->p, r, w->ldp), m = s->sinks ? s->sinks[h] : -INFINITY, sum = 0;
    for (int j = w->lo[r]; j < w->hi[r]; j++) m = p[j] > m ? p[j] : m;
    for (int j = w->lo[r]; j < w->hi[r]; j++) sum += p[j] = exp(p[j] - m);
    if (s->sinks) sum += exp(s->sinks[h] - m);
    for (int j = w->lo[r]; j < w->hi[r]; j++) p[j] /= sum;
    lse[r] = sum > 0 ? m + log(sum) : INFINITY;
  }
}

/* The functions return nothing, so running out of memory shows as NaN outputs. */
static void fill_nan(double *x, long long n) {
  for (long long i = 0; i < n; i++) x[i] = NAN;
}

void lab_ref_forward(const lab_shape *s, const float *q, const float *k, const float *v,
                     double *o, double *lse) {
  const int d = s->head_dim, nq = s->seqlen_q, nk = s->seqlen_k, hq = s->heads_q, hkv = s->heads_kv;
  const int group = hq / hkv;
  work w;
  if (work_alloc(&w, s)) {
    fill_nan(o, lab_q_elems(s));
    fill_nan(lse, lab_rows(s));
    return;
  }
  for (int b = 0; b < s->batch; b++)
    for (int hk = 0; hk < hkv; hk++) {
      load(k, b, 0, nk, hk, nk, hkv, d, w.k, w.ld);
      load(v, b, 0, nk, hk, nk, hkv, d, w.v, w.ld);
      for (int h = hk * group; h < (hk + 1) * group; h++)
        for (int i0 = 0; i0 < nq; i0 += ROWS) {
          block_init(&w, s, q, b, h, i0);
          block_softmax(&w, s, h, i0, lse + ((long long)b * hq + h) * nq + i0);
          /* O = P V; a row that sees no key keeps O = 0. */
          for (int j = w.j0; j < w.j1; j++)
            for (int r = 0; r < w.rows; r++)
              if (sees(&w, r, j))
                axpy(row(w.p, r, w.ldp)[j], row(w.v, j, w.ld), row(w.acc, r, w.ld), d);
          store(w.acc, w.ld, b, i0, w.rows, h, nq, hq, d, o);
        }
    }
  free(w.k);
}

void lab_ref_backward(const lab_shape *s, const float *q, const float *k, const float *v,
                      const float *dout, double *dq, double *dk, double *dv, double *dsinks) {
  const int d = s->head_dim, nq = s->seqlen_q, nk = s->seqlen_k, hq = s->heads_q, hkv = s->heads_kv;
  const int group = hq / hkv;
  const double scale = lab_scale(s);
  double lse[ROWS];
  work w;
  if (work_alloc(&w, s)) {
    fill_nan(dq, lab_q_elems(s));
    fill_nan(dk, lab_kv_elems(s));
    fill_nan(dv, lab_kv_elems(s));
    if (dsinks) fill_nan(dsinks, hq);
    return;
  }
  memset(dk, 0, sizeof(double) * lab_kv_elems(s));
  memset(dv, 0, sizeof(double) * lab_kv_elems(s));
  if (dsinks) memset(dsinks, 0, sizeof(double) * hq);
  for (int b = 0; b < s->batch; b++)
    for (int hk = 0; hk < hkv; hk++) {
      load(k, b, 0, nk, hk, nk, hkv, d, w.k, w.ld);
      load(v, b, 0, nk, hk, nk, hkv, d, w.v, w.ld);
      for (int h = hk * group; h < (hk + 1) * group; h++)
        for (int i0 = 0; i0 < nq; i0 += ROWS) {
          block_init(&w, s, q, b, h, i0);
          load(dout, b, i0, w.rows, h, nq, hq, d, w.dout, w.ld);
          block_softmax(&w, s, h, i0, lse);
          /* dP = dO V^T, into ds for now. */
          for (int j = w.j0; j < w.j1; j++)
            for (int r = 0; r < w.rows; r++)
              if (sees(&w, r, j))
                row(w.ds, r, w.ldp)[j] = dot(row(w.dout, r, w.ld), row(w.v, j, w.ld), d);
          /* dS = P (dP - delta), delta = rowsum(dO * O) = sum_j P_j dP_j as O = P V
           * (the sink's column has no V: dP = 0 there, so its dS is -P_sink delta);
           * softcap: times its derivative 1 - tanh^2 of the uncapped score. */
          for (int r = 0; r < w.rows; r++) {
            const double *p = row(w.p, r, w.ldp);
            double *ds = row(w.ds, r, w.ldp), delta = 0;
            for (int j = w.lo[r]; j < w.hi[r]; j++) delta += p[j] * ds[j];
            for (int j = w.lo[r]; j < w.hi[r]; j++) ds[j] = p[j] * (ds[j] - delta);
            if (s->softcap > 0)
              for (int j = w.lo[r]; j < w.hi[r]; j++) {
                const double t = tanh(scale * dot(row(w.q, r, w.ld), row(w.k, j, w.ld), d) / s->softcap);
                ds[j] *= 1 - t * t;
              }
            if (dsinks && s->sinks) dsinks[h] -= exp(s->sinks[h] - lse[r]) * delta;
          }
          /* dQ = scale dS K, dK += scale dS^T Q, dV += P^T dO: dK and dV add
           * up over the query heads of the GQA group. A row that sees no key
           * adds nothing and gets dQ = 0: its O is 0 whatever the inputs. */
          for (int j = w.j0; j < w.j1; j++) {
            double *dkj = dk + at(b, j, hk, nk, hkv, d), *dvj = dv + at(b, j, hk, nk, hkv, d);
            for (int r = 0; r < w.rows; r++) {
              if (!sees(&w, r, j)) continue;
              const double pj = row(w.p, r, w.ldp)[j], dsj = row(w.ds, r, w.ldp)[j];
              axpy(scale * dsj, row(w.k, j, w.ld), row(w.acc, r, w.ld), d);
              axpy(scale * dsj, row(w.q, r, w.ld), dkj, d);
              axpy(pj, row(w.dout, r, w.ld), dvj, d);
            }
          }
          store(w.acc, w.ld, b, i0, w.rows, h, nq, hq, d, dq);
        }
    }
  free(w.k);
}

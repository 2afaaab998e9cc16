/* rt_tune_gpu: fa2_tune, the GPU half of the autotuner (plan, choice and
 * journal are rt_tune.c's). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt_context.h"
#include "rt_error.h"
#include "rt_kernel.h"
#include "rt_jit.h"
#include "rt_paths.h"
#include "rt_tune.h"

enum { MAX_REPS = 100, MAX_ROUNDS = 20, N_SETS = 2 };
/* Defaults: a quick first pass over every candidate, then the finalists
 * with 10 launches x 4 rounds (bench/NOTES.md: 5 x 2 decided within 3-4 %). */
enum { FIRST_REPS = 3, FIRST_ROUNDS = 2, WIDE_REPS = 10, WIDE_ROUNDS = 3, FINAL_REPS = 10,
       FINAL_ROUNDS = 4 };
enum { T_Q, T_K, T_V, T_O, T_DO, T_DQ, T_DK, T_DV, N_TENSORS };

static const int DEFAULT_SEQLENS[] = {1024, 2048, 4096, 8192, 16384};

typedef struct tuner {
  fa2_context *ctx;
  const fa2_tune_options *o;
  rt_tune_plan plan;
  rt_tune_reps r;
  int any_bwd, any_varlen;
  FILE *journal;
  double t0;
  /* two input sets, launched in turn: each launch reads what the last did not */
  CUdeviceptr t[N_SETS][N_TENSORS], lse[N_SETS], ws;
  /* varlen groups: per tuned length, the offsets of its mix (rt_tune_mix) */
  CUdeviceptr cu_seqlens[RT_TUNE_MAX_SEQLENS];
  int docs[RT_TUNE_MAX_SEQLENS];
  CUevent ev[2 * MAX_REPS];
  fa2_tune_progress pr;
  double phase_t0, w_total, w_done;
} tuner;

static double now_s(void) { return rt_now_ms() / 1e3; }

static void progress(tuner *t, const char *what) {
  if (!t->o->progress) return;
  t->pr.what = what;
  t->pr.elapsed_s = now_s() - t->phase_t0;
  const double f = t->w_total > 0 ? t->w_done / t->w_total : 0;
  t->pr.eta_s = f > 0 ? t->pr.elapsed_s * (1 - f) / f : -1;
  t->o->progress(&t->pr, t->o->progress_user);
}

static int cu_ok(CUresult r, const char *what) {
  return r == RT_CUDA_SUCCESS ? FA2_OK : rt_cuda_fail(r, "%s", what);
}

/* ---- loading and pruning ---- */

typedef struct load_job {
  tuner *t;
  rt_tune_cand **c;
} load_job;

static void loaded(void *user, int i) {
  load_job *j = user;
  j->t->pr.done++;
  j->t->w_done += 1;
  progress(j->t, j->c[i]->v.name);
}

/* Why a loaded kernel is out of the race, or "" (spills and stack show as
 * local memory: the same rule as the build's zero-spill gate). */
static void check_resources(fa2_context *ctx, rt_tune_cand *c) {
  rt_kernel *k;
  if (rt_kernel_for_variant(ctx, &c->v, &k) != FA2_OK) {
    snprintf(c->pruned, sizeof c->pruned, "does not load: %.120s", fa2_last_error());
    return;
  }
  for (int i = 0; i < k->n_fn; i++) {
    int local = 0;
    if (ctx->cu->cuFuncGetAttribute(&local, RT_CU_FUNC_ATTR_LOCAL_SIZE_BYTES, k->fn[i]) ==
            RT_CUDA_SUCCESS &&
        local > 0) {
      snprintf(c->pruned, sizeof c->pruned, "%s: %d bytes of local memory per thread (spills)",
               c->v.entries[i], local);
      return;
    }
  }
}

static int load_candidates(tuner *t) {
  int n = 0;
  for (int g = 0; g < t->plan.n; g++) n += t->plan.groups[g].n;
  rt_tune_cand **c = malloc(sizeof *c * (size_t)(n ? n : 1));
  const gen_variant **v = malloc(sizeof *v * (size_t)(n ? n : 1));
  int *rcs = calloc((size_t)(n ? n : 1), sizeof *rcs);
  char(*msgs)[256] = calloc((size_t)(n ? n : 1), sizeof *msgs);
  if (!c || !v || !rcs || !msgs) {
    free(c), free(v), free(rcs), free(msgs);
    return rt_set_error(FA2_ERR_OUT_OF_MEMORY, "fa2_tune: out of memory");
  }
  int m = 0;
  for (int g = 0; g < t->plan.n; g++)
    for (int i = 0; i < t->plan.groups[g].n; i++) {
      rt_tune_cand *cd = &t->plan.groups[g].cands[i];
      if (!cd->pruned[0]) c[m] = cd, v[m++] = &cd->v;
    }
  t->pr = (fa2_tune_progress){"compile", 0, m, 0, -1, ""};
  t->phase_t0 = now_s(), t->w_total = m, t->w_done = 0;
  load_job job = {t, c};
  rt_prepare_each(t->ctx, v, m, rcs, msgs, loaded, &job);
  for (int i = 0; i < m; i++) {
    if (rcs[i] != FA2_OK)
      snprintf(c[i]->pruned, sizeof c[i]->pruned, "does not load: %.140s", msgs[i]);
    else
      check_resources(t->ctx, c[i]);
    if (c[i]->pruned[0]) rt_tune_journal_prune(t->journal, c[i]);
  }
  free(c), free(v), free(rcs), free(msgs);
  return FA2_OK;
}

/* ---- buffers ---- */

static void fill_random(unsigned short *h, size_t n) {
  unsigned long long x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < n; i++) { /* bf16 and fp16 values in about [-1, 1], never zero */
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const unsigned sign = (unsigned)(x >> 63) << 15;
    h[i] = (unsigned short)(sign | 0x3000u | (unsigned)((x >> 20) & 0x0fffu));
  }
}

static int alloc_buffers(tuner *t) {
  const rt_cuda_api *cu = t->ctx->cu;
  long long tokens = 0;
  for (int i = 0; i < t->plan.n_seqlens; i++) {
    const int n = t->plan.seqlens[i];
    const long long tk = (long long)(n >= 16384 ? 1 : 16384 / n) * n;
    tokens = tk > tokens ? tk : tokens;
  }
  const size_t elems = (size_t)tokens * 2048, bytes = elems * 2;
  const int heads = rt_tune_max_heads(&t->plan);
  unsigned short *h = malloc(bytes);
  if (!h) return rt_set_error(FA2_ERR_OUT_OF_MEMORY, "fa2_tune: out of host memory");
  fill_random(h, elems);
  int rc = FA2_OK;
  const int n_tensors = t->any_bwd ? N_TENSORS : T_DO;
  for (int s = 0; s < N_SETS && rc == FA2_OK; s++) {
    for (int k = 0; k < n_tensors && rc == FA2_OK; k++) {
      rc = cu_ok(cu->cuMemAlloc(&t->t[s][k], bytes), "cuMemAlloc(tuning inputs)");
      if (rc == FA2_OK && k <= T_DO)
        rc = cu_ok(cu->cuMemcpyHtoD(t->t[s][k], h, bytes), "cuMemcpyHtoD(tuning inputs)");
    }
    /* LSE: heads = 2048 / d per token (128 at d = 16) */
    if (rc == FA2_OK)
      rc = cu_ok(cu->cuMemAlloc(&t->lse[s], (size_t)tokens * heads * 4), "cuMemAlloc(LSE)");
    if (rc == FA2_OK && t->any_bwd)
      rc = cu_ok(cu->cuMemsetD32(t->lse[s], 0, (size_t)tokens * heads), "cuMemsetD32(LSE)");
  }
  free(h);
  int *lens = t->any_varlen ? malloc(sizeof *lens * (RT_TUNE_MIX_TOKENS + 1)) : NULL;
  if (rc == FA2_OK && t->any_varlen && !lens)
    rc = rt_set_error(FA2_ERR_OUT_OF_MEMORY, "fa2_tune: out of host memory");
  for (int i = 0; rc == FA2_OK && lens && i < t->plan.n_seqlens; i++) {
    const int docs = rt_tune_mix(t->plan.seqlens[i], lens + 1);
    lens[0] = 0; /* lengths -> offsets, in place */
    for (int j = 1; j <= docs; j++) lens[j] += lens[j - 1];
    t->docs[i] = docs;
    rc = cu_ok(cu->cuMemAlloc(&t->cu_seqlens[i], sizeof *lens * (size_t)(docs + 1)), "cuMemAlloc(cu_seqlens)");
    if (rc == FA2_OK)
      rc = cu_ok(cu->cuMemcpyHtoD(t->cu_seqlens[i], lens, sizeof *lens * (size_t)(docs + 1)),
                 "cuMemcpyHtoD(cu_seqlens)");
  }
  free(lens);
  if (rc == FA2_OK && t->any_bwd)
    rc = cu_ok(cu->cuMemAlloc(&t->ws, rt_tune_bwd_workspace(&t->plan, tokens)), "cuMemAlloc(backward workspace)");
  return rc;
}

static void free_buffers(tuner *t) {
  const rt_cuda_api *cu = t->ctx->cu;
  for (int s = 0; s < N_SETS; s++) {
    for (int k = 0; k < N_TENSORS; k++)
      if (t->t[s][k]) cu->cuMemFree(t->t[s][k]);
    if (t->lse[s]) cu->cuMemFree(t->lse[s]);
  }
  if (t->ws) cu->cuMemFree(t->ws);
  for (int i = 0; i < RT_TUNE_MAX_SEQLENS; i++)
    if (t->cu_seqlens[i]) cu->cuMemFree(t->cu_seqlens[i]);
}

/* ---- launches ---- */

static fa2_tensor tensor(CUdeviceptr p, int dtype, int n, int heads, int d) {
  const long long row = (long long)heads * d;
  return (fa2_tensor){(void *)p, (fa2_dtype)dtype, n * row, row, d};
}

static void fwd_args(const tuner *t, const gen_variant *v, int n, int s, fa2_fwd_args *a) {
  int b, h;
  rt_tune_shape(v, n, &b, &h);
  memset(a, 0, sizeof *a);
  a->q = tensor(t->t[s][T_Q], v->dtype, n, h, v->head_dim);
  a->k = tensor(t->t[s][T_K], v->dtype, n, h, v->head_dim);
  a->v = tensor(t->t[s][T_V], v->dtype, n, h, v->head_dim);
  a->o = tensor(t->t[s][T_O], v->dtype, n, h, v->head_dim);
  a->lse = (float *)t->lse[s];
  a->batch = b, a->seqlen_q = a->seqlen_k = n, a->heads_q = a->heads_kv = h;
  a->head_dim = v->head_dim, a->causal = v->causal;
  a->stab = (fa2_stab)v->stab, a->beta = v->beta, a->eps = v->eps;
  for (int i = 0; v->varlen && i < t->plan.n_seqlens; i++)
    if (t->plan.seqlens[i] == n) { /* the mix of length n: its documents, the longest n */
      a->batch = t->docs[i];
      a->cu_seqlens_q = a->cu_seqlens_k = (const int *)t->cu_seqlens[i];
      a->total_q = a->total_k = RT_TUNE_MIX_TOKENS;
    }
}

static void bwd_args(const tuner *t, const gen_variant *v, int n, int s, fa2_bwd_args *a) {
  fa2_fwd_args f;
  fwd_args(t, v, n, s, &f);
  memset(a, 0, sizeof *a);
  a->q = f.q, a->k = f.k, a->v = f.v, a->o = f.o;
  int b, h;
  rt_tune_shape(v, n, &b, &h);
  a->dout = tensor(t->t[s][T_DO], v->dtype, n, h, v->head_dim);
  a->dq = tensor(t->t[s][T_DQ], v->dtype, n, h, v->head_dim);
  a->dk = tensor(t->t[s][T_DK], v->dtype, n, h, v->head_dim);
  a->dv = tensor(t->t[s][T_DV], v->dtype, n, h, v->head_dim);
  a->lse = f.lse;
  a->batch = f.batch, a->seqlen_q = a->seqlen_k = n, a->heads_q = a->heads_kv = h;
  a->head_dim = v->head_dim, a->causal = v->causal;
  a->cu_seqlens_q = f.cu_seqlens_q, a->cu_seqlens_k = f.cu_seqlens_k;
  a->total_q = f.total_q, a->total_k = f.total_k;
}

static int launch(tuner *t, const rt_kernel *k, const gen_variant *v, int n, int s) {
  if (v->pass == GEN_PASS_FWD) {
    fa2_fwd_args a;
    fwd_args(t, v, n, s, &a);
    return rt_launch_fwd(t->ctx, k, &a, NULL);
  }
  fa2_bwd_args a;
  bwd_args(t, v, n, s, &a);
  return rt_launch_bwd(t->ctx, k, &a, (void *)t->ws, NULL);
}

/* A backward reads O and LSE: make them the forward's (plain attention,
 * the selected forward kernel) for both sets. */
static int prepare_bwd_inputs(tuner *t, const gen_variant *v, int n) {
  gen_variant f = *v;
  f.pass = GEN_PASS_FWD, f.stab = GEN_STAB_NONE;
  for (int s = 0; s < N_SETS; s++) {
    fa2_fwd_args a;
    fwd_args(t, &f, n, s, &a);
    a.stab = FA2_STAB_NONE;
    int rc = fa2_forward(t->ctx, &a, NULL);
    if (rc != FA2_OK) return rc;
  }
  return cu_ok(t->ctx->cu->cuCtxSynchronize(), "cuCtxSynchronize");
}

static int cmp_float(const void *a, const void *b) {
  const float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* Times one candidate once: a warm-up, then reps launches between events.
 * Appends the times to ms[*n]. A launch that fails prunes the candidate
 * (and returns 0) unless the context is lost (an error). */
static int time_once(tuner *t, rt_tune_cand *c, int n, int reps, float *ms, int *cnt) {
  const rt_cuda_api *cu = t->ctx->cu;
  rt_kernel *k;
  int rc = rt_kernel_for_variant(t->ctx, &c->v, &k);
  for (int r = -1; rc == FA2_OK && r < reps; r++) {
    if (r >= 0) rc = cu_ok(cu->cuEventRecord(t->ev[2 * r], NULL), "cuEventRecord");
    if (rc == FA2_OK) rc = launch(t, k, &c->v, n, (r + 2) % N_SETS);
    if (rc == FA2_OK && r >= 0) rc = cu_ok(cu->cuEventRecord(t->ev[2 * r + 1], NULL), "cuEventRecord");
  }
  if (rc == FA2_OK) rc = cu_ok(cu->cuCtxSynchronize(), "cuCtxSynchronize");
  if (rc != FA2_OK) {
    snprintf(c->pruned, sizeof c->pruned, "fails at N = %d: %.120s", n, fa2_last_error());
    rt_tune_journal_prune(t->journal, c);
    /* a launch refused (too many resources) leaves the context usable;
     * a fault does not, and the run cannot go on */
    return cu_ok(cu->cuCtxSynchronize(), "cuCtxSynchronize after a failed candidate");
  }
  for (int r = 0; r < reps; r++)
    if ((rc = cu_ok(cu->cuEventElapsedTime(&ms[(*cnt)++], t->ev[2 * r], t->ev[2 * r + 1]),
                    "cuEventElapsedTime")) != FA2_OK)
      return rc;
  return FA2_OK;
}

/* Times every candidate of g still in the race at length index i (final:
 * every finalist, with the finalists' launches): rounds over all of them in
 * turn, so clock drifts hit all alike; the median. */
static int time_length(tuner *t, rt_tune_group *g, int i, int final) {
  const int n = t->plan.seqlens[i];
  const int reps = final ? t->r.final_reps : t->r.reps, rounds = final ? t->r.final_rounds : t->r.rounds;
  const int per = reps * rounds;
  float *ms = malloc(sizeof *ms * (size_t)(g->n * per));
  int *cnt = calloc((size_t)g->n, sizeof *cnt);
  int rc = ms && cnt ? FA2_OK : rt_set_error(FA2_ERR_OUT_OF_MEMORY, "fa2_tune: out of memory");
  if (rc == FA2_OK && g->base.pass == GEN_PASS_BWD) rc = prepare_bwd_inputs(t, &g->base, n);
  for (int r = 0; rc == FA2_OK && r < rounds; r++)
    for (int c = 0; rc == FA2_OK && c < g->n; c++) {
      const rt_tune_cand *cd = &g->cands[c];
      if (!cd->pruned[0] && (final ? cd->finalist && cd->fin[i] <= 0 : cd->ms[i] <= 0))
        rc = time_once(t, &g->cands[c], n, reps, ms + c * per, &cnt[c]);
    }
  for (int c = 0; rc == FA2_OK && c < g->n; c++) {
    rt_tune_cand *cd = &g->cands[c];
    double *slot = final ? &cd->fin[i] : &cd->ms[i];
    if (cd->pruned[0] || *slot > 0 || cnt[c] == 0) continue;
    qsort(ms + c * per, (size_t)cnt[c], sizeof *ms, cmp_float);
    *slot = ms[c * per + cnt[c] / 2];
    rt_tune_journal_time(t->journal, cd, n, *slot, final);
  }
  free(ms);
  free(cnt);
  return rc;
}

/* Work of one length of g, for the ETA: FLOPs x launches (the finalists'
 * count is known only after the first pass: estimated until then). */
static double group_weight(const tuner *t, const rt_tune_group *g, int i, int final) {
  int live = 0, fin = 0;
  for (int c = 0; c < g->n; c++) live += !g->cands[c].pruned[0], fin += g->cands[c].finalist;
  if (final && !fin) fin = live < t->r.finalists ? live : t->r.finalists;
  const double f = rt_tune_flops(&g->base, t->plan.seqlens[i]);
  return final ? f * fin * (t->r.final_reps + 1) * t->r.final_rounds
               : f * live * (t->r.reps + 1) * t->r.rounds;
}

/* One length of gr, first pass or final, unless done or out of budget.
 * Returns an fa2 status; *stop when the budget ran out. */
static int time_step(tuner *t, rt_tune_group *gr, int i, int final, int *stop) {
  if (final ? rt_tune_final_timed(gr, i) : rt_tune_timed(gr, i)) return FA2_OK;
  if (t->o->budget_s > 0 && now_s() - t->t0 > t->o->budget_s) return *stop = 1, FA2_OK;
  char what[128];
  snprintf(what, sizeof what, "%s N=%d%s", gr->key, t->plan.seqlens[i], final ? " (finalists)" : "");
  progress(t, what);
  const double w = group_weight(t, gr, i, final);
  int rc = time_length(t, gr, i, final);
  t->pr.done++;
  t->w_done += w;
  progress(t, what);
  return rc;
}

/* Steps of g's finalists pass still to run, and their weight *w. */
static int final_steps(const tuner *t, const rt_tune_group *g, double *w) {
  int n = 0;
  *w = 0;
  for (int i = 0; t->r.finalists >= 2 && i < t->plan.n_seqlens; i++)
    if (!rt_tune_timed(g, i) || !rt_tune_final_timed(g, i)) n++, *w += group_weight(t, g, i, 1);
  return n;
}

/* Returns FA2_OK; *complete 0 when the budget ran out first. */
static int time_all(tuner *t, int *complete) {
  t->pr = (fa2_tune_progress){"time", 0, 0, 0, -1, ""};
  t->phase_t0 = now_s(), t->w_total = 0, t->w_done = 0;
  const int n_len = t->plan.n_seqlens;
  for (int g = 0; g < t->plan.n; g++) {
    rt_tune_group *gr = &t->plan.groups[g];
    rt_tune_finalists(gr, n_len, t->r.finalists); /* from a resumed first pass */
    for (int i = 0; i < n_len; i++)
      if (!rt_tune_timed(gr, i)) t->pr.total++, t->w_total += group_weight(t, gr, i, 0);
    double w;
    t->pr.total += final_steps(t, gr, &w);
    t->w_total += w;
  }
  int stop = 0, rc = FA2_OK;
  for (int g = 0; g < t->plan.n && !stop && rc == FA2_OK; g++) {
    rt_tune_group *gr = &t->plan.groups[g];
    double w;
    const int steps = final_steps(t, gr, &w); /* as counted above: g is untouched so far */
    for (int i = 0; i < n_len && !stop && rc == FA2_OK; i++) rc = time_step(t, gr, i, 0, &stop);
    if (stop || rc != FA2_OK) break;
    if (rt_tune_finalists(gr, n_len, t->r.finalists))
      for (int i = 0; i < n_len && !stop && rc == FA2_OK; i++) rc = time_step(t, gr, i, 1, &stop);
    else if (steps) { /* one candidate leads everywhere: nothing left to decide */
      t->pr.done += steps, t->w_done += w;
      progress(t, gr->key);
    }
  }
  *complete = !stop;
  return rc; /* fa2_tune chooses for every group afterwards */
}

/* ---- the entry point ---- */

static int check_options(const fa2_tune_options *o, rt_tune_reps *r) {
  r->reps = o->reps ? o->reps : o->wide ? WIDE_REPS : FIRST_REPS;
  r->rounds = o->rounds ? o->rounds : o->wide ? WIDE_ROUNDS : FIRST_ROUNDS;
  r->finalists = o->finalists < 0 ? 0 : o->finalists ? o->finalists : RT_TUNE_MAX_FINALISTS;
  r->final_reps = o->final_reps ? o->final_reps : FINAL_REPS;
  r->final_rounds = FINAL_ROUNDS;
  if (r->reps < 1 || r->reps > MAX_REPS)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT, "reps is %d: allowed 1 to %d (0: default)",
                        r->reps, MAX_REPS);
  if (r->rounds < 1 || r->rounds > MAX_ROUNDS)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT, "rounds is %d: allowed 1 to %d (0: default)",
                        r->rounds, MAX_ROUNDS);
  if (o->finalists > RT_TUNE_MAX_SEQLENS * 4)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "finalists is %d: allowed 2 to %d (0: default %d, -1: no second pass)",
                        o->finalists, RT_TUNE_MAX_SEQLENS * 4, RT_TUNE_MAX_FINALISTS);
  if (r->finalists == 1)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "finalists is 1: allowed 2 to %d (0: default %d, -1: no second pass)",
                        RT_TUNE_MAX_SEQLENS * 4, RT_TUNE_MAX_FINALISTS);
  if (r->final_reps < 1 || r->final_reps > MAX_REPS)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "final_reps is %d: allowed 1 to %d (0: default %d)", r->final_reps,
                        MAX_REPS, FINAL_REPS);
  if (o->budget_s < 0 || isnan(o->budget_s))
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT, "budget_s is %g: allowed > 0 (0: none)",
                        o->budget_s);
  if (o->n_seqlens < 0 || (o->n_seqlens > 0 && !o->seqlens))
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT, "seqlens is %s with n_seqlens %d",
                        o->seqlens ? "set" : "NULL", o->n_seqlens);
  return FA2_OK;
}

static int write_results(tuner *t, const char *db, const rt_identity *id) {
  char err[1200];
  if (!t->o->dry_run) {
    json_t *entries = rt_tune_entries(&t->plan);
    int bad = rt_tuning_save(db, id, entries, err, sizeof err);
    json_decref(entries);
    if (bad) return rt_set_error(FA2_ERR_INTERNAL, "fa2_tune: %s", err);
  }
  if (t->o->report_path) {
    json_t *rep = rt_tune_report(&t->plan, id, &t->r);
    json_object_set_new(rep, "database", json_string(t->o->dry_run ? "" : db));
    int bad = json_dump_file(rep, t->o->report_path, JSON_INDENT(1));
    json_decref(rep);
    if (bad) return rt_set_error(FA2_ERR_INTERNAL, "fa2_tune: cannot write %s", t->o->report_path);
  }
  return FA2_OK;
}

fa2_status fa2_tune(fa2_context *ctx, const fa2_tune_options *options, int *complete) {
  if (complete) *complete = 0;
  if (!ctx) return (fa2_status)rt_set_error(FA2_ERR_INVALID_ARGUMENT, "ctx is NULL");
  fa2_tune_options o = options ? *options : (fa2_tune_options){0};
  tuner t = {.ctx = ctx, .o = &o, .t0 = now_s()};
  int rc = check_options(&o, &t.r);
  if (rc != FA2_OK) return (fa2_status)rc;
  const char *db = o.db_path ? o.db_path : ctx->tuning_path;
  if (!o.dry_run && !db[0])
    return (fa2_status)rt_set_error(FA2_ERR_NOT_AVAILABLE,
                                    "fa2_tune: no database path (tuning switched off or no cache "
                                    "directory): set options.db_path, or dry_run");
  char err[2048];
  gen_spec spec;
  if ((rc = rt_source_spec(&ctx->source, o.spec_path, &spec, err, sizeof err)) != FA2_OK)
    return (fa2_status)rt_set_error(rc, "%s", err);
  rc = rt_tune_plan_make(&ctx->source, &spec, ctx->arch, ctx->smem_optin, o.wide,
                         o.seqlens ? o.seqlens : DEFAULT_SEQLENS,
                         o.seqlens ? o.n_seqlens : (int)(sizeof DEFAULT_SEQLENS / sizeof(int)),
                         &t.plan, err, sizeof err);
  rt_source_spec_free(&spec);
  if (rc != FA2_OK) return (fa2_status)rt_set_error(rc, "fa2_tune: %s", err);
  for (int g = 0; g < t.plan.n; g++) {
    t.any_bwd |= t.plan.groups[g].base.pass == GEN_PASS_BWD;
    t.any_varlen |= t.plan.groups[g].base.varlen;
  }

  rt_identity id;
  rt_ctx_identity(ctx, &id);
  char journal[1200] = "", header[512];
  rt_tune_journal_header(&t.plan, &id, &t.r, header, sizeof header);
  if (db[0]) {
    snprintf(journal, sizeof journal, "%s.%sjournal", db, o.wide ? "wide." : "");
    if (o.fresh) unlink(journal);
    const int used = rt_tune_journal_resume(journal, header, &t.plan);
    if (used)
      rt_logf(&ctx->log, FA2_LOG_WARN, "fa2 tune: resuming, %d results from %s", used, journal);
    rt_mkdirs_parent(journal); /* no folder: no journal, the run goes on */
    t.journal = rt_tune_journal_open(journal, header);
  }
  CUcontext saved;
  int done = 0;
  if ((rc = rt_ctx_enter(ctx, &saved)) == FA2_OK) {
    rc = load_candidates(&t);
    const int n_ev = 2 * (t.r.reps > t.r.final_reps ? t.r.reps : t.r.final_reps);
    for (int r = 0; rc == FA2_OK && r < n_ev; r++)
      rc = cu_ok(ctx->cu->cuEventCreate(&t.ev[r], RT_CU_EVENT_DEFAULT), "cuEventCreate");
    if (rc == FA2_OK) rc = alloc_buffers(&t);
    if (rc == FA2_OK) rc = time_all(&t, &done);
    for (int r = 0; r < n_ev; r++)
      if (t.ev[r]) ctx->cu->cuEventDestroy(t.ev[r]);
    free_buffers(&t);
    rt_ctx_leave(ctx, saved);
  }
  if (t.journal) fclose(t.journal);
  for (int g = 0; rc == FA2_OK && g < t.plan.n; g++) rt_tune_choose(&t.plan.groups[g], t.plan.n_seqlens);
  if (rc == FA2_OK) rc = write_results(&t, db, &id);
  if (rc == FA2_OK && done && journal[0]) unlink(journal);
  rt_tune_plan_free(&t.plan);
  if (complete) *complete = rc == FA2_OK && done;
  return (fa2_status)rc;
}

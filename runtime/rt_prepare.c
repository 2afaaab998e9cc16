/* rt_prepare: load or compile many kernels up front, on options.jobs
 * threads (NVRTC compiles in parallel; the generator is serialized). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "rt_context.h"
#include "rt_error.h"
#include "rt_kernel.h"
#include "rt_validate.h"

typedef struct prep {
  fa2_context *ctx;
  const fa2_kernel_desc *descs; /* either descs */
  const gen_variant *variants;  /* or completed variants (a spec) */
  const gen_variant *const *each; /* or variants that may fail one by one (the tuner) */
  int *rcs;
  char (*msgs)[256];
  void (*done)(void *user, int i);
  void *user;
  int n;
  atomic_int next, failed;
  pthread_mutex_t lock;
  int rc;
  char msg[2048];
} prep;

static int prepare_desc(fa2_context *ctx, const fa2_kernel_desc *d, int i) {
  char err[2048];
  rt_kernel *k;
  if (d->name) {
    gen_variant v;
    int rc = rt_source_from_name(&ctx->source, d->name, &v, err, sizeof err);
    if (rc == FA2_OK) rc = rt_source_complete(&ctx->source, &v, ctx->arch, err, sizeof err);
    if (rc != FA2_OK) return rt_set_error(rc, "kernels[%d] \"%s\": %s", i, d->name, err);
    return rt_kernel_for_variant(ctx, &v, &k);
  }
  if (d->seqlen < 0)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "kernels[%d]: seqlen %d: allowed 0 (any length) or a length > 0", i,
                        d->seqlen);
  int rc = rt_validate_kernel(d->dtype, d->head_dim, d->causal, d->stab, d->beta, d->eps);
  if (rc != FA2_OK) {
    snprintf(err, sizeof err, "%s", fa2_last_error());
    return rt_set_error(rc, "kernels[%d]: %s", i, err);
  }
  rt_request r;
  rt_request_desc(d, rt_tuning_has_lengths(ctx->tuning), &r);
  if (rt_mc_get(&ctx->mc, &r, sizeof r)) {
    atomic_fetch_add_explicit(&ctx->memory_hits, 1, memory_order_relaxed);
    return FA2_OK;
  }
  return rt_kernel_for_request(ctx, &r, NULL, 0, &k);
}

static int prepare_variant(fa2_context *ctx, const gen_variant *spec_v) {
  char err[2048];
  gen_variant v = *spec_v;
  int rc = rt_source_complete(&ctx->source, &v, ctx->arch, err, sizeof err);
  if (rc != FA2_OK) return rt_set_error(rc, "%s: %s", spec_v->name, err);
  rt_kernel *k;
  return rt_kernel_for_variant(ctx, &v, &k);
}

/* One of p->each: its status and message kept, the others go on. */
static void prepare_one(prep *p, int i) {
  rt_kernel *k;
  int rc = rt_kernel_for_variant(p->ctx, p->each[i], &k);
  pthread_mutex_lock(&p->lock);
  p->rcs[i] = rc;
  snprintf(p->msgs[i], sizeof p->msgs[i], "%s", rc == FA2_OK ? "" : fa2_last_error());
  if (p->done) p->done(p->user, i);
  pthread_mutex_unlock(&p->lock);
}

static void *worker(void *arg) {
  prep *p = arg;
  int i;
  while (!atomic_load(&p->failed) && (i = atomic_fetch_add(&p->next, 1)) < p->n) {
    if (p->each) {
      prepare_one(p, i);
      continue;
    }
    int rc = p->descs ? prepare_desc(p->ctx, &p->descs[i], i)
                      : prepare_variant(p->ctx, &p->variants[i]);
    if (rc != FA2_OK) {
      pthread_mutex_lock(&p->lock);
      if (p->rc == FA2_OK) { /* the first failure is the one reported */
        p->rc = rc;
        snprintf(p->msg, sizeof p->msg, "%s", fa2_last_error());
      }
      pthread_mutex_unlock(&p->lock);
      atomic_store(&p->failed, 1);
    }
  }
  return NULL;
}

static fa2_status run(prep *p) {
  pthread_mutex_init(&p->lock, NULL);
  int threads = p->ctx->jobs < p->n ? p->ctx->jobs : p->n;
  pthread_t tid[64];
  int started = 0;
  for (int t = 1; t < threads && t < 64; t++)
    if (pthread_create(&tid[started], NULL, worker, p) == 0) started++;
  worker(p); /* the caller works too: one thread needs no pool */
  for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
  pthread_mutex_destroy(&p->lock);
  if (p->rc != FA2_OK) return (fa2_status)rt_set_error(p->rc, "%s", p->msg);
  return FA2_OK;
}

int rt_prepare_each(fa2_context *ctx, const gen_variant *const *variants, int n, int *rcs,
                    char (*msgs)[256], void (*done)(void *user, int i), void *user) {
  prep p = {.ctx = ctx, .each = variants, .rcs = rcs, .msgs = msgs, .done = done, .user = user,
            .n = n};
  return run(&p);
}

fa2_status fa2_prepare(fa2_context *ctx, const fa2_kernel_desc *kernels, int n) {
  if (!ctx) return (fa2_status)rt_set_error(FA2_ERR_INVALID_ARGUMENT, "ctx is NULL");
  if (n < 0 || (n > 0 && !kernels))
    return (fa2_status)rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                                    "kernels is %s and n is %d: need n >= 0 descriptions",
                                    kernels ? "set" : "NULL", n);
  prep p = {.ctx = ctx, .descs = kernels, .n = n};
  return run(&p);
}

fa2_status fa2_prepare_spec(fa2_context *ctx, const char *spec_path) {
  if (!ctx) return (fa2_status)rt_set_error(FA2_ERR_INVALID_ARGUMENT, "ctx is NULL");
  gen_spec spec;
  char err[2048];
  int rc = rt_source_spec(&ctx->source, spec_path, &spec, err, sizeof err);
  if (rc != FA2_OK) return (fa2_status)rt_set_error(rc, "%s", err);
  /* Forward variants built for this device (a spec's wgmma tiles, and "auto"
   * tiles that differ per arch, are each their arch's pick); they keep spec order. */
  int n = 0, backward = 0, other_arch = 0;
  for (int i = 0; i < spec.n_variants; i++) {
    if (spec.variants[i].pass != GEN_PASS_FWD)
      backward++;
    else if (!gen_spec_runs_on(&spec, i, ctx->arch))
      other_arch++;
    else
      spec.variants[n++] = spec.variants[i];
  }
  if (backward)
    rt_logf(&ctx->log, FA2_LOG_INFO, "%s: %d backward variant(s) skipped (not available yet)",
            spec_path ? spec_path : "default spec", backward);
  if (other_arch)
    rt_logf(&ctx->log, FA2_LOG_INFO, "%s: %d variant(s) of other arches skipped (this is %s)",
            spec_path ? spec_path : "default spec", other_arch, ctx->arch);
  prep p = {.ctx = ctx, .variants = spec.variants, .n = n};
  fa2_status st = run(&p);
  rt_source_spec_free(&spec);
  return st;
}

/* rt_tune: the autotuner's plan, choices and journal, apart from the GPU.
 *
 * A plan has one group per tuning key of a spec ("fwd_bf16_d128_causal_robust",
 * "bwd_bf16_d64"): the candidate tiles of that key that the generator
 * accepts for the arch, the built-in tiles among them. rt_tune_gpu.c loads
 * them, prunes those that spill or do not load, times the rest per sequence
 * length and calls rt_tune_choose. Every timing also goes to a journal (one
 * JSON line each) so that an interrupted run resumes where it stopped.
 */
#ifndef RT_TUNE_H
#define RT_TUNE_H
#include <jansson.h>
#include <stdio.h>

#include "gen.h"
#include "rt_identity.h"
#include "rt_source.h"

enum { RT_TUNE_MAX_SEQLENS = 8 };

typedef struct rt_tune_cand {
  gen_variant v;                  /* completed for the arch */
  int is_default;                 /* the built-in tiles */
  char pruned[160];               /* "" while in the race, else why it is out */
  double ms[RT_TUNE_MAX_SEQLENS]; /* median per sequence length; 0: not timed */
} rt_tune_cand;

typedef struct rt_tune_group {
  char key[80];      /* where the choice is stored in the database */
  gen_variant base;  /* pass, dtype, head_dim, causal, stab, beta, eps */
  rt_tune_cand *cands;
  int n;
  int best;          /* index of the choice, -1: none yet */
  double worst;      /* the choice's largest ms / fastest ms over the timed lengths */
} rt_tune_group;

typedef struct rt_tune_plan {
  rt_tune_group *groups;
  int n;
  int seqlens[RT_TUNE_MAX_SEQLENS];
  int n_seqlens;
  int wide;
} rt_tune_plan;

/* The groups of spec for arch (spec order), their candidates from the
 * normal grid or, wide, the larger grid of a manual sweep. smem_limit: the
 * device's per-block opt-in (0: the arch's). Returns an fa2 status. */
int rt_tune_plan_make(rt_source *s, const gen_spec *spec, const char *arch, int smem_limit,
                      int wide, const int *seqlens, int n_seqlens, rt_tune_plan *out, char *err,
                      size_t len);
void rt_tune_plan_free(rt_tune_plan *p);

/* Picks the candidate whose worst ratio to the fastest, over the lengths
 * every candidate in the race was timed at, is smallest (ties: the smaller
 * sum of times). best -1 when nothing was timed. */
void rt_tune_choose(rt_tune_group *g, int n_seqlens);

/* 1 when group g has every candidate in the race timed at length index i. */
int rt_tune_timed(const rt_tune_group *g, int i);

/* Journal: a first line naming the run (identity and settings); then
 * {"v": name, "n": seqlen, "ms": x} or {"v": name, "pruned": why}.
 * rt_tune_journal_resume applies a journal of the same run to the plan and
 * returns how many records it used; a journal of another run is removed. */
void rt_tune_journal_header(const rt_tune_plan *p, const rt_identity *id, int reps, int rounds,
                            char *buf, size_t len);
int rt_tune_journal_resume(const char *path, const char *header, rt_tune_plan *p);
/* Opens path for appending (writing the header when it is new). NULL on
 * failure: the run goes on without a journal. */
FILE *rt_tune_journal_open(const char *path, const char *header);
void rt_tune_journal_time(FILE *f, const rt_tune_cand *c, int seqlen, double ms);
void rt_tune_journal_prune(FILE *f, const rt_tune_cand *c);

/* The database entries of the choices (key -> tiles and their timings). */
json_t *rt_tune_entries(const rt_tune_plan *p);
/* Every candidate, timing and choice, for `fa2 tune --report`. */
json_t *rt_tune_report(const rt_tune_plan *p, const rt_identity *id, int reps, int rounds);

/* Forward FLOPs of one call at length n of group g's shape table
 * (batch * n = 16384 tokens, heads * head_dim = 2048): 4 B H n^2 d, halved
 * when causal, times 2.5 for a backward. */
double rt_tune_flops(const gen_variant *v, int n);
void rt_tune_shape(const gen_variant *v, int n, int *batch, int *heads);

#endif

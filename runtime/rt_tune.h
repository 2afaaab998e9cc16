/* rt_tune: the autotuner's plan, choices and journal, apart from the GPU.
 *
 * A plan has one group per tuning key of a spec ("fwd_bf16_d128_causal_robust",
 * "bwd_bf16_d64"): the candidate tiles of that key that the generator
 * accepts for the arch, the built-in tiles among them. rt_tune_gpu.c loads
 * them, prunes those that spill or do not load, times the rest per sequence
 * length, re-times the finalists (rt_tune_finalists) with more launches and
 * calls rt_tune_choose. Every timing also goes to a journal (one JSON line
 * each) so that an interrupted run resumes where it stopped.
 */
#ifndef RT_TUNE_H
#define RT_TUNE_H
#include <jansson.h>
#include <stdio.h>

#include "gen.h"
#include "rt_identity.h"
#include "rt_source.h"

enum { RT_TUNE_MAX_SEQLENS = 8 };

/* Finalists: the candidates within RT_TUNE_FINAL_WITHIN of the fastest at
 * some length in the first pass (each length's fastest first, then by worst
 * ratio), at most RT_TUNE_MAX_FINALISTS, re-timed with more launches: a
 * first-pass median of a few launches moves by 2-4 % from run to run, as
 * much as the differences it has to decide. */
#define RT_TUNE_FINAL_WITHIN 1.05
enum { RT_TUNE_MAX_FINALISTS = 6 };
/* A length gets its own tiles when they beat the key's tiles there by more
 * than this (each distinct tile shape is one more kernel to load). */
#define RT_TUNE_LENGTH_GAIN 1.015

typedef struct rt_tune_cand {
  gen_variant v;                   /* completed for the arch */
  int is_default;                  /* the built-in tiles */
  char pruned[160];                /* "" while in the race, else why it is out */
  double ms[RT_TUNE_MAX_SEQLENS];  /* first pass: median per sequence length; 0: not timed */
  int finalist;
  double fin[RT_TUNE_MAX_SEQLENS]; /* finalists: the re-timed median; 0: not yet */
} rt_tune_cand;

typedef struct rt_tune_group {
  char key[80];      /* where the choice is stored in the database */
  gen_variant base;  /* pass, dtype, head_dim, causal, stab, beta, eps */
  rt_tune_cand *cands;
  int n;
  int best;          /* index of the choice, -1: none yet */
  double worst;      /* the choice's largest ms / fastest ms over the timed lengths */
  int final;         /* 1: chosen on the finalists' re-timed medians */
  int per_len[RT_TUNE_MAX_SEQLENS]; /* the candidate for length i; == best unless
                                       another beats it there by RT_TUNE_LENGTH_GAIN */
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

/* Marks g's finalists from the first pass (every length timed); returns
 * how many. max_finalists 0: none. */
int rt_tune_finalists(rt_tune_group *g, int n_seqlens, int max_finalists);

/* Picks the candidate whose worst ratio to the fastest, over the lengths
 * every candidate in the race was timed at, is smallest (ties: the smaller
 * sum of times); among the finalists with their re-timed medians once all
 * of them are re-timed, else over the first pass. Then per length the
 * fastest there (per_len). best -1 when nothing was timed. */
void rt_tune_choose(rt_tune_group *g, int n_seqlens);

/* 1 when group g has every candidate in the race timed at length index i
 * (rt_tune_final_timed: every finalist re-timed there). */
int rt_tune_timed(const rt_tune_group *g, int i);
int rt_tune_final_timed(const rt_tune_group *g, int i);

/* Journal: a first line naming the run (identity and settings); then
 * {"v": name, "n": seqlen, "ms": x}, {"v": name, "n": seqlen, "fin": x} (a
 * finalist's re-timed median) or {"v": name, "pruned": why}.
 * rt_tune_journal_resume applies a journal of the same run to the plan and
 * returns how many records it used; a journal of another run is removed. */
typedef struct rt_tune_reps {
  int reps, rounds;             /* first pass: launches per round, rounds */
  int finalists, final_reps, final_rounds; /* finalists 0: no second pass */
} rt_tune_reps;
void rt_tune_journal_header(const rt_tune_plan *p, const rt_identity *id, const rt_tune_reps *r,
                            char *buf, size_t len);
int rt_tune_journal_resume(const char *path, const char *header, rt_tune_plan *p);
/* Opens path for appending (writing the header when it is new). NULL on
 * failure: the run goes on without a journal. */
FILE *rt_tune_journal_open(const char *path, const char *header);
void rt_tune_journal_time(FILE *f, const rt_tune_cand *c, int seqlen, double ms, int final);
void rt_tune_journal_prune(FILE *f, const rt_tune_cand *c);

/* The database entries of the choices (key -> tiles, their timings and,
 * when some length has other tiles, by_seqlen for every timed length). */
json_t *rt_tune_entries(const rt_tune_plan *p);
/* Every candidate, timing and choice, for `fa2 tune --report`. */
json_t *rt_tune_report(const rt_tune_plan *p, const rt_identity *id, const rt_tune_reps *r);

/* Forward FLOPs of one call at length n of group g's shape table
 * (batch * n = 16384 tokens, heads * head_dim = 2048): 4 B H n^2 d, halved
 * when causal, times 2.5 for a backward; a varlen variant's, the sum over
 * the documents of its mix at n. */
double rt_tune_flops(const gen_variant *v, int n);

/* The varlen kernels are tuned on a realistic mix of lengths per tuned
 * length n: RT_TUNE_MIX_TOKENS tokens of documents, the first n long (so
 * max_seqlen, what a call's length class reads, is n), the others drawn from
 * a log-normal distribution with median n / 8 and sigma 1 (a long tail: at
 * n = 2048 it is close to bench/varlen_bench.py's mix, median 256, longest
 * about 2000), cut to at most n, the last one cut to fill the tokens
 * exactly; a fixed seed per n. Writes the lengths to lens (room for
 * RT_TUNE_MIX_TOKENS) and returns how many. */
enum { RT_TUNE_MIX_TOKENS = 16384 };
int rt_tune_mix(int n, int *lens);
void rt_tune_shape(const gen_variant *v, int n, int *batch, int *heads);
/* The most heads rt_tune_shape gives a group of p (2048 / the smallest head dim):
 * what the tuner's LSE is sized for. */
int rt_tune_max_heads(const rt_tune_plan *p);
/* The backward workspace the tuner's calls need at `tokens` rows: the largest of its
 * backward groups' (each with rt_tune_shape's heads; dQ's accumulator has the tiles'
 * columns, so d = 104's 19 heads of 128 outgrow d = 64's 32 heads of 64). */
size_t rt_tune_bwd_workspace(const rt_tune_plan *p, long long tokens);

#endif

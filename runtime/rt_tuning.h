/* rt_tuning: what the tuning database says about a problem.
 *
 * Provisional format (the autotuner issue owns it; this reader is the
 * runtime's side of the contract), one JSON file per GPU:
 *   {"format": "fa2gen-tuning", "version": 1, "arch": "sm_90",
 *    "entries": {"fwd_bf16_d128_causal": {"block_m": 128, "block_n": 64,
 *                "warps": 4, "stages": 2, "stab": "robust", "beta": 2,
 *                "eps": 0.001}, ...}}
 * Keys are "{pass}_{dtype}_d{head_dim}[_causal]". Tiles apply to every
 * stabilization mode; stab/beta/eps apply to FA2_STAB_TUNED. A file for
 * another arch, or one that does not parse, is ignored with a warning and
 * the built-in defaults apply.
 */
#ifndef RT_TUNING_H
#define RT_TUNING_H
#include "rt_log.h"

typedef struct rt_tuning rt_tuning;

typedef struct rt_tuning_entry {
  int block_m, block_n, warps, stages; /* block_m 0: no tiles recorded */
  int stab;                            /* GEN_STAB_*, -1: none recorded */
  double beta, eps;
} rt_tuning_entry;

/* path NULL: no database (never fails). Returns NULL when there is nothing
 * usable (and warns when path was given). */
rt_tuning *rt_tuning_load(const char *path, const char *arch, const rt_log *log);
void rt_tuning_free(rt_tuning *t);

/* 1 and *out when the database has key, else 0. t may be NULL. */
int rt_tuning_find(const rt_tuning *t, const char *key, rt_tuning_entry *out);

#endif

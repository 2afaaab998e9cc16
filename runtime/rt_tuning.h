/* rt_tuning: the tuning database, read side (rt_tuning_write.c writes it).
 *
 * One JSON file per GPU identity (rt_identity.h), by default
 * <cache dir>/tuning/<slug>.json, written by `fa2 tune`:
 *   {"format": "fa2gen-tuning", "version": 2,
 *    "gpu": {"name": "NVIDIA H100 80GB HBM3", "arch": "sm_90", "sm_count": 132},
 *    "made_with": {"fa2gen": "0.1.0", "driver": 13000, "nvrtc": "13.0"},
 *    "entries": {
 *      "fwd_bf16_d128_causal_robust": {"block_m": 128, "block_n": 64, "warps": 4,
 *                                      "stages": 2},
 *      "fwd_bf16_d128_causal": {"stab": "robust", "beta": 3, "eps": 0.001},
 *      "bwd_bf16_d128": {"block_m": 64, "block_n": 128, "warps": 8, "stages": 2,
 *                        "by_seqlen": {"1024": {"block_m": 64, "block_n": 64, "warps": 4,
 *                                               "stages": 2}, "16384": {...}, ...}}}}
 * Keys are "{pass}_{dtype}_d{head_dim}[_causal][_varlen][_{mode}]". A forward looks
 * for its mode's key, then the key without a mode; tiles there apply to
 * every mode, stab/beta/eps (fixed-length keys only) to FA2_STAB_TUNED. A
 * variable-length call looks for its _varlen keys first (tuned on a mix of
 * lengths, rt_tune.h), then the fixed-length ones. by_seqlen (optional) has the
 * tiles per tuned sequence length: a call takes those of the length nearest
 * to sqrt(seqlen_q * seqlen_k) on a log scale (a tie: the shorter). Other
 * fields (timings) are for people. A file that does not parse, is of another format or version,
 * or was made for another identity is ignored with one warning and the
 * built-in defaults apply; so is a single entry's value that is not a tile
 * size (the other fields of the entry still apply).
 */
#ifndef RT_TUNING_H
#define RT_TUNING_H
#include <jansson.h>

#include "rt_identity.h"
#include "rt_log.h"

#define RT_TUNING_FORMAT "fa2gen-tuning"
enum { RT_TUNING_VERSION = 2, RT_TUNING_MAX_TILE = 1024 };

typedef struct rt_tuning rt_tuning;

typedef struct rt_tuning_entry {
  int block_m, block_n, warps, stages; /* block_m 0: no tiles recorded */
  int wgmma;                           /* "wgmma": true, a Hopper warpgroup-MMA tile */
  int ws;                              /* "ws": true, a warp-specialized one (TMA) */
  int seqlen;                          /* the by_seqlen length they came from; 0: the key's */
  int stab;                            /* GEN_STAB_*, -1: none recorded */
  double beta, eps;                    /* 0: not recorded */
} rt_tuning_entry;

/* path NULL or "": no database (never fails). now: this device (NULL: no
 * identity check, for the fuzzer). missing_ok: a missing file is normal
 * (the default path): no warning. Returns NULL when nothing is usable. */
rt_tuning *rt_tuning_load(const char *path, const rt_identity *now, int missing_ok,
                          const rt_log *log);
void rt_tuning_free(rt_tuning *t);
const char *rt_tuning_path(const rt_tuning *t);
/* The log the database was loaded with (a quiet one for NULL). */
const rt_log *rt_tuning_log(const rt_tuning *t);

/* 1 when some entry has by_seqlen (t may be NULL): only then do calls
 * need their length class (rt_select.h). */
int rt_tuning_has_lengths(const rt_tuning *t);

/* 1 and *out when the database has key, else 0. t may be NULL. seqlen > 0:
 * the tiles of its nearest length in by_seqlen when the entry has them. */
int rt_tuning_find(const rt_tuning *t, const char *key, double seqlen, rt_tuning_entry *out);

/* The identity a database root records. Returns 0, or -1 with why in err
 * when the format, version or identity fields are missing or wrong. */
int rt_tuning_identity(json_t *root, rt_identity *id, char *err, size_t len);

/* ---- rt_tuning_write.c ---- */

/* Stores entries (key -> object) into the database at path: merged field
 * by field into the file's entries when it has the same identity (id),
 * else a new file; an entry with tiles replaces the old tile fields
 * together (block_m, block_n, warps, stages, ms, by_seqlen). The folder is created; the file is replaced whole
 * (temporary file + rename), so readers never see half of it. Returns 0,
 * or -1 with why in err (nothing changed). */
int rt_tuning_save(const char *path, const rt_identity *id, json_t *entries, char *err,
                   size_t len);

#endif

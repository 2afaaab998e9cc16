/* rt_select: requests and variant selection (see rt_select.h). */
#include "rt_select.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rt_head_dim.h"

enum { LEN_CLASS_STEPS = 8 }; /* length classes per octave */

static int32_t len_class(long long seqlen_q, long long seqlen_k) {
  const double n = sqrt((double)seqlen_q * (double)seqlen_k);
  return n > 1 ? (int32_t)lround(LEN_CLASS_STEPS * log2(n)) : 0;
}

/* Built-in tiles by length: where the built-in tile of a key (gen/defaults.lua) loses
 * to another from some length on, the other from there (a tuning database's tiles
 * still come first). Plain calls only (forwards in `none`, `robust` or `balanced`),
 * fixed length or varlen whose sequences fill at least 3/4 of batch x seqlen_q rows (a
 * ragged batch's persistent tile walks mostly empty work items: on a mix of documents
 * of median 256 and longest 2003 at d = 64, 1.45x the wgmma tile's forward; "Session
 * 20"), as measured on sm_90 at d = 64 (bench/NOTES.md "Session 15", "Session 17", "Session
 * 18", "Session 25"). Forward: causal, the wgmma tile m64n64w4s2wg from N = 256 (up to four
 * blocks of 110-121 registers an SM), 1.13x the built-in m64n128w4s2wg at 256, 1.05-1.07x at
 * 512 (balanced 1.28x, 1.19x; non-causal at 512 the built-in stays the tuner's pick); the
 * persistent ws tile m128n128w12s2ws from N = 1k, 0.99-1.06x the
 * wgmma tile there on the H200 (at 512 0.99-1.04x: not taken); the ws tile
 * m192n128w16s2ws from N = 2k (8k causal), 1.07-1.31x the wgmma tile and 0.99-1.21x
 * m128 there, while causal m128 led it by 4-10 % at 2k-4k. The backward has no rule:
 * its warp-specialized tile (gen/defaults.lua BWD_TILES_SM90_WS) leads at every length
 * ("Session 26"; session 18's m64n128w8s3wg rule from 4k is gone). Off sm_90 the generator refuses the
 * tiles and the built-in one stays. A head dim's rules by rising length: the last one
 * reached holds; a head dim on another's tiles (d = 56 on 64's, columns masked; on sm_90
 * d 33-48 too, whose wgmma tiles are 64's) takes that one's rules. */
typedef struct length_rule {
  int pass, head_dim, min_len, min_len_causal;
  int block_m, block_n, warps, stages, wgmma, ws;
} length_rule;
static const length_rule LENGTH_RULES[] = {{GEN_PASS_FWD, 64, 0, 256, 64, 64, 4, 2, 1, 0},
                                           {GEN_PASS_FWD, 64, 1024, 1024, 128, 128, 12, 2, 1, 1},
                                           {GEN_PASS_FWD, 64, 2048, 8192, 192, 128, 16, 2, 1, 1}};

/* The window rule: sm_90's backward at d <= 64 keeps the wgmma tile for a window (gen/variant.lua
 * auto_pick: the generator does not know the window's size, a launch argument), but from a
 * span (left + right + 1 keys) of RT_WIDE_WINDOW on, or a side without a bound, the ws tile: 0.88-0.91x
 * the wgmma tile's forward + backward time at spans of 512 to 3072 keys, where narrower
 * windows' key blocks have too few steps to fill its pipeline (1.10-1.16x at 128 and 256;
 * H200, bench/NOTES.md "Session 28"). */
static const length_rule WINDOW_RULE = {GEN_PASS_BWD, 64, 0, 0, 64, 128, 12, 2, 1, 1};

static int wide_window(const fa2_bwd_args *a) {
  return a->window && (a->window_left < 0 || a->window_right < 0 ||
                       (long long)a->window_left + a->window_right + 1 >= RT_WIDE_WINDOW);
}

/* The length class from which r takes the rule's tile (a min_len of 0: never). */
static int32_t rule_class(const length_rule *lr, const rt_request *r) {
  const int n = r->causal ? lr->min_len_causal : lr->min_len;
  return n > 0 ? len_class(n, n) : INT32_MAX;
}

/* The rule r takes at length class cls, or NULL. */
static const length_rule *length_rule_at(const rt_request *r, int32_t cls) {
  if (r->ragged || r->window || r->alibi || r->softcap || r->dropout || r->sinks ||
      r->stab == FA2_STAB_PAPER || r->stab == FA2_STAB_TUNED || cls <= 0)
    return NULL;
  const length_rule *hit = NULL;
  for (size_t i = 0; i < sizeof LENGTH_RULES / sizeof *LENGTH_RULES; i++)
    if (LENGTH_RULES[i].pass == r->pass && LENGTH_RULES[i].head_dim == rt_widest_tile_head_dim(r->head_dim) &&
        cls >= rule_class(&LENGTH_RULES[i], r))
      hit = &LENGTH_RULES[i];
  return hit;
}

/* Without per-length tuned tiles a request under length rules carries the class of
 * the rule it reaches (its threshold's), or none below them: one request per rule and
 * shape, not one per eighth of an octave. */
static void rule_length(rt_request *r, long long seqlen_q, long long seqlen_k) {
  const length_rule *lr = length_rule_at(r, len_class(seqlen_q, seqlen_k));
  if (lr) r->len_class = rule_class(lr, r);
}

static void normalize(rt_request *r, int stab, double beta, double eps) {
  r->stab = stab;
  if (stab == FA2_STAB_NONE || stab == FA2_STAB_BALANCED) return;
  if (stab == FA2_STAB_TUNED) { /* 0 stays 0: the database decides */
    r->beta = beta;
    r->eps = eps;
    return;
  }
  r->beta = beta != 0 ? beta : FA2_DEFAULT_BETA;
  r->eps = eps != 0 ? eps : FA2_DEFAULT_EPS;
}

/* The fields a forward's and a backward's call arguments (fa2_fwd_args,
 * fa2_bwd_args) give a request alike. */
#define REQUEST_SHAPE(r, a, with_length)                                                   \
  do {                                                                                     \
    (r)->dtype = (int)(a)->q.dtype;                                                        \
    (r)->head_dim = (a)->head_dim;                                                         \
    (r)->causal = (a)->causal != 0;                                                        \
    (r)->varlen = (a)->cu_seqlens_q != NULL;                                               \
    (r)->window = (a)->window != 0;                                                        \
    (r)->alibi = (a)->alibi_slopes != NULL;                                                \
    (r)->softcap = (a)->softcap > 0;                                                       \
    (r)->dropout = (a)->dropout != 0;                                                      \
    (r)->sinks = (a)->sinks != NULL;                                                       \
    (r)->len_class = (with_length) ? len_class((a)->seqlen_q, (a)->seqlen_k) : 0;          \
    (r)->ragged = (r)->varlen && 4LL * (a)->total_q < 3LL * (a)->batch * (a)->seqlen_q;     \
  } while (0)

void rt_request_fwd(const fa2_fwd_args *a, int with_length, rt_request *r) {
  memset(r, 0, sizeof *r);
  r->pass = GEN_PASS_FWD;
  REQUEST_SHAPE(r, a, with_length);
  normalize(r, (int)a->stab, a->beta, a->eps);
  if (!with_length) rule_length(r, a->seqlen_q, a->seqlen_k);
}

void rt_request_bwd(const fa2_bwd_args *a, int with_length, rt_request *r) {
  memset(r, 0, sizeof *r);
  r->pass = GEN_PASS_BWD; /* one backward per shape: it does not depend on the mode */
  REQUEST_SHAPE(r, a, with_length);
  r->wide_window = wide_window(a);
  if (!with_length) rule_length(r, a->seqlen_q, a->seqlen_k);
}

void rt_request_desc(const fa2_kernel_desc *d, int with_length, rt_request *r) {
  memset(r, 0, sizeof *r);
  r->pass = GEN_PASS_FWD;
  r->dtype = (int)d->dtype;
  r->head_dim = d->head_dim;
  r->causal = d->causal != 0;
  r->varlen = d->varlen != 0;
  r->window = d->window != 0;
  r->alibi = d->alibi != 0;
  r->softcap = d->softcap != 0;
  r->dropout = d->dropout != 0;
  r->sinks = d->sinks != 0;
  r->len_class = with_length && d->seqlen > 0 ? len_class(d->seqlen, d->seqlen) : 0;
  r->ragged = r->varlen; /* a descriptor has no lengths: the mixed batches varlen is for */
  normalize(r, (int)d->stab, d->beta, d->eps);
  if (!with_length && d->seqlen > 0) rule_length(r, d->seqlen, d->seqlen);
}

/* balanced: none's main loop, so none's tiles. */
static const char *mode_suffix(int stab) {
  return stab == FA2_STAB_PAPER ? "_paper" : stab == FA2_STAB_ROBUST ? "_robust" : "_none";
}

void rt_request_tuning_key(const rt_request *r, char *buf, size_t len) {
  snprintf(buf, len, "%s_%s_d%d%s%s", r->pass == GEN_PASS_FWD ? "fwd" : "bwd",
           r->dtype == FA2_FP16 ? "fp16" : "bf16", r->head_dim, r->causal ? "_causal" : "",
           r->varlen ? "_varlen" : "");
}

void rt_tuning_key_for_mode(const rt_request *r, int stab, char *buf, size_t len) {
  char base[64];
  rt_request_tuning_key(r, base, sizeof base);
  snprintf(buf, len, "%s%s", base, r->pass == GEN_PASS_FWD ? mode_suffix(stab) : "");
}

double rt_request_seqlen(const rt_request *r) {
  return r->len_class > 0 ? exp2((double)r->len_class / LEN_CLASS_STEPS) : 0;
}

/* Tiles for mode stab (and r's length): its own key, else the key without a mode;
 * a varlen request, its varlen keys (tuned on a mix of lengths), then the
 * fixed-length ones. */
static int tuned_tiles(const rt_tuning *t, const rt_request *r, int stab, rt_tuning_entry *e) {
  char key[80];
  const double n = rt_request_seqlen(r);
  rt_request fixed = *r;
  fixed.varlen = 0;
  for (const rt_request *q = r; q; q = q == r && r->varlen ? &fixed : NULL) {
    rt_tuning_key_for_mode(q, stab, key, sizeof key);
    if (rt_tuning_find(t, key, n, e) && e->block_m) return 1;
    rt_request_tuning_key(q, key, sizeof key);
    if (rt_tuning_find(t, key, n, e) && e->block_m) return 1;
  }
  return 0;
}

int rt_select_variant(rt_source *s, const rt_tuning *t, const rt_request *r, const char *arch,
                      gen_variant *out, char *err, size_t n) {
  memset(out, 0, sizeof *out);
  out->pass = r->pass;
  out->dtype = r->dtype; /* FA2_BF16/FP16 == GEN_DTYPE_BF16/FP16 */
  out->head_dim = r->head_dim;
  out->causal = r->causal;
  out->varlen = r->varlen; /* the fixed-length kernel's tiles: the same loop per sequence */
  out->window = r->window;
  out->alibi = r->alibi;
  out->softcap = r->softcap;
  out->dropout = r->dropout;
  out->sinks = r->sinks;
  int stab = r->stab;
  double beta = r->beta, eps = r->eps;
  if (stab == FA2_STAB_TUNED) { /* the mode and beta of the fixed-length key */
    char key[64];
    rt_request fixed = *r;
    fixed.varlen = 0;
    rt_request_tuning_key(&fixed, key, sizeof key);
    rt_tuning_entry e;
    int tuned = rt_tuning_find(t, key, 0, &e);
    stab = FA2_STAB_ROBUST;
    if (tuned && e.stab >= 0) stab = e.stab;
    if (tuned && e.beta > 1) beta = e.beta;
    if (tuned && e.eps > 0) eps = e.eps;
    if (beta == 0) beta = FA2_DEFAULT_BETA;
    if (eps == 0) eps = FA2_DEFAULT_EPS;
  }
  out->stab = stab == FA2_STAB_BALANCED ? GEN_STAB_BALANCED : stab; /* NONE/PAPER/ROBUST: the same numbers */
  if (stab == FA2_STAB_PAPER || stab == FA2_STAB_ROBUST) {
    out->beta = beta;
    out->eps = eps;
  }
  rt_tuning_entry e;
  if (tuned_tiles(t, r, stab, &e)) {
    gen_variant v = *out;
    v.block_m = e.block_m, v.block_n = e.block_n, v.warps = e.warps, v.stages = e.stages;
    v.wgmma = e.wgmma, v.ws = e.ws;
    char why[1024], tile[48];
    if (rt_source_complete(s, &v, arch, why, sizeof why) == FA2_OK) {
      *out = v;
      return FA2_OK;
    }
    /* A database from an older generator, or edited by hand: the defaults
     * still work. The warning names the file; the call goes on. */
    gen_tile_name(e.block_m, e.block_n, e.warps, e.stages, e.wgmma, e.ws, tile, sizeof tile);
    rt_logf(rt_tuning_log(t), FA2_LOG_WARN,
            "tuning database %s: tiles %s ignored for %s (%s); built-in tiles", rt_tuning_path(t),
            tile, arch, why);
  }
  const length_rule *lr = length_rule_at(r, r->len_class);
  /* (softcap with a window, which the ws tile refuses at d <= 64, keeps the built-in; dropout with
   * one too: checked on ws at d 104-128 only, bench/NOTES.md "Session 31") */
  if (!lr && r->wide_window && !r->dropout && rt_widest_tile_head_dim(r->head_dim) == WINDOW_RULE.head_dim)
    lr = &WINDOW_RULE;
  if (lr) {
    gen_variant v = *out;
    v.block_m = lr->block_m, v.block_n = lr->block_n, v.warps = lr->warps, v.stages = lr->stages;
    v.wgmma = lr->wgmma, v.ws = lr->ws;
    char why[1024];
    if (rt_source_complete(s, &v, arch, why, sizeof why) == FA2_OK) {
      *out = v;
      return FA2_OK;
    }
  }
  return rt_source_complete(s, out, arch, err, n);
}

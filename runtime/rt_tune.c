/* rt_tune: plan, choice and journal of the autotuner (see rt_tune.h). */
#include "rt_tune.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fa2.h"
#include "rt_select.h"

/* Tile grids. Normal: where the fastest tiles of the H100 sweeps lie (the
 * first run's 2-warp and 256-row winners included, bench/NOTES.md); wide: a
 * superset for a manual sweep that checks the normal grid's choices. The
 * generator rejects what a pass cannot tile and what overflows shared
 * memory, so the grids may be generous. */
typedef struct grid {
  const int (*mw)[2]; /* {block_m, warps} */
  int n_mw;
  const int *bn, n_bn, *st, n_st;
} grid;

static const int FWD_MW[][2] = {{64, 2}, {64, 4}, {128, 4}, {128, 8}, {256, 8}};
static const int FWD_BN[] = {32, 48, 64, 96, 128};
static const int FWD_ST[] = {1, 2, 3};
static const int FWD_MW_WIDE[][2] = {{64, 2}, {64, 4}, {128, 4}, {128, 8}, {256, 8}};
static const int FWD_BN_WIDE[] = {16, 32, 48, 64, 80, 96, 112, 128};
static const int FWD_ST_WIDE[] = {1, 2, 3};
/* Backward: block_m is the query step; block_n / warps keys per warp (32
 * with 4 warps: four warps sharing 32 keys, the layout of head dims past 128). */
static const int BWD_MW[][2] = {{32, 4}, {64, 4}, {32, 8}, {64, 8}};
static const int BWD_BN[] = {32, 64, 128};
static const int BWD_ST[] = {2, 3};
static const int BWD_MW_WIDE[][2] = {{16, 2}, {32, 2}, {32, 4}, {64, 4}, {128, 4},
                                     {32, 8}, {64, 8}, {128, 8}};
static const int BWD_BN_WIDE[] = {32, 64, 128, 256};

#define N_OF(a) ((int)(sizeof(a) / sizeof *(a)))
static const grid GRIDS[2][2] = {
    {{FWD_MW, N_OF(FWD_MW), FWD_BN, N_OF(FWD_BN), FWD_ST, N_OF(FWD_ST)},
     {FWD_MW_WIDE, N_OF(FWD_MW_WIDE), FWD_BN_WIDE, N_OF(FWD_BN_WIDE), FWD_ST_WIDE,
      N_OF(FWD_ST_WIDE)}},
    {{BWD_MW, N_OF(BWD_MW), BWD_BN, N_OF(BWD_BN), BWD_ST, N_OF(BWD_ST)},
     {BWD_MW_WIDE, N_OF(BWD_MW_WIDE), BWD_BN_WIDE, N_OF(BWD_BN_WIDE), BWD_ST, N_OF(BWD_ST)}},
};

/* Tiles on Hopper's warpgroup MMA: forward, 64 query rows per warpgroup;
 * backward, 64 keys per warpgroup and 64 queries per step. */
static const int WG_MW[][2] = {{64, 4}, {128, 8}};
static const int WG_BN[] = {64, 96, 128, 176};
static const int WG_ST[] = {2, 3};
static const int WG_BWD_MW[][2] = {{64, 4}, {64, 8}};
static const int WG_BWD_BN[] = {64, 128};
/* Forward past d = 128 (the O accumulator takes 96-128 registers, K/V tiles
 * 24-32 KB per 64 keys): shorter key tiles. The backward's m64n64w8 is a
 * pair of warpgroups sharing 64 keys there. */
static const int WG_BN_WIDE_D[] = {48, 64, 80, 96, 112};
static const grid WGMMA_GRIDS[3] = {
    {WG_MW, N_OF(WG_MW), WG_BN, N_OF(WG_BN), WG_ST, N_OF(WG_ST)},
    {WG_BWD_MW, N_OF(WG_BWD_MW), WG_BWD_BN, N_OF(WG_BWD_BN), WG_ST, N_OF(WG_ST)},
    {WG_MW, N_OF(WG_MW), WG_BN_WIDE_D, N_OF(WG_BN_WIDE_D), WG_ST, N_OF(WG_ST)}};
/* Warp-specialized tiles (sm_90): a producer warpgroup besides two or three consumer warpgroups
 * of 64 query rows (forward) or two MMA warpgroups of 64 keys (backward). Without them a tuned
 * key would leave the ws tiles the built-ins and length rules take (d = 64 from 1k: 1.07-1.31x
 * the wgmma tile, bench/NOTES.md "Session 17") for the best of the others. */
static const int WS_MW[][2] = {{128, 12}, {192, 16}};
static const int WS_BN[] = {64, 80, 128, 176};
static const int WS_ST[] = {2};
static const int WS_BWD_MW[][2] = {{64, 12}};
static const int WS_BWD_BN[] = {128, 64}; /* (64: past d = 128, where two MMA warpgroups share 64 keys) */
static const int WS_BWD_ST[] = {2, 3};
static const int WS_BN_WIDE_D[] = {48, 64, 80};
static const grid WS_GRIDS[3] = {
    {WS_MW, N_OF(WS_MW), WS_BN, N_OF(WS_BN), WS_ST, N_OF(WS_ST)},
    {WS_BWD_MW, N_OF(WS_BWD_MW), WS_BWD_BN, N_OF(WS_BWD_BN), WS_BWD_ST, N_OF(WS_BWD_ST)},
    {WS_MW, N_OF(WS_MW), WS_BN_WIDE_D, N_OF(WS_BN_WIDE_D), WS_ST, N_OF(WS_ST)}};

void rt_tune_shape(const gen_variant *v, int n, int *batch, int *heads) {
  *batch = n >= 16384 ? 1 : 16384 / n;
  *heads = 2048 / v->head_dim > 0 ? 2048 / v->head_dim : 1;
}

int rt_tune_max_heads(const rt_tune_plan *p) {
  int most = 1;
  for (int g = 0; g < p->n; g++) {
    int b, h;
    rt_tune_shape(&p->groups[g].base, 16384, &b, &h);
    most = h > most ? h : most;
  }
  return most;
}

size_t rt_tune_bwd_workspace(const rt_tune_plan *p, long long tokens) {
  size_t most = 0;
  for (int g = 0; g < p->n; g++) {
    const gen_variant *v = &p->groups[g].base;
    if (v->pass != GEN_PASS_BWD) continue;
    int b, h;
    rt_tune_shape(v, 16384, &b, &h);
    fa2_bwd_args a = {0};
    a.batch = 1, a.seqlen_q = (int)tokens, a.heads_q = h, a.head_dim = v->head_dim;
    const size_t bytes = fa2_backward_workspace_size(&a);
    most = bytes > most ? bytes : most;
  }
  return most;
}

int rt_tune_mix(int n, int *lens) {
  if (n > RT_TUNE_MIX_TOKENS) n = RT_TUNE_MIX_TOKENS;
  unsigned long long x = 0x9E3779B97F4A7C15ull ^ (unsigned long long)n; /* xorshift64 */
  int count = 0, left = RT_TUNE_MIX_TOKENS;
  while (left > 0) {
    int len = n; /* the first document is the longest: max_seqlen = n */
    if (count > 0) {
      double u[2];
      for (int k = 0; k < 2; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        u[k] = ((x >> 11) + 0.5) / 9007199254740992.0; /* (0, 1) */
      }
      const double z = sqrt(-2 * log(u[0])) * cos(6.283185307179586 * u[1]);
      const double l = exp(log(n / 8.0) + z); /* log-normal: median n / 8, sigma 1 */
      len = l < 1 ? 1 : l > n ? n : (int)lround(l);
    }
    len = len < left ? len : left;
    lens[count++] = len;
    left -= len;
  }
  return count;
}

double rt_tune_flops(const gen_variant *v, int n) {
  int b, h;
  rt_tune_shape(v, n, &b, &h);
  double f = 4.0 * b * h * (double)n * n * v->head_dim;
  int *lens = v->varlen ? malloc(sizeof *lens * RT_TUNE_MIX_TOKENS) : NULL;
  if (lens) { /* the mix's documents, each its own attention */
    const int count = rt_tune_mix(n, lens);
    f = 0;
    for (int i = 0; i < count; i++) f += 4.0 * h * (double)lens[i] * lens[i] * v->head_dim;
    free(lens);
  }
  if (v->causal) f /= 2;
  return v->pass == GEN_PASS_BWD ? 2.5 * f : f;
}

static void group_key(const gen_variant *v, char *buf, size_t len) {
  const rt_request r = {.pass = v->pass, .dtype = v->dtype, .head_dim = v->head_dim,
                        .causal = v->causal, .varlen = v->varlen, .stab = v->stab};
  rt_tuning_key_for_mode(&r, v->stab, buf, len);
}

/* Adds the tiles t (block_m, block_n, warps, stages, wgmma, ws; NULL: the
 * built-in ones) to g when the generator takes them on arch and they are
 * not there yet. */
static int add_cand(rt_source *s, rt_tune_group *g, const int *t, const char *arch,
                    int smem_limit) {
  gen_variant v = g->base;
  if (t) v.block_m = t[0], v.block_n = t[1], v.warps = t[2], v.stages = t[3], v.wgmma = t[4], v.ws = t[5];
  char err[1024];
  if (rt_source_complete(s, &v, arch, err, sizeof err) != FA2_OK) return 0;
  if (smem_limit > 0 && v.smem_bytes > smem_limit) return 0;
  for (int i = 0; i < g->n; i++)
    if (!strcmp(g->cands[i].v.name, v.name)) {
      g->cands[i].is_default |= !t;
      return 0;
    }
  rt_tune_cand *c = &g->cands[g->n++];
  memset(c, 0, sizeof *c);
  c->v = v;
  c->is_default = !t;
  return 1;
}

static int make_group(rt_source *s, const gen_variant *sv, const char *arch, int smem_limit,
                      int wide, rt_tune_group *g) {
  memset(g, 0, sizeof *g);
  g->best = -1;
  g->base.pass = sv->pass, g->base.dtype = sv->dtype, g->base.head_dim = sv->head_dim;
  g->base.causal = sv->causal;
  g->base.varlen = sv->varlen;
  if (sv->pass == GEN_PASS_FWD) { /* a backward does not depend on the mode */
    g->base.stab = sv->stab, g->base.beta = sv->beta, g->base.eps = sv->eps;
  }
  group_key(&g->base, g->key, sizeof g->key);
  const grid *gr = &GRIDS[sv->pass == GEN_PASS_BWD][wide != 0];
  const int family = sv->pass == GEN_PASS_BWD ? 1 : sv->head_dim > 128 ? 2 : 0;
  const grid *grids[3] = {gr, &WGMMA_GRIDS[family], &WS_GRIDS[family]};
  size_t most = 1;
  for (int w = 0; w < 3; w++) most += (size_t)(grids[w]->n_mw * grids[w]->n_bn * grids[w]->n_st);
  g->cands = calloc(most, sizeof *g->cands);
  if (!g->cands) return -1;
  add_cand(s, g, NULL, arch, smem_limit); /* the built-in tiles come first */
  for (int w = 0; w < 3; w++) {
    const grid *x = grids[w]; /* wgmma and ws tiles: the generator takes them on sm_90 only */
    for (int a = 0; a < x->n_mw; a++)
      for (int b = 0; b < x->n_bn; b++)
        for (int c = 0; c < x->n_st; c++) {
          const int t[6] = {x->mw[a][0], x->bn[b], x->mw[a][1], x->st[c], w > 0, w == 2};
          add_cand(s, g, t, arch, smem_limit);
        }
  }
  return 0;
}

int rt_tune_plan_make(rt_source *s, const gen_spec *spec, const char *arch, int smem_limit,
                      int wide, const int *seqlens, int n_seqlens, rt_tune_plan *out, char *err,
                      size_t len) {
  memset(out, 0, sizeof *out);
  out->wide = wide;
  if (n_seqlens < 1 || n_seqlens > RT_TUNE_MAX_SEQLENS) {
    snprintf(err, len, "%d sequence lengths: allowed 1 to %d", n_seqlens, RT_TUNE_MAX_SEQLENS);
    return FA2_ERR_INVALID_ARGUMENT;
  }
  for (int i = 0; i < n_seqlens; i++) {
    if (seqlens[i] < 16 || seqlens[i] > 65536) {
      snprintf(err, len, "sequence length %d: allowed 16 to 65536", seqlens[i]);
      return FA2_ERR_INVALID_ARGUMENT;
    }
    out->seqlens[out->n_seqlens++] = seqlens[i];
  }
  out->groups = calloc((size_t)(spec->n_variants > 0 ? spec->n_variants : 1), sizeof *out->groups);
  if (!out->groups) return snprintf(err, len, "out of memory"), FA2_ERR_OUT_OF_MEMORY;
  for (int i = 0; i < spec->n_variants; i++) {
    rt_tune_group g;
    if (make_group(s, &spec->variants[i], arch, smem_limit, wide, &g) != 0) {
      rt_tune_plan_free(out);
      return snprintf(err, len, "out of memory"), FA2_ERR_OUT_OF_MEMORY;
    }
    int seen = 0;
    for (int j = 0; j < out->n && !seen; j++) seen = !strcmp(out->groups[j].key, g.key);
    if (seen || g.n == 0)
      free(g.cands);
    else
      out->groups[out->n++] = g;
  }
  if (out->n == 0) {
    snprintf(err, len, "the spec has no variant with tiles that fit %s", arch);
    rt_tune_plan_free(out);
    return FA2_ERR_INVALID_ARGUMENT;
  }
  return FA2_OK;
}

void rt_tune_plan_free(rt_tune_plan *p) {
  for (int i = 0; i < p->n; i++) free(p->groups[i].cands);
  free(p->groups);
  memset(p, 0, sizeof *p);
}

int rt_tune_timed(const rt_tune_group *g, int i) {
  int any = 0;
  for (int c = 0; c < g->n; c++) {
    if (g->cands[c].pruned[0]) continue;
    if (g->cands[c].ms[i] <= 0) return 0;
    any = 1;
  }
  return any;
}

int rt_tune_final_timed(const rt_tune_group *g, int i) {
  int any = 0;
  for (int c = 0; c < g->n; c++) {
    if (!g->cands[c].finalist || g->cands[c].pruned[0]) continue;
    if (g->cands[c].fin[i] <= 0) return 0;
    any = 1;
  }
  return any;
}

/* The time the choice goes by: the re-timed median in the final round. */
static double time_of(const rt_tune_cand *c, int i, int final) { return final ? c->fin[i] : c->ms[i]; }

static int in_race(const rt_tune_cand *c, int final) {
  return !c->pruned[0] && (!final || c->finalist);
}

/* Minimax over the candidates in the race (see rt_tune_choose); use[i]
 * says which lengths count. */
static void choose_over(rt_tune_group *g, int n_seqlens, int final, const int *use) {
  double fastest[RT_TUNE_MAX_SEQLENS];
  for (int i = 0; i < n_seqlens; i++) {
    fastest[i] = INFINITY;
    for (int c = 0; use[i] && c < g->n; c++)
      if (in_race(&g->cands[c], final) && time_of(&g->cands[c], i, final) < fastest[i])
        fastest[i] = time_of(&g->cands[c], i, final);
  }
  double best_sum = INFINITY;
  for (int c = 0; c < g->n; c++) {
    if (!in_race(&g->cands[c], final)) continue;
    double worst = 0, sum = 0;
    for (int i = 0; i < n_seqlens; i++) {
      if (!use[i]) continue;
      const double r = time_of(&g->cands[c], i, final) / fastest[i];
      worst = r > worst ? r : worst;
      sum += time_of(&g->cands[c], i, final);
    }
    if (g->best < 0 || worst < g->worst || (worst == g->worst && sum < best_sum)) {
      g->best = c, g->worst = worst, best_sum = sum;
    }
  }
  /* per length: the fastest there, when it beats the choice by enough */
  for (int i = 0; i < n_seqlens; i++) {
    g->per_len[i] = g->best;
    for (int c = 0; use[i] && g->best >= 0 && c < g->n; c++)
      if (in_race(&g->cands[c], final) && time_of(&g->cands[c], i, final) == fastest[i] &&
          time_of(&g->cands[g->best], i, final) > fastest[i] * RT_TUNE_LENGTH_GAIN)
        g->per_len[i] = c;
  }
}

void rt_tune_choose(rt_tune_group *g, int n_seqlens) {
  int use[RT_TUNE_MAX_SEQLENS], n_use = 0, n_fin = 0, final = 1;
  for (int c = 0; c < g->n; c++) n_fin += g->cands[c].finalist;
  for (int i = 0; i < n_seqlens; i++) {
    use[i] = rt_tune_timed(g, i);
    n_use += use[i];
    final &= n_fin > 0 && rt_tune_final_timed(g, i);
  }
  g->best = -1;
  g->worst = 0;
  g->final = final;
  for (int i = 0; i < RT_TUNE_MAX_SEQLENS; i++) g->per_len[i] = -1;
  if (!n_use) return;
  if (final)
    for (int i = 0; i < n_seqlens; i++) use[i] = 1;
  choose_over(g, n_seqlens, final, use);
}

int rt_tune_finalists(rt_tune_group *g, int n_seqlens, int max_finalists) {
  for (int c = 0; c < g->n; c++) g->cands[c].finalist = 0; /* fin stays: a resumed journal's */
  int use[RT_TUNE_MAX_SEQLENS] = {0}, fastest_c[RT_TUNE_MAX_SEQLENS];
  double fastest[RT_TUNE_MAX_SEQLENS];
  for (int i = 0; i < n_seqlens; i++) {
    if (!rt_tune_timed(g, i)) return 0;
    use[i] = 1, fastest[i] = INFINITY, fastest_c[i] = -1;
    for (int c = 0; c < g->n; c++)
      if (!g->cands[c].pruned[0] && g->cands[c].ms[i] < fastest[i])
        fastest[i] = g->cands[c].ms[i], fastest_c[i] = c;
  }
  g->best = -1;
  choose_over(g, n_seqlens, 0, use); /* the first pass's choice */
  if (g->best < 0 || max_finalists < 2) return 0;
  int k = 0;
  g->cands[g->best].finalist = 1, k++;
  for (int i = 0; i < n_seqlens && k < max_finalists; i++) /* each length's fastest */
    if (fastest_c[i] >= 0 && !g->cands[fastest_c[i]].finalist) g->cands[fastest_c[i]].finalist = 1, k++;
  /* then the closest of the rest: smallest ratio to the fastest anywhere */
  while (k < max_finalists) {
    int pick = -1;
    double pick_r = RT_TUNE_FINAL_WITHIN;
    for (int c = 0; c < g->n; c++) {
      const rt_tune_cand *cd = &g->cands[c];
      for (int i = 0; !cd->pruned[0] && !cd->finalist && i < n_seqlens; i++)
        if (cd->ms[i] / fastest[i] <= pick_r) pick_r = cd->ms[i] / fastest[i], pick = c;
    }
    if (pick < 0) break;
    g->cands[pick].finalist = 1, k++;
  }
  if (k < 2) g->cands[g->best].finalist = 0, k = 0; /* one candidate: nothing to decide */
  return k;
}

/* ---- journal ---- */

void rt_tune_journal_header(const rt_tune_plan *p, const rt_identity *id, const rt_tune_reps *r,
                            char *buf, size_t len) {
  char slug[160], lens[128] = "";
  rt_identity_slug(id, slug, sizeof slug);
  for (int i = 0, o = 0; i < p->n_seqlens && o < (int)sizeof lens; i++)
    o += snprintf(lens + o, sizeof lens - (size_t)o, "%s%d", i ? "," : "", p->seqlens[i]);
  snprintf(buf, len,
           "{\"journal\": \"fa2 tune\", \"gpu\": \"%s\", \"fa2gen\": \"%s\", \"wide\": %d, "
           "\"reps\": %d, \"rounds\": %d, \"finalists\": %d, \"final_reps\": %d, "
           "\"final_rounds\": %d, \"seqlens\": [%s]}",
           slug, id->fa2gen, p->wide, r->reps, r->rounds, r->finalists, r->final_reps,
           r->final_rounds, lens);
}

static rt_tune_cand *find_cand(rt_tune_plan *p, const char *name) {
  for (int g = 0; g < p->n; g++)
    for (int c = 0; c < p->groups[g].n; c++)
      if (!strcmp(p->groups[g].cands[c].v.name, name)) return &p->groups[g].cands[c];
  return NULL;
}

static int apply_record(rt_tune_plan *p, json_t *rec) {
  const char *name = json_string_value(json_object_get(rec, "v"));
  rt_tune_cand *c = name ? find_cand(p, name) : NULL;
  if (!c) return 0;
  const char *why = json_string_value(json_object_get(rec, "pruned"));
  if (why) {
    snprintf(c->pruned, sizeof c->pruned, "%s", why);
    return 1;
  }
  json_t *n = json_object_get(rec, "n"), *fin = json_object_get(rec, "fin");
  json_t *ms = fin ? fin : json_object_get(rec, "ms");
  if (!json_is_integer(n) || !json_is_number(ms) || !(json_number_value(ms) > 0)) return 0;
  for (int i = 0; i < p->n_seqlens; i++)
    if (p->seqlens[i] == json_integer_value(n)) {
      *(fin ? &c->fin[i] : &c->ms[i]) = json_number_value(ms);
      return 1;
    }
  return 0;
}

int rt_tune_journal_resume(const char *path, const char *header, rt_tune_plan *p) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char line[4096];
  int used = 0;
  if (!fgets(line, sizeof line, f) || strncmp(line, header, strlen(header)) != 0 ||
      (line[strlen(header)] != '\n' && line[strlen(header)] != 0)) {
    fclose(f);
    unlink(path); /* another run's: its timings do not apply */
    return 0;
  }
  while (fgets(line, sizeof line, f)) {
    json_t *rec = json_loads(line, 0, NULL); /* a torn last line does not parse */
    if (rec) used += apply_record(p, rec);
    json_decref(rec);
  }
  fclose(f);
  return used;
}

FILE *rt_tune_journal_open(const char *path, const char *header) {
  FILE *f = fopen(path, "a");
  if (!f) return NULL;
  if (ftell(f) == 0) fprintf(f, "%s\n", header);
  fflush(f);
  return f;
}

void rt_tune_journal_time(FILE *f, const rt_tune_cand *c, int seqlen, double ms, int final) {
  if (!f) return;
  fprintf(f, "{\"v\": \"%s\", \"n\": %d, \"%s\": %.17g}\n", c->v.name, seqlen,
          final ? "fin" : "ms", ms);
  fflush(f);
}

void rt_tune_journal_prune(FILE *f, const rt_tune_cand *c) {
  if (!f) return;
  json_t *rec = json_pack("{s:s, s:s}", "v", c->v.name, "pruned", c->pruned);
  char *s = rec ? json_dumps(rec, JSON_COMPACT) : NULL;
  if (s) fprintf(f, "%s\n", s);
  fflush(f);
  free(s);
  json_decref(rec);
}

/* ---- results ---- */

static json_t *timings(const rt_tune_plan *p, const double *ms) {
  json_t *o = json_object();
  for (int i = 0; i < p->n_seqlens; i++) {
    if (ms[i] <= 0) continue;
    char n[16];
    snprintf(n, sizeof n, "%d", p->seqlens[i]);
    json_object_set_new(o, n, json_real(ms[i]));
  }
  return o;
}

static json_t *tiles(const gen_variant *v) {
  json_t *o = json_pack("{s:i, s:i, s:i, s:i}", "block_m", v->block_m, "block_n", v->block_n,
                        "warps", v->warps, "stages", v->stages);
  if (v->wgmma) json_object_set_new(o, "wgmma", json_true());
  if (v->ws) json_object_set_new(o, "ws", json_true());
  return o;
}

static const double *chosen_ms(const rt_tune_group *g, const rt_tune_cand *c) {
  return g->final ? c->fin : c->ms;
}

json_t *rt_tune_entries(const rt_tune_plan *p) {
  json_t *entries = json_object();
  for (int g = 0; g < p->n; g++) {
    const rt_tune_group *gr = &p->groups[g];
    if (gr->best < 0) continue;
    const rt_tune_cand *best = &gr->cands[gr->best];
    json_t *e = tiles(&best->v), *by = json_object();
    json_object_set_new(e, "ms", timings(p, chosen_ms(gr, best)));
    int other = 0;
    for (int i = 0; i < p->n_seqlens; i++) {
      if (gr->per_len[i] < 0) continue;
      char n[16];
      snprintf(n, sizeof n, "%d", p->seqlens[i]);
      json_object_set_new(by, n, tiles(&gr->cands[gr->per_len[i]].v));
      other |= gr->per_len[i] != gr->best;
    }
    if (other) json_object_set_new(e, "by_seqlen", by);
    else json_decref(by);
    json_object_set_new(entries, gr->key, e);
  }
  return entries;
}

json_t *rt_tune_report(const rt_tune_plan *p, const rt_identity *id, const rt_tune_reps *r) {
  json_t *groups = json_array(), *lens = json_array();
  for (int i = 0; i < p->n_seqlens; i++) json_array_append_new(lens, json_integer(p->seqlens[i]));
  for (int g = 0; g < p->n; g++) {
    const rt_tune_group *gr = &p->groups[g];
    json_t *cands = json_array(), *by = json_object();
    for (int c = 0; c < gr->n; c++) {
      const rt_tune_cand *cd = &gr->cands[c];
      json_t *tf = json_object();
      for (int i = 0; i < p->n_seqlens; i++) {
        const double ms = cd->fin[i] > 0 ? cd->fin[i] : cd->ms[i];
        if (ms <= 0) continue;
        char n[16];
        snprintf(n, sizeof n, "%d", p->seqlens[i]);
        json_object_set_new(tf, n, json_real(rt_tune_flops(&cd->v, p->seqlens[i]) / ms / 1e9));
      }
      char tile[48];
      gen_tile_name(cd->v.block_m, cd->v.block_n, cd->v.warps, cd->v.stages, cd->v.wgmma, cd->v.ws,
                    tile, sizeof tile);
      json_array_append_new(
          cands, json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:b, s:s, s:o, s:b, s:o, s:o}", "name",
                           cd->v.name, "tile", tile, "block_m", cd->v.block_m, "block_n",
                           cd->v.block_n, "warps", cd->v.warps, "stages", cd->v.stages, "default",
                           cd->is_default, "pruned", cd->pruned, "ms", timings(p, cd->ms),
                           "finalist", cd->finalist, "ms_final", timings(p, cd->fin), "tflops", tf));
    }
    for (int i = 0; i < p->n_seqlens; i++) {
      if (gr->per_len[i] < 0) continue;
      char n[16];
      snprintf(n, sizeof n, "%d", p->seqlens[i]);
      json_object_set_new(by, n, json_string(gr->cands[gr->per_len[i]].v.name));
    }
    json_array_append_new(
        groups, json_pack("{s:s, s:s?, s:f, s:b, s:o, s:o}", "key", gr->key, "best",
                          gr->best >= 0 ? gr->cands[gr->best].v.name : NULL, "worst_ratio",
                          gr->worst, "final", gr->final, "by_seqlen", by, "candidates", cands));
  }
  return json_pack("{s:{s:s, s:s, s:i, s:i, s:s}, s:b, s:i, s:i, s:i, s:i, s:i, s:o, s:o}", "gpu",
                   "name", id->name, "arch", id->arch, "sm_count", id->sm_count, "driver",
                   id->driver, "fa2gen", id->fa2gen, "wide", p->wide, "reps", r->reps, "rounds",
                   r->rounds, "finalists", r->finalists, "final_reps", r->final_reps,
                   "final_rounds", r->final_rounds, "seqlens", lens, "groups", groups);
}

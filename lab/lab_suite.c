/* The tie-heavy suite of `fa2 bias`: inputs whose score rows have repeated
 * maxima, the way training data makes them (the paper, section 3), and the
 * measures of every mode on them.
 *
 * The queries of a head fall in G groups; group g has a direction u_g,
 * its queries are a_g*u_g plus noise, and its maximal key k*_g = b*u_g
 * (rounded to the dtype once, then copied bit for bit) sits at `repeats`
 * positions, so each row's maximum is attained exactly that often, about 16
 * softmax units above the other keys: their small contributions still reach
 * the fp32 accumulator (the sticky bits of the paper's example) but not the
 * output's last bit. Groups give independent tie sets, so the bias measures
 * average over many of them. V is mostly negative, as in the paper's failing
 * head (mostly positive in pos_v, which mirrors the bias); the random control
 * has zero-mean V and no planted key.
 *
 * The modifier cases make or move the ties with the kernels' score modifiers:
 * - softcap: the r copies of a group are k*_g scaled by distinct lengths (4.5 to 6
 *   caps), so their raw scores differ by up to a third, all 15 to 28 caps: softcap
 *   (8, or the case's cap) saturates them to one capped value, the row's tied
 *   maximum, the same in every row. The copies are long, so other groups' rows see
 *   them at up to several caps too: a crowd of keys just under the cap.
 * - alibi: keys are one-hot (key j along axis j mod d); row i holds the same value
 *   on the axes of keys i - D and i + D (D = 1..4), so those two tie exactly
 *   after ALiBi's equal penalties (slopes 0.25 to 1 per head; the next keys of
 *   those axes sit d - 2D further). Not causal.
 * - window: a causal sliding window of 64 keys over copies of each group's key
 *   every 32 keys (8 groups, offsets apart): every row sees two copies, and which
 *   two moves with the row (in one key tile or across two).
 * - sink_logit: repeat's r copies, and a learned sink per head (gpt-oss) within
 *   +-4 of the rows' maxima, which joins every row's sum.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

/* Input scales, in units where the softmax-scaled scores are q.k / sqrt(d). */
#define Q_ALONG_U 4.0  /* a: queries' component along their group's u ... */
#define Q_SPREAD 0.15  /* ... varied by +-15% between groups, so margins vary */
#define K_STAR 4.0     /* b: the maximal key's length along u: margin a*b ~ 16 */
#define NOISE_Q 0.5    /* per-element noise of the queries */
#define NOISE_K 1.0    /* per-element noise of the other keys */
#define V_MEAN (-1.0)  /* V mostly negative, as in the paper's failing head */
#define MAX_GROUPS 128 /* query groups per head, each with its own u and k* */
#define V_SPREAD 0.5   /* per-element spread of V */
#define DO_MEAN_OF_V 0.5 /* dO = 0.5 * mean(V) + noise: a persistent gradient, so the
                            delta bias of a biased O has one sign */
#define SOFTCAP 8.0      /* softcap: the default cap, and the copies' lengths along u ... */
#define SOFTCAP_K_LO 4.5  /* ... from 4.5 to 6 caps: scaled scores 15 to 28 caps */
#define SOFTCAP_K_HI 6.0
#define ALIBI_K 4.0      /* alibi: one-hot keys of scaled length 4, ... */
#define ALIBI_MAX_D 4    /* ... the tied pair D = 1..4 keys either side of the row */
#define WINDOW_KEYS 64   /* window: keys a row sees (left edge 63, right 0) ... */
#define WINDOW_GROUPS 8  /* ... 8 groups, each one's key every 32 positions */
#define SINK_SPREAD 4.0  /* sink_logit: sinks within +-4 of the maxima (a b = 16) */

static const char *const case_names[] = {"random", "repeat",  "same_tile", "cross_tile", "sink",
                                         "pos_v",  "softcap", "alibi",     "window",     "sink_logit"};

const char *lab_case_name(lab_case_kind k) {
  return (unsigned)k < sizeof case_names / sizeof *case_names ? case_names[k] : "?";
}

int lab_case_parse(const char *name, lab_case_kind *k) {
  for (unsigned i = 0; i < sizeof case_names / sizeof *case_names; i++)
    if (!strcmp(name, case_names[i])) {
      *k = (lab_case_kind)i;
      return 0;
    }
  return -1;
}

void lab_inputs_free(lab_inputs *in) {
  free(in->q);
  free(in->k);
  free(in->v);
  free(in->dout);
  free(in->alibi);
  free(in->sinks);
  memset(in, 0, sizeof *in);
}

/* Key positions for group g's copies of its maximal key, by case; `taken`
 * keeps the groups' copies apart. Returns how many, or -1 when they do not fit. */
static int place(const lab_case *c, int g, int groups, lab_rng *r, unsigned char *taken, int *pos) {
  const int n = c->seqlen, bn = c->block_n, tiles = n / bn; /* whole tiles only */
  const int want = c->kind == LAB_CASE_RANDOM || c->kind == LAB_CASE_ALIBI ? 0 : c->repeats;
  if (c->kind == LAB_CASE_WINDOW) { /* every WINDOW_KEYS / 2 keys from the group's offset */
    const int period = WINDOW_KEYS / 2;
    const int first = g * period / groups + (int)(lab_rng_uniform(r) * (period / groups));
    int m = 0;
    for (int p = first; p < n; p += period) taken[p] = 1, pos[m++] = p;
    return m;
  }
  if ((long long)want * groups > n || tiles < 1 || (c->kind == LAB_CASE_SAME_TILE && want > bn) ||
      (c->kind == LAB_CASE_CROSS_TILE && want > tiles))
    return -1;
  const int tile = (int)(lab_rng_uniform(r) * tiles);
  for (int i = 0, tries = 0; i < want; tries++) {
    if (tries > 100000) return -1;
    int p;
    switch (c->kind) {
    case LAB_CASE_SAME_TILE: /* the group's tile (the next one when it is full) */
      p = (tile + tries / (4 * bn)) % tiles * bn + (int)(lab_rng_uniform(r) * bn);
      break;
    case LAB_CASE_CROSS_TILE: /* copy i in tile tile + i*tiles/want (+1 when full) */
      p = (int)((tile + (long long)i * tiles / want + tries / (4 * bn)) % tiles) * bn +
          (int)(lab_rng_uniform(r) * bn);
      break;
    case LAB_CASE_SINK: /* the first copy at key g: the first keys are kept for them */
      p = i == 0 ? g : groups + (int)(lab_rng_uniform(r) * (n - groups));
      break;

    default:
      p = (int)(lab_rng_uniform(r) * n);
    }
    if (taken[p]) continue;
    taken[p] = 1;
    pos[i++] = p;
  }
  return want;
}

static double unit_normal_vector(lab_rng *r, double *u, int d) {
  double norm = 0;
  for (int x = 0; x < d; x++) {
    u[x] = lab_rng_normal(r);
    norm += u[x] * u[x];
  }
  norm = sqrt(norm);
  for (int x = 0; x < d; x++) u[x] /= norm;
  return norm;
}

int lab_inputs_make(const lab_case *c, lab_dtype t, uint64_t seed, lab_inputs *in) {
  memset(in, 0, sizeof *in);
  if (c->seqlen < 1 || c->heads < 1 || c->head_dim < 8 || c->head_dim % 8 || c->block_n < 1 ||
      c->repeats < 0)
    return -1;
  const int n = c->seqlen, h = c->heads, d = c->head_dim;
  in->shape = (lab_shape){1, n, n, h, h, d, c->causal, 0};
  in->dtype = t;
  const long long ne = lab_q_elems(&in->shape);
  in->q = malloc(sizeof(float) * ne);
  in->k = malloc(sizeof(float) * ne);
  in->v = malloc(sizeof(float) * ne);
  in->dout = malloc(sizeof(float) * ne);
  /* Many small groups: the rows of a group share one tie set, so the groups
   * are the independent samples of the bias measures; a quarter of the keys at
   * most are copies. */
  int groups = c->repeats > 0 ? n / (4 * c->repeats) : MAX_GROUPS;
  groups = groups > MAX_GROUPS ? MAX_GROUPS : groups < 1 ? 1 : groups;
  if (c->kind == LAB_CASE_WINDOW) groups = WINDOW_GROUPS;
  double *u = malloc(sizeof(double) * d * groups), *a = malloc(sizeof(double) * groups);
  float *kstar = malloc(sizeof(float) * d);
  int *pos = malloc(sizeof(int) * (c->repeats + n / (WINDOW_KEYS / 2) + 1));
  unsigned char *taken = malloc((size_t)n);
  if (!in->q || !in->k || !in->v || !in->dout || !u || !a || !kstar || !pos || !taken) goto fail;
  if (c->kind == LAB_CASE_ALIBI && !(in->shape.alibi = in->alibi = malloc(sizeof(float) * h))) goto fail;
  if (c->kind == LAB_CASE_SINK_LOGIT && !(in->shape.sinks = in->sinks = malloc(sizeof(float) * h)))
    goto fail;
  if (c->kind == LAB_CASE_SOFTCAP) in->shape.softcap = c->cap > 0 ? c->cap : SOFTCAP;
  if (c->kind == LAB_CASE_WINDOW) {
    in->shape.causal = 0; /* a causal window: its right edge */
    in->shape.window = 1, in->shape.window_left = WINDOW_KEYS - 1, in->shape.window_right = 0;
  }

  lab_rng r;
  lab_rng_seed(&r, seed ^ ((uint64_t)c->kind << 56) ^ ((uint64_t)c->repeats << 40) ^
                       ((uint64_t)d << 24) ^ (uint64_t)c->causal << 20);
  const double sd = pow((double)d, 0.25); /* so that scaled scores q.k/sqrt(d) are the products below */
  const double v_mean = c->kind == LAB_CASE_RANDOM ? 0 : c->kind == LAB_CASE_POS_V ? -V_MEAN : V_MEAN;
  const double v_spread = c->kind == LAB_CASE_RANDOM ? 1 : V_SPREAD;
  for (int hh = 0; hh < h; hh++) {
    for (int g = 0; g < groups; g++) {
      unit_normal_vector(&r, u + g * d, d);
      a[g] = Q_ALONG_U * (1 + Q_SPREAD * (2 * lab_rng_uniform(&r) - 1));
    }
    for (int i = 0; i < n; i++) {
      const long long o = ((long long)i * h + hh) * d;
      const double *ug = u + (i % groups) * d;
      for (int x = 0; x < d; x++) {
        in->q[o + x] = lab_round((float)(a[i % groups] * sd * ug[x] + NOISE_Q * lab_rng_normal(&r)), t);
        in->k[o + x] = lab_round((float)(NOISE_K * lab_rng_normal(&r)), t);
        in->v[o + x] = lab_round((float)(v_mean + v_spread * lab_rng_normal(&r)), t);
        in->dout[o + x] = lab_round((float)(DO_MEAN_OF_V * v_mean + lab_rng_normal(&r)), t);
      }
    }
    memset(taken, 0, (size_t)n);
    for (int g = 0; g < groups; g++) {
      for (int x = 0; x < d; x++) kstar[x] = lab_round((float)(K_STAR * sd * u[g * d + x]), t);
      const int m = place(c, g, groups, &r, taken, pos);
      if (m < 0) goto fail;
      for (int i = 0; i < m; i++) {
        if (c->kind == LAB_CASE_SOFTCAP) { /* distinct lengths: only the cap makes them tie */
          const double caps = SOFTCAP_K_LO + (SOFTCAP_K_HI - SOFTCAP_K_LO) * lab_rng_uniform(&r);
          const double len = in->shape.softcap * caps;
          for (int x = 0; x < d; x++) kstar[x] = lab_round((float)(len * sd * u[g * d + x]), t);
        }
        memcpy(in->k + ((long long)pos[i] * h + hh) * d, kstar, sizeof(float) * d);
      }
    }
    if (c->kind == LAB_CASE_ALIBI) { /* one-hot keys; row i's two axes of keys i -+ D */
      in->alibi[hh] = (float)pow(2.0, -2 + 2 * lab_rng_uniform(&r));
      const float key = lab_round((float)(ALIBI_K * sqrt((double)d)), t);
      for (int j = 0; j < n; j++) {
        float *kj = in->k + ((long long)j * h + hh) * d;
        memset(kj, 0, sizeof(float) * d);
        kj[j % d] = key;
      }
      for (int i = 0; i < n; i++) {
        float *qi = in->q + ((long long)i * h + hh) * d;
        for (int x = 0; x < d; x++) qi[x] = lab_round((float)(NOISE_Q * lab_rng_normal(&r)), t);
        const int dd = 1 + (int)(lab_rng_uniform(&r) * ALIBI_MAX_D);
        const float top = lab_round((float)(Q_ALONG_U * (1 + Q_SPREAD * (2 * lab_rng_uniform(&r) - 1))), t);
        qi[(i - dd + n * d) % d] = qi[(i + dd) % d] = top;
      }
    }
    if (c->kind == LAB_CASE_SINK_LOGIT)
      in->sinks[hh] = (float)(Q_ALONG_U * K_STAR + SINK_SPREAD * (2 * lab_rng_uniform(&r) - 1));
  }
  free(u);
  free(a);
  free(kstar);
  free(pos);
  free(taken);
  return 0;
fail:
  free(u);
  free(a);
  free(kstar);
  free(pos);
  free(taken);
  lab_inputs_free(in);
  return -1;
}

void lab_score_reference(const lab_inputs *in, const double *o_ref, lab_reference_score *ref) {
  const long long n = lab_q_elems(&in->shape);
  memset(ref, 0, sizeof *ref);
  double *rounded = malloc(sizeof(double) * n);
  if (rounded) {
    for (long long i = 0; i < n; i++) rounded[i] = lab_round_f64(o_ref[i], in->dtype);
    lab_compare_f64(rounded, o_ref, n, &ref->rounded);
    free(rounded);
  }
  ref->floor_mean_abs_err = lab_unbiased_floor(o_ref, n, in->dtype, LAB_FLOOR_BIAS, INFINITY);
}

void lab_score(const lab_case *c, const lab_inputs *in, lab_mode mode, double beta, double eps,
               const float *o, const float *o32, const double *o_ref, const lab_reference_score *ref,
               lab_result *r) {
  const lab_shape *s = &in->shape;
  const long long n = lab_q_elems(s);
  memset(r, 0, sizeof *r);
  r->c = *c;
  r->mode = mode;
  const int shifts = mode == LAB_PAPER || mode == LAB_ROBUST; /* takes beta and eps */
  r->beta = shifts ? beta : 0;
  r->eps = shifts ? eps : 0;
  lab_compare(o, o_ref, n, &r->err);
  r->rounded = ref->rounded;
  r->floor_mean_abs_err = ref->floor_mean_abs_err;
  r->delta_bias = lab_delta_bias(s, o, o_ref, in->dout);
  r->delta_bias_fp32 = o32 ? lab_delta_bias(s, o32, o_ref, in->dout) : NAN;
}

int lab_run_cpu(const lab_case *c, const lab_inputs *in, const lab_mode *modes, int n_modes,
                double beta, double eps, const lab_numerics *num, lab_result *results) {
  const lab_shape *s = &in->shape;
  const long long n = lab_q_elems(s);
  double *o_ref = malloc(sizeof(double) * n), *lse_ref = malloc(sizeof(double) * lab_rows(s));
  float *o = malloc(sizeof(float) * n), *o32 = malloc(sizeof(float) * n);
  float *lse = malloc(sizeof(float) * lab_rows(s));
  int rc = -1;
  if (!o_ref || !lse_ref || !o || !o32 || !lse) goto out;
  lab_ref_forward(s, in->q, in->k, in->v, o_ref, lse_ref);
  const double tied = lab_tied_rate(s, in->q, in->k);
  lab_reference_score ref;
  lab_score_reference(in, o_ref, &ref);
  for (int i = 0; i < n_modes; i++) {
    const lab_fa2_config cfg = {in->dtype, modes[i], c->block_n, beta, eps, c->tc,
                                num ? *num : (lab_numerics){0}};
    if (lab_fa2_forward(s, &cfg, in->q, in->k, in->v, o, o32, lse) != 0) goto out;
    lab_score(c, in, modes[i], beta, eps, o, o32, o_ref, &ref, &results[i]);
    results[i].tied_rate = tied;
  }
  rc = 0;
out:
  free(o_ref);
  free(lse_ref);
  free(o);
  free(o32);
  free(lse);
  return rc;
}

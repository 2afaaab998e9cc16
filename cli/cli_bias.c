/* fa2 bias: rounding bias of the forward pass on the tie-heavy suite, from
 * the CPU lab's emulation of the kernels (default) or the kernels themselves
 * (--gpu), and the paper's drift mechanism (--drift). lab/README.md says what
 * every case and column means. */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_bias.h"
#include "cli_util.h"
#include "lab.h"
#include "rt_head_dim.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: fa2 bias [--cpu | --gpu [--varlen]] [--json] [--seed N] [--beta B] [--eps E]\n"
          "                [--seqlen N] [--heads H] [--head-dims D,...] [--fp16] [--arch A]\n"
          "                [--tc T] [--normalizer L] [--out-round R [--row-group G] [--row-moves K]]\n"
          "                [-j N]\n"
          "       fa2 bias --drift [--steps N] [--json] [--seed N] [--beta B] [--eps E]\n"
          "                [--normalizer L] [--out-round R [--row-group G]]\n"
          "       fa2 bias --dump DIR [--seed N] [--seqlen N] [--heads H] [--fp16]\n"
          "\n"
          "Measures the rounding bias of the forward pass on the tie-heavy suite: per\n"
          "case (maximal key repeated r times at random positions, inside one key tile,\n"
          "across tiles, on the first key, V mostly positive, a random control; ties\n"
          "made or moved by softcap, ALiBi, a sliding window, with attention sinks) for\n"
          "each head dim (default 64 and 128), and per mode (none, paper, robust, balanced): bias ratio, the\n"
          "bias ratio of the correctly rounded output (RN), mean/relative/max error\n"
          "against float64, NaN/Inf count, delta bias sum_T(delta_lp - delta_hp) and\n"
          "the tied-maximum rate. Key tiles are those of the default kernel variants.\n"
          "\n"
          "  --cpu         the lab's emulation of the kernels (default; no GPU needed)\n"
          "  --gpu         the generated kernels on CUDA device 0, through libfa2rt\n"
          "  --varlen      with --gpu: the variable-length kernels, each case's heads split\n"
          "                over 4 sequences of one batch (cu_seqlens; the sink_logit case,\n"
          "                whose sinks are per head of a call, stays fixed-length); same\n"
          "                scores expected\n"
          "  --head-dims D,...  head dims of the suite (default 64,128; up to 8, multiples\n"
          "                of 8 from 8 to 256: those between the kernel head dims 16, 32,\n"
          "                48, 64, 80, 96, 128, ..., 256 run on the next one's tiles)\n"
          "  --json        an array of objects: case, repeats, head_dim, mode (with its\n"
          "                +lrnd/+lmax/+sr/+srh label), beta, eps,\n"
          "                bias_ratio, mean_abs_err, floor_mean_abs_err, rel_err, max_abs_err,\n"
          "                nan_count,\n"
          "                delta_bias, tied_rate\n"
          "  --seed N      input seed (default 1)\n"
          "  --beta B      beta of paper and robust (default 2; > 1)\n"
          "  --eps E       eps of paper (default 1e-3; > 0)\n"
          "  --seqlen N    keys and queries per head (default 256, or two key tiles\n"
          "                when those are wider; 128 to 65536)\n"
          "  --heads H     heads per case (default 256; 1 to 4096): rows are the samples\n"
          "  --fp16        fp16 inputs and kernels instead of bf16\n"
          "  --arch A      place ties against the key tiles of A's default variants\n"
          "                (sm_90's differ: wgmma tiles); default sm_80, and with\n"
          "                --gpu the device's arch\n"
          "  --tc T        the tensor cores' sums the CPU lab emulates: fp32 (IEEE adds)\n"
          "                or h100 (Hopper: blocks of 16 products aligned and truncated,\n"
          "                rounded toward zero; lab/lab_tc.c); default h100 for --arch\n"
          "                sm_90, else fp32\n"
          "  --normalizer L  issue 22's constructions, CPU lab only (the suite and --drift),\n"
          "                every mode: fp32 (the kernels': l sums the fp32 P), rounded (l\n"
          "                sums the P that P V uses, mode label +lrnd), maxres (fp32, plus\n"
          "                each tile maximum's rounding residual: +lmax)\n"
          "  --out-round R rn (the kernels': O rounded to nearest), sr (stochastic\n"
          "                rounding, one seeded random number per element: +sr), srh\n"
          "                (stochastic within 1/8 of the gap from the midpoint, nearest\n"
          "                elsewhere: +srh) or row (groups of rows rounded so that their\n"
          "                errors sum to zero in expectation, lab/lab_round.c: +row)\n"
          "  --row-group G rows per group of --out-round row (default 1; up to 256)\n"
          "  --row-moves K at most K moves per group, the last drawn (default: no limit)\n"
          "  -j N          CPU threads (default: CPUs); with --gpu, cases in parallel: their\n"
          "                float64 references and scores beside one another's launches\n"
          "  --drift       the paper's mechanism: norm of the accumulated dW_Q error over\n"
          "                training-like steps (d=64, N=256, r=2), per mode, and its growth\n"
          "                exponent (1 = linear drift, 0.5 = random walk)\n"
          "  --steps N     drift steps (default 300; 10 to 100000)\n"
          "  --dump DIR    write the suite's inputs (DIR/cases.json, one .bin per case: Q, K,\n"
          "                V, dO as 16-bit bits; the cases without modifiers) for other\n"
          "                implementations\n"
          "                (bench/bias_vs_sdpa.py) instead of measuring\n"
          "  -h, --help    this help\n"
          "\n"
          "Exit status: 0 done, 1 failed (no GPU for --gpu, CUDA error), 2 bad usage.\n");
}

enum { MAX_HD = 8 };

static const lab_mode MODES[4] = {LAB_NONE, LAB_PAPER, LAB_ROBUST, LAB_BALANCED};
enum { N_MODES = 4, BALANCED_MAX_D = 128 };

/* The modes a head dim's cases run: balanced (last in MODES) only where the generator
 * builds it (its rounding spills past d = 128, gen/variant.lua). */
static int modes_at(int head_dim) { return head_dim > BALANCED_MAX_D ? N_MODES - 1 : N_MODES; }

typedef struct options {
  int gpu, json, drift, heads, seqlen, steps, jobs, varlen;
  int head_dims[MAX_HD], n_hd; /* --head-dims */
  const char *dump; /* --dump DIR */
  const char *arch; /* --arch: whose default key tiles (NULL: sm_80's; --gpu: the device's) */
  int tc;           /* --tc: the lab's tensor-core model (a lab_tc; -1: by arch) */
  lab_numerics num; /* --normalizer, --out-round (lab only) */
  char label[N_MODES][32]; /* MODES[m] with num's suffixes ("robust+lrnd+sr"): what MODE prints */
  lab_dtype dtype;
  unsigned long long seed;
  double beta, eps;
} options;

/* The suite: per head dim, these (case, repeats). */
static const struct {
  lab_case_kind kind;
  int repeats;
} SUITE[CLI_BIAS_N_SUITE] = {
    {LAB_CASE_RANDOM, 0},     {LAB_CASE_REPEAT, 1},    {LAB_CASE_REPEAT, 2},
    {LAB_CASE_REPEAT, 4},     {LAB_CASE_REPEAT, 16},   {LAB_CASE_SAME_TILE, 2},
    {LAB_CASE_CROSS_TILE, 2}, {LAB_CASE_SINK, 2},      {LAB_CASE_POS_V, 2},
};
static const struct {
  lab_case_kind kind;
  int repeats;
} MODIFIERS[CLI_BIAS_N_MODIFIERS] = {
    {LAB_CASE_SOFTCAP, 8}, {LAB_CASE_ALIBI, 2}, {LAB_CASE_WINDOW, 2}, {LAB_CASE_SINK_LOGIT, 2},
};
/* Per head dim: the suite, then the modifier cases. */
enum { N_SUITE = CLI_BIAS_N_SUITE, N_PER_D = N_SUITE + CLI_BIAS_N_MODIFIERS, MAX_CASES = MAX_HD * N_PER_D };

int cli_bias_seqlen(const int *block_n, int n) {
  int widest = 0;
  for (int i = 0; i < n; i++) widest = block_n[i] > widest ? block_n[i] : widest;
  return 2 * widest > 256 ? (2 * widest + 127) / 128 * 128 : 256;
}

void cli_bias_suite(int head_dim, int block_n, int seqlen, int heads, lab_case *out) {
  for (int i = 0; i < N_SUITE; i++)
    out[i] = (lab_case){SUITE[i].kind, SUITE[i].repeats, head_dim, seqlen, heads, block_n, 0};
}

void cli_bias_modifier_suite(int head_dim, int block_n, int seqlen, int heads, lab_case *out) {
  for (int i = 0; i < CLI_BIAS_N_MODIFIERS; i++)
    out[i] = (lab_case){MODIFIERS[i].kind, MODIFIERS[i].repeats, head_dim, seqlen, heads, block_n, 0};
}

/* The key tile of the default forward variant of a head dim on arch (varlen:
 * its varlen kernel): the lab places ties against the tiles the kernels really
 * use. -1 (message printed) for an arch the generator does not know. */
static int default_block_n(int head_dim, lab_dtype t, const char *arch, int varlen) {
  gen_state *g;
  gen_err e;
  if (gen_open(&g, NULL, &e) != 0) return fprintf(stderr, "fa2 bias: %s\n", e.msg), -1;
  gen_variant v = {0};
  v.pass = GEN_PASS_FWD;
  v.dtype = t == LAB_FP16 ? GEN_DTYPE_FP16 : GEN_DTYPE_BF16;
  v.head_dim = head_dim;
  v.stab = GEN_STAB_NONE;
  v.varlen = varlen;
  int bn = gen_variant_complete(g, &v, arch, &e) == 0 ? v.block_n : -1;
  if (bn < 0) fprintf(stderr, "fa2 bias: --arch %s: %s\n", arch, e.msg);
  gen_close(g);
  return bn;
}

/* ---- the suite on -j threads ------------------------------------------------ */
typedef struct work {
  const options *o;
  lab_case cases[MAX_CASES];
  lab_result results[MAX_CASES][N_MODES];
  int n_cases; /* N_PER_D per head dim */
  pthread_mutex_t lock;
  int next, done, failed;
  cli_bias_gpu *gpu;  /* --gpu: the device the cases run on */
  char err[512];      /* the first failure's message */
} work;

/* Cases on -j threads, each taking the next: the lab's emulation, or with --gpu the
 * kernels (cli_bias_gpu_run holds the device only for its launches; the float64
 * reference and scores run beside the other threads'). */
static void *worker(void *arg) {
  work *w = arg;
  for (;;) {
    pthread_mutex_lock(&w->lock);
    const int i = w->failed ? w->n_cases : w->next++;
    pthread_mutex_unlock(&w->lock);
    if (i >= w->n_cases) return NULL;
    const lab_case *c = &w->cases[i];
    const int n_modes = modes_at(c->head_dim);
    char err[512] = "out of memory, or a case that does not fit --seqlen";
    lab_inputs in;
    int rc = lab_inputs_make(c, w->o->dtype, w->o->seed, &in);
    if (rc == 0 && w->gpu)
      rc = cli_bias_gpu_run(w->gpu, c, &in, MODES, n_modes, &w->o->beta, 1, w->o->eps, w->results[i], err,
                            sizeof err);
    else if (rc == 0)
      rc = lab_run_cpu(c, &in, MODES, n_modes, w->o->beta, w->o->eps, &w->o->num, w->results[i]);
    lab_inputs_free(&in);
    pthread_mutex_lock(&w->lock);
    w->done++;
    if (rc && !w->failed) snprintf(w->err, sizeof w->err, "%s", err);
    if (rc) w->failed = 1;
    if (isatty(2) && !rc) fprintf(stderr, "\rfa2 bias: %d/%d cases", w->done, w->n_cases);
    pthread_mutex_unlock(&w->lock);
  }
}

/* Every case of w (on g, or on the CPU when g is NULL); 1 when one failed. */
static int run_cases(work *w, cli_bias_gpu *g) {
  if (g && !w->o->json) printf("device: %s\n", cli_bias_gpu_name(g));
  w->gpu = g;
  const int n = w->o->jobs < w->n_cases ? w->o->jobs : w->n_cases;
  pthread_t th[64];
  int started = 0;
  pthread_mutex_init(&w->lock, NULL);
  for (; started < n && started < 64; started++)
    if (pthread_create(&th[started], NULL, worker, w) != 0) break;
  if (started == 0) worker(w);
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  pthread_mutex_destroy(&w->lock);
  if (isatty(2)) fprintf(stderr, "\r%40s\r", "");
  if (w->failed) fprintf(stderr, "fa2 bias%s: %s\n", g ? " --gpu" : "", w->err);
  return w->failed ? 1 : 0;
}

static void print_table(const work *w) {
  const options *o = w->o;
  char what[64];
  if (o->gpu) snprintf(what, sizeof what, "generated kernels (GPU%s)", o->varlen ? ", varlen" : "");
  else snprintf(what, sizeof what, "CPU emulation of the kernels (%s sums)", lab_tc_name(w->cases[0].tc));
  printf("fa2 bias: %s, %s, seed %llu, N = %d, %d heads, beta %g, eps %g; key tiles:", what,
         lab_dtype_name(o->dtype), o->seed, o->seqlen, o->heads, o->beta, o->eps);
  for (int i = 0; i < w->n_cases; i += N_PER_D)
    printf("%s %d (d=%d)", i ? "," : "", w->cases[i].block_n, w->cases[i].head_dim);
  printf("\n\n");
  int mode_w = 0; /* the widest label: "balanced", "robust" and its suffixes */
  for (int m = 0; m < N_MODES; m++) mode_w = (int)strlen(o->label[m]) > mode_w ? (int)strlen(o->label[m]) : mode_w;
  printf("%-10s %3s %4s  %-*s %8s %8s  %9s %9s %9s %9s %4s %11s %11s %5s\n", "CASE", "R", "D", mode_w, "MODE",
         "BIAS", "RN-BIAS", "MEAN|ERR|", "FLOOR", "REL_ERR", "MAX_ERR", "NAN", "DELTA_BIAS", "DB_FP32_O", "TIED");
  for (int i = 0; i < w->n_cases; i++)
    for (int m = 0; m < modes_at(w->cases[i].head_dim); m++) {
      const lab_result *r = &w->results[i][m];
      printf("%-10s %3d %4d  %-*s %+8.4f %+8.4f  %9.3e %9.3e %9.3e %9.3e %4lld %+11.3e %+11.3e %5.2f\n",
             lab_case_name(r->c.kind), r->c.repeats, r->c.head_dim, mode_w, o->label[m],
             r->err.bias_ratio, r->rounded.bias_ratio, r->err.mean_abs_err, r->floor_mean_abs_err, r->err.rel_err,
             r->err.max_abs_err, r->err.nan_count, r->delta_bias, r->delta_bias_fp32, r->tied_rate);
    }
  printf("\nBIAS = mean(O - O_ref) / mean|O - O_ref| (0 = unbiased); RN-BIAS: the same for O_ref\n"
         "correctly rounded to %s. FLOOR: the least MEAN|ERR| of any %s output with |BIAS| <=\n"
         "0.01 (lab/lab_floor.c: a lower bound, for every rounding rule). DELTA_BIAS =\n"
         "sum_T (delta_lp - delta_hp)[T]; DB_FP32_O: the\n"
         "same with delta from the fp32 O (the backward's precise-delta option). TIED: share\n"
         "of rows whose maximum is attained more than once. Modifier cases: softcap (cap 8,\n"
         "R distinct keys saturated), alibi (slopes 0.25-1, tied pair at equal distances),\n"
         "window (causal, 64 keys), sink_logit (a sink per head near the maxima). balanced:\n"
         "head dims up to %d (the generator's limit).\n",
         lab_dtype_name(o->dtype), lab_dtype_name(o->dtype), BALANCED_MAX_D);
}

static void print_json(const work *w) {
  json_t *a = json_array();
  for (int i = 0; i < w->n_cases; i++)
    for (int m = 0; m < modes_at(w->cases[i].head_dim); m++) {
      const lab_result *r = &w->results[i][m];
      json_array_append_new(
          a, json_pack("{s:s, s:i, s:i, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:f, s:f}", "case",
                       lab_case_name(r->c.kind), "repeats", r->c.repeats, "head_dim", r->c.head_dim,
                       "mode", w->o->label[m], "beta", r->beta, "eps", r->eps, "bias_ratio",
                       r->err.bias_ratio, "mean_abs_err", r->err.mean_abs_err, "floor_mean_abs_err",
                       r->floor_mean_abs_err, "rel_err",
                       r->err.rel_err, "max_abs_err", r->err.max_abs_err, "nan_count",
                       (json_int_t)r->err.nan_count, "delta_bias", r->delta_bias, "tied_rate",
                       r->tied_rate));
    }
  char *s = json_dumps(a, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
  if (s) printf("%s\n", s);
  free(s);
  json_decref(a);
}

/* ---- --drift ------------------------------------------------------------------ */
typedef struct drift_job {
  lab_drift_config c;
  double *norms;
  int rc;
} drift_job;

static void *drift_worker(void *arg) {
  drift_job *j = arg;
  j->rc = lab_drift(&j->c, j->norms);
  return NULL;
}

static int run_drift(const options *o) {
  drift_job jobs[N_MODES];
  pthread_t th[N_MODES];
  int ok = 1;
  for (int m = 0; m < N_MODES; m++) {
    jobs[m].c = (lab_drift_config){o->steps, 256, 64, default_block_n(64, LAB_BF16, "sm_80", 0), 2, MODES[m],
                                   o->beta, o->eps, o->seed, o->num};
    jobs[m].norms = malloc(sizeof(double) * o->steps);
    jobs[m].rc = -1;
    if (!jobs[m].norms) ok = 0;
  }
  int started = 0;
  for (; ok && started < N_MODES; started++)
    if (pthread_create(&th[started], NULL, drift_worker, &jobs[started]) != 0) break;
  for (int m = 0; m < started; m++) pthread_join(th[m], NULL);
  for (int m = started; ok && m < N_MODES; m++) drift_worker(&jobs[m]);
  for (int m = 0; m < N_MODES; m++) ok &= jobs[m].rc == 0;
  if (!ok) fprintf(stderr, "fa2 bias --drift: out of memory\n");
  else if (o->json) {
    json_t *root = json_object();
    for (int m = 0; m < N_MODES; m++) {
      json_t *norms = json_array();
      for (int t = 0; t < o->steps; t++) json_array_append_new(norms, json_real(jobs[m].norms[t]));
      json_object_set_new(root, o->label[m],
                          json_pack("{s:f, s:o}", "growth_exponent",
                                    lab_growth_exponent(jobs[m].norms, o->steps), "norms", norms));
    }
    char *s = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(8));
    if (s) printf("%s\n", s);
    free(s);
    json_decref(root);
  } else {
    printf("fa2 bias --drift: ||sum of dW_Q errors|| after each step (bf16, d=64, N=256, maximal key\n"
           "twice per row, fresh inputs and dO = -1 + noise every step, seed %llu)\n\n%8s",
           o->seed, "STEP");
    for (int m = 0; m < N_MODES; m++) printf(" %14s", o->label[m]);
    printf("\n");
    for (int k = 1; k <= 10; k++) {
      const int t = (int)((long long)o->steps * k / 10) - 1;
      printf("%8d", t + 1);
      for (int m = 0; m < N_MODES; m++) printf(" %14.4e", jobs[m].norms[t]);
      printf("\n");
    }
    printf("%8s", "growth");
    for (int m = 0; m < N_MODES; m++) printf(" %14.2f", lab_growth_exponent(jobs[m].norms, o->steps));
    printf("\n\ngrowth: slope of log(norm) over log(step); 1 = linear drift (biased delta),\n"
           "0.5 = random walk (unbiased).\n");
  }
  for (int m = 0; m < N_MODES; m++) free(jobs[m].norms);
  return ok ? 0 : 1;
}

/* ---- options ------------------------------------------------------------------- */
/* --head-dims 64,128,...: kernel head dims, each once, up to MAX_HD; 1 when bad. */
static int parse_head_dims(const char *arg, options *o) {
  char buf[128];
  snprintf(buf, sizeof buf, "%s", arg);
  o->n_hd = 0;
  for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
    const int d = cli_parse_int(p);
    int dup = 0;
    for (int i = 0; i < o->n_hd; i++) dup |= o->head_dims[i] == d;
    if (!rt_head_dim_supported(d) || dup || o->n_hd == MAX_HD) {
      fprintf(stderr, "fa2 bias: --head-dims %s: '%s' not allowed; allowed: up to %d different "
                      "head dims, " RT_HEAD_DIMS_ALLOWED " (kernel head dims %s), comma-separated\n",
              arg, p, MAX_HD, rt_head_dims_text());
      return 1;
    }
    o->head_dims[o->n_hd++] = d;
  }
  if (o->n_hd == 0) return fprintf(stderr, "fa2 bias: --head-dims '%s': empty list\n", arg), 1;
  return 0;
}

int cli_bias(int argc, char **argv) {
  enum { O_CPU = 256, O_GPU, O_JSON, O_SEED, O_BETA, O_EPS, O_SEQLEN, O_HEADS, O_FP16, O_DRIFT, O_STEPS, O_DUMP, O_ARCH, O_TC,
         O_HEAD_DIMS, O_VARLEN, O_NORMALIZER, O_OUT_ROUND, O_ROW_GROUP, O_ROW_MOVES };
  static const struct option opts[] = {
      {"cpu", no_argument, NULL, O_CPU},          {"gpu", no_argument, NULL, O_GPU},
      {"json", no_argument, NULL, O_JSON},        {"seed", required_argument, NULL, O_SEED},
      {"beta", required_argument, NULL, O_BETA},  {"eps", required_argument, NULL, O_EPS},
      {"seqlen", required_argument, NULL, O_SEQLEN}, {"heads", required_argument, NULL, O_HEADS},
      {"fp16", no_argument, NULL, O_FP16},        {"drift", no_argument, NULL, O_DRIFT},
      {"steps", required_argument, NULL, O_STEPS}, {"dump", required_argument, NULL, O_DUMP},
      {"arch", required_argument, NULL, O_ARCH},  {"tc", required_argument, NULL, O_TC},
      {"head-dims", required_argument, NULL, O_HEAD_DIMS}, {"varlen", no_argument, NULL, O_VARLEN},
      {"normalizer", required_argument, NULL, O_NORMALIZER}, {"out-round", required_argument, NULL, O_OUT_ROUND},
      {"row-group", required_argument, NULL, O_ROW_GROUP}, {"row-moves", required_argument, NULL, O_ROW_MOVES},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  options o = {.heads = CLI_BIAS_HEADS, .seqlen = 0, .steps = 300, .jobs = cpus > 0 ? (int)cpus : 1,
               .dtype = LAB_BF16, .seed = 1, .beta = 2.0, .eps = 1e-3, .tc = -1,
               .head_dims = {64, 128}, .n_hd = 2};
  int cpu_flag = 0, lab_set = 0, row_group_set = 0;
  optind = 0;
  for (int c; (c = cli_getopt("bias", argc, argv, ":hj:", opts)) != -1;) {
    int bad = 0;
    switch (c) {
    case O_CPU: cpu_flag = 1; break;
    case O_GPU: o.gpu = 1; break;
    case O_JSON: o.json = 1; break;
    case O_FP16: o.dtype = LAB_FP16; break;
    case O_DRIFT: o.drift = 1; break;
    case O_SEED: {
      char *end;
      o.seed = strtoull(optarg, &end, 10);
      bad = end == optarg || *end || *optarg == '-';
      if (bad) fprintf(stderr, "fa2 bias: --seed %s: not allowed; allowed: whole numbers >= 0\n", optarg);
      break;
    }
    case O_BETA: bad = cli_parse_number("bias", "--beta", optarg, 1, 1e300, "numbers > 1 (the paper uses 2 to 8)", &o.beta); break;
    case O_EPS: bad = cli_parse_number("bias", "--eps", optarg, 0, 1e300, "numbers > 0 (about 1e-3)", &o.eps); break;
    case O_SEQLEN: bad = cli_parse_range("bias", "--seqlen", optarg, 128, 65536, &o.seqlen); break;
    case O_HEADS: bad = cli_parse_range("bias", "--heads", optarg, 1, 4096, &o.heads); break;
    case O_STEPS: bad = cli_parse_range("bias", "--steps", optarg, 10, 100000, &o.steps); break;
    case O_DUMP: o.dump = optarg; break;
    case O_ARCH: o.arch = optarg; break;
    case O_TC: {
      lab_tc tc;
      bad = lab_tc_parse(optarg, &tc) != 0;
      if (bad) fprintf(stderr, "fa2 bias: --tc %s: not allowed; allowed: fp32, h100\n", optarg);
      o.tc = (int)tc;
      break;
    }
    case O_HEAD_DIMS: bad = parse_head_dims(optarg, &o); break;
    case O_VARLEN: o.varlen = 1; break;
    case O_NORMALIZER:
      if (!strcmp(optarg, "fp32")) o.num.norm = LAB_NORM_FP32;
      else if (!strcmp(optarg, "rounded")) o.num.norm = LAB_NORM_ROUNDED;
      else if (!strcmp(optarg, "maxres")) o.num.norm = LAB_NORM_MAXRES;
      else bad = fprintf(stderr, "fa2 bias: --normalizer %s: not allowed; allowed: fp32, rounded, maxres\n", optarg) > 0;
      lab_set = 1;
      break;
    case O_OUT_ROUND:
      if (!strcmp(optarg, "rn")) o.num.out = LAB_OUT_RN;
      else if (!strcmp(optarg, "sr")) o.num.out = LAB_OUT_SR;
      else if (!strcmp(optarg, "srh")) o.num.out = LAB_OUT_SRH;
      else if (!strcmp(optarg, "row")) o.num.out = LAB_OUT_ROW;
      else bad = fprintf(stderr, "fa2 bias: --out-round %s: not allowed; allowed: rn, sr, srh, row\n", optarg) > 0;
      lab_set = 1;
      break;
    case O_ROW_GROUP:
      bad = cli_parse_range("bias", "--row-group", optarg, 1, 256, &o.num.row_group);
      row_group_set = 1;
      break;
    case O_ROW_MOVES:
      bad = cli_parse_range("bias", "--row-moves", optarg, 1, 1 << 20, &o.num.row_moves);
      row_group_set = 1;
      break;
    case 'j': bad = cli_parse_range("bias", "-j", optarg, 1, 64, &o.jobs); break;
    case 'h': usage(stdout); return 0;
    default: return 2;
    }
    if (bad) return 2;
  }
  if (optind < argc) {
    fprintf(stderr, "fa2 bias: unexpected argument '%s' (fa2 bias --help)\n", argv[optind]);
    return 2;
  }
  if (cpu_flag && o.gpu) {
    fprintf(stderr, "fa2 bias: --cpu and --gpu together: choose one\n");
    return 2;
  }
  if (o.drift && o.gpu) {
    fprintf(stderr, "fa2 bias: --drift runs on the CPU lab only: drop --gpu\n");
    return 2;
  }
  if (o.tc >= 0 && (o.gpu || o.drift)) {
    fprintf(stderr, "fa2 bias: --tc sets the CPU suite's arithmetic: drop it with %s\n",
            o.gpu ? "--gpu" : "--drift");
    return 2;
  }
  if (row_group_set && o.num.out != LAB_OUT_ROW) {
    fprintf(stderr, "fa2 bias: --row-group and --row-moves set --out-round row's: add --out-round row\n");
    return 2;
  }
  if (lab_set && (o.gpu || o.dump)) {
    fprintf(stderr, "fa2 bias: --normalizer and --out-round change the CPU lab's arithmetic "
                    "(issue 22's constructions): drop them with %s\n",
            o.gpu ? "--gpu" : "--dump");
    return 2;
  }
  o.num.seed = o.seed; /* --out-round sr: the input seed also seeds the rounding */
  for (int m = 0; m < N_MODES; m++) lab_mode_label(MODES[m], &o.num, o.label[m], sizeof o.label[m]);
  if (o.varlen && !o.gpu) {
    fprintf(stderr, "fa2 bias: --varlen runs the GPU's variable-length kernels: add --gpu\n");
    return 2;
  }
  if (o.drift) return run_drift(&o);

  cli_bias_gpu *g = NULL;
  if (o.gpu) {
    char err[512];
    const int rc = cli_bias_gpu_open(&g, "off", err, sizeof err); /* ties sit on built-in tiles */
    if (rc) {
      fprintf(stderr, "fa2 bias --gpu: %s%s\n", rc > 0 ? "no GPU: " : "", err);
      return 1;
    }
    if (!o.arch) o.arch = cli_bias_gpu_arch(g);
    cli_bias_gpu_set_varlen(g, o.varlen ? CLI_BIAS_VARLEN_SEQS : 0);
    cli_bias_gpu_set_seed(g, o.num.seed);
  }
  work *w = calloc(1, sizeof *w);
  if (!w) return fprintf(stderr, "fa2 bias: out of memory\n"), cli_bias_gpu_close(g), 1;
  w->o = &o;
  w->n_cases = o.n_hd * N_PER_D;
  int bn[MAX_HD];
  for (int di = 0; di < o.n_hd; di++)
    if ((bn[di] = default_block_n(o.head_dims[di], o.dtype, o.arch ? o.arch : "sm_80", o.varlen)) < 0)
      return free(w), cli_bias_gpu_close(g), 2;
  if (!o.seqlen) o.seqlen = cli_bias_seqlen(bn, o.n_hd);
  if (o.varlen && o.heads % CLI_BIAS_VARLEN_SEQS) {
    fprintf(stderr, "fa2 bias: --heads %d with --varlen: allowed multiples of %d (the heads are "
                    "split over %d sequences)\n", o.heads, CLI_BIAS_VARLEN_SEQS, CLI_BIAS_VARLEN_SEQS);
    return free(w), cli_bias_gpu_close(g), 2;
  }
  for (int di = 0; di < o.n_hd; di++) {
    cli_bias_suite(o.head_dims[di], bn[di], o.seqlen, o.heads, &w->cases[di * N_PER_D]);
    cli_bias_modifier_suite(o.head_dims[di], bn[di], o.seqlen, o.heads,
                            &w->cases[di * N_PER_D + N_SUITE]);
  }
  /* Hopper's tensor cores sum differently from IEEE fp32, enough to move
   * none's bias by 0.04 on the tie cases (lab/README.md). */
  const lab_tc tc = o.tc >= 0                                ? (lab_tc)o.tc
                    : o.arch && strcmp(o.arch, "sm_90") == 0 ? LAB_TC_H100
                                                             : LAB_TC_FP32;
  for (int i = 0; i < w->n_cases; i++) w->cases[i].tc = tc;
  if (o.dump) { /* the plain cases: other implementations take no modifiers from the files */
    lab_case plain[MAX_HD * N_SUITE];
    for (int di = 0; di < o.n_hd; di++)
      memcpy(plain + di * N_SUITE, w->cases + di * N_PER_D, sizeof(lab_case) * N_SUITE);
    const int rc = cli_bias_dump(plain, o.n_hd * N_SUITE, o.dtype, o.seed, o.dump);
    free(w);
    cli_bias_gpu_close(g);
    return rc;
  }
  int rc = run_cases(w, g); /* g: NULL without --gpu */
  cli_bias_gpu_close(g);
  if (rc == 0) o.json ? print_json(w) : print_table(w);
  free(w);
  return rc;
}

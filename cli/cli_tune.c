/* fa2 tune: choose tile shapes and beta for this GPU and store them in the
 * tuning database that libfa2rt reads (README "Autotuning"). Tiles: fa2_tune
 * (runtime/rt_tune*.c); beta: the tie suite of fa2 bias (cli_tune_beta.c). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_tune.h"
#include "cli_util.h"
#include "fa2.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: fa2 tune [SPEC] [--shapes N,N,...] [--budget SECONDS] [--db FILE]\n"
          "                [--report DIR] [--betas B,B,...] [--no-beta] [--wide]\n"
          "                [--reps N] [--rounds N] [--finalists N] [--final-reps N]\n"
          "                [--dry-run] [--fresh] [-j N]\n"
          "       fa2 tune --show [--db FILE]\n"
          "\n"
          "Times every tile shape (block_m, block_n, warps, stages) the generator accepts\n"
          "for each pass x dtype x head dim x causal x mode of SPEC (default\n"
          "specs/default.lua) on CUDA device 0, drops those that spill or do not load,\n"
          "re-times the finalists (within 5 %% of the fastest at some length) with more\n"
          "launches, and keeps per key the one whose worst ratio to the fastest over the\n"
          "sequence lengths is smallest, plus per length the fastest there when it is 1.5 %%\n"
          "faster still (calls take the tiles of the nearest tuned length). Then it runs\n"
          "the tie suite of `fa2 bias --gpu` for each beta and keeps, per head dim, the\n"
          "mode and beta with the smallest largest |bias ratio| among those with no\n"
          "NaN/Inf and mean |error| within 1.5x of none. Both go into the\n"
          "tuning database of this GPU, which libfa2rt reads for tiles \"auto\" and\n"
          "FA2_STAB_TUNED. Shapes: B*N = 16384 tokens, H*d = 2048.\n"
          "\n"
          "  --shapes N,...   sequence lengths to time (default 1024,2048,4096,8192,16384)\n"
          "  --budget S       stop timing after S seconds and keep the best so far; the\n"
          "                   journal stays, and the next run resumes\n"
          "  --db FILE        the database (default: <cache dir>/tuning/<gpu>.json)\n"
          "  --report DIR     write DIR/tune.json (every candidate and timing) and\n"
          "                   DIR/beta.json; bench/plot_tune.py DIR draws DIR/tune.png\n"
          "  --betas B,...    betas to calibrate (default 1.5,2,3,4,6,8; each > 1)\n"
          "  --eps E          eps of the calibrated modes (default 1e-3)\n"
          "  --no-beta        tiles only\n"
          "  --wide           the larger grid of a manual sweep, 10 reps x 3 rounds (slow)\n"
          "  --reps N         first pass: timed launches per candidate and round (default 3)\n"
          "  --rounds N       first pass: rounds over all candidates (default 2)\n"
          "  --finalists N    candidates per key re-timed (default 6; 0: no second pass)\n"
          "  --final-reps N   their timed launches per round, 4 rounds (default 10)\n"
          "  --dry-run        time and report, write no database\n"
          "  --fresh          ignore the journal of an interrupted run\n"
          "  -j N             compile threads (default: CPUs, at most 8)\n"
          "  --show           print the database of this GPU (or --db FILE) and exit\n"
          "  -h, --help       this help\n"
          "\n"
          "Exit status: 0 done (also when the budget stopped it), 1 failed (no GPU,\n"
          "CUDA or compile error), 2 bad usage or bad spec.\n");
}

enum { MAX_LIST = 8 };

typedef struct options {
  const char *spec, *db, *report;
  int seqlens[MAX_LIST], n_seqlens;
  double betas[MAX_LIST];
  int n_betas;
  double budget, eps;
  int wide, reps, rounds, dry_run, fresh, no_beta, show, jobs;
  int finalists, final_reps; /* as fa2_tune_options */
} options;

/* "1024,2048" into out[]; -1 with a message on a bad list. */
static int parse_list(const char *opt, const char *s, int is_int, double lo_excl, double hi,
                      double *out, int *n) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", s);
  *n = 0;
  for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
    char *end;
    const double x = strtod(p, &end);
    if (end == p || *end || !(x > lo_excl) || !(x <= hi) || (is_int && x != floor(x)) ||
        *n == MAX_LIST) {
      fprintf(stderr, "fa2 tune: %s %s: '%s' not allowed; allowed: up to %d %s > %g and <= %g, "
                      "comma-separated\n",
              opt, s, p, MAX_LIST, is_int ? "whole numbers" : "numbers", lo_excl, hi);
      return -1;
    }
    out[(*n)++] = x;
  }
  if (*n == 0) return fprintf(stderr, "fa2 tune: %s '%s': empty list\n", opt, s), -1;
  return 0;
}

static void fmt_time(double s, char *buf, size_t len) {
  if (s < 0)
    snprintf(buf, len, "--");
  else if (s < 60)
    snprintf(buf, len, "%.0fs", s);
  else
    snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
}

/* A bar on a terminal; otherwise a line per tenth of each phase. */
static void show_progress(const fa2_tune_progress *p, void *user) {
  int *last_tenth = user;
  char el[32], eta[32];
  fmt_time(p->elapsed_s, el, sizeof el);
  fmt_time(p->eta_s, eta, sizeof eta);
  if (isatty(2)) {
    const int w = 24, fill = p->total ? w * p->done / p->total : 0;
    char bar[32];
    for (int i = 0; i < w; i++) bar[i] = i < fill ? '#' : '.';
    bar[w] = 0;
    fprintf(stderr, "\r%-7s [%s] %4d/%-4d %6s  ETA %-7s %-42.42s", p->phase, bar, p->done,
            p->total, el, eta, p->what);
    if (p->done == p->total) fprintf(stderr, "\n");
    return;
  }
  const int tenth = p->total ? 10 * p->done / p->total : 10;
  const int key = (p->phase[0] == 't') * 100 + tenth;
  if (key == *last_tenth) return;
  *last_tenth = key;
  fprintf(stderr, "fa2 tune: %s %d/%d, %s, ETA %s\n", p->phase, p->done, p->total, el, eta);
}

/* ---- tables ---- */

static const char *tile_of(json_t *cand) { return json_string_value(json_object_get(cand, "tile")); }

/* A candidate's time at length key: re-timed (finalists) when it was. */
static double ms_at(json_t *cand, const char *key) {
  const double fin = json_number_value(json_object_get(json_object_get(cand, "ms_final"), key));
  return fin > 0 ? fin : json_number_value(json_object_get(json_object_get(cand, "ms"), key));
}

static json_t *cand_named(json_t *cands, const char *name) {
  size_t k;
  json_t *c;
  json_array_foreach(cands, k, c) if (name && !strcmp(name, json_string_value(json_object_get(c, "name")))) return c;
  return NULL;
}

static void print_tiles(json_t *rep) {
  json_t *lens = json_object_get(rep, "seqlens"), *groups = json_object_get(rep, "groups");
  printf("\nTiles (median ms per call; speed-up over the built-in tiles; * a length's own tiles)\n"
         "%-30s %-14s %-14s %5s %3s", "KEY", "CHOSEN", "BUILT-IN", "TIMED", "FIN");
  size_t i, g;
  json_t *n, *gr;
  json_array_foreach(lens, i, n) printf(" %14lld", (long long)json_integer_value(n));
  printf(" %6s\n", "WORST");
  int any_own = 0;
  json_array_foreach(groups, g, gr) {
    const char *best = json_string_value(json_object_get(gr, "best"));
    json_t *cands = json_object_get(gr, "candidates"), *c, *chosen = cand_named(cands, best), *def = NULL;
    int timed = 0, all = 0, fin = 0;
    size_t k;
    json_array_foreach(cands, k, c) {
      all++;
      timed += !*json_string_value(json_object_get(c, "pruned"));
      fin += json_is_true(json_object_get(c, "finalist"));
      if (json_is_true(json_object_get(c, "default"))) def = c;
    }
    char counts[32];
    snprintf(counts, sizeof counts, "%d/%d", timed, all);
    printf("%-30s %-14s %-14s %5s %3d", json_string_value(json_object_get(gr, "key")),
           chosen ? tile_of(chosen) : "(none)", def ? tile_of(def) : "?", counts, fin);
    json_array_foreach(lens, i, n) {
      char key[16];
      snprintf(key, sizeof key, "%lld", (long long)json_integer_value(n));
      json_t *own = cand_named(cands, json_string_value(json_object_get(json_object_get(gr, "by_seqlen"), key)));
      json_t *at = own ? own : chosen;
      const double a = at ? ms_at(at, key) : 0, b = def ? ms_at(def, key) : 0;
      any_own |= own && own != chosen;
      if (a > 0 && b > 0)
        printf(" %7.3f %4.2fx%s", a, b / a, own && own != chosen ? "*" : " ");
      else
        printf(" %14s", a > 0 ? "new" : "-");
    }
    printf(" %6.3f\n", json_number_value(json_object_get(gr, "worst_ratio")));
  }
  printf("TIMED: candidates in the race / generated (the others spill or do not load).\n"
         "FIN: finalists, re-timed with more launches (their times are shown).\n"
         "WORST: the chosen tiles' largest time / the fastest candidate's, over the lengths.\n");
  if (!any_own) return;
  printf("Own tiles per length (* above):\n");
  json_array_foreach(groups, g, gr) {
    json_t *cands = json_object_get(gr, "candidates");
    json_t *chosen = cand_named(cands, json_string_value(json_object_get(gr, "best")));
    json_array_foreach(lens, i, n) {
      char key[16];
      snprintf(key, sizeof key, "%lld", (long long)json_integer_value(n));
      json_t *own = cand_named(cands, json_string_value(json_object_get(json_object_get(gr, "by_seqlen"), key)));
      if (own && chosen && own != chosen)
        printf("  %-30s N=%-6s %-14s %.3f ms, %.3fx the key's %s there\n",
               json_string_value(json_object_get(gr, "key")), key, tile_of(own), ms_at(own, key),
               ms_at(chosen, key) / ms_at(own, key), tile_of(chosen));
    }
  }
}

static int choose_beta(const cli_beta_row *rows, int n) {
  int best = -1;
  for (int i = 0; i < n; i++)
    if (rows[i].mode != LAB_NONE && rows[i].eligible &&
        (best < 0 || rows[i].max_abs_bias < rows[best].max_abs_bias))
      best = i;
  return best;
}

static void print_betas(const cli_beta_row *rows, int n, const int *chosen, int n_hd) {
  printf("\nBeta calibration (tie suite of fa2 bias --gpu; eligible: no NaN/Inf, mean |error|\n"
         "<= %.1fx none's; chosen: the smallest max |bias ratio|)\n%4s  %-6s %5s %10s %5s %9s %s\n",
         CLI_BETA_MAX_ERR_RATIO, "D", "MODE", "BETA", "MAX|BIAS|", "NAN", "ERR/NONE", "");
  for (int i = 0; i < n; i++) {
    int star = 0;
    for (int h = 0; h < n_hd; h++) star |= chosen[h] == i;
    printf("%4d  %-6s %5g %10.4f %5lld %9.3f %s\n", rows[i].head_dim, lab_mode_name(rows[i].mode),
           rows[i].beta, rows[i].max_abs_bias, rows[i].nans, rows[i].err_ratio,
           star ? "<- chosen" : rows[i].mode == LAB_NONE ? "" : rows[i].eligible ? "" : "not eligible");
  }
}

static json_t *betas_json(const cli_beta_row *rows, int n) {
  json_t *a = json_array();
  for (int i = 0; i < n; i++)
    json_array_append_new(a, json_pack("{s:i, s:s, s:f, s:f, s:I, s:f, s:b}", "head_dim",
                                       rows[i].head_dim, "mode", lab_mode_name(rows[i].mode),
                                       "beta", rows[i].beta, "max_abs_bias", rows[i].max_abs_bias,
                                       "nan_count", (json_int_t)rows[i].nans, "err_ratio",
                                       rows[i].err_ratio, "eligible", rows[i].eligible));
  return a;
}

/* The fixed-length forward tuning groups of the report with a robust key
 * (fwd_bf16_d<D>_robust), every kernel head dim: the head dim and the chosen
 * tiles' block_n (the suite places its ties against them). */
enum { N_CAL = 8 };
static int calibration_targets(json_t *rep, int dtype_fp16, int *hd, int *bn) {
  int n = 0;
  for (int d = 32; d <= 256 && n < N_CAL; d += 32) {
    char key[64];
    snprintf(key, sizeof key, "fwd_%s_d%d_robust", dtype_fp16 ? "fp16" : "bf16", d);
    size_t i, k;
    json_t *gr, *c;
    json_array_foreach(json_object_get(rep, "groups"), i, gr) {
      if (strcmp(json_string_value(json_object_get(gr, "key")), key)) continue;
      const char *best = json_string_value(json_object_get(gr, "best"));
      json_array_foreach(json_object_get(gr, "candidates"), k, c) {
        const char *name = json_string_value(json_object_get(c, "name"));
        if (best ? !strcmp(best, name) : json_is_true(json_object_get(c, "default"))) {
          hd[n] = d;
          bn[n++] = (int)json_integer_value(json_object_get(c, "block_n"));
          break;
        }
      }
    }
  }
  return n;
}

/* ---- --show ---- */

/* A database tile object as its name part: m128n64w4s2, or ...wg for wgmma, ...ws for ws. */
static void tile_text(json_t *o, char *buf, size_t n) {
  snprintf(buf, n, "m%lldn%lldw%llds%lld%s", (long long)json_integer_value(json_object_get(o, "block_m")),
           (long long)json_integer_value(json_object_get(o, "block_n")),
           (long long)json_integer_value(json_object_get(o, "warps")),
           (long long)json_integer_value(json_object_get(o, "stages")),
           json_is_true(json_object_get(o, "ws"))      ? "ws"
           : json_is_true(json_object_get(o, "wgmma")) ? "wg"
                                                       : "");
}

static int show(const char *path) {
  json_error_t je;
  json_t *root = json_load_file(path, 0, &je);
  if (!root) {
    fprintf(stderr, "fa2 tune --show: %s: %s\n", path, je.text);
    return 1;
  }
  json_t *gpu = json_object_get(root, "gpu"), *made = json_object_get(root, "made_with");
  printf("%s\n  gpu: %s (%s, %lld SMs)\n  made with fa2gen %s, driver %lld, NVRTC %s; updated %s\n\n",
         path, json_string_value(json_object_get(gpu, "name")),
         json_string_value(json_object_get(gpu, "arch")),
         (long long)json_integer_value(json_object_get(gpu, "sm_count")),
         json_string_value(json_object_get(made, "fa2gen")),
         (long long)json_integer_value(json_object_get(made, "driver")),
         json_string_value(json_object_get(made, "nvrtc")),
         json_string_value(json_object_get(root, "updated")));
  printf("%-30s %-14s %-7s %5s %7s  %s\n", "KEY", "TILES", "STAB", "BETA", "EPS", "MS PER N");
  const char *key;
  json_t *e;
  json_object_foreach(json_object_get(root, "entries"), key, e) {
    char tiles[48] = "-", ms[200] = "";
    if (json_object_get(e, "block_m")) tile_text(e, tiles, sizeof tiles);
    const char *n;
    json_t *t;
    size_t o = 0;
    json_object_foreach(json_object_get(e, "ms"), n, t) if (o < sizeof ms)
      o += (size_t)snprintf(ms + o, sizeof ms - o, "%s:%.3f ", n, json_number_value(t));
    const char *stab = json_string_value(json_object_get(e, "stab"));
    printf("%-30s %-14s %-7s %5g %7g  %s\n", key, tiles, stab ? stab : "-",
           json_number_value(json_object_get(e, "beta")), json_number_value(json_object_get(e, "eps")), ms);
    json_object_foreach(json_object_get(e, "by_seqlen"), n, t) {
      tile_text(t, tiles, sizeof tiles);
      printf("  N=%-6s %s\n", n, tiles);
    }
  }
  json_decref(root);
  return 0;
}

/* ---- the command ---- */

static int parse(int argc, char **argv, options *o) {
  enum { O_SHAPES = 256, O_BUDGET, O_DB, O_REPORT, O_BETAS, O_EPS, O_NO_BETA, O_WIDE, O_REPS,
         O_ROUNDS, O_DRY, O_FRESH, O_SHOW, O_FINALISTS, O_FINAL_REPS };
  static const struct option opts[] = {
      {"shapes", required_argument, NULL, O_SHAPES}, {"budget", required_argument, NULL, O_BUDGET},
      {"db", required_argument, NULL, O_DB},         {"report", required_argument, NULL, O_REPORT},
      {"betas", required_argument, NULL, O_BETAS},   {"eps", required_argument, NULL, O_EPS},
      {"no-beta", no_argument, NULL, O_NO_BETA},     {"wide", no_argument, NULL, O_WIDE},
      {"reps", required_argument, NULL, O_REPS},     {"rounds", required_argument, NULL, O_ROUNDS},
      {"dry-run", no_argument, NULL, O_DRY},         {"fresh", no_argument, NULL, O_FRESH},
      {"show", no_argument, NULL, O_SHOW},           {"help", no_argument, NULL, 'h'},
      {"finalists", required_argument, NULL, O_FINALISTS},
      {"final-reps", required_argument, NULL, O_FINAL_REPS},
      {NULL, 0, NULL, 0}};
  static const double DEFAULT_BETAS[] = {1.5, 2, 3, 4, 6, 8};
  memcpy(o->betas, DEFAULT_BETAS, sizeof DEFAULT_BETAS);
  o->n_betas = 6, o->eps = 1e-3;
  optind = 0;
  for (int c; (c = cli_getopt("tune", argc, argv, ":hj:", opts)) != -1;) {
    double list[MAX_LIST];
    int bad = 0;
    switch (c) {
    case O_SHAPES:
      bad = parse_list("--shapes", optarg, 1, 15, 65536, list, &o->n_seqlens);
      for (int i = 0; !bad && i < o->n_seqlens; i++) o->seqlens[i] = (int)list[i];
      break;
    case O_BETAS: bad = parse_list("--betas", optarg, 0, 1, 1e6, o->betas, &o->n_betas); break;
    case O_BUDGET: bad = cli_parse_number("tune", "--budget", optarg, 0, 1e9, "numbers > 0", &o->budget); break;
    case O_EPS: bad = cli_parse_number("tune", "--eps", optarg, 0, 1e9, "numbers > 0", &o->eps); break;
    case O_DB: o->db = optarg; break;
    case O_REPORT: o->report = optarg; break;
    case O_NO_BETA: o->no_beta = 1; break;
    case O_WIDE: o->wide = 1; break;
    case O_DRY: o->dry_run = 1; break;
    case O_FRESH: o->fresh = 1; break;
    case O_SHOW: o->show = 1; break;
    case O_FINALISTS: {
      const int x = strcmp(optarg, "0") ? cli_parse_int(optarg) : 0; /* 0 is allowed here */
      bad = x < 0 || x == 1 || x > 32;
      if (bad)
        fprintf(stderr, "fa2 tune: --finalists %s: not allowed; allowed: 0 (no second pass) or "
                        "whole numbers from 2 to 32\n", optarg);
      o->finalists = x == 0 ? -1 : x;
      break;
    }
    case O_REPS: bad = cli_parse_range("tune", "--reps", optarg, 1, 100, &o->reps); break;
    case O_ROUNDS: bad = cli_parse_range("tune", "--rounds", optarg, 1, 20, &o->rounds); break;
    case O_FINAL_REPS: bad = cli_parse_range("tune", "--final-reps", optarg, 1, 100, &o->final_reps); break;
    case 'j': bad = cli_parse_range("tune", "-j", optarg, 1, 64, &o->jobs); break;
    case 'h': usage(stdout); return 0;
    default: return 2;
    }
    if (bad) return 2;
  }
  for (int i = 0; i < o->n_betas; i++)
    if (!(o->betas[i] > 1)) {
      fprintf(stderr, "fa2 tune: --betas: %g not allowed; allowed: numbers > 1\n", o->betas[i]);
      return 2;
    }
  if (optind < argc) o->spec = argv[optind++];
  if (optind < argc) {
    fprintf(stderr, "fa2 tune: unexpected argument '%s' (fa2 tune --help)\n", argv[optind]);
    return 2;
  }
  if (o->report && mkdir(o->report, 0777) != 0 && access(o->report, W_OK) != 0) {
    fprintf(stderr, "fa2 tune: --report %s: cannot create or write that folder\n", o->report);
    return 2;
  }
  return -1;
}

static int calibrate(fa2_context *ctx, const options *o, json_t *rep, const char *db) {
  int hd[N_CAL], bn[N_CAL];
  const int n_hd = calibration_targets(rep, 0, hd, bn);
  if (n_hd == 0) {
    printf("\nBeta calibration: skipped (the spec has no bf16 robust forward of fixed length, "
           "the tie suite's)\n");
    return 0;
  }
  const int n_rows = n_hd * (1 + 2 * o->n_betas);
  cli_beta_row *rows = calloc((size_t)n_rows, sizeof *rows);
  if (!rows) return fprintf(stderr, "fa2 tune: out of memory\n"), 1;
  int rc = cli_tune_beta(o->dry_run ? "off" : db, LAB_BF16, hd, bn, n_hd, o->betas, o->n_betas,
                         o->eps, rows);
  int chosen[N_CAL];
  for (int h = 0; h < n_hd; h++) chosen[h] = -1;
  for (int h = 0; !rc && h < n_hd; h++) {
    const int per = 1 + 2 * o->n_betas;
    const int c = choose_beta(rows + h * per, per);
    chosen[h] = c < 0 ? -1 : h * per + c;
  }
  if (!rc) print_betas(rows, n_rows, chosen, n_hd);
  for (int h = 0; !rc && h < n_hd; h++) {
    if (chosen[h] < 0) {
      printf("d=%d: no eligible beta; FA2_STAB_TUNED keeps robust, beta %g\n", hd[h], FA2_DEFAULT_BETA);
      continue;
    }
    const cli_beta_row *r = &rows[chosen[h]];
    if (o->dry_run) continue;
    const fa2_stab st = r->mode == LAB_PAPER ? FA2_STAB_PAPER : FA2_STAB_ROBUST;
    if (fa2_tuning_set_stab(ctx, db, FA2_BF16, hd[h], st, r->beta, o->eps) != FA2_OK) {
      fprintf(stderr, "fa2 tune: %s\n", fa2_last_error());
      rc = 1;
    }
  }
  if (!rc && o->report) {
    char path[1100];
    snprintf(path, sizeof path, "%s/beta.json", o->report);
    json_t *a = betas_json(rows, n_rows);
    if (json_dump_file(a, path, JSON_INDENT(1)) != 0) fprintf(stderr, "fa2 tune: cannot write %s\n", path), rc = 1;
    json_decref(a);
  }
  free(rows);
  return rc;
}

int cli_tune(int argc, char **argv) {
  options o = {0};
  int rc = parse(argc, argv, &o);
  if (rc >= 0) return rc;
  fa2_options fo = {0};
  fo.tuning_db = o.db;
  fo.jobs = o.jobs;
  fa2_context *ctx;
  if (o.show && o.db) return show(o.db);
  if (fa2_create(&ctx, &fo) != FA2_OK) {
    fprintf(stderr, "fa2 tune: %s\n", fa2_last_error());
    return 1;
  }
  char db[1100] = "";
  if (fa2_tuning_path(ctx, db, sizeof db) != FA2_OK && !o.dry_run) {
    fprintf(stderr, "fa2 tune: %s (pass --db FILE)\n", fa2_last_error());
    fa2_destroy(ctx);
    return 1;
  }
  if (o.show) {
    fa2_destroy(ctx);
    return show(db);
  }
  fa2_cache_stats st;
  fa2_stats(ctx, &st);
  printf("fa2 tune: %s (%s); spec %s; database %s%s\n", st.device_name, st.arch,
         cli_spec_path(o.spec) ? cli_spec_path(o.spec) : "(built-in default)", db,
         o.dry_run ? " (dry run: not written)" : "");
  fflush(stdout);
  char report[1100];
  if (o.report)
    snprintf(report, sizeof report, "%s/tune.json", o.report);
  else
    snprintf(report, sizeof report, "/tmp/fa2-tune-%ld.json", (long)getpid());
  int last = -1;
  fa2_tune_options to = {0};
  to.spec_path = cli_spec_path(o.spec);
  to.seqlens = o.n_seqlens ? o.seqlens : NULL;
  to.n_seqlens = o.n_seqlens;
  to.budget_s = o.budget, to.wide = o.wide, to.reps = o.reps, to.rounds = o.rounds;
  to.finalists = o.finalists, to.final_reps = o.final_reps;
  to.dry_run = o.dry_run, to.fresh = o.fresh;
  to.db_path = db[0] ? db : NULL;
  to.report_path = report;
  to.progress = show_progress, to.progress_user = &last;
  const double t0 = (double)time(NULL);
  int complete = 0;
  if (fa2_tune(ctx, &to, &complete) != FA2_OK) {
    fprintf(stderr, "\nfa2 tune: %s\n", fa2_last_error());
    fa2_destroy(ctx);
    return 1;
  }
  json_t *rep = json_load_file(report, 0, NULL);
  if (!o.report) unlink(report);
  if (!rep) {
    fprintf(stderr, "fa2 tune: cannot read back %s\n", report);
    fa2_destroy(ctx);
    return 1;
  }
  print_tiles(rep);
  if (!complete)
    printf("\nThe budget (%g s) stopped the timing; keys shown with '-' were not timed. Run fa2 "
           "tune again to resume.\n", o.budget);
  rc = o.no_beta ? 0 : calibrate(ctx, &o, rep, db);
  json_decref(rep);
  fa2_destroy(ctx);
  printf("\nfa2 tune: %s in %.0f s%s%s\n", rc ? "failed" : complete ? "done" : "stopped by the budget",
         (double)time(NULL) - t0, o.dry_run ? "" : "; database ", o.dry_run ? "" : db);
  return rc;
}

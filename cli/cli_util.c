/* cli_util: helpers shared by the fa2 subcommands. */
#include "cli_util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_status(int gen_code) { return gen_code == GEN_ESPEC || gen_code == GEN_EIO ? 2 : 1; }

const char *cli_spec_path(const char *arg) {
  if (arg) return arg;
  return access("specs/default.lua", R_OK) == 0 ? "specs/default.lua" : NULL;
}

int cli_open(const char *cmd, const char *spec_arg, const char *templates, gen_state **g,
             gen_spec *spec) {
  gen_err err;
  memset(spec, 0, sizeof *spec);
  int rc = gen_open(g, templates, &err);
  if (rc) {
    fprintf(stderr, "fa2 %s: %s\n", cmd, err.msg);
    return cli_status(rc);
  }
  rc = gen_spec_load(*g, cli_spec_path(spec_arg), spec, &err);
  if (rc) {
    fprintf(stderr, "fa2 %s: %s\n", cmd, err.msg);
    gen_close(*g);
    *g = NULL;
    return cli_status(rc);
  }
  return 0;
}

void cli_close(gen_state *g, gen_spec *spec) {
  gen_spec_free(spec);
  gen_close(g);
}

int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
               const struct option *longopts) {
  opterr = 0; /* our messages, below */
  int c = getopt_long(argc, argv, shortopts, longopts, NULL);
  if (c != ':' && c != '?') return c;
  char shown[64];
  if (optopt > ' ' && optopt < 127)
    snprintf(shown, sizeof shown, "-%c", optopt);
  else
    snprintf(shown, sizeof shown, "%.60s", optind > 1 && optind - 1 < argc ? argv[optind - 1] : "?");
  if (c == ':')
    fprintf(stderr, "fa2 %s: option '%s' needs a value (fa2 %s --help)\n", cmd, shown, cmd);
  else
    fprintf(stderr, "fa2 %s: unknown option '%s' (fa2 %s --help)\n", cmd, shown, cmd);
  return '?';
}

int cli_parse_int(const char *s) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < 1 || v > INT_MAX) return -1;
  return (int)v;
}

int cli_parse_range(const char *cmd, const char *opt, const char *s, int lo, int hi, int *out) {
  const int x = cli_parse_int(s);
  if (x < lo || x > hi) {
    fprintf(stderr, "fa2 %s: %s %s: not allowed; allowed: whole numbers from %d to %d\n", cmd, opt,
            s, lo, hi);
    return -1;
  }
  *out = x;
  return 0;
}

int cli_parse_number(const char *cmd, const char *opt, const char *s, double lo_excl, double hi,
                     const char *allowed, double *out) {
  char *end;
  const double x = strtod(s, &end);
  if (end == s || *end || !(x > lo_excl) || x > hi) { /* !(x > lo) also refuses NaN */
    fprintf(stderr, "fa2 %s: %s %s: not allowed; allowed: %s\n", cmd, opt, s, allowed);
    return -1;
  }
  *out = x;
  return 0;
}

/* cli_util: what the fa2 subcommands share: option errors, spec opening,
 * exit statuses. */
#ifndef CLI_UTIL_H
#define CLI_UTIL_H
#include <getopt.h>

#include "gen.h"

/* Exit status for a failed gen_* call: 2 for a bad spec or bad input the
 * user named (spec file, --templates folder), 1 otherwise. */
int cli_status(int gen_code);

/* The spec to use: arg when given; else specs/default.lua when that file
 * exists here; else NULL (the embedded default). */
const char *cli_spec_path(const char *arg);

/* Opens the generator and loads the spec, printing errors as "fa2 CMD: ...".
 * Returns 0 or the exit status. On success close with cli_close. */
int cli_open(const char *cmd, const char *spec_arg, const char *templates, gen_state **g,
             gen_spec *spec);
void cli_close(gen_state *g, gen_spec *spec);

/* getopt_long with our own messages (shortopts must start with ':'):
 * returns the option, -1 at the end, or '?' after printing the problem.
 * Set optind = 0 before the first call. */
int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
               const struct option *longopts);

/* Parses a whole positive int ("8"); -1 when it is not one. */
int cli_parse_int(const char *s);

/* An option's value: a whole number from lo to hi (lo >= 1), or a number
 * > lo_excl and <= hi. 0 and *out set, or -1 after printing
 * "fa2 CMD: OPT S: not allowed; allowed: ..." (allowed: what to say). */
int cli_parse_range(const char *cmd, const char *opt, const char *s, int lo, int hi, int *out);
int cli_parse_number(const char *cmd, const char *opt, const char *s, double lo_excl, double hi,
                     const char *allowed, double *out);

#endif

/* The `fa2` command's subcommands. Each takes the arguments after its name
 * (argv[0] is the subcommand) and returns the process exit status:
 * 0 success, 1 failure, 2 bad usage or bad spec (nothing written). */
#ifndef CLI_H
#define CLI_H

typedef struct cli_command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} cli_command;

int cli_gen(int argc, char **argv);
int cli_list(int argc, char **argv);
int cli_build(int argc, char **argv);
int cli_bias(int argc, char **argv);
int cli_tune(int argc, char **argv);

#endif

/* fa2 gen: placeholder until its issue lands. */
#include <stdio.h>
#include "cli.h"

int cli_gen(int argc, char **argv) {
  fprintf(stderr, "fa2 gen: not implemented yet\n");
  return 1;
}

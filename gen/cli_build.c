/* fa2 build: placeholder until its issue lands. */
#include <stdio.h>
#include "cli.h"

int cli_build(int argc, char **argv) {
  fprintf(stderr, "fa2 build: not implemented yet\n");
  return 1;
}

/* fa2 bias: placeholder until its issue lands. */
#include <stdio.h>
#include "cli.h"

int cli_bias(int argc, char **argv) {
  fprintf(stderr, "fa2 bias: not implemented yet\n");
  return 1;
}

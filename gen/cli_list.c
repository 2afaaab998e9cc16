/* fa2 list: placeholder until its issue lands. */
#include <stdio.h>
#include "cli.h"

int cli_list(int argc, char **argv) {
  fprintf(stderr, "fa2 list: not implemented yet\n");
  return 1;
}

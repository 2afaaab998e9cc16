/* Spill records: what ptxas reported for every variant of a shipped spec, by
 * source hash and compiler, so that make test compiles only the variants whose
 * source changed and a sample of the rest (tests/test_rt_build.c, full_check).
 *
 * File (tests/golden/<spec>_resources.txt), one line per (variant, arch):
 *   # comment lines
 *   compiler nvrtc 13.0 --std=c++17 -lineinfo -DNDEBUG
 *   <name> <arch> <source hash> <registers> <spill stores> <spill loads> <stack>
 * Registers and stack are the largest over the variant's kernel entries, the
 * spills their sums (rt_build_item's fields). */
#ifndef SPILL_RECORD_H
#define SPILL_RECORD_H
#include <stddef.h>

#include "gen_out.h"

typedef struct sr_row {
  char name[160], arch[16], hash[GEN_HASH_LEN];
  int registers, spill_stores, spill_loads, stack;
} sr_row;

typedef struct sr_record {
  char compiler[256];
  int n;
  sr_row *rows;
} sr_record;

/* The compiler line of this machine: NVRTC's version (loaded) and gen_nvrtc_options(). */
void sr_compiler(char *buf, size_t len);

/* 0: read; -1: missing or malformed, why says which line and what (r is empty). */
int sr_read(const char *path, sr_record *r, char *why, size_t whylen);
/* 0: written (the whole file, replaced); -1: cannot write. */
int sr_write(const char *path, const char *compiler, const sr_row *rows, int n);
/* The row of name on arch whose source hash is hash, or NULL. */
const sr_row *sr_find(const sr_record *r, const char *name, const char *arch, const char *hash);
void sr_free(sr_record *r);

#endif

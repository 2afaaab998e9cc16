/* fa2 bias --dump DIR: the suite's inputs as raw 16-bit files, so other
 * attention implementations (PyTorch SDPA, bench/bias_vs_sdpa.py) can be
 * scored on exactly the same data. DIR/cases.json lists the cases; each
 * DIR/<case>_r<R>_d<D>.bin holds Q, K, V, dO in that order, each
 * (1, seqlen, heads, head_dim) row-major bf16 or fp16 bits, little-endian. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_bias.h"

static int write_halves(FILE *f, const float *x, long long n, lab_dtype t) {
  for (long long i = 0; i < n; i++) {
    const uint16_t h = t == LAB_FP16 ? lab_f32_to_fp16(x[i]) : lab_f32_to_bf16(x[i]);
    const unsigned char b[2] = {(unsigned char)(h & 0xff), (unsigned char)(h >> 8)};
    if (fwrite(b, 1, 2, f) != 2) return -1;
  }
  return 0;
}

int cli_bias_dump(const lab_case *cases, int n, lab_dtype t, uint64_t seed, const char *dir) {
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "fa2 bias --dump: cannot create %s: %s\n", dir, strerror(errno));
    return 1;
  }
  json_t *index = json_array();
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++) {
    const lab_case *c = &cases[i];
    char name[96], path[4096];
    snprintf(name, sizeof name, "%s_r%d_d%d.bin", lab_case_name(c->kind), c->repeats, c->head_dim);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    lab_inputs in;
    if (lab_inputs_make(c, t, seed, &in) != 0) {
      fprintf(stderr, "fa2 bias --dump: out of memory\n");
      rc = 1;
      break;
    }
    FILE *f = fopen(path, "wb");
    const long long ne = lab_q_elems(&in.shape);
    if (!f || write_halves(f, in.q, ne, t) || write_halves(f, in.k, ne, t) ||
        write_halves(f, in.v, ne, t) || write_halves(f, in.dout, ne, t) || fclose(f) != 0) {
      fprintf(stderr, "fa2 bias --dump: cannot write %s: %s\n", path, strerror(errno));
      rc = 1;
    }
    lab_inputs_free(&in);
    json_array_append_new(index, json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:s, s:s, s:I}", "case",
                                           lab_case_name(c->kind), "repeats", c->repeats, "head_dim",
                                           c->head_dim, "seqlen", c->seqlen, "heads", c->heads,
                                           "block_n", c->block_n, "dtype", lab_dtype_name(t), "file",
                                           name, "seed", (json_int_t)seed));
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/cases.json", dir);
  if (rc == 0 && json_dump_file(index, path, JSON_INDENT(1)) != 0) {
    fprintf(stderr, "fa2 bias --dump: cannot write %s\n", path);
    rc = 1;
  }
  json_decref(index);
  if (rc == 0) printf("fa2 bias --dump: %d cases -> %s/ (cases.json, *.bin)\n", n, dir);
  return rc;
}

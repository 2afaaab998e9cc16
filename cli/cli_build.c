/* fa2 build: NVRTC-compile every variant of a spec ahead of time, print the
 * resource table, write DIR/<arch>/ (cubins + build.json). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_util.h"
#include "rt_build.h"
#include "gen_fs.h"

enum { OPT_TEMPLATES = 256, OPT_ARCH };

static void usage(FILE *f) {
  fprintf(f,
          "usage: fa2 build [SPEC] [--arch sm_80,sm_90] [-j N] [-o DIR] [--templates DIR]\n"
          "\n"
          "Compiles every variant of SPEC with NVRTC for each arch, in N threads, and\n"
          "prints per variant and arch: registers, shared memory (dynamic + static),\n"
          "stack frame, spill stores/loads, compile time. Then writes\n"
          "DIR/<arch>/<name>.cubin and DIR/<arch>/build.json (hashes and resources, for\n"
          "the runtime to check AOT cubins), each arch folder replaced atomically.\n"
          "DIR's sources and manifest.json are (re)written first when they are missing\n"
          "or differ from what SPEC renders to (as `fa2 gen` would, dropping old cubins).\n"
          "A spill or a stack frame in any variant is an error (exit 1, nothing\n"
          "written) unless the spec says allow_spills = true.\n"
          "\n"
          "  SPEC              spec file (default specs/default.lua, or the embedded copy)\n"
          "  --arch LIST       comma-separated arches (default: the spec's arch list)\n"
          "  -j, --jobs N      compile threads (default: the number of CPUs)\n"
          "  -o, --output DIR  output folder (default out)\n"
          "  --templates DIR   read templates from DIR instead of the embedded ones\n"
          "  -h, --help        this help\n"
          "\n"
          "Exit status: 0 done, 1 failed (compile error, spills, NVRTC missing, file\n"
          "system), 2 bad usage or spec.\n");
}

/* Splits "sm_80,sm_90" into arch (deduplicated); -1 on a bad list. */
static int split_arch(const char *list, char arch[8][16]) {
  int n = 0;
  const char *p = list;
  while (*p) {
    size_t len = strcspn(p, ",");
    if (len == 0 || len >= 16) return -1;
    char a[16];
    memcpy(a, p, len);
    a[len] = 0;
    int dup = 0;
    for (int i = 0; i < n; i++) dup |= !strcmp(arch[i], a);
    if (!dup) {
      if (n == 8) return -1;
      strcpy(arch[n++], a);
    }
    p += len;
    if (*p == ',') p++;
  }
  return n ? n : -1;
}

static void progress(void *user, int done, int total, const char *name, const char *arch) {
  fprintf(stderr, "\r\033[K[%*d/%d] %s %s", total >= 100 ? 3 : 2, done, total, arch, name);
  if (done == total) fprintf(stderr, "\r\033[K");
  fflush(stderr);
}

static void print_table(const gen_spec *s, const rt_build *b) {
  int w = 7;
  for (int i = 0; i < s->n_variants; i++)
    if ((int)strlen(s->variants[i].name) > w) w = (int)strlen(s->variants[i].name);
  printf("%-*s  %-6s  %4s  %15s  %5s  %11s  %8s\n", w, "VARIANT", "ARCH", "REGS",
         "SMEM dyn+static", "STACK", "SPILL st/ld", "NVRTC ms");
  for (int i = 0; i < b->n_items; i++) {
    const rt_build_item *it = &b->items[i];
    const gen_variant *v = &s->variants[it->variant];
    if (!it->ok) {
      printf("%-*s  %-6s  compile FAILED (below)\n", w, v->name, b->arch[it->arch]);
      continue;
    }
    char smem[32], spill[32];
    snprintf(smem, sizeof smem, "%d+%d", v->smem_bytes, it->static_smem_bytes);
    snprintf(spill, sizeof spill, "%d/%d", it->spill_store_bytes, it->spill_load_bytes);
    printf("%-*s  %-6s  %4d  %15s  %5d  %11s  %8.0f%s\n", w, v->name, b->arch[it->arch],
           it->registers, smem, it->stack_bytes, spill, it->compile_ms,
           it->stack_bytes || it->spill_store_bytes || it->spill_load_bytes ? "  <- spills" : "");
  }
}

int cli_build(int argc, char **argv) {
  static const struct option opts[] = {{"arch", required_argument, NULL, OPT_ARCH},
                                       {"jobs", required_argument, NULL, 'j'},
                                       {"output", required_argument, NULL, 'o'},
                                       {"templates", required_argument, NULL, OPT_TEMPLATES},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  const char *out = "out", *templates = NULL, *spec_arg = NULL, *arch_arg = NULL;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  int jobs = ncpu > 0 ? (int)ncpu : 1;
  optind = 0;
  for (int c; (c = cli_getopt("build", argc, argv, ":j:o:h", opts)) != -1;) {
    if (c == 'o') out = optarg;
    else if (c == OPT_TEMPLATES) templates = optarg;
    else if (c == OPT_ARCH) arch_arg = optarg;
    else if (c == 'j') {
      if ((jobs = cli_parse_int(optarg)) < 1) {
        fprintf(stderr, "fa2 build: -j %s: expected a positive number of threads\n", optarg);
        return 2;
      }
    } else if (c == 'h') return usage(stdout), 0;
    else return 2;
  }
  if (optind < argc) spec_arg = argv[optind++];
  if (optind < argc) {
    fprintf(stderr, "fa2 build: one SPEC at most, got '%s' too (fa2 build --help)\n", argv[optind]);
    return 2;
  }

  /* NVRTC keeps a compute cache (~/.nv/ComputeCache) and a hit skips ptxas, so
   * its -v report, which a build reads for every kernel, would be missing the
   * second time a source is built on a machine (seen on the H100 host). */
  setenv("CUDA_CACHE_DISABLE", "1", 1);
  gen_state *g;
  gen_spec s;
  gen_err err;
  int rc = cli_open("build", spec_arg, templates, &g, &s);
  if (rc) return rc;
  char arch[8][16];
  int n_arch = s.n_arch;
  memcpy(arch, s.arch, sizeof arch);
  if (arch_arg) {
    if ((n_arch = split_arch(arch_arg, arch)) < 0) {
      fprintf(stderr, "fa2 build: --arch %s: expected a comma-separated list such as sm_80,sm_90\n",
              arch_arg);
      cli_close(g, &s);
      return 2;
    }
    /* The spec was checked against its own arches; check these too (a wgmma
     * tile is built for sm_90 only, as without --arch; the build then takes each
     * arch's "auto" picks). */
    for (int a = 0; a < n_arch; a++)
      for (int i = 0; i < s.n_variants; i++) {
        gen_variant v = s.variants[i];
        if (!gen_variant_runs_on(&v, arch[a])) continue;
        if (gen_variant_complete(g, &v, arch[a], &err)) {
          fprintf(stderr, "fa2 build: --arch %s: %s: %s\n", arch[a], v.name, err.msg);
          cli_close(g, &s);
          return 2;
        }
      }
  }

  gen_rendered r;
  if ((rc = gen_render_all(g, &s, &r, &err))) {
    fprintf(stderr, "fa2 build: %s\n", err.msg);
    cli_close(g, &s);
    return rc == GEN_ESPEC ? 2 : 1;
  }
  const char *arch_list[8];
  for (int a = 0; a < n_arch; a++) arch_list[a] = arch[a];
  rt_build b;
  int tty = isatty(2);
  rc = rt_build_run(&s, &r, arch_list, n_arch, jobs, tty ? progress : NULL, NULL, &b, &err);
  int status = 0;
  if (rc) {
    fprintf(stderr, "fa2 build: %s\n", err.msg);
    status = 1;
  } else {
    print_table(&s, &b);
    int spills_ok = s.allow_spills;
    int skipped = s.n_variants * n_arch - b.n_items;
    printf("\n%d variants x %d arches: %d compiles%s in %.1f s (%d threads), NVRTC %d.%d; "
           "%d failed, %d with spills or a stack frame%s\n",
           s.n_variants, n_arch, b.n_items, skipped ? " (wgmma tiles on sm_90 only)" : "",
           b.wall_ms / 1e3, jobs, b.nvrtc_major, b.nvrtc_minor, b.failed, b.spilling,
           b.spilling && spills_ok ? " (allowed by the spec)" : "");
    for (int i = 0; i < b.n_items; i++)
      if (!b.items[i].ok) fprintf(stderr, "fa2 build: %s\n", b.items[i].err);
    if (b.failed) {
      fprintf(stderr, "fa2 build: %d compiles failed; nothing written\n", b.failed);
      status = 1;
    } else if (b.spilling && !spills_ok) {
      fprintf(stderr,
              "fa2 build: %d variant/arch pairs spill registers or use a stack frame (marked "
              "above); nothing written. Change their tiles, or set allow_spills = true in the "
              "spec\n",
              b.spilling);
      status = 1;
    } else {
      int wrote = 0;
      char dir[1200];
      rc = gen_fs_clean_dir(out, dir, sizeof dir, &err);
      if (!rc && !gen_tree_current(&s, &r, dir)) {
        rc = gen_write_tree(&s, &r, dir, &err);
        wrote = 1;
      }
      if (!rc) rc = rt_build_write(&s, &r, &b, dir, &err);
      if (rc) {
        fprintf(stderr, "fa2 build: %s\n", err.msg);
        status = 1;
      } else {
        if (wrote) printf("wrote %s/manifest.json and %s/src/ (they were missing or stale)\n", dir, dir);
        for (int a = 0; a < n_arch; a++) {
          int cubins = 0; /* the variants that run on this arch */
          for (int i = 0; i < b.n_items; i++) cubins += b.items[i].arch == a;
          printf("wrote %s/%s/: %d cubins, build.json\n", dir, arch[a], cubins);
        }
      }
    }
    rt_build_free(&b);
  }
  gen_rendered_free(&r);
  cli_close(g, &s);
  return status;
}

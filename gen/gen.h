/* gen: the kernel generator library (Lua 5.4 embedded through the C API).
 *
 * spec (Lua table) -> validate -> variants -> template + params -> CUDA source.
 * The same code serves the `fa2` command and the runtime's JIT path, so a
 * variant renders to the same bytes in both. It uses nothing else of fa2gen
 * (no CUDA, no runtime/): runtime/ and cli/ sit on it (tools/check_layers.sh).
 *
 * Errors: functions return 0 on success and a non-zero GEN_E* code on
 * failure, with a one-line message in err (file, key path, bad value, what
 * is allowed). Nothing here prints or exits.
 */
#ifndef GEN_H
#define GEN_H
#include <stddef.h>

enum {
  GEN_OK = 0,
  GEN_EINTERNAL = 1, /* out of memory, Lua failure */
  GEN_ESPEC = 2,     /* bad spec: key, type or value; exit status 2 of `fa2` */
  GEN_ETEMPLATE = 3, /* template error: names template file and line */
  GEN_EIO = 4,       /* cannot read or write a file */
};

typedef struct gen_err {
  int code;
  char msg[2048];
} gen_err;

enum { GEN_STAB_NONE = 0, GEN_STAB_PAPER = 1, GEN_STAB_ROBUST = 2, GEN_STAB_BALANCED = 3 };
enum { GEN_PASS_FWD = 0, GEN_PASS_BWD = 1 };
enum { GEN_DTYPE_BF16 = 0, GEN_DTYPE_FP16 = 1 };

#define GEN_MAX_ENTRIES 5

/* One kernel variant: every parameter that changes the generated source.
 * block_m == 0 means tiles "auto" (gen_variant_complete picks defaults). */
typedef struct gen_variant {
  int pass;  /* GEN_PASS_* */
  int dtype; /* GEN_DTYPE_* */
  int head_dim;
  int causal;
  int varlen; /* variable-length batches: sequences given by cu_seqlens (FA2's varlen layout) */
  int window; /* a sliding window: keys beyond window_left/right (run-time values) are masked */
  int alibi;  /* ALiBi: score -= slope * |i + diag - j|, slopes per (batch,) head at run time */
  int softcap; /* score <- cap tanh(score / cap) after the scale; cap at run time */
  int dropout; /* attention dropout: P kept with probability 1 - p (p, seed at run time) */
  int sinks;   /* a learnable logit per query head joins each row's softmax sum (gpt-oss) */
  int block_m, block_n, warps, stages;
  int wgmma; /* a tile on Hopper's warpgroup MMA (compiled for sm_90a) */
  int ws;    /* warp-specialized (a wgmma tile too): TMA producer, consumer warpgroups */
  int stab; /* GEN_STAB_* */
  double beta, eps; /* meaningful for paper/robust only */
  /* Filled by gen_variant_complete: */
  char name[160];   /* canonical: fwd_bf16_d128_causal_m128n64w4s2_robust_b2_e1em3 */
  int tile_dim;     /* head dim of the tiles: the next kernel head dim (head_dim's own for those) */
  int threads;      /* block size of every entry */
  int smem_bytes;   /* dynamic shared memory of the main entry */
  int persistent;   /* a ws forward that can take work items from fa2_fwd_params.tile_counter, or a ws
                       backward whose grid is one block an SM walking the key blocks (rt_launch_bwd) */
  int n_entries;
  char entries[GEN_MAX_ENTRIES][64]; /* extern "C" kernel names, launch order */
  char only_arch[16];   /* "" or the one arch v runs on (wgmma tiles: gen/variant.lua's "sm_90") */
  char only_target[16]; /* NVRTC's target on only_arch ("sm_90a") */
} gen_variant;

typedef struct gen_state gen_state;

/* Opens a generator. templates_dir NULL: the templates embedded at build
 * time; otherwise read templates from that folder (`fa2 --templates DIR`).
 * A gen_state is not thread-safe: use one per thread, or a lock. */
int gen_open(gen_state **out, const char *templates_dir, gen_err *err);
void gen_close(gen_state *g);

/* Validates v, fills "auto" tiles with defaults, and fills the derived
 * fields (name, threads, smem_bytes, entries, only_arch/only_target). arch may be NULL; when given,
 * shared memory is checked against that arch's limit. */
int gen_variant_complete(gen_state *g, gen_variant *v, const char *arch, gen_err *err);

/* The NVRTC target for completed v on arch: a wgmma tile's only_target
 * (sm_90a, Hopper's warpgroup MMA), every other variant arch itself. */
const char *gen_compile_arch(const gen_variant *v, const char *arch);

/* The tile part of a variant's name, as gen/variant.lua writes it:
 * m128n64w4s2, with "wg" after it for a wgmma tile, "ws" for a ws one. */
void gen_tile_name(int block_m, int block_n, int warps, int stages, int wgmma, int ws, char *buf,
                   size_t n);

/* 1 when completed v's instructions exist on arch (wgmma tiles: only_arch,
 * sm_90, as gen/variant.lua WGMMA_ARCH says), else 0. */
int gen_variant_runs_on(const gen_variant *v, const char *arch);

/* Parses a canonical name back into a completed variant. */
int gen_variant_from_name(gen_state *g, const char *name, gen_variant *v, gen_err *err);

/* Renders the CUDA source of a completed variant: self-contained, no
 * #include, deterministic. *src is malloc'd and NUL-terminated. */
int gen_render(gen_state *g, const gen_variant *v, char **src, size_t *len, gen_err *err);

/* A loaded spec: its variants (cartesian product minus `exclude`), target
 * arches and options. */
typedef struct gen_spec {
  char path[1024];
  int n_variants;
  gen_variant *variants;
  int n_arch;
  char arch[8][16];  /* "sm_80", "sm_90", ... */
  int allow_spills;  /* spec says spills are acceptable */
  char (*arch_picks)[96]; /* per variant, the arches whose "auto" pick it is ("sm_80
                             sm_86 ... ", each name and a space), "" for every arch */
} gen_spec;

/* path NULL: the embedded specs/default.lua. */
int gen_spec_load(gen_state *g, const char *path, gen_spec *out, gen_err *err);
void gen_spec_free(gen_spec *s);

/* 1 when variant i of s is built for arch: it runs there (gen_variant_runs_on)
 * and, for "auto" tiles, it is arch's pick (the spec's arches or any other). */
int gen_spec_runs_on(const gen_spec *s, int i, const char *arch);

/* NVRTC options every variant is compiled with (NULL-terminated, stable:
 * part of the cache key). The arch option is added by the compiler call. */
const char *const *gen_nvrtc_options(void);

/* fa2gen's version string, e.g. "0.1.0" (part of cache keys). */
const char *gen_version(void);

#endif

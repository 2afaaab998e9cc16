/* rt_select: from a call's arguments to the kernel variant that serves it.
 *
 * A launch packs the few fields that pick a kernel into an rt_request (the
 * in-memory cache key of the launch path, no strings, no Lua). Only on a
 * miss does the request become a gen_variant: defaults filled, the tuning
 * database consulted, tiles "auto" completed by the generator for the arch.
 */
#ifndef RT_SELECT_H
#define RT_SELECT_H
#include <stdint.h>

#include "fa2.h"
#include "gen.h"
#include "rt_source.h"
#include "rt_tuning.h"

/* Keys in a backward's window from which sm_90 takes the ws tile at d <= 64 (rt_select.c) */
#define RT_WIDE_WINDOW 512

typedef struct rt_request {
  int32_t pass, dtype, head_dim, causal, varlen, window, alibi, softcap, dropout, sinks, stab;
  int32_t ragged;    /* varlen whose rows fill under 3/4 of batch x seqlen_q: no length rule */
  int32_t wide_window; /* a backward's window of RT_WIDE_WINDOW keys or more, or open on a side */
  int32_t len_class; /* round(8 log2 sqrt(seqlen_q seqlen_k)), 0: no length (a
                        descriptor without one, or a database without
                        per-length tiles): picks per-length tuned tiles */
  double beta, eps;  /* defaults resolved; 0 for none (and tuned without values) */
} rt_request;

/* Zero-padded and normalized, so equal selections give equal bytes.
 * with_length (rt_tuning_has_lengths): fill the length class, a new request
 * per eighth of an octave of length; without per-length tiles it would only
 * split the cache (and cost a log2 per call). */
void rt_request_fwd(const fa2_fwd_args *a, int with_length, rt_request *r);
void rt_request_bwd(const fa2_bwd_args *a, int with_length, rt_request *r);
void rt_request_desc(const fa2_kernel_desc *d, int with_length, rt_request *r);

/* The sequence length r's length class stands for (0: none), what the
 * tuning database's by_seqlen is matched against. */
double rt_request_seqlen(const rt_request *r);

/* "fwd_bf16_d128_causal" (a varlen request: "..._varlen"): the tuning
 * database's key of a request. */
void rt_request_tuning_key(const rt_request *r, char *buf, size_t len);

/* "fwd_bf16_d128_causal_robust": the key of r's forward tiles in mode stab
 * (a backward's key has no mode). */
void rt_tuning_key_for_mode(const rt_request *r, int stab, char *buf, size_t len);

/* The completed variant for r on arch. Returns an fa2 status; err says why. */
int rt_select_variant(rt_source *s, const rt_tuning *t, const rt_request *r, const char *arch,
                      gen_variant *out, char *err, size_t n);

#endif

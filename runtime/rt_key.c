/* rt_key: xxh3-128 cache keys and content hashes (see rt_key.h). */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "rt_key.h"

#include <stdio.h>
#include <string.h>

static void field(XXH3_state_t *st, const char *tag, const void *data, size_t len) {
  uint64_t n = len;
  XXH3_128bits_update(st, tag, strlen(tag) + 1);
  XXH3_128bits_update(st, &n, sizeof n);
  if (len) XXH3_128bits_update(st, data, len);
}

static void text(XXH3_state_t *st, const char *tag, const char *s) {
  field(st, tag, s ? s : "", s ? strlen(s) : 0);
}

rt_key rt_key_compute(const rt_key_inputs *in) {
  XXH3_state_t st;
  XXH3_INITSTATE(&st);
  XXH3_128bits_reset(&st);
  field(&st, "source", in->source, in->source_len);
  uint64_t nopts = 0;
  for (const char *const *o = in->nvrtc_options; o && *o; o++) nopts++;
  field(&st, "options", &nopts, sizeof nopts);
  for (const char *const *o = in->nvrtc_options; o && *o; o++) text(&st, "option", *o);
  char ver[32];
  snprintf(ver, sizeof ver, "%d.%d", in->nvrtc_major, in->nvrtc_minor);
  text(&st, "nvrtc", ver);
  text(&st, "arch", in->arch);
  text(&st, "fa2gen", in->version);
  XXH128_hash_t h = XXH3_128bits_digest(&st);
  return (rt_key){h.low64, h.high64};
}

int rt_key_equal(rt_key a, rt_key b) { return a.lo == b.lo && a.hi == b.hi; }

void rt_key_hex(rt_key k, char out[33]) {
  snprintf(out, 33, "%016llx%016llx", (unsigned long long)k.hi, (unsigned long long)k.lo);
}

void rt_hash128_hex(const void *data, size_t len, char out[33]) {
  XXH128_hash_t h = XXH3_128bits(data, len);
  rt_key_hex((rt_key){h.low64, h.high64}, out);
}

uint64_t rt_hash64(const void *data, size_t len) { return XXH3_64bits(data, len); }

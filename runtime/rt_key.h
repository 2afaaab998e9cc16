/* rt_key: the disk-cache key of a compiled kernel.
 *
 * xxh3-128 over every input that changes the cubin: the generated source,
 * the NVRTC options, NVRTC's version, the target arch and fa2gen's version.
 * Fields are length-prefixed so that moving bytes from one field to the next
 * changes the key. */
#ifndef RT_KEY_H
#define RT_KEY_H
#include <stddef.h>
#include <stdint.h>

typedef struct rt_key {
  uint64_t lo, hi;
} rt_key;

typedef struct rt_key_inputs {
  const char *source;
  size_t source_len;
  const char *const *nvrtc_options; /* NULL-terminated */
  int nvrtc_major, nvrtc_minor;
  const char *arch;    /* "sm_90" */
  const char *version; /* gen_version() */
} rt_key_inputs;

rt_key rt_key_compute(const rt_key_inputs *in);
int rt_key_equal(rt_key a, rt_key b);
/* 32 lowercase hex digits (hi then lo) and a NUL. */
void rt_key_hex(rt_key k, char out[33]);

/* xxh3-128 of a byte string, as 32 hex digits: the content hash that
 * manifest.json records for each source. */
void rt_hash128_hex(const void *data, size_t len, char out[33]);
/* xxh3-64 of a byte string (entry checksums). */
uint64_t rt_hash64(const void *data, size_t len);

#endif

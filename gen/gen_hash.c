/* gen_hash: content hashes for manifests and build records (XXH3-128). */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <stdio.h>

#include "gen_out.h"

void gen_hash(const void *data, size_t len, char out[GEN_HASH_LEN]) {
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits(data, len));
  int n = snprintf(out, GEN_HASH_LEN, "xxh3_128:");
  for (size_t i = 0; i < sizeof c.digest; i++)
    n += snprintf(out + n, (size_t)(GEN_HASH_LEN - n), "%02x", c.digest[i]);
}

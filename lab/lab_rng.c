/* xoshiro256** seeded through splitmix64: the same seed gives the same inputs
 * on every machine, so the suite's numbers are reproducible. */
#include <math.h>

#include "lab.h"

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void lab_rng_seed(lab_rng *r, uint64_t seed) {
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t lab_rng_next(lab_rng *r) {
  uint64_t *s = r->s;
  const uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return out;
}

double lab_rng_uniform(lab_rng *r) { return (double)(lab_rng_next(r) >> 11) * 0x1p-53; }

/* Box-Muller; one value per call keeps the sequence simple to reason about. */
double lab_rng_normal(lab_rng *r) {
  double u = lab_rng_uniform(r), v = lab_rng_uniform(r);
  return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

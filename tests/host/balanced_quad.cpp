// The kernels' balanced rounding of O (templates/round_balanced.cuh.tpl), run on the
// CPU: a quad of four threads in lock step, each shuffle a barrier, against the lab's
// rounding of the same rows (lab_round_row_bisect), bit for bit. The GPU test
// (tests/gpu/balanced_spec.lua) checks the compiled kernels the same way; this one
// checks the template's text on every CI run, so the rounding can change without a GPU.
//
// tests/test_tpl_host.c renders a balanced variant, cuts the device functions out of
// it into balanced_quad.inc (quad_max, quad_sum, the constants, inv_pow2 and
// round_row_balanced) and compiles this file with -DHEAD_DIM=d (and -DFA2_FP16 for
// fp16). What a kernel takes from elsewhere is defined here: the conversions the GPU
// does in one instruction (pack2's cvt.rn, elem_bits_f32) as the lab does them, the
// shuffles by a barrier.
//
//   balanced_quad ROWS SEED   prints "rows R elements E crossed C mismatches M", exit 0 iff M = 0
//                             (crossed: elements that left rounding to nearest)
#include <pthread.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" {
#include "lab.h"
}

#define __device__
#define __forceinline__ inline

static float __uint_as_float(unsigned u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
static unsigned __float_as_uint(float f) {
  unsigned u;
  std::memcpy(&u, &f, 4);
  return u;
}

// The conversions a kernel does in one instruction (cvt.rn to {{ dtype }}; elem_bits_f32: a
// shift for bf16, cvt.f32.f16 for fp16), as the lab does them.
#ifdef FA2_FP16
static const lab_dtype kDtype = LAB_FP16;
static unsigned to_elem(float x) { return lab_f32_to_fp16(x); }
static float elem_bits_f32(unsigned h) { return lab_fp16_to_f32((uint16_t)h); }
#else
static const lab_dtype kDtype = LAB_BF16;
static unsigned to_elem(float x) { return lab_f32_to_bf16(x); }
static float elem_bits_f32(unsigned h) { return lab_bf16_to_f32((uint16_t)h); }
#endif
static unsigned pack2(float lo, float hi) { return to_elem(lo) | to_elem(hi) << 16; }
static float pos_inf() { return __uint_as_float(0x7f800000u); }

// The quad: four threads, lane = threadIdx.x; a shuffle writes its value, waits for the
// others, reads its partner's and waits again (so the next shuffle's writes come after).
struct thread_idx {
  unsigned x;
};
static thread_local thread_idx threadIdx;
static pthread_barrier_t quad_barrier;
static unsigned quad_slots[4];

template <typename T>
static T __shfl_xor_sync(unsigned, T v, int lane_mask) {
  unsigned u;
  std::memcpy(&u, &v, 4);
  quad_slots[threadIdx.x] = u;
  pthread_barrier_wait(&quad_barrier);
  u = quad_slots[threadIdx.x ^ (unsigned)lane_mask];
  pthread_barrier_wait(&quad_barrier);
  std::memcpy(&v, &u, 4);
  return v;
}

constexpr int kDTiles = HEAD_DIM / 8;
#include "balanced_quad.inc"

// One row and draw for the quad; each thread's results land in out_bits.
struct quad_job {
  const float *row;
  unsigned draw;
  unsigned short out_bits[HEAD_DIM];
};
static quad_job job;
static pthread_barrier_t job_barrier; // a row ready, and its rounding done
static bool done;

static void *quad_thread(void *arg) {
  threadIdx.x = (unsigned)(uintptr_t)arg;
  const int q = (int)threadIdx.x;
  for (;;) {
    pthread_barrier_wait(&job_barrier);
    if (done) return nullptr;
    float x[2 * kDTiles];
    unsigned o[kDTiles];
    for (int k = 0; k < 2 * kDTiles; k++) x[k] = job.row[8 * (k / 2) + 2 * q + k % 2]; // columns 8 dt + 2 qd + e
    round_row_balanced(x, o, job.draw);
    for (int k = 0; k < 2 * kDTiles; k++)
      job.out_bits[8 * (k / 2) + 2 * q + k % 2] = (unsigned short)(o[k / 2] >> (16 * (k % 2)));
    pthread_barrier_wait(&job_barrier);
  }
}

// Rows whose rounding has something to balance: outputs near midpoints pushed one way
// (two tied keys), spread over binades, with exact values, zeros and the odd NaN or Inf.
static uint64_t rng_seed, rng_index;
static double uniform() { return lab_hash_uniform(rng_seed, rng_index++); }
static float grid(double v) { return elem_bits_f32(to_elem((float)v)); }

static void make_row(int kind, float *row) {
  for (int i = 0; i < HEAD_DIM; i++) {
    const double u = uniform(), scale = std::ldexp(1.0, (int)(uniform() * 12) - 6);
    const float base = grid((2 * u - 1) * scale);
    const float gap = std::fabs(elem_bits_f32(to_elem(base) + 1u) - base);
    switch (kind) {
    case 0: row[i] = (float)((2 * u - 1) * scale); break;                       // anywhere
    case 1: row[i] = base + gap * (float)(0.5 + 0.02 * (uniform() - 0.3)); break; // near midpoints, biased
    case 2: row[i] = uniform() < 0.8 ? base : base + gap * (float)uniform(); break; // mostly exact
    case 3: row[i] = base + gap * (float)(uniform() * 1e-3); break;             // inside the dead zone
    default: row[i] = uniform() < 0.1 ? 0.f : base + gap * (float)(0.45 + 0.1 * uniform()); break;
    }
  }
  if (kind == 4 && uniform() < 0.1) row[(int)(uniform() * HEAD_DIM)] = uniform() < 0.5 ? NAN : INFINITY;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: balanced_quad ROWS SEED\n");
    return 2;
  }
  const long rows = std::atol(argv[1]);
  rng_seed = std::strtoull(argv[2], nullptr, 10);
  pthread_barrier_init(&quad_barrier, nullptr, 4);
  pthread_barrier_init(&job_barrier, nullptr, 5);
  pthread_t th[4];
  for (int q = 0; q < 4; q++) pthread_create(&th[q], nullptr, quad_thread, (void *)(uintptr_t)q);
  long mismatches = 0, crossed = 0, first_bad = -1;
  float row[HEAD_DIM], want[HEAD_DIM];
  for (long r = 0; r < rows; r++) {
    make_row((int)(r % 5), row);
    job.row = row;
    job.draw = (unsigned)(uniform() * 4294967296.0);
    pthread_barrier_wait(&job_barrier); // go
    pthread_barrier_wait(&job_barrier); // done
    lab_round_row_bisect(row, HEAD_DIM, kDtype, job.draw, want);
    for (int i = 0; i < HEAD_DIM; i++) {
      const float got = elem_bits_f32(job.out_bits[i]);
      crossed += job.out_bits[i] != (unsigned short)to_elem(row[i]);
      if (std::memcmp(&got, &want[i], 4) != 0 && !(std::isnan(got) && std::isnan(want[i]))) {
        if (first_bad < 0) {
          first_bad = r;
          std::printf("row %ld column %d: x %a, template %a, lab %a\n", r, i, (double)row[i], (double)got,
                      (double)want[i]);
        }
        mismatches++;
      }
    }
  }
  done = true;
  pthread_barrier_wait(&job_barrier);
  for (int q = 0; q < 4; q++) pthread_join(th[q], nullptr);
  std::printf("rows %ld elements %ld crossed %ld mismatches %ld\n", rows, rows * HEAD_DIM, crossed, mismatches);
  return mismatches ? 1 : 0;
}

/* The stand-in libcuda.so.1 (tests/fake) for CPU tests of the launch path:
 * makes the runtime load it ($FA2_FAKE_CUDA, else build/libfakecuda.so) and
 * returns its state, which the tests read and steer. */
#ifndef FAKE_DRIVER_H
#define FAKE_DRIVER_H
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdlib.h>

#include "fake/fake_cuda.h"
#include "rt_cuda.h"

static inline fake_cuda_state *tu_fake_driver(void) {
  const char *path = getenv("FA2_FAKE_CUDA");
  if (!path) path = "build/libfakecuda.so";
  rt_cuda_set_library_for_tests(path);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  cr_assert_not_null(h, "cannot load the fake driver %s: %s", path, dlerror());
  return ((fake_cuda_state_fn)dlsym(h, "fake_cuda_state_get"))();
}

#endif

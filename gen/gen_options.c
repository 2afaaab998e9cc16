/* gen_options: the NVRTC options of every generated kernel, in one place.
 * They are part of every cache key: changing them recompiles everything. */
#include "gen.h"

static const char *const nvrtc_options[] = {"--std=c++17", "-lineinfo", "-DNDEBUG", NULL};

const char *const *gen_nvrtc_options(void) { return nvrtc_options; }

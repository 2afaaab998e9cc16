/* gen_version: the version string that goes into manifests and cache keys. */
#include "gen.h"

#ifndef FA2GEN_VERSION
#define FA2GEN_VERSION "0.1.0"
#endif

const char *gen_version(void) { return FA2GEN_VERSION; }

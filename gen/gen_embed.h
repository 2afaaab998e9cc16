/* Files embedded at build time (templates/, specs/default.lua, the kernel
 * params header). The table is written by tools/embed.c into build/. */
#ifndef GEN_EMBED_H
#define GEN_EMBED_H
#include <stddef.h>

typedef struct gen_embedded_file {
  const char *name; /* e.g. "templates/fwd.cu.tpl" */
  const char *data; /* NUL-terminated */
  size_t len;       /* without the NUL */
} gen_embedded_file;

/* Terminated by an entry whose name is NULL; sorted by name. */
extern const gen_embedded_file gen_embedded_files[];

#endif

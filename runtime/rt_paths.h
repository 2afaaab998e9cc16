/* rt_paths: where the runtime keeps things on disk. */
#ifndef RT_PATHS_H
#define RT_PATHS_H
#include <stddef.h>

/* The cache directory: explicit (non-NULL), else $FA2_CACHE_DIR, else
 * $XDG_CACHE_HOME/fa2gen, else $HOME/.cache/fa2gen. Returns 0, or -1 when
 * none can be formed (no HOME) or it does not fit. */
int rt_cache_dir(const char *explicit_dir, char *buf, size_t len);

/* mkdir -p (0777 & ~umask). Returns 0 or -1 with errno. */
int rt_mkdirs(const char *path);
/* rt_mkdirs of the folder that holds the file at path (none in path: 0). */
int rt_mkdirs_parent(const char *path);

#endif

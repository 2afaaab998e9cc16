/* gen_fs: the file-system steps of writing output trees atomically
 * (write into a temporary sibling, then swap it in with one rename). */
#ifndef GEN_FS_H
#define GEN_FS_H
#include <stddef.h>

#include "gen.h"

/* dir without trailing slashes into out (cap bytes); rejects "", ".", "..". */
int gen_fs_clean_dir(const char *dir, char *out, size_t cap, gen_err *err);

/* 0 when dir is absent, an empty folder, or a folder holding `marker`
 * (a file that says "this is ours"): safe to replace. */
int gen_fs_replaceable(const char *dir, const char *marker, gen_err *err);

/* Creates a fresh, empty "<dir>.tmp-<pid>" (parents too) into tmp. */
int gen_fs_make_tmp(const char *dir, char *tmp, size_t cap, gen_err *err);

/* Puts tmp in dir's place (atomic swap where the kernel offers it) and
 * removes the old dir. On failure dir is left as it was. */
int gen_fs_replace(const char *tmp, const char *dir, gen_err *err);

int gen_fs_write(const char *path, const void *data, size_t len, gen_err *err);
int gen_fs_mkdir_p(const char *dir, gen_err *err);
/* Removes a tree (no error when absent). */
void gen_fs_rmtree(const char *path);

#endif

/* rt_identity: which GPU and software a tuning database belongs to.
 *
 * Tiles are timed on one GPU model with one generator: the database is
 * valid for the same device name, arch and SM count (a cut-down part with
 * the same name is another identity) and the same fa2gen version. Driver
 * and NVRTC versions are recorded; a change there only logs a note.
 */
#ifndef RT_IDENTITY_H
#define RT_IDENTITY_H
#include <stddef.h>

typedef struct rt_identity {
  char name[96];   /* "NVIDIA H100 80GB HBM3" */
  char arch[16];   /* "sm_90" */
  int sm_count;
  int driver;      /* cuDriverGetVersion: 13000 = 13.0 */
  int nvrtc_major, nvrtc_minor; /* 0.0: NVRTC not loaded */
  char fa2gen[32]; /* generator version */
} rt_identity;

/* "nvidia-h100-80gb-hbm3_sm_90_132sm": the name part of the database file. */
void rt_identity_slug(const rt_identity *id, char *buf, size_t len);

/* cache_dir/tuning/<slug>.json. Returns 0, or -1 when it does not fit. */
int rt_identity_db_path(const rt_identity *id, const char *cache_dir, char *buf, size_t len);

/* 1 when a database made for `made` serves `now` (name, arch, SM count and
 * fa2gen version equal); otherwise 0 and why (one line) in buf. */
int rt_identity_matches(const rt_identity *made, const rt_identity *now, char *why, size_t len);

#endif

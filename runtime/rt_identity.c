/* rt_identity: GPU identity of a tuning database (see rt_identity.h). */
#include "rt_identity.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

void rt_identity_slug(const rt_identity *id, char *buf, size_t len) {
  char name[96];
  size_t n = 0;
  int dash = 1; /* no leading dash, no runs of dashes */
  for (const char *p = id->name; *p && n + 1 < sizeof name; p++) {
    if (isalnum((unsigned char)*p)) {
      name[n++] = (char)tolower((unsigned char)*p);
      dash = 0;
    } else if (!dash) {
      name[n++] = '-';
      dash = 1;
    }
  }
  while (n > 0 && name[n - 1] == '-') n--;
  name[n] = 0;
  snprintf(buf, len, "%s_%s_%dsm", n ? name : "gpu", id->arch, id->sm_count);
}

int rt_identity_db_path(const rt_identity *id, const char *cache_dir, char *buf, size_t len) {
  char slug[160];
  rt_identity_slug(id, slug, sizeof slug);
  int n = snprintf(buf, len, "%s/tuning/%s.json", cache_dir, slug);
  return n < 0 || (size_t)n >= len ? -1 : 0;
}

int rt_identity_matches(const rt_identity *made, const rt_identity *now, char *why, size_t len) {
  if (strcmp(made->name, now->name) || strcmp(made->arch, now->arch) ||
      made->sm_count != now->sm_count) {
    snprintf(why, len, "made for %s (%s, %d SMs), this is %s (%s, %d SMs)", made->name,
             made->arch, made->sm_count, now->name, now->arch, now->sm_count);
    return 0;
  }
  if (strcmp(made->fa2gen, now->fa2gen)) {
    snprintf(why, len, "made with fa2gen %s, this is %s: its tiles were timed on other kernels",
             made->fa2gen, now->fa2gen);
    return 0;
  }
  if (why && len) why[0] = 0;
  return 1;
}

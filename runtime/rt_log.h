/* rt_log: messages at a level, to the caller's callback or stderr. */
#ifndef RT_LOG_H
#define RT_LOG_H
#include "fa2.h"

typedef struct rt_log {
  int level;       /* fa2_log_level; FA2_LOG_DEFAULT means WARN */
  fa2_log_fn fn;   /* NULL: stderr */
  void *user;
} rt_log;

/* Emits when level <= log->level. log may be NULL (nothing emitted). */
void rt_logf(const rt_log *log, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif

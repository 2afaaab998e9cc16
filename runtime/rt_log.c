/* rt_log: the only place the library writes to stderr, and only for
 * messages the caller's log level asks for (warnings by default). */
#include "rt_log.h"

#include <stdarg.h>
#include <stdio.h>

static const char *level_name(int level) {
  switch (level) {
  case FA2_LOG_ERROR: return "error";
  case FA2_LOG_WARN: return "warning";
  case FA2_LOG_INFO: return "info";
  default: return "debug";
  }
}

void rt_logf(const rt_log *log, int level, const char *fmt, ...) {
  if (!log) return;
  int max = log->level == FA2_LOG_DEFAULT ? FA2_LOG_WARN : log->level;
  if (level > max || max == FA2_LOG_QUIET) return;
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (log->fn)
    log->fn(level, msg, log->user);
  else
    fprintf(stderr, "fa2: %s: %s\n", level_name(level), msg);
}

/* rt_error: the thread-local message behind fa2_last_error(). */
#include <stdarg.h>
#include <stdio.h>

#include "fa2.h"
#include "rt_error.h"

static _Thread_local char last_error[2048];

const char *fa2_last_error(void) { return last_error; }

int rt_set_error(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return code;
}

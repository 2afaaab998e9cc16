#ifndef RT_ERROR_H
#define RT_ERROR_H
/* Sets the thread-local message (printf-style) and returns code, so that a
 * failing call can `return rt_set_error(FA2_E..., "...", ...);`. */
int rt_set_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#endif

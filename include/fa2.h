/* fa2.h: the public C API of libfa2rt (JIT-compiled FlashAttention-2).
 * Work in progress: see issue 5. */
#ifndef FA2_H
#define FA2_H

#ifdef __cplusplus
extern "C" {
#endif

#define FA2_API __attribute__((visibility("default")))

/* Thread-local description of the last failure of an fa2_* call. */
FA2_API const char *fa2_last_error(void);

#ifdef __cplusplus
}
#endif
#endif

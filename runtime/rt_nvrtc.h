/* rt_nvrtc: NVRTC loaded at run time with dlopen, a compile call that returns
 * a cubin and the ptxas report, and a parser for that report.
 *
 * Search order for the library (first hit wins):
 *   1. $FA2_NVRTC (a path to libnvrtc.so*),
 *   2. $CUDA_HOME/lib64,
 *   3. the default loader path (libnvrtc.so.13, .12, libnvrtc.so),
 *   4. the extra directories the caller passes (e.g. the lib folders of the
 *      NVIDIA pip packages), then /usr/local/cuda/lib64.
 */
#ifndef RT_NVRTC_H
#define RT_NVRTC_H
#include <stddef.h>

/* Loads NVRTC once (thread-safe). extra_dirs: NULL-terminated list or NULL.
 * Returns 0, or -1 with the places tried in err. */
int rt_nvrtc_load(const char *const *extra_dirs, char *err, size_t errlen);

/* Path of the loaded library and its version (after a successful load). */
const char *rt_nvrtc_path(void);
void rt_nvrtc_version(int *major, int *minor);

typedef struct rt_blob {
  unsigned char *data; /* malloc'd; free with rt_blob_free */
  size_t size;
} rt_blob;
void rt_blob_free(rt_blob *b);

/* Compiles src for arch ("sm_90") with opts (NULL-terminated; the arch option
 * and --ptxas-options=-v are added here). On success fills cubin and, when
 * log is non-NULL, *log (malloc'd, the full NVRTC+ptxas log). On failure
 * returns -1 with err set to the first lines of the log; *log still holds
 * the whole log when asked for. */
int rt_nvrtc_compile(const char *src, const char *program_name, const char *arch,
                     const char *const *opts, rt_blob *cubin, char **log, char *err,
                     size_t errlen);

/* Resource use of one kernel entry, read from the ptxas -v log. */
typedef struct rt_ptxas_info {
  int registers;
  int stack_bytes;
  int spill_store_bytes, spill_load_bytes;
  int static_smem_bytes;
} rt_ptxas_info;

/* Finds the report of `entry` in log. Returns 0, or -1 when absent. */
int rt_ptxas_parse(const char *log, const char *entry, rt_ptxas_info *out);

/* Test hook (fault injection): pretend NVRTC is not installed when on. */
void rt_nvrtc_fail_load_for_tests(int on);

#endif

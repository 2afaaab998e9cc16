/* rt_kernel: a context's loaded variants, and their launches.
 *   rt_kernel.c   one variant: memory cache, else AOT -> disk -> NVRTC and a module load
 *   rt_prepare.c  many variants at once, on the context's threads
 *   rt_launch.c   a launch of a loaded kernel on checked arguments
 * Sits above rt_context: the context holds the list of loaded kernels (and
 * unloads it in fa2_destroy) but calls nothing declared here. */
#ifndef RT_KERNEL_H
#define RT_KERNEL_H
#include "rt_context.h"

/* The loaded kernel of a completed variant / of a launch request: memory
 * cache, else AOT -> disk -> NVRTC and a module load. */
int rt_kernel_for_variant(fa2_context *ctx, const gen_variant *v, rt_kernel **out);
/* launching: the kernel is for a launch on stream, which may be capturing a
 * CUDA graph: then a kernel that is not loaded yet is FA2_ERR_CAPTURING. */
int rt_kernel_for_request(fa2_context *ctx, const rt_request *r, void *stream, int launching,
                          rt_kernel **out);
/* *capturing = 1 when stream is capturing a CUDA graph. */
int rt_stream_capturing(fa2_context *ctx, void *stream, int *capturing);
/* Loads variants[n] on ctx->jobs threads, all of them even when some fail:
 * rcs[i] and msgs[i] are each one's status and error; done(user, i) runs
 * after each, under a lock. Returns FA2_OK. */
int rt_prepare_each(fa2_context *ctx, const gen_variant *const *variants, int n, int *rcs,
                    char (*msgs)[256], void (*done)(void *user, int i), void *user);

/* Launches a loaded kernel on checked arguments (fa2_forward/fa2_backward
 * after selection; the tuner with the candidate it times). ws: the
 * backward's workspace, fa2_backward_workspace_size(a) bytes. */
int rt_launch_fwd(fa2_context *ctx, const rt_kernel *k, const fa2_fwd_args *a, void *stream);
int rt_launch_bwd(fa2_context *ctx, const rt_kernel *k, const fa2_bwd_args *a, void *ws,
                  void *stream);

#endif

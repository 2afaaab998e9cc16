/* rt_head_dim: a call's head dim and the head dim of the tiles it runs on. */
#ifndef RT_HEAD_DIM_H
#define RT_HEAD_DIM_H

/* A call's head dim: any multiple of 8 from 8 to 256 (as messages say it). */
#define RT_HEAD_DIMS_ALLOWED "multiples of 8 from 8 to 256"
int rt_head_dim_supported(int head_dim);
/* The head dim of the tiles a call of head_dim runs on (the next kernel head dim);
 * 0 when not supported. */
int rt_tile_head_dim(int head_dim);
/* The widest tiles a call of head_dim may run on: Hopper's wgmma tiles take 33-48 on
 * 64's (gen/variant.lua WGMMA_WIDER). dQ's fp32 accumulator has that many columns
 * (a workspace is sized before the kernel is chosen). */
int rt_widest_tile_head_dim(int head_dim);
/* The kernel head dims as a message lists them: "16, 32, 48, ..., 256". */
const char *rt_head_dims_text(void);

#endif

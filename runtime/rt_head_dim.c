/* rt_head_dim: the head dims a call may have, and the tiles each runs on (see
 * rt_head_dim.h). No dependencies: the validation, the kernel choice and the launch
 * all ask it. */
#include "rt_head_dim.h"

/* The kernel (tile) head dims: gen/variant.lua's HEAD_DIMS (a test keeps them
 * equal), written once for the table and for the messages' text. A call may have
 * any multiple of 8 up to 256: it runs on the tiles of the next of these. */
#define HEAD_DIM_LIST 16, 32, 48, 64, 80, 96, 128, 160, 192, 224, 256
#define TEXT_OF(...) #__VA_ARGS__
#define TEXT(...) TEXT_OF(__VA_ARGS__)
static const int head_dims[] = {HEAD_DIM_LIST};
#define HEAD_DIMS_TEXT TEXT(HEAD_DIM_LIST)

const char *rt_head_dims_text(void) { return HEAD_DIMS_TEXT; }

int rt_tile_head_dim(int head_dim) {
  if (head_dim < 8 || head_dim % 8) return 0;
  for (unsigned i = 0; i < sizeof head_dims / sizeof head_dims[0]; i++)
    if (head_dims[i] >= head_dim) return head_dims[i];
  return 0;
}

/* gen/variant.lua's WGMMA_WIDER (a test keeps them equal): tile dims whose sm_90 tiles
 * are those of a wider one, the columns past d masked. */
static const int wider[][2] = {{48, 64}, {160, 192}, {224, 256}};

int rt_widest_tile_head_dim(int head_dim) {
  const int tile = rt_tile_head_dim(head_dim);
  for (unsigned i = 0; i < sizeof wider / sizeof wider[0]; i++)
    if (wider[i][0] == tile) return wider[i][1];
  return tile;
}

int rt_head_dim_supported(int head_dim) { return rt_tile_head_dim(head_dim) != 0; }

/* rt_dropout: attention dropout's host side: the kernels' dropout fields from
 * p, the argument checks, and the keep mask of a call (device and host). */
#ifndef RT_DROPOUT_H
#define RT_DROPOUT_H
#include "fa2.h"

/* The kernels' derived fields of probability p (0 <= p < 1): the 32-bit limit of
 * keep16 = round((1 - p) 65536) (at least 1), 1 - p and 1 / (1 - p) as floats. */
typedef struct rt_dropout_fields {
  unsigned limit;
  float keep, scale;
} rt_dropout_fields;

void rt_dropout_fields_of(float p, rt_dropout_fields *f);

/* Sets the dropout fields of kernel arguments p (fa2_fwd_params or fa2_bwd_params)
 * from call arguments a (fa2_fwd_args or fa2_bwd_args). */
#define RT_DROPOUT_PARAMS(p, a)                                                        \
  do {                                                                                 \
    rt_dropout_fields f_;                                                              \
    rt_dropout_fields_of((a)->dropout_p, &f_);                                         \
    (p)->dropout_rng = (a)->dropout_rng;                                               \
    (p)->dropout_seed = (a)->dropout_seed, (p)->dropout_offset = (a)->dropout_offset;  \
    (p)->dropout_limit = f_.limit, (p)->dropout_keep = f_.keep;                        \
    (p)->dropout_scale = f_.scale;                                                     \
  } while (0)

/* Checks dropout, dropout_p and dropout_rng (as fa2_fwd_args holds them). */
int rt_validate_dropout(int dropout, float p, const unsigned long long *rng);

#endif

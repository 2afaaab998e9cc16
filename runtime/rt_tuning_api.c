/* rt_tuning_api: the public side of the tuning database (fa2_tune is
 * rt_tune_gpu.c's). */
#include <stdio.h>
#include <string.h>

#include "rt_context.h"
#include "rt_error.h"
#include "rt_validate.h"

fa2_status fa2_tuning_path(fa2_context *ctx, char *buf, size_t len) {
  if (!ctx || !buf || len == 0)
    return (fa2_status)rt_set_error(FA2_ERR_INVALID_ARGUMENT, "ctx or buf is NULL, or len is 0");
  if (!ctx->tuning_path[0])
    return (fa2_status)rt_set_error(FA2_ERR_NOT_AVAILABLE,
                                    "no tuning database: switched off (\"off\"), or no cache "
                                    "directory");
  if ((size_t)snprintf(buf, len, "%s", ctx->tuning_path) >= len)
    return (fa2_status)rt_set_error(FA2_ERR_INVALID_ARGUMENT, "len %zu is too small for %s", len,
                                    ctx->tuning_path);
  return FA2_OK;
}

fa2_status fa2_tuning_set_stab(fa2_context *ctx, const char *db_path, fa2_dtype dtype,
                               int head_dim, fa2_stab stab, double beta, double eps) {
  if (!ctx) return (fa2_status)rt_set_error(FA2_ERR_INVALID_ARGUMENT, "ctx is NULL");
  if (stab != FA2_STAB_NONE && stab != FA2_STAB_PAPER && stab != FA2_STAB_ROBUST)
    return (fa2_status)rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                                    "stab is %d: allowed FA2_STAB_NONE, _PAPER, _ROBUST", stab);
  int rc = rt_validate_kernel(dtype, head_dim, 0, stab, beta, eps);
  if (rc != FA2_OK) return (fa2_status)rc;
  const char *db = db_path ? db_path : ctx->tuning_path;
  if (!db[0])
    return (fa2_status)rt_set_error(FA2_ERR_NOT_AVAILABLE,
                                    "no database path (tuning switched off or no cache "
                                    "directory): pass db_path");
  static const char *const names[3] = {"none", "paper", "robust"};
  json_t *entries = json_object();
  for (int causal = 0; causal < 2; causal++) {
    const rt_request r = {.pass = GEN_PASS_FWD, .dtype = (int32_t)dtype, .head_dim = head_dim,
                          .causal = causal, .stab = (int32_t)stab};
    char key[64];
    rt_request_tuning_key(&r, key, sizeof key);
    json_t *e = json_pack("{s:s}", "stab", names[stab]);
    if (stab != FA2_STAB_NONE) {
      json_object_set_new(e, "beta", json_real(beta != 0 ? beta : FA2_DEFAULT_BETA));
      json_object_set_new(e, "eps", json_real(eps != 0 ? eps : FA2_DEFAULT_EPS));
    }
    json_object_set_new(entries, key, e);
  }
  rt_identity id;
  rt_ctx_identity(ctx, &id);
  char err[1200];
  rc = rt_tuning_save(db, &id, entries, err, sizeof err);
  json_decref(entries);
  if (rc != 0) return (fa2_status)rt_set_error(FA2_ERR_INTERNAL, "fa2_tuning_set_stab: %s", err);
  return FA2_OK;
}

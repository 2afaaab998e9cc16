/* The ptxas -v report parser: fa2 build's table and the spill checks rely on it. */
#include <criterion/criterion.h>

#include "gen_embed.h"
#include "rt_nvrtc.h"
#include <string.h>

static const char *sample_log =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'fa2_fwd' for 'sm_90'\n"
    "ptxas info    : Function properties for fa2_fwd\n"
    "ptxas         .     24 bytes stack frame, 16 bytes spill stores, 8 bytes spill loads\n"
    "ptxas info    : Used 168 registers, used 1 barriers, 1024 bytes smem, 400 bytes cmem[0]\n"
    "ptxas info    : Compiling entry function 'fa2_other' for 'sm_90'\n"
    "ptxas info    : Function properties for fa2_other\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 32 registers, used 0 barriers\n"
    "ptxas info    : Compile time = 11.796 ms\n";

Test(ptxas_report, reads_each_entry) {
  rt_ptxas_info a, b;
  cr_assert_eq(rt_ptxas_parse(sample_log, "fa2_fwd", &a), 0);
  cr_expect_eq(a.registers, 168);
  cr_expect_eq(a.stack_bytes, 24);
  cr_expect_eq(a.spill_store_bytes, 16);
  cr_expect_eq(a.spill_load_bytes, 8);
  cr_expect_eq(a.static_smem_bytes, 1024);
  cr_assert_eq(rt_ptxas_parse(sample_log, "fa2_other", &b), 0);
  cr_expect_eq(b.registers, 32);
  cr_expect_eq(b.stack_bytes, 0);
  cr_expect_eq(b.static_smem_bytes, 0);
}

Test(ptxas_report, missing_entry_is_an_error) {
  rt_ptxas_info a;
  cr_expect_eq(rt_ptxas_parse(sample_log, "fa2_bwd", &a), -1);
  cr_expect_eq(rt_ptxas_parse(NULL, "fa2_fwd", &a), -1);
}

Test(embedded, params_header_is_embedded) {
  const gen_embedded_file *f = gen_embedded_files;
  while (f->name && strcmp(f->name, "templates/fa2_params.h")) f++;
  cr_assert_not_null(f->name);
  cr_expect(strstr(f->data, "typedef struct fa2_fwd_params") != NULL);
  cr_expect_eq(strlen(f->data), f->len);
}

/* CUDA 13's ptxas prefixes the stack/spill line with "ptxas         .". */
static const char *cuda13_log =
    "ptxas info    : 41 bytes gmem\n"
    "ptxas info    : Compiling entry function 'fa2_fwd' for 'sm_80'\n"
    "ptxas info    : Function properties for fa2_fwd\n"
    "ptxas         .     8 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
    "ptxas info    : Used 64 registers, used 1 barriers, 512 bytes cmem[0]\n"
    "ptxas info    : Compile time = 235.522 ms\n";

Test(ptxas_report, reads_cuda13_format) {
  rt_ptxas_info a;
  cr_assert_eq(rt_ptxas_parse(cuda13_log, "fa2_fwd", &a), 0);
  cr_expect_eq(a.registers, 64);
  cr_expect_eq(a.stack_bytes, 8);
  cr_expect_eq(a.spill_store_bytes, 8);
  cr_expect_eq(a.spill_load_bytes, 12);
  cr_expect_eq(a.static_smem_bytes, 0);
}

/* The template engine: syntax, values, includes, errors with file:line,
 * and the sandbox. Templates come from a temporary --templates folder. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "gen_test_util.h"

static char *dir;

/* Renders `text` as fwd.cu.tpl for the d128 causal robust variant. Returns
 * the gen code; *out (malloc'd) on success, err otherwise. */
static int render(const char *text, char **out, gen_err *err) {
  if (!dir) dir = tu_tmpdir();
  free(tu_write(dir, "fwd.cu.tpl", text));
  gen_state *g = tu_open(dir);
  gen_variant v;
  cr_assert_eq(gen_variant_from_name(g, "fwd_bf16_d128_causal_m128n64w4s2_robust_b2_e1em3", &v, err),
               GEN_OK, "%s", err->msg);
  size_t len;
  *out = NULL;
  int rc = gen_render(g, &v, out, &len, err);
  if (rc == GEN_OK) cr_expect_eq(strlen(*out), len);
  gen_close(g);
  return rc;
}

static void expect_output(const char *text, const char *want) {
  char *out;
  gen_err err;
  cr_assert_eq(render(text, &out, &err), GEN_OK, "template:\n%s\nerror: %s", text, err.msg);
  cr_expect_str_eq(out, want, "template:\n%s", text);
  free(out);
}

/* The error must read "<dir>/fwd.cu.tpl:<line>: <message...>". */
static void expect_error(const char *text, int line, const char *msg) {
  char *out, want[1400];
  gen_err err;
  cr_assert_eq(render(text, &out, &err), GEN_ETEMPLATE, "template:\n%s\nrendered fine", text);
  snprintf(want, sizeof want, "%s/fwd.cu.tpl:%d: %s", dir, line, msg);
  cr_expect(!strncmp(err.msg, want, strlen(want)), "template:\n%s\nwant: %s\ngot:  %s", text, want,
            err.msg);
}

Test(engine, values) {
  expect_output("d={{ head_dim }} m={{ block_m }} c={{ causal }} s={{ stab }} t={{ threads }}\n",
                "d=128 m=128 c=true s=robust t=128\n");
  expect_output("{{ beta }} {{ eps }} {{ 0.1 }} {{ 1/4 }} {{ 7 // 2 }} {{ smem_bytes }}\n",
                "2 0.001 0.10000000000000001 0.25 3 104448\n");
  expect_output("{{ f32(eps) }} {{ f32(beta) }} {{ f32(1e-10) }} {{ f32(-3) }}\n",
                "0.00100000005f 2.0f 1.00000001e-10f -3.0f\n");
  expect_output("{{ name }} {{ entries[1] }} {{ #entries }} {{ dtype }} {{ pass }}\n",
                "fwd_bf16_d128_causal_m128n64w4s2_robust_b2_e1em3 fa2_fwd 1 bf16 fwd\n");
  expect_output("{{ string.format('%05d', warps) }} {{ math.max(stages, 3) }}{{ \"}\" }}\n",
                "00004 3}\n");
}

Test(engine, statements) {
  expect_output("{% if causal %}\nA\n{% elif stab == 'none' %}\nB\n{% else %}\nC\n{% end %}\n", "A\n");
  expect_output("{% if not causal %}\nA\n{% elif stab == 'robust' %}\nB\n{% else %}\nC\n{% endif %}\n",
                "B\n");
  expect_output("{% for i = 1, 3 %}\n[{{ i }}]\n{% endfor %}\n", "[1]\n[2]\n[3]\n");
  expect_output("{% for i, e in ipairs(entries) %}\n{{ i }}:{{ e }}\n{% end %}\n", "1:fa2_fwd\n");
  expect_output("{% local x = head_dim * 2 %}\n{{ x }}\n", "256\n");
  expect_output("{# a comment #}\n  {# another #}\nkept\n", "kept\n");
  expect_output("no newline at the end", "no newline at the end");
  /* C that looks nothing like template syntax passes through untouched. */
  expect_output("#define X(a) \\\n  do { a; } while (0)\nint f() { return {}; }}\n",
                "#define X(a) \\\n  do { a; } while (0)\nint f() { return {}; }}\n");
  expect_output("a\r\nb {{ 1 }}\r\n", "a\r\nb 1\r\n");
}

Test(engine, set_reaches_the_includer_and_never_overwrites) {
  if (!dir) dir = tu_tmpdir();
  free(tu_write(dir, "helpers.tpl", "{% set twice = function(x) return 2 * x end %}\n{% set D = head_dim + 1 %}\n"));
  expect_output("{% include \"helpers.tpl\" %}\n{{ twice(D) }}\n", "258\n");
  expect_output("{% local D = 1 %}\n{% include \"helpers.tpl\" %}\n{{ D }} {{ twice(D) }}\n", "1 2\n");
  expect_error("x\n{% set head_dim = 64 %}\n", 2, "{% set head_dim %}: head_dim is already defined");
  char *out, want[1400];
  gen_err err;
  cr_assert_eq(render("{% set D = 1 %}\n{% include \"helpers.tpl\" %}\n", &out, &err), GEN_ETEMPLATE);
  snprintf(want, sizeof want, "%s/helpers.tpl:2: {%% set D %%}: D is already defined", dir);
  cr_expect(!strncmp(err.msg, want, strlen(want)), "got: %s", err.msg);
  expect_error("{% set 1 = 2 %}\n", 1, "expected {% set NAME = EXPR %}");
}

Test(engine, include_renders_with_the_same_variables) {
  if (!dir) dir = tu_tmpdir();
  free(tu_write(dir, "part.h", "part {{ head_dim }}\n{% include \"leaf.h\" %}\n"));
  free(tu_write(dir, "leaf.h", "leaf {{ stab }}\n"));
  expect_output("top\n{% include \"part.h\" %}\nend\n", "top\npart 128\nleaf robust\nend\n");
  free(tu_write(dir, "bad.h", "ok\n\n{{ nosuch }}\n"));
  char want[1400], *out;
  gen_err err;
  cr_assert_eq(render("x\n{% include \"bad.h\" %}\n", &out, &err), GEN_ETEMPLATE);
  snprintf(want, sizeof want, "%s/bad.h:3: 'nosuch' is not available in templates", dir);
  cr_expect_str_eq(err.msg, want);
  expect_error("a\n{% include \"missing.h\" %}\n", 2, "include: no template 'missing.h'");
  expect_error("{% include \"../etc/passwd\" %}\n", 1, "include: bad template name");
  expect_error("{% include \"fwd.cu.tpl\" %}\n", 1, "includes nested deeper than 16");
}

Test(engine, errors_name_file_and_line) {
  expect_error("a\nb\nc {{ nosuch }}\n", 3, "'nosuch' is not available in templates");
  expect_error("a\n\n\n\n{{ head_dim + }}\n", 5, "unexpected symbol");
  expect_error("{% if causal %}\nx\n", 1, "this if is never closed");
  expect_error("{% for i = 1, 2 %}\n{% endif %}\n", 2, "endif closes the for of line 1");
  expect_error("x\n{% end %}\n", 2, "end without an open if or for");
  expect_error("x\n\n{% else %}\n", 3, "else without an open if");
  expect_error("{% frobnicate %}\n", 1, "unknown statement {% frobnicate %}");
  expect_error("a {% if causal %}\n", 1, "a {% statement %} must be alone on its line");
  expect_error("a\nb {{ head_dim\n", 2, "'{{' without a closing '}}'");
  expect_error("{{ }}\n", 1, "empty {{ }}");
  expect_error("{{ head_dim -- x }}\n", 1, "'--' is not allowed");
  expect_error("x\n{{ entries }}\n", 2, "{{ entries }} is a table");
  expect_error("x\n{{ entries[2] }}\n", 2, "{{ entries[2] }} is nil");
  expect_error("x\n{{ f32('a') }}\n", 2, "f32: expected a number");
  expect_error("x\n{{ f32(1e300) }}\n", 2, "f32(1e+300): not a finite float32");
  expect_error("x\n{{ error('boom') }}\n", 2, "boom");
  expect_error("{% for i = 1, 1e12 %}\n{% end %}\n", 1, "gave up after");
}

Test(engine, sandbox_refuses_each_forbidden_name) {
  const char *names[] = {"os",       "io",           "require",  "load",     "dofile",
                         "loadfile", "loadstring",   "rawset",   "rawget",   "setmetatable",
                         "getmetatable", "debug",    "package",  "collectgarbage", "print",
                         "pcall",    "_G",           "next",     "coroutine", "utf8"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char text[200], msg[200];
    snprintf(text, sizeof text, "line 1\nline 2 {{ %s }}\n", names[i]);
    snprintf(msg, sizeof msg, "'%s' is not available in templates", names[i]);
    expect_error(text, 2, msg);
  }
  /* Through _ENV and through a table field too. */
  expect_error("{{ _ENV.os }}\n", 1, "'os' is not available in templates");
  expect_error("{{ string.dump }}\n", 1, "{{ string.dump }} is nil");
}

Test(engine, rendered_source_must_not_include) {
  char *out;
  gen_err err;
  cr_assert_eq(render("// ok\n  #  include <cuda_bf16.h>\n", &out, &err), GEN_ETEMPLATE);
  cr_expect(strstr(err.msg, "#include at line 2"), "%s", err.msg);
  cr_assert_eq(render("#include <x.h>\n", &out, &err), GEN_ETEMPLATE);
  cr_expect(strstr(err.msg, "#include at line 1"), "%s", err.msg);
  cr_assert_eq(render("a\n\nb\n\t#include \"y.h\"", &out, &err), GEN_ETEMPLATE);
  cr_expect(strstr(err.msg, "#include at line 4"), "%s", err.msg);
  /* not a directive: a comment or text before the '#' */
  cr_assert_eq(render("// #include <x.h>\nint a; #include\n", &out, &err), GEN_OK, "%s", err.msg);
  free(out);
}

static int has_include_directive(const char *src) {
  for (const char *l = src; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    while (*l == ' ' || *l == '\t') l++;
    if (*l == '#') {
      l++;
      while (*l == ' ' || *l == '\t') l++;
      if (!strncmp(l, "include", 7)) return 1;
    }
  }
  return 0;
}

/* The embedded forward template: what the runtime and tests rely on. */
Test(engine, embedded_forward_template) {
  gen_state *g = tu_open(NULL);
  const char *names[] = {"fwd_bf16_d64_m128n64w4s2_none", "fwd_fp16_d256_causal_m64n32w4s2_robust_b2_e1em3"};
  for (int i = 0; i < 2; i++) {
    gen_variant v;
    gen_err err;
    char *src;
    size_t len;
    cr_assert_eq(gen_variant_from_name(g, names[i], &v, &err), GEN_OK, "%s", err.msg);
    cr_assert_eq(gen_render(g, &v, &src, &len, &err), GEN_OK, "%s", err.msg);
    cr_expect(strstr(src, "extern \"C\" __global__") && strstr(src, "fa2_fwd(const fa2_fwd_params p)"));
    cr_expect(strstr(src, "typedef struct fa2_fwd_params {"), "params struct pasted in");
    cr_expect(strstr(src, "static_assert"), "smem static_assert");
    cr_expect(!has_include_directive(src), "no #include");
    cr_expect(strstr(src, names[i]), "the name appears in the source");
    free(src);
  }
  gen_close(g);
}

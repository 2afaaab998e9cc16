# fa2gen: generated FlashAttention-2 kernels, compiled at run time with NVRTC.
#
#   make            bin/fa2, lib/libfa2rt.a, lib/libfa2rt.so
#   make run        the main job on specs/default.lua (gen, build, table; check + time on a GPU)
#   make test       layering check, CPU tests (once plain, once under ASan+UBSan), fuzz corpora replay,
#                   GPU tests (skip without GPU)
#   make deps       install missing Debian packages (or print the apt-get line)
#   make fuzz FUZZ_TARGET=spec FUZZ_TIME=600   run one fuzz target (tests/fuzz/README.md)
#   make install PREFIX=/usr/local
#   make clean
#
# Sources are picked up by folder, so adding a file needs no Makefile edit:
#   gen/*.c, runtime/*.c     -> libfa2rt
#   cli/*.c                  -> bin/fa2 (the command, over libfa2rt and the lab)
#   lab/*.c                  -> build/liblab.a (numerics lab: bin/fa2 and tests)
#   tests/test_*.c           -> bin/fa2_tests (Criterion)
#   tests/gpu/*.c            -> bin/fa2_gpu_tests (main.c) and build/libgpu.a
#   bench/fa2_bench.c        -> bin/fa2_bench (bench/bench_lookup.c -> make bench-lookup)
#   tests/fuzz/fuzz_*.c      -> $(B)/fuzz/bin/fuzz_* (libFuzzer, clang; corpora in tests/fuzz/corpus/)
#   templates/* (but README.md), gen/*.lua, specs/default.lua -> embedded in libfa2rt
.DEFAULT_GOAL := all
.SUFFIXES:

PREFIX ?= /usr/local
CC     ?= cc
CFLAGS ?= -O2 -g
B      ?= build
O      ?= .
SAN    ?=
JOBS   ?= $(shell nproc 2>/dev/null || echo 2)

MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
SYSLIB    := /usr/lib/$(if $(MULTIARCH),$(MULTIARCH),x86_64-linux-gnu)
LUA_A     := $(SYSLIB)/liblua5.4.a
JANSSON_A := $(SYSLIB)/libjansson.a

ifneq ($(SAN),)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif
CPPFLAGS += -D_GNU_SOURCE -Iinclude -Igen -Iruntime -Icli -Ilab -Itemplates -Itests/gpu -I/usr/include/lua5.4
WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter \
            -Wno-missing-field-initializers
XCFLAGS   = -std=c11 $(WARN) -fPIC -fvisibility=hidden -pthread $(CFLAGS) $(SANFLAGS)
LDLIBS   := -ldl -lm -pthread

BIN := $(O)/bin
LIB := $(O)/lib

LIB_SRC  := $(sort $(wildcard gen/*.c runtime/*.c))
CLI_SRC  := $(sort $(wildcard cli/*.c))
LAB_SRC  := $(sort $(wildcard lab/*.c))
TEST_SRC := $(sort $(wildcard tests/test_*.c))
GPU_SRC  := $(sort $(filter-out tests/gpu/main.c,$(wildcard tests/gpu/*.c)))
BENCH_SRC := bench/fa2_bench.c
EMBED    := $(sort $(filter-out %.md,$(wildcard templates/* gen/*.lua))) specs/default.lua

obj = $(patsubst %.c,$(B)/obj/%.o,$(1))
LIB_OBJ  := $(call obj,$(LIB_SRC)) $(B)/obj/embedded.o
CLI_OBJ  := $(call obj,$(CLI_SRC))
LAB_OBJ  := $(call obj,$(LAB_SRC))
TEST_OBJ := $(call obj,$(TEST_SRC))
GPU_OBJ  := $(call obj,$(GPU_SRC))
BENCH_OBJ := $(call obj,$(BENCH_SRC))

.PHONY: all deps check-deps run test test-bins install clean bench-lookup \
        fuzz-bins fuzz-replay fuzz
all: $(BIN)/fa2 $(LIB)/libfa2rt.a $(LIB)/libfa2rt.so
test-bins: $(BIN)/fa2 $(BIN)/fa2_tests $(BIN)/fa2_gpu_tests $(BIN)/fa2_bench $(LIB)/libfa2rt.so

deps:
	@tools/deps.sh install
check-deps:
	@tools/deps.sh check

$(B)/obj/%.o: %.c | check-deps
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(XCFLAGS) -MMD -MP -c $< -o $@
-include $(wildcard $(B)/obj/*/*.d $(B)/obj/*/*/*.d)

# Templates, Lua modules and the default spec, embedded as byte arrays.
$(B)/embed: tools/embed.c
	@mkdir -p $(@D)
	$(CC) -O2 -o $@ $<
$(B)/embedded.c: $(B)/embed $(EMBED) Makefile
	$(B)/embed $@ $(foreach f,$(EMBED),$(f)=$(f))
$(B)/obj/embedded.o: $(B)/embedded.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(XCFLAGS) -c $< -o $@

# Debian's liblua5.4.a is built as PIE, not PIC: only its references to
# stdin/stdout/stderr stop it from going into a shared library. Renaming them
# (gen/gen_lua_stdio.c defines the new names) makes it linkable everywhere.
$(B)/liblua-pic.a: $(LUA_A) | check-deps
	@rm -rf $(B)/lua-objs && mkdir -p $(B)/lua-objs
	cd $(B)/lua-objs && ar x $(LUA_A) && for o in *.o; do \
	  objcopy --redefine-sym stdin=fa2_lua_stdin --redefine-sym stdout=fa2_lua_stdout \
	          --redefine-sym stderr=fa2_lua_stderr $$o || exit 1; done
	ar rcs $@ $(B)/lua-objs/*.o

# Debian's libjansson.a is PIE too; its one such reference is stdin (json_loadf).
$(B)/libjansson-pic.a: $(JANSSON_A) | check-deps
	@rm -rf $(B)/jansson-objs && mkdir -p $(B)/jansson-objs
	cd $(B)/jansson-objs && ar x $(JANSSON_A) && for o in *.o; do \
	  objcopy --redefine-sym stdin=fa2_lua_stdin $$o || exit 1; done
	ar rcs $@ $(B)/jansson-objs/*.o

# One static archive that carries Lua and jansson too: users link -lfa2rt only.
$(LIB)/libfa2rt.a: $(LIB_OBJ) $(B)/liblua-pic.a $(B)/libjansson-pic.a
	@mkdir -p $(@D)
	@rm -f $@
	printf 'create $@\naddlib $(B)/liblua-pic.a\naddlib $(B)/libjansson-pic.a\n$(foreach o,$(LIB_OBJ),addmod $(o)\n)save\nend\n' | ar -M
	ranlib $@

$(LIB)/libfa2rt.so: $(LIB_OBJ) $(B)/liblua-pic.a $(B)/libjansson-pic.a
	@mkdir -p $(@D)
	$(CC) -shared -o $@ -Wl,-soname,libfa2rt.so $(LIB_OBJ) $(B)/liblua-pic.a $(B)/libjansson-pic.a \
	  -Wl,--exclude-libs,ALL -Wl,--no-undefined $(SANFLAGS) $(LDLIBS)

$(B)/liblab.a: $(LAB_OBJ)
	@mkdir -p $(@D)
	@rm -f $@
	$(if $(LAB_OBJ),ar rcs $@ $(LAB_OBJ),ar rcs $@)

$(BIN)/fa2: $(CLI_OBJ) $(B)/liblab.a $(LIB)/libfa2rt.a
	@mkdir -p $(@D)
	$(CC) $(XCFLAGS) -o $@ $(CLI_OBJ) $(B)/liblab.a $(LIB)/libfa2rt.a $(LDLIBS)

$(BIN)/fa2_tests: $(TEST_OBJ) $(B)/liblab.a $(LIB)/libfa2rt.a $(B)/libfakecuda.so
	@mkdir -p $(@D)
	$(CC) $(XCFLAGS) -o $@ $(TEST_OBJ) $(B)/liblab.a $(LIB)/libfa2rt.a -lcriterion $(LDLIBS)

# A stand-in libcuda.so.1 for CPU tests of the launch path (tests/fake/).
$(B)/libfakecuda.so: tests/fake/fake_cuda.c tests/fake/fake_cuda.h templates/fa2_params.h
	@mkdir -p $(@D)
	$(CC) -shared -fPIC -O1 -g -Itemplates -o $@ $<

# GPU programs share tests/gpu/*.c (all but main.c) through build/libgpu.a.
$(B)/libgpu.a: $(GPU_OBJ)
	@mkdir -p $(@D)
	@rm -f $@
	ar rcs $@ $(GPU_OBJ)

$(BIN)/fa2_gpu_tests: $(call obj,tests/gpu/main.c) $(B)/libgpu.a $(B)/liblab.a $(LIB)/libfa2rt.a
	@mkdir -p $(@D)
	$(CC) $(XCFLAGS) -o $@ $^ $(LDLIBS)

$(BIN)/fa2_bench: $(BENCH_OBJ) $(B)/libgpu.a $(B)/liblab.a $(LIB)/libfa2rt.a
	@mkdir -p $(@D)
	$(CC) $(XCFLAGS) -o $@ $^ $(LDLIBS)

# Host cost of the launch path: memory-cache lookup and fa2_forward on the
# stand-in driver (no GPU needed).
bench-lookup: $(BIN)/fa2_bench_lookup $(B)/libfakecuda.so
	$(BIN)/fa2_bench_lookup $(B)/libfakecuda.so
$(BIN)/fa2_bench_lookup: $(B)/obj/bench/bench_lookup.o $(LIB)/libfa2rt.a
	@mkdir -p $(@D)
	$(CC) $(XCFLAGS) -o $@ $< $(LIB)/libfa2rt.a $(LDLIBS)

# Fuzz targets: libFuzzer (clang) with ASan+UBSan over a copy of libfa2rt
# built with coverage in $(B)/fuzz. fuzz-replay runs each target once over
# its corpus (make test does); fuzz grows one corpus for FUZZ_TIME seconds.
FUZZ_CC      ?= clang-14
FUZZ_B       := $(B)/fuzz
FUZZ_NAMES   := $(patsubst tests/fuzz/fuzz_%.c,%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_TARGET  ?= spec
FUZZ_TIME    ?= 600
FUZZ_FLAGS   := -timeout=60 -rss_limit_mb=4096
# Lua may hold its 256 MiB cap; a smaller ASan quarantine keeps RSS near that.
FUZZ_ENV     := ASAN_OPTIONS=quarantine_size_mb=64 UBSAN_OPTIONS=print_stacktrace=1
FUZZ_MAXLEN_template := 65536
FUZZ_MAXLEN_spec := 8192

fuzz-bins:
	@tools/deps.sh check-fuzz
	@$(MAKE) --no-print-directory B=$(FUZZ_B) O=$(FUZZ_B) CC=$(FUZZ_CC) SAN=1 \
	  CFLAGS="-O1 -g -fsanitize=fuzzer-no-link" \
	  $(foreach t,$(FUZZ_NAMES),$(FUZZ_B)/bin/fuzz_$(t))
# (inside that make, O is $(FUZZ_B))
$(BIN)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_util.h $(LIB)/libfa2rt.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(XCFLAGS) -fsanitize=fuzzer -o $@ $< $(LIB)/libfa2rt.a $(LDLIBS)

fuzz-replay: fuzz-bins
	@for t in $(FUZZ_NAMES); do \
	  echo "== fuzz corpus replay: $$t ($$(ls tests/fuzz/corpus/$$t | wc -l) inputs)"; \
	  $(FUZZ_ENV) $(FUZZ_B)/bin/fuzz_$$t -runs=0 $(FUZZ_FLAGS) \
	    -artifact_prefix=$(FUZZ_B)/ tests/fuzz/corpus/$$t 2>$(FUZZ_B)/replay-$$t.log \
	    || { tail -n 60 $(FUZZ_B)/replay-$$t.log; echo "fuzz replay of $$t failed" >&2; exit 1; }; \
	  grep -E '^#[0-9]+[[:space:]]+DONE' $(FUZZ_B)/replay-$$t.log | tail -n 1; \
	done

fuzz: fuzz-bins
	@mkdir -p $(FUZZ_B)/corpus-$(FUZZ_TARGET) $(FUZZ_B)/artifacts-$(FUZZ_TARGET)
	$(FUZZ_ENV) $(FUZZ_B)/bin/fuzz_$(FUZZ_TARGET) -max_total_time=$(FUZZ_TIME) $(FUZZ_FLAGS) \
	  $(if $(FUZZ_MAXLEN_$(FUZZ_TARGET)),-max_len=$(FUZZ_MAXLEN_$(FUZZ_TARGET))) \
	  $(if $(wildcard tests/fuzz/$(FUZZ_TARGET).dict),-dict=tests/fuzz/$(FUZZ_TARGET).dict) \
	  -artifact_prefix=$(FUZZ_B)/artifacts-$(FUZZ_TARGET)/ -print_final_stats=1 \
	  $(FUZZ_B)/corpus-$(FUZZ_TARGET) tests/fuzz/corpus/$(FUZZ_TARGET)

# The main job on the default spec. On a GPU machine bin/fa2_gpu_tests also
# checks and times it; without one it says so and skips.
run: deps all $(BIN)/fa2_gpu_tests
	$(BIN)/fa2 gen specs/default.lua -o out
	$(BIN)/fa2 build specs/default.lua --arch sm_80,sm_90 -j $(JOBS) -o out
	$(BIN)/fa2_gpu_tests --bench

# The suite runs twice: under ASan+UBSan (quick mode: the full-spec NVRTC
# check runs once, in the plain run) and plain, whose summary is the last line.
test: deps test-bins
	@echo "== Layers: gen/ and lab/ stand alone, runtime/ uses gen/, cli/ uses all, no cycles (tools/check_layers.sh)"
	@CC=$(CC) tests/test_layers.sh $(B)
	@echo "== Every bench/results path the docs cite exists (tests/test_results_cited.py)"
	@if command -v python3 >/dev/null 2>&1; then python3 tests/test_results_cited.py; \
	else echo "python3 not found: the results-citation check skipped"; fi
	@echo "== bench/results: no source copies, under a tenth of the text lines (tests/test_results_budget.py)"
	@if command -v python3 >/dev/null 2>&1; then python3 tests/test_results_budget.py; \
	else echo "python3 not found: the results-budget check skipped"; fi
	@echo "== CPU tests under AddressSanitizer + UndefinedBehaviorSanitizer (quick mode)"
	@$(MAKE) --no-print-directory B=$(B)/asan O=$(B)/asan SAN=1 \
	  $(B)/asan/bin/fa2 $(B)/asan/bin/fa2_tests
# intercept_tls_get_addr=0: LeakSanitizer's scan of dynamic TLS crashed at exit
# ("Tracer caught signal 11", a DTLS range of 0xb74..0x2000001c76) after NVRTC
# had compiled a robust variant (gcc 12's libsanitizer, glibc 2.36); leaks are
# still checked, only TLS blocks of dlopen'ed libraries go unscanned.
	FA2_BIN=$(B)/asan/bin/fa2 FA2_FAKE_CUDA=$(B)/asan/libfakecuda.so FA2_TEST_QUICK=1 \
	  ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0 \
	  UBSAN_OPTIONS=print_stacktrace=1 $(B)/asan/bin/fa2_tests --jobs $(JOBS)
	@echo "== Fuzz corpora (tests/fuzz/corpus), replayed under ASan+UBSan"
	@$(MAKE) --no-print-directory fuzz-replay
	@echo "== GPU tests"
	$(BIN)/fa2_gpu_tests
	@echo "== Python binding (no PyTorch or GPU needed)"
	@if command -v python3 >/dev/null 2>&1; then \
	  FA2_LIB=$(LIB)/libfa2rt.so FA2_FAKE_CUDA=$(B)/libfakecuda.so \
	    python3 -m unittest discover -s tests/python; \
	else echo "python3 not found: Python binding tests skipped"; fi
	@echo "== Python packaging: the wheel of \`pip install .\` (root pyproject.toml + setup.py), offline"
	@tests/test_pip.sh
	@echo "== PyTorch layer: custom ops, fake implementations, tracing on meta tensors (no GPU needed)"
	@if py=$$(tools/torch_python.sh); then \
	  FA2_LIB=$(LIB)/libfa2rt.so $$py -m unittest discover -s tests/python_torch; \
	else echo "PyTorch layer tests skipped: no Python with PyTorch (the line above says why)"; fi
	@echo "== PyTorch GPU tests (tests/gpu/test_torch_dropin.py)"
	@if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && \
	    py=$$(tools/torch_python.sh) && $$py -c 'import pytest' 2>/dev/null; then \
	  FA2_LIB=$(LIB)/libfa2rt.so PYTHONPATH=python $$py -m pytest -q tests/gpu/test_torch_dropin.py; \
	else echo "PyTorch GPU tests skipped: they need a CUDA GPU and pytest (bench/gpu_run.sh dropin runs them there)"; fi
	@echo "== CPU tests"
# CUDA_CACHE_DISABLE: NVRTC's compute cache skips ptxas, and its report, on a
# hit; the NVRTC checks read that report (gen/cli_build.c says the same).
	CUDA_CACHE_DISABLE=1 FA2_BIN=$(BIN)/fa2 FA2_FAKE_CUDA=$(B)/libfakecuda.so $(BIN)/fa2_tests --jobs $(JOBS)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 755 $(BIN)/fa2 $(DESTDIR)$(PREFIX)/bin/
	install -m 644 include/fa2.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(LIB)/libfa2rt.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIB)/libfa2rt.so $(DESTDIR)$(PREFIX)/lib/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(shell cat VERSION)|g' tools/fa2rt.pc.in \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/fa2rt.pc

clean:
	rm -rf build bin lib out

#!/bin/sh
# tools/check_layers.sh on a small tree with each fault it must catch, then on
# this repository (built by make test-bins). Usage: tests/test_layers.sh [BUILD]
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
check="$here/tools/check_layers.sh"
build=${1:-build}
cc=${CC:-cc}
t=$(mktemp -d) || exit 1
trap 'rm -rf "$t"' EXIT
fails=0
expect() { # expect MESSAGE: the fixture's report has that line
  if grep -qF -- "$1" "$t/out"; then :; else
    echo "test_layers: FAIL: no line \"$1\" in:"; sed 's/^/  /' "$t/out"; fails=$((fails + 1))
  fi
}

mkdir -p "$t/gen" "$t/lab" "$t/runtime" "$t/cli" "$t/include" "$t/build/obj/gen" \
  "$t/build/obj/runtime" "$t/build/obj/lab" "$t/build/obj/cli"
# gen/ reaching into the runtime, by include and by call
printf '#include "rt_a.h"\nint gen_x(void) { return rt_a(); }\n' >"$t/gen/gen_x.c"
# runtime: rt_a.h declares rt_b's function (the old rt_context/rt_kernel shape):
# rt_a.c calls rt_b(), rt_b.c calls rt_a(); the include lines show no cycle.
printf 'int rt_a(void);\nint rt_b(void);\n' >"$t/runtime/rt_a.h"
printf '#include "rt_a.h"\nint rt_a(void) { return 1; }\nint rt_a2(void) { return rt_b(); }\n' \
  >"$t/runtime/rt_a.c"
printf '#include "rt_a.h"\nint rt_b(void) { return rt_a(); }\n' >"$t/runtime/rt_b.c"
# runtime: an include cycle between two headers
printf '#include "rt_d.h"\n' >"$t/runtime/rt_c.h"
printf '#include "rt_c.h"\n' >"$t/runtime/rt_d.h"
printf 'int lab_x(void) { return 0; }\n' >"$t/lab/lab_x.c"
printf '#include "rt_a.h"\nint main(void) { return rt_a(); }\n' >"$t/cli/main.c"
for f in gen/gen_x runtime/rt_a runtime/rt_b lab/lab_x cli/main; do
  "$cc" -c -I"$t/runtime" -o "$t/build/obj/$f.o" "$t/$f.c" || exit 1
done

if "$check" "$t" "$t/build" >"$t/out" 2>&1; then
  echo "test_layers: FAIL: the faulty tree passed"; fails=$((fails + 1))
fi
expect "check_layers: gen/gen_x.c includes runtime/rt_a.h: gen/ may include only: gen"
expect "check_layers: gen/gen_x.o calls rt_a of runtime/rt_a.o: gen/ may use only: gen"
expect "check_layers: include cycle in runtime/ (file stems):"
expect "check_layers: call cycle between the objects of runtime/:"
if ! grep -q "call cycle.*rt_a" "$t/out" || ! grep -q "call cycle.*rt_b" "$t/out"; then
  echo "test_layers: FAIL: the call cycle does not name rt_a and rt_b"; fails=$((fails + 1))
fi

rm "$t/build/obj/runtime/rt_b.o"
"$check" "$t" "$t/build" >"$t/out" 2>&1
expect "check_layers: $t/build/obj/runtime/rt_b.o is missing (build first: make test-bins)"

# This repository.
if ! (cd "$here" && "$check" . "$build") >"$t/out" 2>&1; then
  echo "test_layers: FAIL: this repository:"; sed 's/^/  /' "$t/out"; fails=$((fails + 1))
fi
[ $fails -eq 0 ] && { cat "$t/out"; echo "test_layers: 8 checks passed"; }
[ $fails -eq 0 ]

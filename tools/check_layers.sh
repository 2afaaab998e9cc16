#!/bin/sh
# check_layers: the folders' layering, on the sources and on the built objects.
#
#   gen/      the generator library: gen/ headers only (it uses nothing of the runtime)
#   lab/      the numerics lab: lab/ headers, and templates/' plain-C ones (fa2_philox.h: the
#             kernels' own random numbers, which the lab's balanced rounding draws)
#   runtime/  libfa2rt's runtime: runtime/, gen/, include/ and templates/ headers
#   cli/      the fa2 command: any of them
#
# and no cycle between the files of one folder, neither in #include lines
# (stems: rt_kernel.c and rt_kernel.h are one node) nor in the objects'
# symbols (a.o calls b.o and b.o calls a.o: what a header that declares
# another file's functions hides from the include lines).
#
# Usage: tools/check_layers.sh [ROOT [BUILD]]   (defaults: . and ROOT/build;
# the object of each FOLDER/x.c is BUILD/obj/FOLDER/x.o: run it after make). Exit 0 or 1,
# one line per problem.
set -u
root=${1:-.}
build=${2:-$root/build}
folders="gen lab runtime cli"
fail=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# The folders whose headers and objects folder $1 may use.
allowed_for() {
  case $1 in
    gen) echo "gen" ;;
    lab) echo "lab templates" ;;
    runtime) echo "runtime gen include templates" ;;
    cli) echo "cli runtime gen include templates lab" ;;
  esac
}

# The folder that holds header $1 (first match), or nothing.
home_of() {
  for d in $folders include templates; do
    if [ -f "$root/$d/$1" ]; then echo "$d"; return; fi
  done
}

for f in $folders; do
  allowed=$(allowed_for "$f")
  : >"$tmp/inc_$f"
  for src in "$root/$f"/*.c "$root/$f"/*.h; do
    [ -f "$src" ] || continue
    name=$(basename "$src")
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$src" >"$tmp/h"
    while read -r h; do
      d=$(home_of "$h")
      [ -n "$d" ] || continue
      case " $allowed " in
        *" $d "*) ;;
        *) echo "check_layers: $f/$name includes $d/$h: $f/ may include only: $allowed"; fail=1 ;;
      esac
      [ "$d" = "$f" ] && [ "${name%.*}" != "${h%.*}" ] && echo "${name%.*} ${h%.*}" >>"$tmp/inc_$f"
    done <"$tmp/h"
  done
  if ! tsort "$tmp/inc_$f" >/dev/null 2>"$tmp/loop"; then
    echo "check_layers: include cycle in $f/ (file stems): $(sed -n '/loop/d; s/^tsort: //p' "$tmp/loop" | tr '\n' ' ')"
    fail=1
  fi
done

# Symbols: obj -> the object that defines what it calls. embedded.o holds
# gen's embedded templates.
objs=""
for f in $folders; do
  for src in "$root/$f"/*.c; do
    [ -f "$src" ] || continue
    o="$build/obj/$f/$(basename "$src" .c).o"
    if [ ! -f "$o" ]; then
      echo "check_layers: $o is missing (build first: make test-bins)"
      exit 1
    fi
    objs="$objs $o"
  done
done
[ -f "$build/obj/embedded.o" ] && objs="$objs $build/obj/embedded.o"
# shellcheck disable=SC2086
{ nm -A -g --defined-only $objs; nm -A -u $objs; } 2>/dev/null | awk -v objroot="$build/obj/" '
  function folder(p,  r) { r = substr(p, length(objroot) + 1); return r ~ /\// ? substr(r, 1, index(r, "/") - 1) : "gen" }
  function stem(p) { sub(/^.*\//, "", p); sub(/\.o$/, "", p); return p }
  {
    i = index($0, ":"); path = substr($0, 1, i - 1); n = split(substr($0, i + 1), a, " ")
    sym = a[n]; type = a[n - 1]
    if (type == "U") { ref[++nref] = path; refsym[nref] = sym }
    else if (type ~ /^[TDBRVW]$/) def[sym] = path
  }
  END {
    for (i = 1; i <= nref; i++) {
      d = def[refsym[i]]; p = ref[i]
      if (d == "" || d == p) continue
      print folder(p), stem(p), folder(d), stem(d), refsym[i]
    }
  }' | sort -u >"$tmp/sym"
while read -r pf ps df ds sym; do
  allowed=$(allowed_for "$pf")
  case " $allowed " in
    *" $df "*) ;;
    *) echo "check_layers: $pf/$ps.o calls $sym of $df/$ds.o: $pf/ may use only: $allowed"; fail=1 ;;
  esac
  [ "$pf" = "$df" ] && echo "$ps $ds" >>"$tmp/sym_$pf"
done <"$tmp/sym"
for f in $folders; do
  [ -f "$tmp/sym_$f" ] || continue
  if ! tsort "$tmp/sym_$f" >/dev/null 2>"$tmp/loop"; then
    echo "check_layers: call cycle between the objects of $f/: $(sed -n '/loop/d; s/^tsort: //p' "$tmp/loop" | tr '\n' ' ')"
    fail=1
  fi
done
[ $fail -eq 0 ] && echo "check_layers: gen/ and lab/ stand alone, runtime/ uses gen/, cli/ uses all; no include or call cycle inside a folder"
exit $fail

#!/bin/sh
# The Python package from its one entry point (pyproject.toml + setup.py at the
# root), built as `pip install .` builds it but offline: `pip wheel --no-deps
# --no-build-isolation` with the Python's own setuptools and wheel, in this
# checkout (setup.py runs `make lib/libfa2rt.so`, up to date after make
# test-bins). Checks: the wheel holds every tracked module of python/fa2gen (and
# the native operator's C++ source), libfa2rt.so, fa2.h and nothing else; its
# version is VERSION's; unpacked alone (no checkout on the path, FA2_LIB unset)
# the package loads the library it carries.
# Python: $FA2_PIP_PYTHON, else the first of python3, /usr/bin/python3 with pip,
# setuptools >= 61 and wheel; none: one line saying so, exit 0.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
can_build() {
  "$1" -c 'import setuptools, wheel, pip, sys
sys.exit(int(setuptools.__version__.split(".")[0]) < 61)' >/dev/null 2>&1
}
py=""
for p in ${FA2_PIP_PYTHON:-python3 /usr/bin/python3}; do
  if can_build "$p"; then py=$p; break; fi
done
if [ -z "$py" ]; then
  echo "Python packaging test skipped: no Python with pip, setuptools >= 61 and wheel" \
    "(Debian: apt-get install python3-pip python3-setuptools python3-wheel; or set FA2_PIP_PYTHON)"
  exit 0
fi
t=$(mktemp -d) || exit 1
trap 'rm -rf "$t"' EXIT
rm -rf "$root/build/python" # setuptools' scratch: a stale copy would hide a module left out
if ! (cd "$root" && env -u FA2_LIB "$py" -m pip wheel -q --no-deps --no-build-isolation \
      --no-cache-dir -w "$t/dist" .) >"$t/log" 2>&1; then
  echo "test_pip: FAIL: pip wheel in $root:"; tail -n 30 "$t/log"; exit 1
fi
(cd "$root" && git ls-files 'python/fa2gen/*.py' 'python/fa2gen/*.cpp') >"$t/tracked" 2>/dev/null ||
  (cd "$root" && find python/fa2gen \( -name '*.py' -o -name '*.cpp' \) ! -path '*__pycache__*') >"$t/tracked"
env -u FA2_LIB -u PYTHONPATH "$py" - "$t" "$root/VERSION" <<'EOF'
import glob, os, subprocess, sys, zipfile
t, version_file = sys.argv[1], sys.argv[2]
version = open(version_file).read().strip()
wheels = glob.glob(os.path.join(t, "dist", "*.whl"))
fails = []
if len(wheels) != 1:
    sys.exit(f"test_pip: FAIL: expected one wheel, got {wheels}")
z = zipfile.ZipFile(wheels[0])
names = set(z.namelist())
want = {"fa2gen/" + p.strip()[len("python/fa2gen/"):] for p in open(os.path.join(t, "tracked"))}
want.update(("fa2gen/libfa2rt.so", "fa2gen/fa2.h"))
info = f"fa2gen-{version}.dist-info/"
if len(want) < 3:
    fails.append(f"only {sorted(want)} tracked under python/fa2gen")
for n in sorted(want - names):
    fails.append(f"{n} is not in the wheel")
for n in sorted(names - want):
    if not n.startswith(info):
        fails.append(f"{n} is in the wheel but is no tracked module of python/fa2gen")
meta = z.read(info + "METADATA").decode() if info + "METADATA" in names else ""
if f"\nVersion: {version}\n" not in meta:
    fails.append(f"METADATA does not say Version: {version} (VERSION)")
site = os.path.join(t, "site")
z.extractall(site)
probe = ("import fa2gen, fa2gen._lib as L; v = fa2gen.version(); "
         "print(v); print(L.lib()._name)")
r = subprocess.run([sys.executable, "-c", probe], cwd=t, capture_output=True, text=True,
                   env={k: v for k, v in os.environ.items() if k not in ("FA2_LIB", "PYTHONPATH")}
                   | {"PYTHONPATH": site})
out = r.stdout.split()
if r.returncode != 0 or len(out) != 2:
    fails.append(f"importing the unpacked wheel failed: {r.stdout}{r.stderr}")
else:
    if out[0] != version:
        fails.append(f"fa2gen.version() is {out[0]}, VERSION is {version}")
    if os.path.realpath(out[1]) != os.path.realpath(os.path.join(site, "fa2gen", "libfa2rt.so")):
        fails.append(f"the unpacked package loaded {out[1]}, not its own libfa2rt.so")
for f in fails:
    print("test_pip: FAIL:", f)
if fails:
    sys.exit(1)
print(f"test_pip: {os.path.basename(wheels[0])}: {len(want) - 1} modules and libfa2rt.so, "
      f"version {version}; the unpacked package loads its own library")
EOF

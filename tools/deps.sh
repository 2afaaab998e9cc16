#!/bin/sh
# deps.sh check|check-fuzz|install: the Debian packages fa2gen builds and tests with.
#   liblua5.4-dev     Lua 5.4, embedded (linked statically) for the templates and specs
#   libjansson-dev    JSON for manifest.json, cache headers and the tuning database (static)
#   libxxhash-dev     content hashes and cache keys (header-only use)
#   libcriterion-dev  the C test framework
#   clang-14, libclang-rt-14-dev   libFuzzer + sanitizers for the fuzz targets that
#                     make test replays (tests/fuzz); not needed to build, so `check`
#                     leaves them out and `check-fuzz` checks them alone
#   g++, python3-dev  the native eager forward (python/fa2gen/_native.cpp, built on first
#                     use; optional: without them the Python operators run)
# The CUDA toolkit's NVRTC is needed to compile kernels; it is not a Debian
# package here, so we only check for it and say what to install.
set -u
BUILD_PKGS="liblua5.4-dev libjansson-dev libxxhash-dev libcriterion-dev"
FUZZ_PKGS="clang-14 libclang-rt-14-dev"
NATIVE_PKGS="g++ python3-dev"
mode=${1:-check}
case "$mode" in
  check) PKGS=$BUILD_PKGS ;;
  check-fuzz) PKGS=$FUZZ_PKGS ;;
  install) PKGS="$BUILD_PKGS $FUZZ_PKGS $NATIVE_PKGS" ;;
  *) echo "usage: deps.sh check|check-fuzz|install" >&2; exit 2 ;;
esac

missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing="$missing $p"
done
missing=${missing# }

if [ -n "$missing" ]; then
  if [ "$mode" = install ]; then
    echo "deps: installing $missing"
    if [ "$(id -u)" = 0 ]; then SUDO=""; elif sudo -n true 2>/dev/null; then SUDO="sudo"; else
      echo "deps: missing packages and no root: run  sudo apt-get install -y $missing" >&2
      exit 1
    fi
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends $missing \
      || { DEBIAN_FRONTEND=noninteractive $SUDO apt-get update \
           && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends $missing; } \
      || { echo "deps: apt-get failed; install by hand: apt-get install -y $missing" >&2; exit 1; }
  else
    echo "deps: missing Debian packages: $missing" >&2
    echo "deps: run  make deps  (or: sudo apt-get install -y $missing)" >&2
    exit 1
  fi
fi

if [ "$mode" = install ]; then
  found=""
  for d in "${FA2_NVRTC:-}" "${CUDA_HOME:-/nonexistent}/lib64" /usr/local/cuda/lib64 $(ldconfig -p 2>/dev/null | awk '/libnvrtc\.so/{print $NF}'); do
    case "$d" in */libnvrtc*) [ -e "$d" ] && found=$d ;; *) ls "$d"/libnvrtc.so* >/dev/null 2>&1 && found=$d ;; esac
    [ -n "$found" ] && break
  done
  if [ -z "$found" ]; then
    echo "deps: NVRTC (libnvrtc.so) not found: install the CUDA toolkit (https://developer.nvidia.com/cuda-downloads," >&2
    echo "      package cuda-nvrtc-13-0 or cuda-toolkit-13-0), or set CUDA_HOME / FA2_NVRTC" >&2
    exit 1
  fi
fi
exit 0

"""Build step shared by python/setup.py and the repository root's setup.py:
run `make lib/libfa2rt.so` in the checkout and ship the library inside the
package (fa2gen/libfa2rt.so), so `pip install ./python` and `pip install .`
both give a working package.

FA2_LIB=/path/to/libfa2rt.so: ship that file instead of building.
"""
import os
import shutil
import subprocess

from setuptools import Distribution
from setuptools.command.build_py import build_py


def find_root(start):
    """The fa2gen checkout holding start (a folder), or None."""
    d = os.path.abspath(start)
    for _ in range(3):
        if os.path.isfile(os.path.join(d, "Makefile")) and \
                os.path.isfile(os.path.join(d, "include", "fa2.h")):
            return d
        d = os.path.dirname(d)
    return None


def library(start):
    prebuilt = os.environ.get("FA2_LIB")
    if prebuilt:
        if not os.path.isfile(prebuilt):
            raise SystemExit(f"fa2gen: FA2_LIB={prebuilt} does not exist")
        return prebuilt
    root = find_root(start)
    if root is None:
        raise SystemExit("fa2gen: cannot find the fa2gen checkout (Makefile, include/fa2.h) "
                         f"above {start} to build libfa2rt.so; build it with `make` and set "
                         "FA2_LIB to its path")
    print(f"fa2gen: building libfa2rt.so with make in {root}")
    r = subprocess.run(["make", "-C", root, "lib/libfa2rt.so"])
    if r.returncode != 0:
        raise SystemExit(f"fa2gen: `make -C {root} lib/libfa2rt.so` failed (see above); "
                         "`make deps` installs the Debian packages it needs")
    return os.path.join(root, "lib", "libfa2rt.so")


def make_build_py(start):
    class BuildPy(build_py):
        def run(self):
            super().run()
            dest = os.path.join(self.build_lib, "fa2gen")
            os.makedirs(dest, exist_ok=True)
            shutil.copy2(library(start), os.path.join(dest, "libfa2rt.so"))
    return BuildPy


class BinaryDistribution(Distribution):
    """The wheel carries a shared library: platform-specific, not pure."""

    def has_ext_modules(self):
        return True

"""fa2gen's one Python packaging entry point (metadata: pyproject.toml).

`pip install .` in a checkout (or `pip install git+URL`) installs the package
python/fa2gen and ships libfa2rt.so inside it (fa2gen/libfa2rt.so), with
include/fa2.h beside it for the native operator's build (_native.py): the build
step runs `make lib/libfa2rt.so` here first. FA2_LIB=/path/to/libfa2rt.so
ships that file instead of building.
"""
import os
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))


def library():
    prebuilt = os.environ.get("FA2_LIB")
    if prebuilt:
        if not os.path.isfile(prebuilt):
            raise SystemExit(f"fa2gen: FA2_LIB={prebuilt} does not exist")
        return prebuilt
    if not (os.path.isfile(os.path.join(ROOT, "Makefile")) and
            os.path.isfile(os.path.join(ROOT, "include", "fa2.h"))):
        raise SystemExit(f"fa2gen: {ROOT} is not an fa2gen checkout (no Makefile, include/fa2.h) "
                         "to build libfa2rt.so in; build it with `make` and set FA2_LIB to its path")
    print(f"fa2gen: building libfa2rt.so with make in {ROOT}")
    r = subprocess.run(["make", "-C", ROOT, "lib/libfa2rt.so"])
    if r.returncode != 0:
        raise SystemExit(f"fa2gen: `make -C {ROOT} lib/libfa2rt.so` failed (see above); "
                         "`make deps` installs the Debian packages it needs")
    return os.path.join(ROOT, "lib", "libfa2rt.so")


class BuildPy(build_py):
    def run(self):
        super().run()
        dest = os.path.join(self.build_lib, "fa2gen")
        os.makedirs(dest, exist_ok=True)
        shutil.copy2(library(), os.path.join(dest, "libfa2rt.so"))
        # the native operator's build (fa2gen/_native.py) includes the C API's header
        shutil.copy2(os.path.join(ROOT, "include", "fa2.h"), os.path.join(dest, "fa2.h"))


class BinaryDistribution(Distribution):
    """The wheel carries a shared library: platform-specific, not pure."""

    def has_ext_modules(self):
        return True


# setuptools' scratch (build/, egg-info) under make's build/ folder, where
# `make clean` removes it and a stale copy is easy to find.
SCRATCH = os.path.join("build", "python")
os.makedirs(os.path.join(ROOT, SCRATCH), exist_ok=True)
setup(cmdclass={"build_py": BuildPy}, distclass=BinaryDistribution,
      options={"build": {"build_base": SCRATCH}, "egg_info": {"egg_base": SCRATCH}})

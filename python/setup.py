# Package metadata is in pyproject.toml; this file adds the libfa2rt build.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from build_lib import BinaryDistribution, make_build_py  # noqa: E402
from setuptools import setup  # noqa: E402

setup(cmdclass={"build_py": make_build_py(os.path.dirname(os.path.abspath(__file__)))},
      distclass=BinaryDistribution)

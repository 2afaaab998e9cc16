# `pip install .` from the repository root: the package lives in python/.
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "python"))
from build_lib import BinaryDistribution, make_build_py  # noqa: E402
from setuptools import setup  # noqa: E402

setup(cmdclass={"build_py": make_build_py(here)}, distclass=BinaryDistribution)

"""`pip install ./analysis/python` from the clone, with no download: installs the hybridsim package
with the native module CMake built (the README's commands build it in build/; HYBRIDSIM_BUILD_DIR
names another build folder). In a fresh virtual environment:

    python3 -m venv venv && venv/bin/pip install --no-index --no-build-isolation ./analysis/python
"""
import glob
import os
import shutil
import sysconfig

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("HYBRIDSIM_BUILD_DIR", os.path.join(HERE, "..", "..", "build"))


class BuildWithNativeModule(build_py):
    """The pure-Python package plus the native module from the CMake build."""

    def run(self):
        super().run()
        # The module for this interpreter (its ABI tag): CMake builds it for one Python.
        name = "_hybridsim" + sysconfig.get_config_var("EXT_SUFFIX")
        built = os.path.join(BUILD, "python", "hybridsim", name)
        if not os.path.exists(built):
            found = glob.glob(os.path.join(BUILD, "python", "hybridsim", "_hybridsim*"))
            raise SystemExit(f"no {name} in {os.path.abspath(BUILD)}/python/hybridsim "
                             f"({'only ' + ', '.join(map(os.path.basename, found)) if found else 'nothing built'}): "
                             "build it for this Python (cmake --build build --target hybridsim_python, "
                             "with -DPython3_EXECUTABLE=...), or set HYBRIDSIM_BUILD_DIR")
        shutil.copy2(built, os.path.join(self.build_lib, "hybridsim"))


class NativeDistribution(Distribution):
    def has_ext_modules(self):  # a platform wheel: it holds a compiled module
        return True


setup(
    name="hybridsim",
    version="0.1.0",
    description="Discrete-event simulator of multi-GPU deep-learning training clusters",
    packages=["hybridsim"],
    python_requires=">=3.9",
    cmdclass={"build_py": BuildWithNativeModule},
    distclass=NativeDistribution,
)

"""Shared fixtures of the Python module's tests: the command-line tool beside the module, the source
tree (scenarios/), and a scratch folder per test. ctest sets HYBRIDSIM_BIN, HYBRIDSIM_SOURCE_DIR and
PYTHONPATH (tests/CMakeLists.txt)."""
import os
import subprocess

import pytest


@pytest.fixture(scope="session")
def source_dir():
    return os.environ.get("HYBRIDSIM_SOURCE_DIR", os.getcwd())


@pytest.fixture(scope="session")
def cli():
    tool = os.environ["HYBRIDSIM_BIN"]

    def run(*args, cwd=None):
        return subprocess.run([tool, *args], cwd=cwd, capture_output=True, text=True)

    return run

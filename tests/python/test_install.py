"""`pip install` of the module into a fresh virtual environment, with no download (no index, no
build isolation): the package and the native module CMake built, importable away from the build."""
import os
import shutil
import subprocess
import sys

import hybridsim


def test_the_module_installs_and_runs_in_a_fresh_virtual_environment(tmp_path, source_dir):
    native = hybridsim._native.__file__  # BUILD/python/hybridsim/_hybridsim....so
    build_dir = os.path.dirname(os.path.dirname(os.path.dirname(native)))
    # A copy of the package folder, so that pip's scratch files stay out of the source tree.
    package = tmp_path / "package"
    shutil.copytree(os.environ["HYBRIDSIM_PYTHON_PACKAGE"], package,
                    ignore=shutil.ignore_patterns("*.cpp", "CMakeLists.txt", "__pycache__"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["HYBRIDSIM_BUILD_DIR"] = build_dir
    install = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index",
                              "--no-build-isolation", str(package)], env=env, capture_output=True, text=True)
    assert install.returncode == 0, install.stdout + install.stderr
    ran = subprocess.run([str(venv / "bin" / "python"), "-c",
                          "import hybridsim; print(hybridsim.__file__); "
                          "print(hybridsim.run('scenarios/dgx1/gnmt-dp8.yaml').step_time_ps)"],
                         cwd=source_dir, env=env, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    where, step_time = ran.stdout.split()
    assert where.startswith(str(venv))
    assert int(step_time) == hybridsim.run("scenarios/dgx1/gnmt-dp8.yaml").step_time_ps

#!/usr/bin/env python3
"""`pip install --no-build-isolation .` of the repository into a fresh venv made with
--system-site-packages, offline (--no-index), as a user runs it: setup.py configures and builds
the module with CMake from scratch (about 90 s on 2 idle cores), then `import infini` from outside
the tree: the package a user installs imports and runs.

Usage: pip_install_check.py SOURCE_DIR SCRATCH_DIR
"""
import os
import shutil
import subprocess
import sys

source, scratch = sys.argv[1:3]
shutil.rmtree(scratch, ignore_errors=True)
venv = os.path.join(scratch, "venv")
subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv], check=True)
python = os.path.join(venv, "bin", "python")
# A CMake tree of its own in the scratch folder, configured afresh every run.
env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
           INFINI_CMAKE_DIR=os.path.join(scratch, "cmake"))
env.pop("INFINI_BUILD_DIR", None)
r = subprocess.run([python, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "-q", source],
                   env=env, capture_output=True, text=True)
if r.returncode != 0:
    sys.exit(f"pip install failed:\n{r.stdout}\n{r.stderr}")
probe = ("import infini, numpy; "
         "assert infini.__file__.startswith(%r), infini.__file__; "
         "layer = infini.InfiniAttention(1, 1, 4, 4, [0.0], segment=8); "
         "out = layer(numpy.ones((3, 1, 4), numpy.float32), numpy.ones((3, 1, 4), numpy.float32), "
         "numpy.arange(12, dtype=numpy.float32).reshape(3, 1, 4)); "
         "assert out.shape == (3, 1, 4); print('installed:', infini.__file__)") % venv
r = subprocess.run([python, "-c", probe], cwd=scratch, capture_output=True, text=True)
if r.returncode != 0:
    sys.exit(f"the installed package does not run:\n{r.stdout}\n{r.stderr}")
print(r.stdout.strip())
print("pip install: passed")

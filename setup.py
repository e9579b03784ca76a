"""Builds the `infini` Python package: the pure-Python part in python/infini and the extension
infini._infini, which CMake builds (target infini_python, -DINFINI_PYTHON=ON) from this tree.

    pip install --no-build-isolation .          # in a venv made with --system-site-packages

The CMake tree is build-python/ in the repository (kept, so that a second install is quick;
INFINI_CMAKE_DIR=DIR puts it elsewhere). INFINI_BUILD_DIR=DIR instead reuses a configured build
tree as it is (its Python must be the one pip runs). CMAKE_ARGS adds arguments to the configure
step.
"""
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.environ.get("INFINI_BUILD_DIR")
        if not build_dir:
            build_dir = os.environ.get("INFINI_CMAKE_DIR") or os.path.join(ROOT, "build-python", "cmake")
            build_dir = os.path.abspath(build_dir)
            generator = ["-G", "Ninja"] if shutil.which("ninja") else []
            subprocess.run(["cmake", "-S", ROOT, "-B", build_dir, *generator, "-DCMAKE_BUILD_TYPE=Release",
                            "-DINFINI_BUILD_TESTS=OFF", "-DINFINI_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}",
                            *shlex.split(os.environ.get("CMAKE_ARGS", ""))], check=True)
        subprocess.run(["cmake", "--build", build_dir, "--target", "infini_python"], check=True)
        built = os.path.join(build_dir, "python", "infini", "_infini" + sysconfig.get_config_var("EXT_SUFFIX"))
        if not os.path.exists(built):
            sys.exit(f"setup.py: {built} was not built (is {build_dir} configured with this Python, "
                     f"{sys.executable}, and -DINFINI_PYTHON=ON?)")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built, target)


setup(
    # setuptools' own build folders beside the CMake tree, not in a CMake build called build/.
    options={"build": {"build_base": os.path.join("build-python", "setuptools")}},
    packages=["infini"],
    package_dir={"": "python"},
    ext_modules=[Extension("infini._infini", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)

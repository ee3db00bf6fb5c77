"""The rmcp-torch distribution's build (pyproject.toml declares it; this file only adds what a
static pyproject.toml cannot say).

1. Its version is `rmcp --version`'s: cmake/version_file.cmake, the one writer of the CLI's
   version (project(VERSION) refined by git), is run on the checkout around this directory;
   outside a checkout (a copy of python/, an sdist) it is rmcp.__version__, which
   tests/cli/test_versions.py keeps equal to CMakeLists.txt's project(VERSION). The installed
   package says the same at run time: build_py writes rmcp/_build_version.py, which
   rmcp/__init__.py imports (cmake --install writes the same file: cmake/Install.cmake).
2. Nothing is written beside the sources (the newcomer review, finding 26): setuptools' build
   directory and egg-info go to a temporary directory that is removed when the build ends.
"""
import atexit
import pathlib
import re
import shutil
import subprocess
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = pathlib.Path(__file__).resolve().parent
CHECKOUT = HERE.parent


def base_version():
    text = (HERE / "rmcp" / "__init__.py").read_text(encoding="utf-8")
    return re.search(r'^__version__ = "([^"]+)"', text, re.M).group(1)


def cli_version():
    script = CHECKOUT / "cmake" / "version_file.cmake"
    cmakelists = CHECKOUT / "CMakeLists.txt"
    cmake = shutil.which("cmake")
    if not (script.is_file() and cmakelists.is_file() and cmake):
        return base_version()
    project = re.search(r"project\(rmcp VERSION ([0-9.]+)", cmakelists.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="rmcp-version-") as out:
        subprocess.run([cmake, f"-DRMCP_BASE_VERSION={project.group(1)}", f"-DRMCP_SOURCE_DIR={CHECKOUT}",
                        f"-DRMCP_OUTPUT_DIR={out}", "-P", str(script)], check=True, stdout=subprocess.DEVNULL)
        return (pathlib.Path(out) / "version.txt").read_text(encoding="utf-8").strip()


VERSION = cli_version()


class BuildPyWithVersion(build_py):
    """Adds rmcp/_build_version.py (the version above) to the built package."""

    def run(self):
        super().run()
        target = pathlib.Path(self.build_lib) / "rmcp" / "_build_version.py"
        target.write_text(f'# Written by python/setup.py when the package was built.\n__version__ = "{VERSION}"\n',
                          encoding="utf-8")


# Out of the source tree: pip builds in place (pip >= 21.3), and setuptools would otherwise leave
# python/build/ and python/rmcp_torch.egg-info/ in the checkout.
_scratch = tempfile.mkdtemp(prefix="rmcp-torch-build-")
atexit.register(shutil.rmtree, _scratch, True)

setup(version=VERSION, cmdclass={"build_py": BuildPyWithVersion},
      options={"build": {"build_base": str(pathlib.Path(_scratch) / "build")},
               "egg_info": {"egg_base": _scratch}})

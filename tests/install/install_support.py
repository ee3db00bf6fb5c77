"""Shared by the tests of the installed product (tests/install/): the install tree and a clean run.

The tree is what `DESTDIR=TMP cmake --install BUILD --prefix /usr` writes, made once per
session (or named by $RMCP_INSTALLED_DESTDIR); the programs in it run from / with an
environment that has no RMCP_DATA_DIR and no RMCP_BUILD_DIR, so nothing can reach the
checkout. (No conftest.py: tests/cli's would be shadowed in the one pytest session.)
"""
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("RMCP_BUILD_DIR", REPO / "build")).resolve()
FIXTURE = REPO / "tests" / "fixtures" / "rx5600xt-gfx1010-rocm52"
LOG = REPO / "tests" / "logs" / "miopen-failure-gemm-bwd-fault.log"


def cache_value(name):
    for line in (BUILD / "CMakeCache.txt").read_text().splitlines():
        if line.startswith(name + ":"):
            return line.split("=", 1)[1]
    raise KeyError(name)


LIBDIR = cache_value("CMAKE_INSTALL_LIBDIR")  # lib/<multiarch>


@pytest.fixture(scope="session")
def destdir(tmp_path_factory):
    """The DESTDIR the build was installed into with prefix /usr."""
    given = os.environ.get("RMCP_INSTALLED_DESTDIR")
    if given:
        return pathlib.Path(given)
    root = tmp_path_factory.mktemp("destdir")
    subprocess.run(["cmake", "--install", str(BUILD), "--prefix", "/usr"], env={**os.environ, "DESTDIR": str(root)},
                   check=True, stdout=subprocess.DEVNULL)
    return root


def clean_env(home, **extra):
    """An environment that points at nothing in the checkout."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "NO_COLOR": "1", "LC_ALL": "C.UTF-8",
           "XDG_CACHE_HOME": str(home / ".cache"), "XDG_STATE_HOME": str(home / ".state"),
           "XDG_CONFIG_HOME": str(home / ".config")}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run(argv, home, cwd="/", check=None, input=None, timeout=120, **extra):
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, env=clean_env(home, **extra), capture_output=True,
                          input=input, timeout=timeout)
    if check is not None:
        assert proc.returncode == check, (argv, proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    return proc

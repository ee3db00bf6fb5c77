"""Shared helpers for the hostile-input suite (docs/security.md): every test runs the real
binary against a tree built to attack it, and checks that nothing outside the tree was read
or written, that rmcp always ends, and that it tells the truth about what happened."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
# Absolute: a test may change the working directory (RMCP_BUILD_DIR=build-asan is relative).
BUILD = (REPO / os.environ.get("RMCP_BUILD_DIR", "build")).resolve()
FIXTURES = REPO / "tests" / "fixtures"

sys.path.insert(0, str(FIXTURES))  # make_libraries: tiny real GPU libraries


class Rmcp:
    """Runs rmcp with a clean, predictable environment."""

    def __init__(self, binary, extra_env=None):
        self.binary = binary
        self.extra_env = extra_env or {}

    def __call__(self, *args, input=None, env=None, check=None, timeout=60):
        full_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1",
                    "RMCP_DATA_DIR": str(REPO), **self.extra_env}
        if env:
            full_env.update(env)
        proc = subprocess.run([str(self.binary), *map(str, args)], input=input, env=full_env,
                              capture_output=True, timeout=timeout)
        if check is not None:
            assert proc.returncode == check, (proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:])
        return proc

    def json(self, *args, **kw):
        proc = self(*args, "--format", "json", check=0, **kw)
        return json.loads(proc.stdout)


@pytest.fixture(scope="session")
def rmcp():
    binary = BUILD / "rmcp"
    if not binary.exists():
        pytest.fail(f"{binary} is missing: build first (cmake --build build)")
    return Rmcp(binary)


@pytest.fixture(params=["openat2", "walk"])
def rmcp_any(request, rmcp):
    """The same binary with each of Root's two resolvers (RMCP_TEST_RESOLVER=walk forces the
    user-space walk where the kernel has openat2)."""
    return Rmcp(rmcp.binary, {"RMCP_TEST_RESOLVER": "walk"} if request.param == "walk" else {})


def is_fixture_name(name):
    """A fixture root's directory, not Python's cache of the generator scripts beside them
    (tests/fixtures/__pycache__ appears once a test imports make_fixtures or make_libraries),
    nor tests/fixtures/healthy, which holds the healthy-machine zoo's roots (their own test:
    tests/cli/test_healthy_zoo.py)."""
    return not name.startswith(("_", ".")) and name != "healthy"


def fixture_roots():
    return sorted(p for p in FIXTURES.iterdir() if p.is_dir() and is_fixture_name(p.name))


def write(path, data, mode=None):
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data)
    if mode is not None:
        path.chmod(mode)
    return path


def tree_snapshot(top):
    """(kind, content or target) for everything under top, links not followed."""
    out = {}
    top = pathlib.Path(top)
    if not top.exists() and not top.is_symlink():
        return out
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        for name in dirnames + filenames:
            p = pathlib.Path(dirpath) / name
            rel = str(p.relative_to(top))
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p))
            elif p.is_dir():
                out[rel] = ("dir",)
            else:
                out[rel] = ("file", p.read_bytes())
    return out

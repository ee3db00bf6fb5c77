"""Shared fixtures for the CLI tests: they run the real binary (ARCHITECTURE.md, principle 12)."""
import json
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
# Absolute: a test may change the working directory (RMCP_BUILD_DIR=build-asan is relative).
BUILD = (REPO / os.environ.get("RMCP_BUILD_DIR", "build")).resolve()
FIXTURES = REPO / "tests" / "fixtures"
GOLDEN = REPO / "tests" / "golden"


class Rmcp:
    """Runs build/rmcp with a clean, predictable environment.

    That environment has one compiled-signature cache for the whole run (XDG_CACHE_HOME, as a
    user's ~/.cache/rmcp): the first `explain` compiles the kb's Hyperscan database and the
    rest load it, as on a user's machine. Without it every call compiled again, which under
    ASan took 3 to 4 s a call and most of the ASan CLI suite's time (docs/testing.md). Tests
    of the cache itself set XDG_CACHE_HOME themselves; a test's `env` overrides this one.
    LANG is C.UTF-8, a user's usual locale: text keeps its glyphs (✓ — →), which a locale that
    is not UTF-8 gets spelt in ASCII (util/terminal.hpp; tests/cli/test_frame.py)."""

    def __init__(self, binary, cache_dir):
        self.binary = binary
        self.cache_dir = cache_dir

    def __call__(self, *args, input=None, env=None, check=None, timeout=60):
        full_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1",
                    "RMCP_DATA_DIR": str(REPO), "XDG_CACHE_HOME": str(self.cache_dir), "LANG": "C.UTF-8"}
        if env:
            full_env.update(env)
        proc = subprocess.run([str(self.binary), *map(str, args)], input=input, env=full_env,
                              capture_output=True, timeout=timeout)
        if check is not None:
            assert proc.returncode == check, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
        return proc

    def json(self, *args, **kw):
        proc = self(*args, "--format", "json", check=0, **kw)
        return json.loads(proc.stdout)


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "sweep: a semantic check repeated over every fixture root or real log (kb advice, "
        "accuracy). scripts/test.sh runs it in the default build only; the ASan build runs the "
        "rest of the suite, whose cases reach the same code paths (docs/testing.md).")


@pytest.fixture(scope="session")
def rmcp(tmp_path_factory):
    binary = BUILD / "rmcp"
    if not binary.exists():
        pytest.fail(f"{binary} is missing: run scripts/setup.sh first")
    # Under pytest-xdist the base temporary directory is one per worker; its parent is the
    # run's, so every worker shares the cache (stores are atomic renames: db_cache.cpp).
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    cache = shared / "rmcp-cache"
    cache.mkdir(exist_ok=True)
    return Rmcp(binary, cache)


# Every JSON output carries these (the program's and the knowledge base's version); they
# change with every commit and every kb edit, so goldens are compared without them.
VERSION_KEYS = ("rmcp_version", "kb_version")


def unversioned(doc):
    """A JSON object without the version stamps, for comparing with a golden file."""
    return {k: v for k, v in doc.items() if k not in VERSION_KEYS}


def is_fixture_name(name):
    """A fixture root's directory, not Python's cache of the generator scripts beside them
    (tests/fixtures/__pycache__ appears once a test imports make_fixtures or make_libraries),
    nor tests/fixtures/healthy, which holds the healthy-machine zoo's roots (their own test:
    tests/cli/test_healthy_zoo.py)."""
    return not name.startswith(("_", ".")) and name != "healthy"


def fixture_roots():
    return sorted(p for p in FIXTURES.iterdir() if p.is_dir() and is_fixture_name(p.name)) if FIXTURES.exists() else []


def target_sorted(targets):
    """In target order, as scan lists them: generation, minor, stepping (gfx906 < gfx90a < gfx1030),
    then a target id's features (review finding 21; scan.hpp, target_order_less)."""
    def key(t):
        processor, _, features = t.partition(":")
        return int(processor[3:-2]), int(processor[-2], 16), int(processor[-1], 16), features
    return sorted(targets, key=key)

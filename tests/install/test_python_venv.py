"""rmcp.torch in a user's own environment (docs/install.md, "rmcp.torch in a virtual environment").

A venv made with `python3 -m venv --system-site-packages` (so that it sees Debian's torch,
setuptools and wheel), `pip install --no-build-isolation ./python` offline, then the
operator's own tests run in that venv from a directory outside the checkout: the package
is the venv's copy, and the operator is compiled for the venv's torch on first use into
$XDG_CACHE_HOME/rmcp/torch-ops/<torch version>/ (ccache, when installed, keeps the second
compile of the same source for the same torch to a second or so).
"""
from install_support import REPO  # first: the shared paths
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

PYTHON = "/usr/bin/python3"


def ccache_dir():
    """The ccache directory of this user, fixed before XDG_CACHE_HOME points elsewhere (ccache
    keeps its cache under $XDG_CACHE_HOME/ccache by default)."""
    if not shutil.which("ccache"):
        return None
    out = subprocess.run(["ccache", "-k", "cache_dir"], capture_output=True, text=True)
    return out.stdout.strip() or None


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    root = tmp_path_factory.mktemp("venv")
    subprocess.run([PYTHON, "-m", "venv", "--system-site-packages", str(root / "venv")], check=True)
    # From the checkout itself, as docs/install.md says: pip builds in place, and python/setup.py
    # sends setuptools' build/ and egg-info to a temporary directory (the newcomer review, finding 26).
    before = build_litter()
    proc = subprocess.run([str(root / "venv" / "bin" / "pip"), "install", "--no-build-isolation", "--no-index",
                           "--disable-pip-version-check", str(REPO / "python")], capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert build_litter() == before, "pip install ./python left files in the checkout"
    return root


def build_litter():
    """What setuptools writes beside the sources when it builds in place."""
    python = REPO / "python"
    return sorted(str(p.relative_to(python)) for p in [python / "build", *python.glob("*.egg-info")] if p.exists())


def cli_version():
    """`rmcp --version` for this checkout, from its one writer, cmake/version_file.cmake."""
    project = re.search(r"project\(rmcp VERSION ([0-9.]+)", (REPO / "CMakeLists.txt").read_text()).group(1)
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(["cmake", f"-DRMCP_BASE_VERSION={project}", f"-DRMCP_SOURCE_DIR={REPO}",
                        f"-DRMCP_OUTPUT_DIR={out}", "-P", str(REPO / "cmake" / "version_file.cmake")], check=True)
        return (pathlib.Path(out) / "version.txt").read_text().strip()


def venv_env(venv, **extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "RMCP_BUILD_DIR", "RMCP_TORCH_OPS", "RMCP_TORCH_BACKEND", "RMCP_DATA_DIR")}
    env.update(VIRTUAL_ENV=str(venv / "venv"), PATH=f"{venv / 'venv' / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}",
               XDG_CACHE_HOME=str(venv / "cache"), RMCP_TEST_INSTALLED="1",
               # no checkout build: the operator must come from the cache
               RMCP_BUILD_DIR=str(venv / "no-build"))
    cache = ccache_dir()
    if cache:
        env["CCACHE_DIR"] = cache
    env.update(extra)
    return env


def test_package_installs_offline_with_its_name_and_the_clis_version(venv):
    """The distribution is rmcp-torch (PyPI's "rmcp" is another project: the newcomer review, finding
    24), its import name rmcp; pip's version and rmcp.__version__ are `rmcp --version`'s."""
    pip = str(venv / "venv" / "bin" / "pip")
    meta = subprocess.run([pip, "show", "rmcp-torch"], capture_output=True, text=True, check=True).stdout
    version = cli_version()
    assert "Name: rmcp-torch\n" in meta and f"Version: {version}\n" in meta, meta
    assert subprocess.run([pip, "show", "rmcp"], capture_output=True).returncode != 0, "no distribution named rmcp"
    imported = subprocess.run([str(venv / "venv" / "bin" / "python"), "-c", "import rmcp; print(rmcp.__version__)"],
                              cwd=venv, env=venv_env(venv), capture_output=True, text=True, check=True).stdout
    assert imported == version + "\n"


def test_operator_tests_pass_in_the_venv_from_outside_the_checkout(venv):
    outside = venv / "elsewhere"
    outside.mkdir()
    tests = REPO / "tests" / "python"
    # The import check first: the package is the venv's, and the operator is built for its torch.
    check = subprocess.run(
        [str(venv / "venv" / "bin" / "python"), "-c",
         "import rmcp, rmcp.torch as rt; print(rmcp.__file__); print(rt.load_extension())"],
        cwd=outside, env=venv_env(venv), capture_output=True, text=True, timeout=600)
    assert check.returncode == 0, check.stderr
    module, library = check.stdout.splitlines()
    assert module.startswith(str(venv / "venv" / "lib"))
    assert library.startswith(str(venv / "cache" / "rmcp" / "torch-ops"))
    assert "rmcp.torch: compiling torch.ops.rmcp.conv for PyTorch" in check.stderr
    # Then the operator's tests, in the venv, reusing the operator just compiled.
    proc = subprocess.run(
        [str(venv / "venv" / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
         f"--rootdir={outside}", str(tests / "test_torch_conv_op.py"), str(tests / "test_torch_fallback.py")],
        cwd=outside, env=venv_env(venv), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "compiling" not in proc.stderr, "the cached operator was compiled again"
    assert " passed" in proc.stdout.splitlines()[-1]

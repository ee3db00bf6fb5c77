"""The installed product, not the checkout: `cmake --install` into a DESTDIR under /usr, then the
installed rmcp run from / without RMCP_DATA_DIR (docs/install.md).

It must find its data as ../share/rmcp beside itself, its allocation tracer in
lib/<multiarch>/rmcp, keep working when the whole tree is moved elsewhere, and the Python
package installed beside it must import with the operator prebuilt for Debian's torch.
"""
from install_support import FIXTURE, LIBDIR, LOG, REPO, destdir, run  # noqa: F401 (destdir is a fixture)
import gzip
import hashlib
import json
import re
import shutil
import subprocess

import pytest


def kb_hash(directory):
    listing = "".join(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}\n"
                      for p in sorted(directory.glob("*.toml"), key=lambda p: p.name.encode()))
    return hashlib.sha256(listing.encode()).hexdigest()[:16]


@pytest.fixture(scope="module")
def usr(destdir):
    return destdir / "usr"


@pytest.fixture(scope="module")
def rmcp_bin(usr):
    return usr / "bin" / "rmcp"


def test_layout(usr):
    expected = [
        "bin/rmcp",
        "share/rmcp/probe/catalogue.toml",
        "share/rmcp/python/rmcp/worker.py",
        "share/rmcp/python/rmcp/torch/__init__.py",
        f"{LIBDIR}/rmcp/librmcp_preload.so",
        "share/man/man1/rmcp.1.gz",
        "share/bash-completion/completions/rmcp",
        "share/zsh/vendor-completions/_rmcp",
        "share/fish/vendor_completions.d/rmcp.fish",
        "share/doc/rmcp/README.md",
        "share/doc/rmcp/copyright",
        "share/doc/rmcp/docs/install.md",
        "lib/python3/dist-packages/rmcp/torch/__init__.py",
        "lib/python3/dist-packages/rmcp/torch/csrc/conv.cpp",
        "lib/python3/dist-packages/rmcp/torch/prebuilt/librmcp_torch_ops.so",
        "lib/python3/dist-packages/rmcp/torch/prebuilt/librmcp_torch_ops.torch-version",
    ]
    missing = [path for path in expected if not (usr / path).is_file()]
    assert not missing
    # The probe's package is the system Python's, shipped once (the newcomer review, finding 27):
    # share/rmcp/python/rmcp is a relative link to lib/python3/dist-packages/rmcp.
    link = usr / "share" / "rmcp" / "python" / "rmcp"
    assert link.is_symlink() and not str(link.readlink()).startswith("/"), link
    assert link.resolve() == (usr / "lib" / "python3" / "dist-packages" / "rmcp").resolve()
    for data in ("kb", "patches", "profiles"):
        shipped = sorted(p.name for p in (REPO / data).rglob("*.toml"))
        assert sorted(p.name for p in (usr / "share" / "rmcp" / data).rglob("*.toml")) == shipped, data


def test_version_is_the_builds(rmcp_bin, tmp_path):
    from install_support import BUILD
    built = (BUILD / "generated" / "version.txt").read_text().strip()
    assert run([rmcp_bin, "--version"], tmp_path, check=0).stdout.decode() == f"rmcp {built}\n"


def test_python_package_has_the_builds_version(usr, tmp_path):
    """rmcp.__version__ of the installed package is `rmcp --version`'s (cmake/Install.cmake writes it)."""
    from install_support import BUILD
    built = (BUILD / "generated" / "version.txt").read_text().strip()
    for site in (usr / "lib" / "python3" / "dist-packages", usr / "share" / "rmcp" / "python"):
        proc = run(["/usr/bin/python3", "-c", "import rmcp; print(rmcp.__version__); print(rmcp.__file__)"], tmp_path,
                   check=0, PYTHONPATH=site)
        assert proc.stdout.decode().splitlines() == [built, str(site / "rmcp" / "__init__.py")]


def test_doctor_from_root_uses_the_installed_data(rmcp_bin, usr, tmp_path):
    proc = run([rmcp_bin, "doctor", "--root", FIXTURE, "--format", "json", "--no-scan"], tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    assert report["findings"], "the fixture has known problems"
    assert report["kb_version"] == kb_hash(usr / "share" / "rmcp" / "kb") == kb_hash(REPO / "kb")


def test_installed_data_wins_over_a_stale_data_dir(rmcp_bin, tmp_path):
    proc = run([rmcp_bin, "doctor", "--root", FIXTURE, "--no-scan"], tmp_path, RMCP_DATA_DIR=tmp_path / "nothing")
    assert proc.returncode in (0, 1), proc.stderr


def test_kb_command_when_there_is_one(rmcp_bin, tmp_path):
    """`rmcp kb list` (another issue's command) once `rmcp help` lists it."""
    listing = run([rmcp_bin, "help"], tmp_path, check=0).stdout.decode()
    if "\n  kb " not in listing:
        pytest.skip("this rmcp has no kb command yet")
    out = run([rmcp_bin, "kb", "list"], tmp_path, check=0).stdout.decode()
    assert "memory-access-fault" in out


def test_explain_a_corpus_log(rmcp_bin, tmp_path):
    proc = run([rmcp_bin, "explain", "--no-facts", "--format", "json", LOG], tmp_path, check=0)
    problems = json.loads(proc.stdout)["problems"]
    assert problems[0]["id"] == "rdna2-miopen-gemm-bwd-fault"


def test_bash_accepts_the_installed_completions(rmcp_bin, usr, tmp_path):
    script = run([rmcp_bin, "completions", "bash"], tmp_path, check=0).stdout
    subprocess.run(["bash", "-n"], input=script, check=True)
    assert (usr / "share" / "bash-completion" / "completions" / "rmcp").read_bytes() == script


def test_installed_man_page(usr, tmp_path):
    page = usr / "share" / "man" / "man1" / "rmcp.1.gz"
    text = gzip.decompress(page.read_bytes()).decode()
    # The .TH line carries the date and the build's own version (issue 30); the checked-in
    # page is compared without it, as tests/cli/test_manpage.py does.
    installed_th, _, installed_body = text.partition("\n")
    checked_th, _, checked_body = (REPO / "docs" / "rmcp.1").read_text().partition("\n")
    assert installed_body == checked_body
    assert installed_th.startswith('.TH RMCP 1 "') and '"rmcp 0.1' in installed_th, installed_th
    if not shutil.which("man"):
        pytest.skip("man is not installed")
    proc = run(["man", "-l", page], tmp_path, check=0, MANWIDTH=80)
    rendered = re.sub(r".\x08", "", proc.stdout.decode())  # overstrike bold and underline
    for section in ("NAME", "SYNOPSIS", "ENVIRONMENT", "FILES", "EXIT STATUS", "EXAMPLES"):
        assert f"\n{section}\n" in rendered, section


def test_trace_alloc_finds_the_installed_shim(rmcp_bin, tmp_path):
    report = tmp_path / "report.json"
    proc = run([rmcp_bin, "run", "--trace-alloc", "--report", report, "--", "/bin/true"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert b"finding allocation tracer" not in proc.stderr


def test_a_moved_tree_keeps_working(usr, tmp_path):
    moved = tmp_path / "elsewhere" / "opt-rmcp"
    shutil.copytree(usr, moved, symlinks=True)
    binary = moved / "bin" / "rmcp"
    assert (moved / "share" / "rmcp" / "python" / "rmcp" / "worker.py").is_file(), "the relative link moves along"
    proc = run([binary, "doctor", "--root", FIXTURE, "--no-scan"], tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    (moved / LIBDIR / "rmcp" / "librmcp_preload.so").unlink()
    proc = run([binary, "run", "--trace-alloc", "--", "/bin/true"], tmp_path, check=3)
    assert str(moved / LIBDIR / "rmcp" / "librmcp_preload.so") in proc.stderr.decode()


def test_probe_runs_the_installed_worker(rmcp_bin, tmp_path):
    catalogue = tmp_path / "catalogue.toml"
    catalogue.write_text('[[family]]\nname = "tiny"\nop = "conv2d"\ninput = [2, 6, 6]\nweight = [2, 2, 3, 3]\n'
                         'batch = [1]\ndirections = ["forward"]\ndtypes = ["float32"]\n')
    proc = run([rmcp_bin, "probe", "--python", "/usr/bin/python3", "--catalogue", catalogue, "--repeat", "1",
                "--warmup", "0", "--format", "json"], tmp_path, check=0)
    assert json.loads(proc.stdout)["passed"] is True


def test_installed_python_package_uses_the_prebuilt_operator(usr, tmp_path):
    """Debian's python3 with the installed package: rmcp.torch finds the operator built for its torch."""
    site = usr / "lib" / "python3" / "dist-packages"
    script = (
        "import rmcp, rmcp.torch as rt, torch\n"
        "print(rmcp.__file__)\n"
        "rt.enable(profile=None, policy='always')\n"
        "x, w = torch.randn(2, 3, 7, 7), torch.randn(4, 3, 3, 3)\n"
        "assert (rt.conv(x, w, None, 1, 1) - torch.nn.functional.conv2d(x, w, None, 1, 1)).abs().max() < 1e-4\n"
        "print(rt.stats()['backend'])\n"
        "print(rt.stats()['backend_detail'])\n")
    proc = run(["/usr/bin/python3", "-c", script], tmp_path, check=0, PYTHONPATH=site)
    module, backend, detail = proc.stdout.decode().splitlines()
    assert module.startswith(str(site))
    assert backend == "compiled"
    assert detail == str(site / "rmcp" / "torch" / "prebuilt" / "librmcp_torch_ops.so")
    assert b"compiling" not in proc.stderr

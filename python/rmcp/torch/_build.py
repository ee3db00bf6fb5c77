"""Finding, or compiling, torch.ops.rmcp.conv for the torch that is running (docs/torch.md).

A C++ extension must be built against the very torch that loads it: libtorch's C++ ABI
changes between versions and builds, and a library linked against another libtorch would
pull that second libtorch into the process. So a library is used only when it was made for
this torch:

1. $RMCP_TORCH_OPS, a path: loaded as it is (the user vouches for it).
2. A prebuilt library whose stamp file (librmcp_torch_ops.torch-version beside it) names
   this torch's version: the checkout's build (<build>/python/, written by CMake) or the one
   installed with the package (rmcp/torch/prebuilt/, the .deb's for Debian's python3-torch).
3. The cache, $XDG_CACHE_HOME/rmcp/torch-ops/<torch version>/ (default ~/.cache): compiled
   there on first use from rmcp/torch/csrc/conv.cpp, with the C++ compiler ($CXX, else c++)
   and the headers this torch ships, and compiled again when the source changes.

Nothing here imports torch.utils.cpp_extension: importing it prints notes about CUDA and
ROCm homes, and it needs ninja; one compiler call and one link are all this file needs.
"""
import contextlib
import fcntl
import hashlib
import os
import pathlib
import shlex
import shutil
import subprocess
import sys
import time

from . import _locate

OPS_LIBRARY_NAME = _locate.OPS_LIBRARY_NAME
STAMP_NAME = "librmcp_torch_ops.torch-version"
SOURCE_STAMP_NAME = "librmcp_torch_ops.source-sha256"
SOURCE = pathlib.Path(__file__).resolve().parent / "csrc" / "conv.cpp"


class ExtensionUnavailable(RuntimeError):
    """The operator cannot be had for this torch (no compiler, no headers, a failed build)."""


def cache_dir(torch_version, environ=os.environ):
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "rmcp" / "torch-ops" / str(torch_version)


def _stamp_matches(library, torch_version):
    try:
        return (library.parent / STAMP_NAME).read_text().strip() == str(torch_version)
    except OSError:
        return False


def prebuilt_candidates():
    """Prebuilt libraries in search order (they still need a matching stamp)."""
    return [_locate.build_dir() / "python" / OPS_LIBRARY_NAME,
            _locate.PACKAGE_DIR / "prebuilt" / OPS_LIBRARY_NAME]


def _source_digest():
    return hashlib.sha256(SOURCE.read_bytes()).hexdigest()


def find_library(torch, compile_missing=True, log=None):
    """The path of a library made for this torch; compiles one into the cache if needed.

    Raises ExtensionUnavailable saying what is missing when there is none and none can be built.
    """
    explicit = os.environ.get("RMCP_TORCH_OPS")
    if explicit:
        return pathlib.Path(explicit)
    version = str(torch.__version__)
    for library in prebuilt_candidates():
        if library.is_file() and _stamp_matches(library, version):
            return library
    target = cache_dir(version) / OPS_LIBRARY_NAME
    if not SOURCE.is_file():
        raise ExtensionUnavailable(f"the operator's source {SOURCE} is missing from the installed package")
    digest = _source_digest()
    if _cached(target, digest):
        return target
    if not compile_missing:
        raise ExtensionUnavailable(f"no operator built for PyTorch {version} (none at {target})")
    return compile_library(torch, target, digest, log=log)


def _cached(target, digest):
    try:
        return target.is_file() and (target.parent / SOURCE_STAMP_NAME).read_text().strip() == digest
    except OSError:
        return False


def _compiler(environ=os.environ):
    """The C++ compiler command (a list), or raises ExtensionUnavailable naming what to install."""
    explicit = environ.get("CXX")
    if explicit:
        words = shlex.split(explicit)
        if words and shutil.which(words[0]):
            return words
        raise ExtensionUnavailable(f"the C++ compiler CXX={explicit!r} was not found")
    for name in ("c++", "g++", "clang++"):
        found = shutil.which(name)
        if found:
            return [found]
    raise ExtensionUnavailable("no C++ compiler found (c++, g++ or clang++ on PATH, or $CXX): install one "
                               "(Debian/Ubuntu: apt install g++) to build torch.ops.rmcp.conv")


def _torch_paths(torch):
    root = pathlib.Path(torch.__file__).resolve().parent
    include = root / "include"
    header = include / "ATen" / "ATen.h"
    if not header.is_file():
        hint = ("Debian's python3-torch keeps them in libtorch-dev: apt install libtorch-dev"
                if str(root).startswith("/usr/lib/python3/") else "reinstall torch with its headers")
        raise ExtensionUnavailable(f"PyTorch {torch.__version__}'s C++ headers are missing ({header} does not "
                                   f"exist; {hint})")
    return [include, include / "torch" / "csrc" / "api" / "include"], root / "lib"


@contextlib.contextmanager
def _locked(directory):
    """One compiler per cache directory: DataLoader workers and DDP ranks wait for the first."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def compile_library(torch, target, digest=None, log=None):
    """Compiles conv.cpp against `torch` into `target` (atomically); returns target."""
    log = log or (lambda message: print(message, file=sys.stderr, flush=True))
    digest = digest or _source_digest()
    compiler = _compiler()
    includes, libdir = _torch_paths(torch)
    directory = target.parent
    with _locked(directory):
        if _cached(target, digest):  # another process built it while this one waited
            return target
        work = directory / f"build-{os.getpid()}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        try:
            # The source is compiled from a copy, by a relative name, in a directory of its own,
            # so that ccache (used when installed) sees the same command for the same torch
            # whatever the cache directory is, and the link, which ccache does not cache, is a
            # second step.
            shutil.copyfile(SOURCE, work / "conv.cpp")
            launcher = [] if os.environ.get("RMCP_TORCH_NO_CCACHE") or not shutil.which("ccache") else ["ccache"]
            abi = int(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True))
            flags = ["-O2", "-std=c++17", "-fPIC", f"-D_GLIBCXX_USE_CXX11_ABI={abi}", "-w"]
            flags += [f"-isystem{path}" for path in includes]
            steps = [
                launcher + compiler + flags + ["-c", "conv.cpp", "-o", "conv.o"],
                compiler + ["-shared", "conv.o", "-o", "out.so", f"-L{libdir}", f"-Wl,-rpath,{libdir}",
                            "-lc10", "-ltorch_cpu", "-ltorch"],
            ]
            log(f"rmcp.torch: compiling torch.ops.rmcp.conv for PyTorch {torch.__version__} into {directory} "
                "(once per torch version; about 20-60 s and 1.5 GB of memory)")
            started = time.monotonic()
            output_log = directory / "build.log"
            with open(output_log, "w") as out:
                for step in steps:
                    out.write("$ " + shlex.join(step) + "\n")
                    out.flush()
                    try:
                        done = subprocess.run(step, cwd=work, stdout=out, stderr=subprocess.STDOUT)
                    except OSError as error:
                        raise ExtensionUnavailable(f"running {step[0]}: {error}") from error
                    if done.returncode != 0:
                        raise ExtensionUnavailable(
                            f"compiling torch.ops.rmcp.conv for PyTorch {torch.__version__} failed (exit "
                            f"{done.returncode}); the compiler's output is in {output_log}")
            (work / STAMP_NAME).write_text(f"{torch.__version__}\n")
            os.replace(work / STAMP_NAME, directory / STAMP_NAME)
            os.replace(work / "out.so", target)
            (directory / SOURCE_STAMP_NAME).write_text(digest + "\n")
            log(f"rmcp.torch: compiled {target} in {time.monotonic() - started:.0f} s")
            return target
        finally:
            shutil.rmtree(work, ignore_errors=True)

"""One way to write an output file (src/core/util/atomic_file.hpp, docs/security.md "Output
files"): only a regular file or a missing path is replaced, through a temporary file created
exclusively in the same directory, fsynced and renamed; a directory, device node, FIFO,
socket or a symbolic link (to anything) is refused (exit 2) and left as it was; a full
disk is exit 3 with the previous file intact and no temporary file left (round 2's D1:
`snapshot -o`, `run --report`, `probe --save/--html` renamed a file over device nodes,
FIFOs and `/dev/stdout`).

WRITERS is one row per option that writes a file the user names; every row meets every kind
of target in TARGETS. A new option is one row."""
import contextlib
import dataclasses
import os
import pathlib
import socket
import stat
import subprocess
from typing import Callable

import pytest

from conftest import FIXTURES, REPO

HEALTHY = FIXTURES / "rx7900xtx-healthy"
PYTHON = "/usr/bin/python3"
PREVIOUS = b"previous content\n"
TINY_CATALOGUE = ('[[family]]\nname = "tiny"\nop = "conv2d"\ninput = [2, 4, 4]\nweight = [2, 2, 3, 3]\n'
                  'padding = [1, 1]\nbatch = [1]\ndirections = ["forward"]\ndtypes = ["float32"]\n')


@dataclasses.dataclass
class Writer:
    name: str
    argv: Callable  # (target path, helper files) -> arguments
    file_name: str = "out.file"  # the target's name (kb render: a page it writes in its directory)
    append: bool = False  # run --log appends; the others replace the file
    probe: bool = False  # needs a PyTorch run (a few seconds) for the kinds it writes
    needs_result: bool = False  # reads a saved probe result
    full_disk_code: int = 3


def probe_args(helpers, *extra):
    return ["probe", "--python", PYTHON, "--catalogue", helpers["catalogue"], "--repeat", "1", "--warmup", "0",
            *extra]


WRITERS = [
    Writer("snapshot -o", lambda t, h: ["--root", HEALTHY, "snapshot", "-o", t]),
    Writer("doctor -o", lambda t, h: ["--root", HEALTHY, "doctor", "--format", "prometheus", "-o", t]),
    Writer("doctor -o (text)", lambda t, h: ["--root", HEALTHY, "doctor", "-o", t]),
    Writer("run --report", lambda t, h: ["--root", HEALTHY, "run", "--report", t, "--", "true"]),
    # A failed append is a warning and the run goes on (docs/run.md): the child's exit code.
    Writer("run --log", lambda t, h: ["--root", HEALTHY, "run", "--log", t, "--", "echo", "logged"], append=True,
           full_disk_code=0),
    Writer("kb render -o", lambda t, h: ["--format", "markdown", "kb", "render", "-o", os.path.dirname(t)],
           file_name="index.md"),
    Writer("probe report --html", lambda t, h: ["probe", "report", h["result"], "--html", t], needs_result=True),
    Writer("probe --html", lambda t, h: probe_args(h, "--html", t), probe=True),
    Writer("probe --save", lambda t, h: probe_args(h, "--allow-cpu", "--save", t), probe=True),
]


def need_root(why):
    if os.geteuid() != 0:
        pytest.skip(f"SKIPPED VISIBLY: {why} needs root; run the hostile suite as root")


# Each kind: how to make it at `path`, and whether a write must succeed there.
def make_missing(path, tmp, keep):
    pass


def make_regular(path, tmp, keep):
    path.write_bytes(PREVIOUS)
    path.chmod(0o640)


def make_directory(path, tmp, keep):
    path.mkdir()


def make_fifo(path, tmp, keep):
    os.mkfifo(path)


def make_char_device(path, tmp, keep):
    need_root("mknod")
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a copy of /dev/null


def make_link_to_device(path, tmp, keep):
    path.symlink_to("/dev/null")  # replacing it would replace the link, never /dev/null itself


def make_link_to_stdout(path, tmp, keep):
    path.symlink_to("/proc/self/fd/1")  # how /dev/stdout is made


def make_link_to_regular(path, tmp, keep):
    (tmp / "elsewhere").write_bytes(PREVIOUS)
    path.symlink_to(tmp / "elsewhere")


def make_dangling_link(path, tmp, keep):
    path.symlink_to(tmp / "nothing-here")


def make_socket(path, tmp, keep):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    keep.append(sock)  # closed by the test: the socket file stays bound meanwhile


TARGETS = {
    "missing": (make_missing, True),
    "regular file": (make_regular, True),
    "link to a regular file": (make_link_to_regular, False),
    "directory": (make_directory, False),
    "FIFO": (make_fifo, False),
    "character device": (make_char_device, False),
    "link to /dev/null": (make_link_to_device, False),
    "link to /proc/self/fd/1": (make_link_to_stdout, False),
    "dangling link": (make_dangling_link, False),
    "socket": (make_socket, False),
}


def describe(path):
    """What is at path, links not followed: enough to tell it was not replaced."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return ("link", os.readlink(path))
    if stat.S_ISREG(st.st_mode):
        return ("file", path.read_bytes(), stat.S_IMODE(st.st_mode))
    if stat.S_ISDIR(st.st_mode):
        return ("dir", sorted(os.listdir(path)))
    return (stat.S_IFMT(st.st_mode), st.st_rdev, st.st_ino)


@pytest.fixture(scope="module")
def helpers(rmcp, tmp_path_factory):
    where = tmp_path_factory.mktemp("writers")
    catalogue = where / "catalogue.toml"
    catalogue.write_text(TINY_CATALOGUE)
    return {"catalogue": catalogue, "where": where}


def saved_result(rmcp, helpers):
    if "result" not in helpers:
        proc = rmcp(*probe_args(helpers, "--format", "json"), timeout=120)
        if proc.returncode == 3:
            pytest.skip(f"SKIPPED VISIBLY: no PyTorch for probe: {proc.stderr.decode()[-300:]}")
        assert proc.returncode == 0, proc.stderr
        helpers["result"] = helpers["where"] / "result.json"
        helpers["result"].write_bytes(proc.stdout)
    return helpers["result"]


def run_writer(rmcp, writer, target, helpers, tmp_path):
    if writer.needs_result:
        saved_result(rmcp, helpers)
    env = {"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
           "XDG_CACHE_HOME": str(tmp_path / "cache")}
    # A FIFO must not hang rmcp: the timeout fails the test instead of blocking the suite.
    return rmcp(*writer.argv(target, helpers), env=env, timeout=120)


def temporaries(directory):
    return [n for n in os.listdir(directory) if ".rmcp-tmp-" in n]


@pytest.mark.parametrize("kind", list(TARGETS))
@pytest.mark.parametrize("writer", WRITERS, ids=[w.name for w in WRITERS])
def test_every_writer_against_every_kind_of_target(rmcp, helpers, tmp_path, writer, kind):
    make, writable = TARGETS[kind]
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    keep = []
    target = out_dir / writer.file_name
    make(target, out_dir, keep)
    before = describe(target) if kind != "missing" else None
    elsewhere = describe(out_dir / "elsewhere") if (out_dir / "elsewhere").exists() else None

    proc = run_writer(rmcp, writer, str(target), helpers, tmp_path)

    stderr = proc.stderr.decode()
    if writable:
        assert proc.returncode in (0, 1), (proc.returncode, stderr)  # probe: 1 when a scenario fails
        assert not target.is_symlink() and target.is_file()
        content = target.read_bytes()
        if writer.append:
            assert content.endswith(b"logged\n") and (kind == "missing" or content.startswith(PREVIOUS))
        else:
            assert content and content != PREVIOUS
        if kind == "regular file":
            assert stat.S_IMODE(os.stat(target).st_mode) == 0o640, "the file keeps its permission bits"
    else:
        assert proc.returncode == 2, (proc.returncode, stderr)
        # probe keeps its own wording for a directory ("is a directory; name a file").
        assert "not a regular file" in stderr or "is a directory; name a file" in stderr, stderr
        assert str(target) in stderr, stderr
        assert describe(target) == before, "the target was replaced"
    if elsewhere is not None:
        assert describe(out_dir / "elsewhere") == elsewhere, "the file a link led to is untouched"
    assert temporaries(out_dir) == []
    for sock in keep:
        sock.close()


@contextlib.contextmanager
def full_tmpfs(path):
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0755", "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


@pytest.mark.parametrize("writer", WRITERS, ids=[w.name for w in WRITERS])
def test_a_full_disk_leaves_the_previous_file(rmcp, helpers, tmp_path, writer):
    """`doctor --format prometheus > f.tmp && mv f.tmp f.prom` replaced a good file with an
    empty one on a full disk (D8); -o and every other writer keep the previous file."""
    need_root("mounting a small tmpfs")
    with full_tmpfs(tmp_path / "full") as fs:
        target = fs / writer.file_name
        # A whole page: an append (run --log) needs a new one, which the full disk refuses.
        previous = PREVIOUS * (4096 // len(PREVIOUS)) + b"\n" * (4096 % len(PREVIOUS))
        target.write_bytes(previous)
        filler = fs / "filler"
        with open(filler, "wb", buffering=0) as f:
            with contextlib.suppress(OSError):
                while True:
                    f.write(b"x" * 4096)
            with contextlib.suppress(OSError):
                while True:
                    f.write(b"x")  # the last partial block too
        proc = run_writer(rmcp, writer, str(target), helpers, tmp_path)
        stderr = proc.stderr.decode()
        assert proc.returncode == writer.full_disk_code, (proc.returncode, stderr)
        assert "No space left on device" in stderr, stderr
        assert target.read_bytes() == previous
        assert temporaries(fs) == []


def test_dash_is_standard_output_only_where_it_makes_sense(rmcp, tmp_path, monkeypatch):
    """`-o -` made a file named `-` (D1). doctor and snapshot write to stdout; options whose
    stdout carries something else refuse it; a file named - is ./-."""
    monkeypatch.chdir(tmp_path)
    proc = rmcp("--root", HEALTHY, "doctor", "--format", "prometheus", "-o", "-", check=0)
    assert b"rmcp_last_run_timestamp_seconds" in proc.stdout
    proc = rmcp("--root", HEALTHY, "snapshot", "-o", "-", check=0)
    assert proc.stdout[:2] == b"\x1f\x8b"
    proc = rmcp("--root", HEALTHY, "run", "--report", "-", "--", "true", env={"HOME": str(tmp_path)})
    assert proc.returncode == 2 and b"not standard output" in proc.stderr
    rmcp("--root", HEALTHY, "doctor", "-o", "./-", check=0)
    assert (tmp_path / "-").is_file()
    assert sorted(os.listdir(tmp_path)) == ["-"]


# The writers that open a --root, where the test-only pause before the rename is honoured
# (kb render and probe report open none; the writer they share is util/atomic_file.cpp, whose
# unit test AtomicFile.TemporaryFileOfANamedOutputIsHidden covers it).
HIDDEN_TEMP_WRITERS = [w for w in WRITERS if not w.probe and not w.append and not w.needs_result
                       and w.name != "kb render -o"]


@pytest.mark.parametrize("writer", HIDDEN_TEMP_WRITERS, ids=[w.name for w in HIDDEN_TEMP_WRITERS])
def test_temporary_file_is_hidden_while_it_is_written(rmcp, helpers, tmp_path, writer):
    """Issue 32: NFD reads every file of features.d that is not hidden, and watches the
    directory with inotify, so a visible temporary file (`rmcp.rmcp-tmp-XXXXXX`) was read
    half-written. Paused before its rename (the test-only delay, honoured under --root), every
    writer's temporary file is a dot file."""
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    target = out_dir / writer.file_name
    argv = [str(a) for a in writer.argv(str(target), helpers)]
    assert "--root" in argv
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1", "RMCP_DATA_DIR": str(REPO),
           "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CACHE_HOME": str(tmp_path / "c"),
           "RMCP_TEST_DELAY_AT": "rename:400"}
    proc = subprocess.Popen([str(rmcp.binary), *argv], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen = set()
    while proc.poll() is None:
        seen.update(temporaries(out_dir))
    stderr = proc.stderr.read().decode()
    assert proc.returncode in (0, 1), (proc.returncode, stderr)
    assert seen, "no temporary file was seen during the pause before the rename"
    assert all(name.startswith(".") for name in seen), seen
    assert not temporaries(out_dir)

"""The transcripts of tests/transcripts/: the list, and how each is made.

One definition for the writer (scripts/regen-transcripts.sh) and the check
(tests/cli/test_transcripts.py). A transcript is the command line as typed, then exactly what
rmcp prints on stdout for it, in a fixed environment: an 80-column UTF-8 terminal without
colour, this checkout's data (kb, patches, profiles), no user configuration.
"""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DIR = REPO / "tests" / "transcripts"

# (file stem, fixture, arguments after `rmcp --root tests/fixtures/FIXTURE`): the six machines
# of issue 30's first screen, one per situation a newcomer arrives with.
TRANSCRIPTS = [
    ("doctor-healthy", "rx7900xtx-healthy", ["doctor"]),
    ("doctor-rdna1", "rx5600xt-gfx1010-rocm52", ["doctor"]),
    ("doctor-rdna2-override", "rx6600-gfx1032", ["doctor"]),
    ("doctor-igpu-dgpu", "desktop-igpu-dgpu", ["doctor"]),
    ("doctor-no-gpu", "no-amdgpu", ["doctor"]),
    ("doctor-broken-driver", "kb-amdgpu-not-live", ["doctor"]),
]


def environment(tmp_home):
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_home),
        "LANG": "C.UTF-8",
        "COLUMNS": "80",
        "NO_COLOR": "1",
        "RMCP_DATA_DIR": str(REPO),
        "XDG_CONFIG_HOME": str(Path(tmp_home) / "config"),
        "XDG_STATE_HOME": str(Path(tmp_home) / "state"),
        "XDG_CACHE_HOME": str(Path(tmp_home) / "cache"),
    }


def command_line(fixture, args):
    return ["rmcp", "--root", f"tests/fixtures/{fixture}", *args]


def render(rmcp, fixture, args, tmp_home):
    """The transcript text: '$ ' and the command, then stdout exactly."""
    argv = command_line(fixture, args)
    done = subprocess.run([str(rmcp), *argv[1:]], cwd=REPO, env=environment(tmp_home), capture_output=True,
                          text=True, timeout=60)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr}")
    return "$ " + " ".join(argv) + "\n" + done.stdout


def main():
    import tempfile
    if len(sys.argv) != 3 or sys.argv[1] != "--write":
        sys.exit("usage: transcripts.py --write RMCP")
    rmcp = Path(sys.argv[2]).resolve()
    DIR.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        for stem, fixture, args in TRANSCRIPTS:
            (DIR / f"{stem}.txt").write_text(render(rmcp, fixture, args, home))
            print(f"wrote tests/transcripts/{stem}.txt")


if __name__ == "__main__":
    main()

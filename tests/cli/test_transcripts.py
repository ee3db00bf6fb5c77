"""The first screen a person sees (issue 30): tests/transcripts/ equal what the built binary
prints on an 80-column terminal, each doctor transcript fits 24 lines and 80 columns, and
a machine with something open shows the command to run next on that screen.

Regenerate with scripts/regen-transcripts.sh; the list lives in tests/cli/transcripts.py.
"""

import json
import subprocess

import pytest

from conftest import BUILD
import transcripts

SCREEN_LINES = 24
SCREEN_COLUMNS = 80


@pytest.mark.parametrize("stem,fixture,args", transcripts.TRANSCRIPTS, ids=[t[0] for t in transcripts.TRANSCRIPTS])
def test_transcript_is_what_rmcp_prints(tmp_path, stem, fixture, args):
    expected = (transcripts.DIR / f"{stem}.txt").read_text()
    got = transcripts.render(BUILD / "rmcp", fixture, args, tmp_path)
    assert got == expected, f"tests/transcripts/{stem}.txt is stale: run scripts/regen-transcripts.sh and review"


@pytest.mark.parametrize("stem,fixture,args", [t for t in transcripts.TRANSCRIPTS if t[2][0] == "doctor"],
                         ids=[t[0] for t in transcripts.TRANSCRIPTS if t[2][0] == "doctor"])
def test_doctor_first_screen_fits_and_says_what_next(tmp_path, stem, fixture, args):
    lines = (transcripts.DIR / f"{stem}.txt").read_text().splitlines()[1:]  # without the "$ command" line
    assert len(lines) <= SCREEN_LINES, f"{stem}: {len(lines)} lines"
    done = subprocess.run([str(BUILD / "rmcp"), "--root", f"tests/fixtures/{fixture}", "--format", "json", *args],
                          cwd=transcripts.REPO, env=transcripts.environment(tmp_path), capture_output=True,
                          text=True, timeout=60)
    report = json.loads(done.stdout)
    # A command to paste stays on one line whatever its length (without its "  # comment");
    # every other line wraps.
    commands = {line.split("  # ")[0].rstrip() for step in report["next_steps"] for line in step["next"].splitlines()}
    too_wide = [l for l in lines if len(l) > SCREEN_COLUMNS and l.strip().removeprefix("1. ").removeprefix("2. ")
                .removeprefix("3. ") not in commands]
    assert not too_wide, f"{stem}: lines over {SCREEN_COLUMNS} columns: {too_wide}"
    summary = next(l for l in lines if l.startswith("rmcp doctor: "))
    if report["next_steps"]:
        heading = next(i for i, l in enumerate(lines) if l.startswith("Next step"))
        assert lines[heading + 1] == "  1. " + report["next_steps"][0]["next"].splitlines()[0].split("  # ")[0].rstrip()
    else:
        assert summary.startswith("rmcp doctor: nothing open") or "No command fixes" in "\n".join(lines), stem

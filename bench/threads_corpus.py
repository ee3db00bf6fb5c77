"""The public threads rmcp knows (threads/threads.toml, threads/README.md), read once for the
accuracy script, the wrapped-log script and the real-log tests: the same records rmcp indexes
for its similar public reports (src/core/similar/).

    rows()        one dict per record, with "file" (its excerpt under threads/excerpts/); the
                  machine facts the thread states are gpu, gfx_target, rocm, torch, overrides
                  and kernel (the last two written by bench/threads_facts.py)
    split_for()   the frozen split of a thread, a function of its address alone
"""
import hashlib
import pathlib
import re
import tomllib

REPO = pathlib.Path(__file__).resolve().parents[1]
THREADS = REPO / "threads"
RECORDS = THREADS / "threads.toml"
EXCERPTS = THREADS / "excerpts"
VALIDATION_PERCENT = 35  # of threads, by URL hash: at least 30% in expectation and in fact (checked)

# ROCm/ROCm's issues were first recorded under github.com/ROCm/legacy-rocm-build/issues/N (the
# address the search index stored them under, same numbers), and the split was frozen on that
# address before any result was seen. The records now give the address users know; the split
# key stays the one it was frozen on, so that no thread changes split.
_ROCM_ISSUE = re.compile(r"^https://github\.com/ROCm/ROCm/issues/(\d+)$")


def split_key(url):
    m = _ROCM_ISSUE.match(url)
    return f"https://github.com/ROCm/legacy-rocm-build/issues/{m.group(1)}" if m else url


def split_for(url):
    """The frozen split of a thread: a hash of its URL, never of anything rmcp says about it."""
    key = split_key(url)
    return "validation" if int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % 100 < VALIDATION_PERCENT else "dev"


def rows(path=RECORDS):
    out = []
    for t in tomllib.loads(pathlib.Path(path).read_text())["thread"]:
        r = dict(t)
        r["file"] = t["excerpt"]
        r.setdefault("clean", False)
        out.append(r)
    return out

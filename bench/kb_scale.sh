#!/bin/sh
# How `rmcp explain` scales with the size of the knowledge base, and what the compiled-
# database cache (src/core/explain/db_cache.hpp) saves.
#
#   bench/kb_scale.sh [ENTRIES]        (default 1000 entries x 10 signatures = 10,000)
#
# Writes two synthetic knowledge bases under /tmp (never committed), each of ENTRIES files
# with 10 signatures and two context words each:
#   regex:  every signature a regular expression ('W1 W2 error ENNNNN at 0x[0-9a-f]+ \(code [0-9]+\)')
#   mixed:  two in ten regular expressions, the rest literal phrases (like the shipped kb)
# and times, for each, with an empty cache directory then with the cache filled:
#   rmcp --kb KB doctor --no-scan      (loading and checking the kb only: no compile)
#   rmcp --kb KB explain --no-facts    (load + compile, or load + read the cached database)
# Figures go to docs/PERFORMANCE.md by hand, with the machine they were taken on.
set -eu
cd "$(dirname "$0")/.."
ENTRIES=${1:-1000}
RMCP=${RMCP:-build/rmcp}
[ -x "$RMCP" ] || { echo "build $RMCP first" >&2; exit 2; }
WORK=${WORK:-/tmp/rmcp-kb-scale}
rm -rf "$WORK" && mkdir -p "$WORK"

/usr/bin/python3 - "$WORK" "$ENTRIES" <<'PYEOF'
import pathlib, sys
work, entries = pathlib.Path(sys.argv[1]), int(sys.argv[2])
words = ["device", "kernel", "queue", "buffer", "stream", "fence", "ring", "page", "fault", "timeout"]
for kind in ("regex", "mixed"):
    kb = work / kind
    kb.mkdir()
    for e in range(entries):
        body = [f'id = "synthetic-{e:05d}"', f'title = "t{e}"', 'category = "config-risk"', 'severity = "info"',
                'confidence = "hypothesis"', 'summary = "s"', 'references = ["https://example.org/"]']
        for s in range(10):
            w1, w2 = words[(e + s) % 10], words[(e * 7 + s) % 10]
            if kind == "regex" or s in (0, 5):
                pattern = f"{w1} {w2} error E{e:05d}{s} at 0x[0-9a-f]+ \\(code [0-9]+\\)"
            else:
                pattern = f"{w1} {w2} error E{e:05d}{s} failed"
            body += ["", "[[signatures]]", f"pattern = '{pattern}'", f'context = ["{w2}", "retry"]', "window = 5"]
        (kb / f"synthetic-{e:05d}.toml").write_text("\n".join(body) + "\n")
(work / "log").write_text("queue timeout error E000001 failed\n")
PYEOF

secs() { /usr/bin/time -f %e "$@" 2>&1 >/dev/null | tail -1; }
for kind in regex mixed; do
    export XDG_CACHE_HOME="$WORK/cache-$kind"
    load=$(secs "$RMCP" --kb "$WORK/$kind" doctor --no-scan --root tests/fixtures/no-amdgpu || true)
    cold=$(secs "$RMCP" --kb "$WORK/$kind" explain --no-facts "$WORK/log" || true)
    warm=$(secs "$RMCP" --kb "$WORK/$kind" explain --no-facts "$WORK/log" || true)
    size=$(du -b "$XDG_CACHE_HOME"/rmcp/*.hsdb 2>/dev/null | cut -f1 || echo 0)
    echo "$kind: $((ENTRIES * 10)) signatures: load+check ${load} s; explain ${cold} s compiling, ${warm} s from the cache (${size:-0} bytes)"
done

#!/bin/sh
# Throughput of `rmcp explain` against ripgrep searching the same knowledge-base patterns.
#
#   cmake --preset release && cmake --build build-release --target rmcp
#   bench/explain_throughput.sh [SIZE_MB]          (default 1024)
#
# Generates a training log of SIZE_MB under /tmp (never committed): millions of normal
# lines (progress bars, loss lines, warnings) with a handful of real crash lines spread
# through it, then times, with hyperfine (warm page cache, medians):
#   rmcp explain --no-facts LOG            (all signatures + context words, one Hyperscan DB)
#   rg -c -e P1 -e P2 ... LOG              (the same signature patterns, no context words)
#   $RMCP_BEFORE explain --no-facts LOG    (optional: an older build with its own kb, side by side,
#                                           e.g. RMCP_BEFORE=/tmp/before/build-release/rmcp)
# and prints both wall-clock medians and CPU (user+sys) means, GB/s and the ratios: on a
# shared, overloaded machine the CPU time is the steadier figure. With RMCP_BEFORE it then runs
# the two builds in turn, PAIRS times (default 20), and prints the median of the per-pair ratios:
# hyperfine runs one command's batch after the other's, so a noisy minute lands on one side, while
# a pair shares its minute. Figures go to docs/PERFORMANCE.md by hand, with the machine they were
# taken on.
set -eu
cd "$(dirname "$0")/.."
SIZE_MB=${1:-1024}
RMCP=${RMCP:-build-release/rmcp}
LOG=${LOG:-/tmp/rmcp-explain-bench-${SIZE_MB}M.log}
RUNS=${RUNS:-5}
[ -x "$RMCP" ] || { echo "build $RMCP first (cmake --preset release)" >&2; exit 2; }
command -v rg >/dev/null || { echo "install ripgrep (apt-get install ripgrep)" >&2; exit 2; }
command -v hyperfine >/dev/null || { echo "install hyperfine (apt-get install hyperfine)" >&2; exit 2; }

if [ ! -s "$LOG" ]; then
    /usr/bin/python3 - "$LOG" "$SIZE_MB" <<'EOF'
import random, sys
path, size = sys.argv[1], int(sys.argv[2]) << 20
rng = random.Random(1)
def block(n):
    out = []
    for i in range(n):
        k = rng.random()
        if k < 0.6:
            out.append(f"[2024-03-12 10:{i % 60:02d}:{rng.random() * 60:06.3f}] INFO  step {i} loss={rng.random():.4f} "
                       f"lr=1e-4 grad_norm={rng.random() * 3:.3f} tokens/s={rng.randint(9000, 11000)}")
        elif k < 0.8:
            out.append("\r".join(f"Epoch 3: {p:3d}%|{'#' * (p // 10):<10}| {p * 4}/400 [00:{p % 60:02d}<00:10, 7.{p % 10}it/s]"
                                 for p in range(0, 101, 20)))
        elif k < 0.9:
            out.append(f"{rng.choice(['/usr/lib/python3/dist-packages/torch/nn/modules/conv.py:459', 'train.py:88'])}: "
                       "UserWarning: Applied workaround for CuDNN issue, install nvrtc.so (Triggered internally)")
        else:
            out.append(f"  File \"/home/ana/src/train.py\", line {rng.randint(1, 400)}, in forward: x = self.conv{rng.randint(1, 9)}(x)")
    return ("\n".join(out) + "\n").encode()
blocks = [block(20000) for _ in range(8)]
hits = [b"Memory access fault by GPU node-1 (Agent handle: 0x5581f0c0a0b0) on address 0x7f4e8c200000. Reason: Page not present or supervisor privilege.\n",
        b"RuntimeError: HIP error: invalid device function\n",
        b"torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB\n",
        b"HW Exception by GPU node-1 (Agent handle: 0x55b3f25e3d50) reason :GPU Hang\n"]
written = 0
with open(path, "wb") as f:
    i = 0
    while written < size:
        b = blocks[i % len(blocks)]
        f.write(b); written += len(b); i += 1
        if i % 25 == 0:
            h = hits[(i // 25) % len(hits)]
            f.write(h); written += len(h)
print(f"wrote {written} bytes to {path}", file=sys.stderr)
EOF
fi

# The signature patterns of every kb entry, as rg arguments.
PATTERNS=$(mktemp)
trap 'rm -f "$PATTERNS"' EXIT
/usr/bin/python3 - "$PATTERNS" <<'EOF'
import glob, re, sys, tomllib
pats = [s["pattern"] for f in sorted(glob.glob("kb/*.toml")) for s in tomllib.load(open(f, "rb")).get("signatures", [])]
# rg matches line by line unless -U (which reads differently and would change what rg's time
# means): a pattern that spans lines (it names \n) stays with rmcp only, and is counted.
single = [p for p in pats if "\\n" not in re.sub(r"\[\^[^\]]*\]", "", p)]  # [^...\n] never matches \n
open(sys.argv[1], "w").write("\n".join(single) + "\n")
print(f"{len(pats)} signature patterns ({len(pats) - len(single)} spanning lines, not given to rg)", file=sys.stderr)
EOF

BYTES=$(stat -c %s "$LOG")
LINES=$(wc -l < "$LOG")
echo "log: $LOG, $BYTES bytes, $LINES lines" >&2
echo "rg matching lines: $(rg -c -f "$PATTERNS" "$LOG")" >&2
JSON=$(mktemp)
set -- "$RMCP explain --no-facts $LOG" "rg -c -f $PATTERNS $LOG"
[ -n "${RMCP_BEFORE:-}" ] && set -- "$@" "$RMCP_BEFORE explain --no-facts $LOG"
hyperfine --warmup 1 --runs "$RUNS" -N --export-json "$JSON" "$@" >&2
/usr/bin/python3 - "$JSON" "$BYTES" <<'EOF'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
size = int(sys.argv[2])
m = [r["median"] for r in res]
c = [r["user"] + r["system"] for r in res]
for r, cpu in zip(res, c):
    print(f"{r['command'].split()[0]:<28} wall median {r['median']:.3f} s ({size / r['median'] / 1e9:.2f} GB/s), "
          f"min {r['min']:.3f} max {r['max']:.3f}; CPU user+sys mean {cpu:.3f} s ({size / cpu / 1e9:.2f} GB/s)")
print(f"ratio rmcp/rg: wall {m[0] / m[1]:.2f}, CPU {c[0] / c[1]:.2f} (below 1: rmcp faster)")
if len(res) > 2:
    print(f"ratio rmcp/before: wall {m[0] / m[2]:.3f}, CPU {c[0] / c[2]:.3f} (above 1: slower than before)")
EOF
rm -f "$JSON"

if [ -n "${RMCP_BEFORE:-}" ]; then
    /usr/bin/python3 - "$RMCP" "$RMCP_BEFORE" "$LOG" "${PAIRS:-20}" <<'EOF'
import os, statistics, subprocess, sys, time
after, before, log, pairs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def run(binary):
    r0, t0 = os.times(), time.perf_counter()
    subprocess.run([binary, "explain", "--no-facts", log], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    r1, t1 = os.times(), time.perf_counter()
    return t1 - t0, (r1.children_user - r0.children_user) + (r1.children_system - r0.children_system)
run(after), run(before)  # warm-up
wall, cpu = [], []
for i in range(pairs):
    # Alternate which build goes first, so neither always runs right after the other.
    if i % 2 == 0:
        a = run(after); b = run(before)
    else:
        b = run(before); a = run(after)
    wall.append(a[0] / b[0])
    cpu.append(a[1] / b[1])
print(f"{pairs} pairs in turn, ratio rmcp/before: wall median {statistics.median(wall):.3f} "
      f"(min {min(wall):.3f} max {max(wall):.3f}), CPU median {statistics.median(cpu):.3f} "
      f"(min {min(cpu):.3f} max {max(cpu):.3f})")
EOF
fi

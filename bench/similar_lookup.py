#!/usr/bin/python3
"""Cost of the similar-reports lookup (issue 31; docs/PERFORMANCE.md, "Similar public reports").

    RMCP_DATA_DIR=$PWD /usr/bin/python3 bench/similar_lookup.py [--rmcp build/rmcp] [--runs 21]

Builds a 1 MiB log (the throughput benchmark's kind of normal lines, then a real excerpt of
threads/ so that explain recognises it and looks its error lines up) under /tmp, then runs
`rmcp explain --no-facts --similar 3 LOG` and `... --similar 0 LOG` in turn and prints both
medians and the median of the per-pair differences: the lookup's cost.
"""
import argparse
import os
import pathlib
import random
import statistics
import subprocess
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]


def make_log(path, size=1 << 20):
    rng = random.Random(1)
    tail = (REPO / "threads" / "excerpts" / "gpu-hang--rocm-5443.log").read_bytes()
    lines, total = [], 0
    while total < size - len(tail) - 200:
        line = (f"[2024-03-12 10:{len(lines) % 60:02d}:{rng.random() * 60:06.3f}] INFO  step {len(lines)} "
                f"loss={rng.random():.4f} lr=1e-4 grad_norm={rng.random() * 3:.3f}\n").encode()
        lines.append(line)
        total += len(line)
    path.write_bytes(b"".join(lines) + tail)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rmcp", default=str(REPO / "build" / "rmcp"))
    ap.add_argument("--runs", type=int, default=21)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="rmcp-similar-lookup-") as tmp:
        log = pathlib.Path(tmp) / "train.log"
        make_log(log)
        env = dict(os.environ, NO_COLOR="1", XDG_CACHE_HOME=tmp)
        env.setdefault("RMCP_DATA_DIR", str(REPO))

        def once(k):
            t = time.perf_counter()
            subprocess.run([args.rmcp, "explain", "--no-facts", "--similar", str(k), str(log)],
                           stdout=subprocess.DEVNULL, env=env, check=False)
            return time.perf_counter() - t
        once(3), once(0)  # the compiled-database cache and the index, filled
        on, off = [], []
        for _ in range(args.runs):
            on.append(once(3))
            off.append(once(0))
        diff = statistics.median(a - b for a, b in zip(on, off))
        print(f"{log.stat().st_size} bytes: with the lookup {statistics.median(on) * 1000:.1f} ms, "
              f"--similar 0 {statistics.median(off) * 1000:.1f} ms, lookup {diff * 1000:.1f} ms "
              f"(median of {args.runs} per-pair differences)")


if __name__ == "__main__":
    main()

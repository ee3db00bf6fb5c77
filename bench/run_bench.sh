#!/usr/bin/env bash
# Whole-command benchmarks of `rmcp run` against the bare command (docs/PERFORMANCE.md,
# "rmcp run"). Usage: bench/run_bench.sh [BUILD_DIR] [SIZE_MB]. Needs hyperfine.
# Data is generated under /tmp and removed afterwards; results are medians from hyperfine.
# Build the release preset first (cmake --preset release && cmake --build build-release):
# it has bench/relay_floor, the reference observer.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
mb=${2:-1024}
rmcp="$(cd "$build" && pwd)/rmcp"
export RMCP_DATA_DIR=$PWD
work=$(mktemp -d /tmp/rmcp-run-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

head -c "${mb}M" /dev/urandom > "$work/random.bin"
# yes dies of SIGPIPE when head has enough: not a failure.
{ yes "epoch 1 step 100 loss 0.6931 lr 0.001 throughput 1234.5 samples/s [########      ] 57%" || true; } |
  head -c "${mb}M" > "$work/log.txt"
mkdir "$work/empty-kb"

median() {  # hyperfine JSON -> one line per command: median, min, user, sys
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    ms = lambda v: v * 1000
    print("{}\tmedian {:.1f} ms\tmin {:.1f} ms\tuser {:.0f} ms\tsys {:.0f} ms".format(
        r["command"], ms(r["median"]), ms(r["min"]), ms(r["user"]), ms(r["system"])))
PY
}

echo "== start-up: true vs rmcp run -- true"
hyperfine -N -w 10 -r 100 --export-json "$work/startup.json" \
  "true" "$rmcp --version" "$rmcp run -- true" >/dev/null 2>&1
median "$work/startup.json"

floor="$(cd "$build" && pwd)/bench/relay_floor"  # the cheapest observer: bench/relay_floor.cpp
for data in random.bin log.txt; do
  echo "== throughput, $data (${mb} MiB) to /dev/null"
  # Bare `cat` to /dev/null moves each byte once (page cache -> its buffer; the write is
  # discarded). relay_floor is what any observer costs at least: the child writes into a
  # pipe and the bytes are spliced away unseen.
  hyperfine -N -w 1 -r 9 --output=null --export-json "$work/null.json" \
    "cat $work/$data" "$floor cat $work/$data" "$rmcp run -- cat $work/$data" \
    "$rmcp --kb $work/empty-kb run -- cat $work/$data" >/dev/null 2>&1
  median "$work/null.json"
  echo "== throughput, $data (${mb} MiB) to a pipe (| cat > /dev/null)"
  hyperfine -w 1 -r 9 --export-json "$work/pipe.json" \
    "cat $work/$data | cat >/dev/null" "$floor cat $work/$data | cat >/dev/null" \
    "$rmcp run -- cat $work/$data | cat >/dev/null" >/dev/null 2>&1
  median "$work/pipe.json"
  echo "== throughput, $data (${mb} MiB) to a file (> FILE; bare cat uses copy_file_range)"
  hyperfine -w 1 -r 9 --export-json "$work/file.json" \
    "cat $work/$data > $work/out" "$floor cat $work/$data > $work/out" \
    "$rmcp run -- cat $work/$data > $work/out" >/dev/null 2>&1
  median "$work/file.json"
  rm -f "$work/out"
done

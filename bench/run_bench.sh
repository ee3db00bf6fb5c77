#!/usr/bin/env bash
# Whole-command benchmarks of `rmcp run` against the bare command (docs/PERFORMANCE.md,
# "rmcp run"). Usage: bench/run_bench.sh [BUILD_DIR] [SIZE_MB]. Needs hyperfine.
# Data is generated under /tmp and removed afterwards; results are medians from hyperfine.
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

for data in random.bin log.txt; do
  echo "== throughput, $data (${mb} MiB) to /dev/null"
  # The last command is the plainest pipe-based observer: cat writing into an ordinary
  # shell pipe whose reader only reads (1 MiB blocks) and discards. Bare `cat` to /dev/null
  # has no pipe at all; anything that sees the bytes has one.
  hyperfine -N -w 1 -r 7 --output=null --export-json "$work/null.json" \
    "cat $work/$data" "$rmcp run -- cat $work/$data" "$rmcp --kb $work/empty-kb run -- cat $work/$data" \
    "sh -c 'cat $work/$data | dd of=/dev/null bs=1M status=none'" >/dev/null 2>&1
  median "$work/null.json"
  echo "== throughput, $data (${mb} MiB) to a pipe (| cat > /dev/null)"
  hyperfine -w 1 -r 7 --export-json "$work/pipe.json" \
    "cat $work/$data | cat >/dev/null" "$rmcp run -- cat $work/$data | cat >/dev/null" >/dev/null 2>&1
  median "$work/pipe.json"
done

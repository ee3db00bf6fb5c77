#!/usr/bin/env bash
# Nanoseconds the shim adds per intercepted call in trace mode (goal ≤ 50 ns).
# Usage: bench/preload_overhead.sh   (builds the release preset first)
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null && cmake --build build-release --target preload_bench rmcp_preload >/dev/null
B=build-release/bench/preload_bench
args=(--benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_format=json)
plain=$($B "${args[@]}")
traced=$(LD_PRELOAD=$PWD/build-release/librmcp_preload.so RMCP_ALLOC=trace RMCP_ALLOC_LOG=/dev/null $B "${args[@]}")
/usr/bin/python3 - "$plain" "$traced" <<'PY'
import json, sys
def medians(doc):
    return {b["run_name"]: b["real_time"] for b in json.loads(doc)["benchmarks"] if b.get("aggregate_name") == "median"}
plain, traced = medians(sys.argv[1]), medians(sys.argv[2])
print(f"{'benchmark':40} {'plain ns/pair':>14} {'traced ns/pair':>15} {'added ns/call':>14}")
for name in plain:
    p, t = plain[name], traced[name]
    print(f"{name:40} {p:14.1f} {t:15.1f} {(t - p) / 2:14.1f}")
PY

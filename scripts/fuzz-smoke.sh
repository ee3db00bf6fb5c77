#!/usr/bin/env bash
# Builds the libFuzzer targets (the `asan` preset: Debian's clang++-14, ASan+UBSan; the same
# build as the sanitized CLI and unit tests, so after scripts/test.sh's ASan step there is
# nothing left to build) and runs each for a few seconds from its seed corpus
# tests/fuzz/corpus/<name>/ (fuzz_<name>).
#
#   scripts/fuzz-smoke.sh                 every target, 10 s each
#   scripts/fuzz-smoke.sh -t 60 amdgpu_ids kfd_properties   longer, only these
#   RMCP_FUZZ_BUILD_DIR=build-me scripts/fuzz-smoke.sh   build elsewhere than build-asan/
#   RMCP_FUZZ_JUNIT=report.xml scripts/fuzz-smoke.sh     also write a JUnit report
#
# New inputs libFuzzer finds go to a scratch directory, never into the committed corpus. A
# crash leaves its reproducer under $BUILD/fuzz-artifacts/ and fails the run (exit 1);
# reproduce with `$BUILD/tests/fuzz/fuzz_<name> $BUILD/fuzz-artifacts/<name>/crash-...`.
set -uo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=10
while getopts "t:" opt; do
  case $opt in
    t) SECONDS_EACH=$OPTARG ;;
    *) echo "usage: $0 [-t SECONDS] [NAME...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
BUILD="${RMCP_FUZZ_BUILD_DIR:-build-asan}"

if ! command -v clang++-14 >/dev/null; then
  echo "fuzz-smoke: clang++-14 is missing (apt-get install clang-14 libclang-rt-14-dev)" >&2
  exit 3
fi
echo "fuzz-smoke: building fuzz targets in $BUILD" >&2
cmake --preset asan -B "$BUILD" >/dev/null || { echo "fuzz-smoke: configure failed" >&2; exit 3; }
cmake --build "$BUILD" --target fuzz_all -j"$(nproc)" >&2 || { echo "fuzz-smoke: build failed" >&2; exit 3; }

names=("$@")
if ((${#names[@]} == 0)); then
  for bin in "$BUILD"/tests/fuzz/fuzz_*; do
    [[ -x $bin && -f $bin ]] && names+=("$(basename "$bin" | sed 's/^fuzz_//')")
  done
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# One target: runs it, prints one line (or the log's tail on failure) and leaves its JUnit
# case in $scratch/<name>.case and "ok"/"failed" in $scratch/<name>.status.
fuzz_one() {
  local name=$1 bin="$BUILD/tests/fuzz/fuzz_$1" seeds="tests/fuzz/corpus/$1"
  mkdir -p "$scratch/$name" "$BUILD/fuzz-artifacts/$name"
  local corpora=("$scratch/$name") log="$scratch/$name.log" start runs msg
  [[ -d $seeds ]] && corpora+=("$seeds")
  start=$(date +%s)
  if "$bin" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$BUILD/fuzz-artifacts/$name/" "${corpora[@]}" >"$log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
    echo "fuzz-smoke: $name ok (${runs:-?} runs in ${SECONDS_EACH}s)" >&2
    echo "<testcase classname=\"fuzz\" name=\"$name\" time=\"$(( $(date +%s) - start ))\"/>" > "$scratch/$name.case"
    echo ok > "$scratch/$name.status"
  else
    { echo "fuzz-smoke: $name FAILED; log tail:"; tail -40 "$log"; } >&2
    msg=$(grep -m1 -E 'ERROR|runtime error|deadly signal' "$log" | sed 's/[<>&"]/_/g')
    echo "<testcase classname=\"fuzz\" name=\"$name\"><failure message=\"${msg:-crash}\"/></testcase>" > "$scratch/$name.case"
    echo failed > "$scratch/$name.status"
  fi
}

for name in "${names[@]}"; do
  [[ -x "$BUILD/tests/fuzz/fuzz_$name" ]] || { echo "fuzz-smoke: no target fuzz_$name" >&2; exit 2; }
done
# Each target is single-threaded: run as many at once as there are cores (the same time per
# target, a fraction of the wall time).
jobs_max=$(nproc)
for name in "${names[@]}"; do
  while (( $(jobs -rp | wc -l) >= jobs_max )); do wait -n; done
  fuzz_one "$name" &
done
wait

failed=0
cases=""
for name in "${names[@]}"; do
  [[ $(cat "$scratch/$name.status" 2>/dev/null) == ok ]] || failed=1
  cases+=$(cat "$scratch/$name.case" 2>/dev/null || echo "<testcase classname=\"fuzz\" name=\"$name\"><failure message=\"no result\"/></testcase>")
done

if [[ -n ${RMCP_FUZZ_JUNIT:-} ]]; then
  printf '<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="fuzz-smoke">%s</testsuite>\n' "$cases" \
    > "$RMCP_FUZZ_JUNIT"
fi
exit $failed

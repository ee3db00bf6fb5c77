#!/usr/bin/env bash
# The one test command (README, .ci/run): sets up if needed, then runs every suite —
# unit tests (GoogleTest via CTest), CLI tests against the real binary (pytest), Python
# tests (pytest), the same unit and CLI tests under ASan+UBSan, and a short fuzz run of
# every parser — and ends with one line: "N passed, N failed[, N skipped]".
#
#   scripts/test.sh            everything
#   RMCP_TEST_FAST=1 scripts/test.sh   skip the sanitizer build and the fuzz smoke run
set -uo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3            # Debian's interpreter: the one with python3-torch
RESULTS=build/test-results
failures=0

scripts/setup.sh || { echo "rmcp test: set-up failed" >&2; echo "0 passed, 1 failed"; exit 1; }
rm -rf "$RESULTS" && mkdir -p "$RESULTS"

step() { echo; echo "== $*" >&2; }

step "unit tests"
ctest --test-dir build --output-on-failure --output-junit "$PWD/$RESULTS/unit.xml" -j2 >&2 || failures=1

step "knowledge-base lint (also run by tests/cli/test_kb.py)"
RMCP_DATA_DIR="$PWD" build/rmcp kb lint >&2 || failures=1

step "CLI and Python tests"
pytest_dirs=(tests/cli)
[[ -d tests/python ]] && pytest_dirs+=(tests/python)
"$PY" -m pytest -q -p no:cacheprovider --junitxml="$RESULTS/pytest.xml" "${pytest_dirs[@]}" >&2 || failures=1

if [[ -z "${RMCP_TEST_FAST:-}" ]]; then
  step "ASan+UBSan build: unit and CLI tests"
  if cmake --preset asan >/dev/null && cmake --build build-asan -j"$(nproc)" >&2; then
    ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan --output-on-failure \
      --output-junit "$PWD/$RESULTS/unit-asan.xml" -j2 >&2 || failures=1
    RMCP_BUILD_DIR=build-asan "$PY" -m pytest -q -p no:cacheprovider \
      --junitxml="$RESULTS/cli-asan.xml" tests/cli >&2 || failures=1
  else
    echo "rmcp test: ASan build failed" >&2; failures=1
  fi
  if [[ -x scripts/fuzz-smoke.sh ]]; then
    step "fuzz smoke run"
    RMCP_FUZZ_JUNIT="$RESULTS/fuzz.xml" scripts/fuzz-smoke.sh >&2 || failures=1
  fi
fi

# One summary line over every JUnit report.
"$PY" - "$RESULTS" "$failures" <<'PYEOF'
import pathlib, sys, xml.etree.ElementTree as ET
passed = failed = skipped = 0
for report in sorted(pathlib.Path(sys.argv[1]).glob("*.xml")):
    for case in ET.parse(report).getroot().iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        elif case.find("skipped") is not None:
            skipped += 1
        else:
            passed += 1
if int(sys.argv[2]) and failed == 0:
    failed = 1  # a suite failed without reporting a test case (build error, crash)
print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
sys.exit(1 if failed else 0)
PYEOF

#!/usr/bin/env bash
# The one test command (README, .ci/run): sets up if needed, then runs every suite —
# unit tests (GoogleTest via CTest), CLI tests against the real binary (pytest), the
# hostile-input suite (tests/hostile, docs/security.md), the formatting check
# (scripts/format.sh --check), Python tests (pytest), the
# installed product (tests/install: `cmake --install` into a temporary DESTDIR, the .deb,
# rmcp.torch in a fresh venv), the same unit, CLI and hostile tests under ASan+UBSan, and a
# short fuzz run of every parser — and ends with one line: "N passed, N failed[, N skipped]".
#
#   scripts/test.sh            everything
#   RMCP_TEST_FAST=1 scripts/test.sh   skip the sanitizer build and the fuzz smoke run
set -uo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3            # Debian's interpreter: the one with python3-torch
RESULTS=build/test-results
failures=0
# pytest-xdist: every pytest suite runs on all cores (tests that share an expensive
# module fixture share an xdist_group, hence --dist loadgroup). CI's budget: docs/testing.md.
PYTEST=("$PY" -m pytest -q -p no:cacheprovider -n "$(nproc)" --dist loadgroup)

# Each step header carries the seconds since the start, so a CI log shows where the time went.
step() { echo; echo "== $* (at ${SECONDS} s)" >&2; }

step "set-up: Debian packages and the default build (scripts/setup.sh)"
scripts/setup.sh || { echo "rmcp test: set-up failed" >&2; echo "0 passed, 1 failed"; exit 1; }
rm -rf "$RESULTS" && mkdir -p "$RESULTS"

step "unit tests"
ctest --test-dir build --output-on-failure --output-junit "$PWD/$RESULTS/unit.xml" -j2 >&2 || failures=1

step "knowledge-base lint (also run by tests/cli/test_kb.py)"
RMCP_DATA_DIR="$PWD" build/rmcp kb lint >&2 || failures=1

step "formatting (scripts/format.sh --check: the C++ sources follow .clang-format)"
if scripts/format.sh --check; then format_case='<testcase classname="format" name="clang-format"/>'
else failures=1; format_case='<testcase classname="format" name="clang-format"><failure message="not formatted: run scripts/format.sh"/></testcase>'
fi
printf '<testsuite name="format">%s</testsuite>\n' "$format_case" > "$RESULTS/format.xml"

# The installed product, not the checkout (docs/install.md): the default build installed
# under /usr into a temporary DESTDIR, which tests/install runs from / without
# RMCP_DATA_DIR; the same build is packaged there with cpack (no third build). lintian
# (about 5 s) runs when it is installed; setup.sh does not install it (some 125 Perl
# packages): for a release it is a manual step (docs/install.md, "Release checklist").
install_root=$(mktemp -d "${TMPDIR:-/tmp}/rmcp-install.XXXXXX")
trap 'rm -rf "$install_root"' EXIT
if DESTDIR="$install_root" cmake --install build --prefix /usr >/dev/null; then
  export RMCP_INSTALLED_DESTDIR="$install_root"
else
  echo "rmcp test: cmake --install into $install_root failed" >&2; failures=1
fi
command -v lintian >/dev/null && export RMCP_LINTIAN=1

step "CLI, Python and installed-product tests"
pytest_dirs=(tests/cli)
[[ -d tests/python ]] && pytest_dirs+=(tests/python)
[[ -d tests/install ]] && pytest_dirs+=(tests/install)
"${PYTEST[@]}" --junitxml="$RESULTS/pytest.xml" "${pytest_dirs[@]}" >&2 || failures=1

step "hostile-input tests"
# Its own run: its conftest is another module named conftest. Run as root, it also mounts
# small tmpfs file systems (full disk, read-only directory); otherwise those tests are
# reported as skipped.
# It includes the patch concurrency stress (test_patch_concurrency.py: random interleavings of
# apply/rollback/status with test-only delays at every lock and rename; its seed is printed on
# failure), bounded to RMCP_STRESS_SECONDS of rounds here and in the ASan run below; the longer
# soak is in docs/testing.md ("Concurrency stress").
export RMCP_STRESS_SECONDS="${RMCP_STRESS_SECONDS:-25}"
"${PYTEST[@]}" -rs --junitxml="$RESULTS/hostile.xml" tests/hostile >&2 || failures=1

step "fleet: the node agent with the real node_exporter and Prometheus (tests/fleet, docs/fleet.md)"
# Loopback daemons in temporary directories; each test ends its own. The limit ends a hung run.
timeout 150 "${PYTEST[@]}" -rs --junitxml="$RESULTS/fleet.xml" tests/fleet >&2 || failures=1

if [[ -z "${RMCP_TEST_FAST:-}" ]]; then
  step "ASan+UBSan build (clang, with the fuzz targets): unit, CLI and hostile tests"
  # A tree configured when this preset still used g++ is configured afresh: CMake refuses the
  # compiler change once ("Generate step failed") before it resets the cache.
  if [[ -f build-asan/CMakeCache.txt ]] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang' build-asan/CMakeCache.txt; then
    rm -rf build-asan
  fi
  if cmake --preset asan >/dev/null && cmake --build build-asan -j"$(nproc)" >&2; then
    ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan --output-on-failure \
      --output-junit "$PWD/$RESULTS/unit-asan.xml" -j2 >&2 || failures=1
    # The sweeps (kb advice on every fixture, accuracy on every real log) ran above; under
    # ASan the rest of the suite reaches the same code paths (docs/testing.md).
    RMCP_BUILD_DIR=build-asan "${PYTEST[@]}" -m "not sweep" \
      --junitxml="$RESULTS/cli-asan.xml" tests/cli >&2 || failures=1
    RMCP_BUILD_DIR=build-asan "${PYTEST[@]}" -rs \
      --junitxml="$RESULTS/hostile-asan.xml" tests/hostile >&2 || failures=1
  else
    echo "rmcp test: ASan build failed" >&2; failures=1
  fi
  if [[ -x scripts/fuzz-smoke.sh ]]; then
    step "fuzz smoke run"
    RMCP_FUZZ_JUNIT="$RESULTS/fuzz.xml" scripts/fuzz-smoke.sh >&2 || failures=1
  fi
fi

echo "== done (at ${SECONDS} s)" >&2

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

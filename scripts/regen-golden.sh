#!/usr/bin/env bash
# Regenerates the golden outputs under tests/golden/<fixture>/ from the fixture roots in
# tests/fixtures/, with the built binary. Review every diff by eye before committing: a
# golden is only as good as the review that accepted it.
#
#   scripts/regen-golden.sh                 every fixture, every golden kind
#   scripts/regen-golden.sh FIXTURE...      only these fixtures
#   RMCP_BUILD_DIR=build-x scripts/regen-golden.sh   use another build
#   RMCP_GOLDEN_KINDS="detect" scripts/regen-golden.sh   only some kinds (detect doctor plan)
#
# This is the one way to regenerate goldens. The `plan` kind (tests/golden/<fixture>/
# plan-<patch>.txt) is written by the CLI test that holds the list of fixture/patch pairs
# (tests/cli/test_patch.py, GOLDEN_PLANS), run here with RMCP_REGEN_GOLDEN=1; it regenerates
# every pair, whatever fixtures are named.
#
# To add a golden kind (doctor, plan, ...): write a golden_<kind> function below that
# prints the output for the fixture root in $1, and add <kind> to the default kinds below. The CLI tests
# compare tests/golden/<fixture>/<kind>.json (or whatever name the function's caller writes).
set -euo pipefail
cd "$(dirname "$0")/.."
RMCP="${RMCP_BUILD_DIR:-build}/rmcp"
[[ -x "$RMCP" ]] || { echo "regen-golden: $RMCP is missing: run scripts/setup.sh first" >&2; exit 3; }

# Each kind: golden_<kind> ROOT > tests/golden/<fixture>/<file>. Exit codes other than the
# ones a kind expects are errors (a golden must never capture a crash).
# Goldens hold no rmcp_version/kb_version: they change with every commit and kb edit, and
# the tests compare without them (tests/cli/conftest.py, unversioned).
unversioned() {
  /usr/bin/python3 -c 'import json, sys
doc = json.load(sys.stdin)
for key in ("rmcp_version", "kb_version"):
    doc.pop(key, None)
print(json.dumps(doc, indent=2, ensure_ascii=False))'
}
golden_detect() { NO_COLOR=1 "$RMCP" detect --root "$1" --format json | unversioned; }
# doctor exits 1 when it finds something critical: that is output, not failure. The shipped
# kb/ of this checkout is used (RMCP_DATA_DIR), not whatever the binary was built against.
golden_doctor() {
  local out rc=0
  out=$(NO_COLOR=1 RMCP_DATA_DIR="$PWD" "$RMCP" doctor --root "$1" --format json --fail-on critical) || rc=$?
  ((rc <= 1)) || return "$rc"
  # Next commands carry `--root DIR`; the golden says ROOT, whatever path the root was given as.
  printf '%s\n' "${out//"--root $1 "/--root ROOT }" | unversioned
}

read -r -a KINDS <<< "${RMCP_GOLDEN_KINDS:-detect doctor plan}"
declare -A FILE_OF=([detect]=detect.json [doctor]=doctor.json)
PER_FIXTURE=()
WITH_PLANS=0
for kind in "${KINDS[@]}"; do
  case "$kind" in
    plan) WITH_PLANS=1 ;;
    detect | doctor) PER_FIXTURE+=("$kind") ;;
    *) echo "regen-golden: unknown kind $kind (detect doctor plan)" >&2; exit 2 ;;
  esac
done

fixtures=("$@")
if ((${#fixtures[@]} == 0)); then
  for d in tests/fixtures/*/; do
    name=$(basename "$d")
    # not __pycache__ of the generator scripts, nor the healthy zoo's folder (tests/cli/test_healthy_zoo.py)
    [[ $name == _* || $name == healthy ]] || fixtures+=("$name")
  done
fi
for f in "${fixtures[@]}"; do
  root="tests/fixtures/$f"
  [[ -d "$root" ]] || { echo "regen-golden: no fixture $root" >&2; exit 2; }
  mkdir -p "tests/golden/$f"
  for kind in "${PER_FIXTURE[@]}"; do
    out="tests/golden/$f/${FILE_OF[$kind]}"
    "golden_$kind" "$root" > "$out.tmp"
    mv "$out.tmp" "$out"
  done
  echo "regen-golden: $f (${PER_FIXTURE[*]})"
done
if ((WITH_PLANS)); then
  RMCP_REGEN_GOLDEN=1 RMCP_BUILD_DIR="${RMCP_BUILD_DIR:-build}" /usr/bin/python3 -m pytest -q -p no:cacheprovider \
    tests/cli/test_patch.py -k test_golden_plans
  echo "regen-golden: plan-*.txt (tests/cli/test_patch.py GOLDEN_PLANS)"
fi

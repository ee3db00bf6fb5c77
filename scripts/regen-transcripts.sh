#!/usr/bin/env bash
# Regenerates tests/transcripts/: what a person sees on an 80-column UTF-8 terminal (no colour)
# when running the first commands on the fixture roots. tests/cli/test_transcripts.py checks
# that the checked-in files equal what the built binary prints and that each first screen fits
# 24 lines. Review every diff by eye before committing.
#
#   scripts/regen-transcripts.sh            every transcript
#   RMCP_BUILD_DIR=build-x scripts/regen-transcripts.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RMCP="${RMCP_BUILD_DIR:-build}/rmcp"
[[ -x "$RMCP" ]] || { echo "regen-transcripts: $RMCP is missing: run scripts/setup.sh first" >&2; exit 3; }
exec /usr/bin/python3 tests/cli/transcripts.py --write "$RMCP"

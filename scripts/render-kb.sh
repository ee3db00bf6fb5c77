#!/usr/bin/env bash
# Regenerates docs/kb/ (one Markdown page per knowledge-base entry plus index.md) from kb/*.toml
# with the built binary. tests/cli/test_kb.py fails when the checked-in pages differ.
#
#   scripts/render-kb.sh                          uses build/rmcp
#   RMCP_BUILD_DIR=build-x scripts/render-kb.sh   another build
set -euo pipefail
cd "$(dirname "$0")/.."
RMCP="${RMCP_BUILD_DIR:-build}/rmcp"
[[ -x "$RMCP" ]] || { echo "render-kb: $RMCP is missing: run scripts/setup.sh first" >&2; exit 3; }
rm -f docs/kb/*.md
RMCP_DATA_DIR="$PWD" "$RMCP" --kb kb kb render --format markdown -o docs/kb
echo "render-kb: $(ls docs/kb/*.md | wc -l) pages in docs/kb/"

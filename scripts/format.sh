#!/usr/bin/env bash
# Formats the C++ sources with the repository's .clang-format (clang-format 14, Debian 12).
#
#   scripts/format.sh           rewrite every file that is not formatted
#   scripts/format.sh --check   list the files that are not formatted; exit 1 if any
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
command -v "$CLANG_FORMAT" >/dev/null || { echo "format: $CLANG_FORMAT is missing (apt install clang-format)" >&2; exit 3; }
mapfile -t files < <(git ls-files -- 'src/*.cpp' 'src/*.hpp' 'tests/*.cpp' 'tests/*.hpp' 'bench/*.cpp' \
                                      'python/rmcp/torch/csrc/*.cpp' | while read -r f; do [[ -f $f ]] && echo "$f"; done)
if [[ "${1:-}" == "--check" ]]; then
  bad=()
  for f in "${files[@]}"; do
    "$CLANG_FORMAT" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if ((${#bad[@]})); then
    printf 'format: not formatted (run scripts/format.sh): %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files formatted" >&2
  exit 0
fi
"$CLANG_FORMAT" -i "${files[@]}"

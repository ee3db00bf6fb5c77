# Sourced by scripts/setup.sh (and by tests/install/test_setup_pth.py, which calls the function on
# a temporary directory). Earlier versions of setup.sh wrote <purelib>/rmcp.pth naming the
# checkout's python/ (the newcomer review, finding 25: it shadowed the installed package for
# every user of that Python and outlived `apt remove`). This removes that exact file when its
# content is exactly this checkout's python/ directory, and leaves anything else alone.
#   rmcp_remove_old_pth SITE_DIR CHECKOUT_DIR
rmcp_remove_old_pth() {
  local site=$1 checkout=$2 sudo=()
  [[ -f "$site/rmcp.pth" && ! -L "$site/rmcp.pth" ]] || return 0
  [[ "$(cat "$site/rmcp.pth")" == "$checkout/python" ]] || return 0
  [[ $(id -u) -eq 0 || -w "$site" ]] || sudo=(sudo)
  echo "rmcp setup: removing $site/rmcp.pth, written by an earlier scripts/setup.sh (README, \"Install\")" >&2
  "${sudo[@]}" rm -f "$site/rmcp.pth"
}

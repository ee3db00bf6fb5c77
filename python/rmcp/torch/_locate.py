"""Where the rmcp binary and the build tree are.

- the binary: $RMCP_BIN, then `rmcp` on PATH, then <build>/rmcp;
- <build>: $RMCP_BUILD_DIR, else the checkout's build/ (when this file is
  <repo>/python/rmcp/torch/_locate.py: scripts/setup.sh points Debian's Python at <repo>/python).
The operator library is found by _build.py (prebuilt for this torch, else compiled on first use).
"""
import os
import pathlib
import shutil

OPS_LIBRARY_NAME = "librmcp_torch_ops.so"
PACKAGE_DIR = pathlib.Path(__file__).resolve().parent
REPO = PACKAGE_DIR.parents[2]


def build_dir():
    return pathlib.Path(os.environ.get("RMCP_BUILD_DIR") or REPO / "build")


def rmcp_binary():
    """Path of the rmcp program, or None when there is none."""
    explicit = os.environ.get("RMCP_BIN")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    on_path = shutil.which("rmcp")
    if on_path:
        return on_path
    built = build_dir() / "rmcp"
    return str(built) if os.access(built, os.X_OK) else None

"""Where the rmcp binary and the compiled operator library live.

Search order (first hit wins), so a checkout, an install and the tests all work:
- the binary: $RMCP_BIN, then `rmcp` on PATH, then <build>/rmcp;
- the operator: $RMCP_TORCH_OPS (a path to the .so), then <build>/python/librmcp_torch_ops.so,
  then librmcp_torch_ops.so next to this package (an installed layout);
where <build> is $RMCP_BUILD_DIR, else the checkout's build/ (this file is
<repo>/python/rmcp/torch/_locate.py; scripts/setup.sh points Debian's Python at <repo>/python).
"""
import os
import pathlib
import shutil

OPS_LIBRARY_NAME = "librmcp_torch_ops.so"
_PACKAGE_DIR = pathlib.Path(__file__).resolve().parent
REPO = _PACKAGE_DIR.parents[2]


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


def ops_library_candidates():
    explicit = os.environ.get("RMCP_TORCH_OPS")
    if explicit:
        return [pathlib.Path(explicit)]
    return [build_dir() / "python" / OPS_LIBRARY_NAME, _PACKAGE_DIR / OPS_LIBRARY_NAME]

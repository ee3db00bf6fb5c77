"""Shared set-up for the Python tests (rmcp.torch and the probe worker).

They run under /usr/bin/python3 (Debian's, with torch 1.13.1 CPU) against this checkout's
python/ directory, whether or not scripts/setup.sh has installed the .pth file yet.
The compiled operator is found in $RMCP_BUILD_DIR/python (default build/python).
"""
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

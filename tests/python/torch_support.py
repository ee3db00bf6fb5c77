"""Helpers for the rmcp.torch tests: loading the operator, comparing within dtype tolerances.

Import this before `rmcp`: it puts this checkout's python/ first on sys.path, so the tests
run the code next to them whether or not scripts/setup.sh installed the .pth file. (No
conftest.py here: tests/cli and tests/python run in one pytest session, and a second
module named `conftest` would shadow tests/cli's.) The compiled operator is the one built
for this torch (python/rmcp/torch/_build.py): $RMCP_BUILD_DIR/python (default build/python).

With RMCP_TEST_INSTALLED=1 the tests use the rmcp package the interpreter has installed
(tests/install/test_python_venv.py runs them so in a virtual environment).
"""
import os
import pathlib
import sys

REPO_PYTHON = pathlib.Path(__file__).resolve().parents[2] / "python"
INSTALLED = bool(os.environ.get("RMCP_TEST_INSTALLED"))
if not INSTALLED:
    sys.path.insert(0, str(REPO_PYTHON))

import pytest  # noqa: E402
import torch  # noqa: E402

import rmcp.torch as rt  # noqa: E402

# Normalised max error (max |a - b| / max(1, max |reference|)) allowed per dtype.
TOLERANCE = {torch.float64: 1e-10, torch.float32: 1e-4, torch.float16: 4e-3, torch.bfloat16: 3e-2}


def load_ops():
    try:
        return rt.load_extension()
    except RuntimeError as error:
        pytest.fail(f"{error}: build the torch extension first (scripts/setup.sh, or set RMCP_BUILD_DIR)")


def normalised_error(result, reference):
    result, reference = result.double(), reference.double()
    return ((result - reference).abs().max() / reference.abs().max().clamp(min=1.0)).item()


def assert_close(result, reference, dtype, what="", factor=1.0):
    assert result.shape == reference.shape, (what, result.shape, reference.shape)
    error = normalised_error(result, reference)
    assert error <= TOLERANCE[dtype] * factor, f"{what}: normalised error {error:.3g} > {TOLERANCE[dtype] * factor:.3g}"


def count_events(prof, name):
    return sum(1 for event in prof.events() if event.name == name)

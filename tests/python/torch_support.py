"""Helpers for the rmcp.torch tests: loading the operator, comparing within dtype tolerances."""
import pytest
import torch

import rmcp.torch as rt

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

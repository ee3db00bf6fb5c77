"""rmcp's Python side: the parts that must run inside the user's interpreter.

- ``rmcp.torch``: keep training on the GPU where vendor convolution kernels fault
  (``enable``, ``disable``, ``stats``, ``safeguard``, ``conv``); see docs/torch.md.
- ``rmcp.worker``: the probe's per-scenario child process (docs/probe.md).

Importing ``rmcp`` imports nothing heavy: torch is imported only when ``rmcp.torch``
needs it, so ``rmcp.torch.enable()`` can still set the environment before torch starts.
"""

# The project version (CMakeLists.txt's project(VERSION); tests/cli/test_versions.py keeps the two
# equal). An installed package carries the build's full version, `rmcp --version`'s, in
# _build_version.py (written by python/setup.py and by cmake --install); a checkout has none.
__version__ = "0.1.0"
try:
    from rmcp._build_version import __version__  # noqa: F401
except ImportError:
    pass

"""rmcp's Python side: the parts that must run inside the user's interpreter.

- ``rmcp.torch``: keep training on the GPU where vendor convolution kernels fault
  (``enable``, ``disable``, ``stats``, ``safeguard``, ``conv``); see docs/torch.md.
- ``rmcp.worker``: the probe's per-scenario child process (docs/probe.md).

Importing ``rmcp`` imports nothing heavy: torch is imported only when ``rmcp.torch``
needs it, so ``rmcp.torch.enable()`` can still set the environment before torch starts.
"""

__version__ = "0.1.0"

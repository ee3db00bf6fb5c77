"""rmcp: the Python side of rmcp (rmcp.torch, the probe worker)."""

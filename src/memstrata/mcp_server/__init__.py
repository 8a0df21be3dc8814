"""MCP tools over the Memory facade (official ``mcp`` SDK). Not named ``mcp``: that would shadow the SDK."""

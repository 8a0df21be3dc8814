"""The server: the REST API (``memstrata.api``), the MCP server (``memstrata.mcp_server``) and the web console
composed into one ASGI app with its guards (keys, browser checks, body size, overload) and lifespan. It sits
above both interfaces, so neither imports the other's composition. Needs the ``server`` extra."""

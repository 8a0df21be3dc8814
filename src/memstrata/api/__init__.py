"""The REST API (FastAPI) and the HTTP side of MCP: ``create_app(memory, server_settings, keys=KeyStore(path))``.

Needs the ``server`` extra (``pip install 'memstrata[server]'``). Import ``memstrata.service.app`` for the
factory; this package module stays free of imports so that its submodules can be used on their own.
"""

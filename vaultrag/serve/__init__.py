"""The resident faces: `vaultrag serve` (HTTP API, MCP over streamable HTTP, hooks over a Unix
socket, watch) and `vaultrag mcp` (stdio). They parse input, call `vaultrag.api`, render its result.

Needs the `serve` extra (`pip install 'vaultrag[serve]'`): starlette, uvicorn, mcp, watchfiles.
Nothing here is imported on the hook path or by the SQLite CLI commands.
"""

"""The MCP face (official `mcp` SDK): tools search, get, status, reindex over `vaultrag.api`.

`vaultrag mcp` runs it on stdio (the user's own process: every tool allowed); `vaultrag serve`
mounts it at /mcp over streamable HTTP, where `reindex` needs the maintainer role.
"""
from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from .. import __version__
from ..api import Service
from ..errors import VaultragError
from .auth import ROLE_KEY

INSTRUCTIONS = ("Search the user's Markdown notes (an Obsidian vault) and read them by path. "
                "`search` answers with cited hits (path:line range); `get` reads a note or a line "
                "range, with secrets redacted.")


def _role(ctx: Context | None) -> str:
    """The caller's role: from the HTTP scope (set by auth), or maintainer on stdio."""
    try:
        request = ctx.request_context.request if ctx is not None else None
    except (ValueError, AttributeError):
        request = None
    scope = getattr(request, "scope", None)
    return scope.get(ROLE_KEY, "anonymous") if isinstance(scope, dict) else "maintainer"


def _call(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except VaultragError as exc:
        raise ToolError(str(exc)) from None


def build_mcp(service: Service) -> MCPServer:
    server = MCPServer("vaultrag", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")

    @server.tool(description="Search the notes. Returns status ok with cited hits (path, heading, line range, "
                             "text), or no_evidence with a reason when the notes do not answer.")
    def search(query: str, k: int | None = None, scope: str | None = None) -> dict[str, Any]:
        return _call(service.search, query, k=k, scope=scope).to_dict()

    @server.tool(description="Read a note by its vault-relative path (as search cites it), or lines "
                             "line_start..line_end of it (1-based, inclusive). Secrets are redacted.")
    def get(path: str, line_start: int | None = None, line_end: int | None = None) -> dict[str, Any]:
        return _call(service.get, path, line_start, line_end).to_dict()

    @server.tool(description="What the index holds, when it was last rebuilt, and how many notes changed since.")
    def status() -> dict[str, Any]:
        return _call(service.status)

    @server.tool(description="Bring the index in line with the vault (incremental; full=true rebuilds). "
                             "Needs the maintainer role over HTTP.")
    def reindex(ctx: Context, full: bool = False) -> dict[str, Any]:
        if _role(ctx) != "maintainer":
            raise ToolError("reindex needs a maintainer token")
        return _call(service.reindex, full=full).to_dict()

    return server


def http_app(server: MCPServer):
    """The streamable-HTTP Starlette app for /mcp (its routes and lifespan go into the main app).
    Stateless JSON responses: every POST is answered on its own, no session to keep per client.
    Host/Origin and tokens are checked by vaultrag's own middleware in front of every route."""
    from mcp.server.transport_security import TransportSecuritySettings

    return server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True, json_response=True,
                                      transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))


def run_stdio(service: Service) -> None:
    build_mcp(service).run("stdio")

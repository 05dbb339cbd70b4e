"""`vaultrag mcp` (stdio) and /mcp (streamable HTTP), driven by the official SDK's own client."""
from __future__ import annotations

import json
import os
import sys

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from vaultrag import api  # noqa: E402

from serve_fixtures import free_port, start_server  # noqa: E402


def _payload(result) -> dict:
    if result.structured_content is not None:
        data = result.structured_content
        return data.get("result", data) if set(data) == {"result"} else data
    return json.loads(result.content[0].text)


async def _session(server) -> dict:
    async with Client(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        found = await client.call_tool("search", {"query": "how long are daily snapshots kept?", "k": 2})
        hit = _payload(found)["hits"][0]
        note = await client.call_tool("get", {"path": hit["path"], "line_start": hit["line_start"],
                                              "line_end": hit["line_end"]})
        outside = await client.call_tool("get", {"path": "../secret.md"})
        status = await client.call_tool("status", {})
        return {"tools": tools, "search": _payload(found), "hit": hit, "get": _payload(note),
                "outside": outside, "status": _payload(status)}


def _check(out: dict, vault) -> None:
    assert {"search", "get", "status", "reindex"} <= set(out["tools"])
    assert set(out["tools"]["search"].input_schema["properties"]) >= {"query", "k", "scope"}
    assert out["search"]["status"] == "ok" and len(out["search"]["hits"]) >= 1
    hit, note = out["hit"], out["get"]
    disk = (vault / hit["path"]).read_text(encoding="utf-8").splitlines()
    assert note["text"].splitlines() == disk[hit["line_start"] - 1:hit["line_end"]]
    assert out["outside"].is_error and "not a note in the vault" in out["outside"].content[0].text
    assert out["status"]["files"] == 7


def test_stdio_server_with_the_sdk_client(vault, cfg_for):
    cfg = cfg_for(vault)
    api.reindex(cfg)
    params = StdioServerParameters(command=sys.executable, args=["-m", "vaultrag", "mcp", "--vault", str(vault),
                                                                 "--store", str(cfg.db_path())],
                                   env={k: v for k, v in os.environ.items()})
    _check(anyio.run(_session, params), vault)


def test_http_mcp_on_the_running_server(vault, cfg_for, tmp_path):
    cfg = cfg_for(vault)
    api.reindex(cfg)
    port = free_port()
    proc = start_server(vault, cfg.db_path(), tmp_path / "m.sock", port)
    try:
        _check(anyio.run(_session, f"http://127.0.0.1:{port}/mcp"), vault)
    finally:
        proc.terminate()
        proc.wait(30)

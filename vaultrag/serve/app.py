"""The HTTP API: Starlette routes that parse JSON, call `vaultrag.api.Service`, render the result.

Errors are JSON `{code, message}`. Limits: body size, query length and `k` (checked by the
facade), one reindex at a time (409), a timeout per request (504). Logs carry the method, path,
status, role and milliseconds, never a body, a header or a query.
"""
from __future__ import annotations

import json
import logging
import re
import time
from pathlib import Path

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .. import __version__
from ..api import BadRequest, Busy, NotFound, Service, Stopping
from ..errors import IndexCorrupt, IndexLocked, IndexMissing, VaultragError
from ..hooks import MAX_JSON_SEPARATORS
from .auth import ROLE_KEY, AuthMiddleware, Policy
from .limits import BODY_TIMEOUT_S, BodyDeadline, InFlightLimit
from .openapi import openapi_document
from ..serve_client import IDENTITY_ENV, IDENTITY_HEADER, PG_SCHEMES, store_identity

log = logging.getLogger("vaultrag.serve")

MAX_BODY_BYTES = 1024 * 1024  # a search or reindex request is a few hundred bytes
HOOK_MAX_BODY_BYTES = 32 * 1024 * 1024  # PostToolUse carries whole tool outputs (as the command hook allows)
REQUEST_TIMEOUT_S = 30.0  # a search takes ~10 ms at 38k chunks; 30 s means something is stuck
REINDEX_TIMEOUT_S = 900.0  # a full rebuild of 38k notes takes ~27 s here; a slow disk may need minutes
# Bodies being read by all requests together: a few 32 MB hook bodies at once, not 64 of them (2 GB).
MAX_INFLIGHT_BODY_BYTES = 3 * HOOK_MAX_BODY_BYTES
PARSE_IN_THREAD_BYTES = 256 * 1024  # json.loads runs ~100 MB/s here: a bigger body is parsed off the event loop
_inflight = [0]  # body bytes held by requests being read (the event loop's thread only)
HOOK_EVENT_RE = re.compile(r"[A-Za-z]{1,40}")
_STATUS = [(BadRequest, 400, "bad_request"), (NotFound, 404, "not_found"), (Busy, 409, "reindex_running"), (Stopping, 503, "stopping"),
           (IndexLocked, 409, "index_locked"), (IndexMissing, 503, "no_index"), (IndexCorrupt, 503, "index_corrupt"),
           (VaultragError, 422, "vaultrag_error")]


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"code": code, "message": message}, status_code=status)


async def read_json(request: Request, limit: int = MAX_BODY_BYTES, *, optional: bool = False) -> dict:
    """The body as a JSON object, read at most `limit` bytes, all requests together holding at most
    MAX_INFLIGHT_BODY_BYTES; a big body is parsed in a worker thread (the event loop keeps serving)."""
    from starlette.requests import ClientDisconnect

    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise ApiError(413, "body_too_large", f"request body over {limit} bytes")
    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            _inflight[0] += len(chunk)
            if size > limit:
                raise ApiError(413, "body_too_large", f"request body over {limit} bytes")
            if _inflight[0] > MAX_INFLIGHT_BODY_BYTES:
                raise ApiError(503, "busy", "too many large requests at once; retry shortly")
            chunks.append(chunk)
        raw = b"".join(chunks)
        del chunks
        if not raw.strip() and optional:
            return {}
        separators = raw.count(b",") + raw.count(b":")  # >= the values json.loads would build, less one
        if separators > MAX_JSON_SEPARATORS:
            raise ApiError(413, "body_too_large", f"the body holds up to {separators} JSON values "
                           f"(over {MAX_JSON_SEPARATORS})")
        data = await anyio.to_thread.run_sync(_parse, raw) if len(raw) > PARSE_IN_THREAD_BYTES else _parse(raw)
    except ClientDisconnect:
        raise ApiError(408, "request_timeout", f"the request body did not arrive within {BODY_TIMEOUT_S:.0f} s") from None
    finally:
        _inflight[0] -= size
    if not isinstance(data, dict):
        raise ApiError(400, "bad_json", "the body must be a JSON object")
    return data


def _parse(raw: bytes):
    try:
        return json.loads(raw.decode("utf-8"))
    except RecursionError:  # `[[[[...` deeper than the parser's recursion limit
        raise ApiError(400, "bad_json", "the body's JSON is nested too deeply") from None
    except (UnicodeDecodeError, ValueError):
        raise ApiError(400, "bad_json", "the body must be a JSON object (UTF-8)") from None


def _only(data: dict, allowed: tuple[str, ...]) -> dict:
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise BadRequest(f"unknown field(s) {', '.join(unknown)}; allowed: {', '.join(allowed)}")
    return data


async def run(fn, timeout: float = REQUEST_TIMEOUT_S):
    """`fn()` in a worker thread, given up (504) after `timeout` seconds."""
    try:
        with anyio.fail_after(timeout):
            return await anyio.to_thread.run_sync(fn, abandon_on_cancel=True)
    except TimeoutError:
        raise ApiError(504, "timeout", f"gave up after {timeout:.0f} s") from None


def build_app(service: Service, policy: Policy, *, mcp_app=None) -> Starlette:
    """The ASGI app. `mcp_app` (from `vaultrag.serve.mcp.http_app`) adds /mcp and its lifespan."""

    async def search(request: Request):
        body = _only(await read_json(request), ("query", "k", "max_tokens", "scope", "collection", "gate"))
        opts = {k: body[k] for k in ("k", "max_tokens", "scope", "collection", "gate") if k in body}
        ans = await run(lambda: service.search(body.get("query"), **opts))
        return JSONResponse(ans.to_dict())

    async def reindex(request: Request):
        if request.scope.get(ROLE_KEY) != "maintainer":
            raise ApiError(403, "forbidden", "reindex needs a maintainer token")
        body = _only(await read_json(request, optional=True), ("full",))
        if service.reindexing:
            raise Busy("a reindex is already running in this server; wait for it to finish")
        report = await run(lambda: service.reindex(full=body.get("full", False)), REINDEX_TIMEOUT_S)
        return JSONResponse(report.to_dict())

    async def coverage(request: Request):
        return JSONResponse(await run(service.coverage))

    async def status(request: Request):
        return JSONResponse(await run(service.status))

    async def healthz(request: Request):
        return JSONResponse({"ok": True})

    async def openapi(request: Request):
        return JSONResponse(openapi_document(__version__))

    async def hook(request: Request):
        event = request.path_params["event"]
        if not HOOK_EVENT_RE.fullmatch(event):
            raise ApiError(404, "unknown_event", "a hook event name is letters only, e.g. UserPromptSubmit")
        return await hook_response(service, request, event)

    routes = [Route("/search", search, methods=["POST"]), Route("/reindex", reindex, methods=["POST"]),
              Route("/coverage", coverage, methods=["GET"]), Route("/status", status, methods=["GET"]),
              Route("/healthz", healthz, methods=["GET"]), Route("/openapi.json", openapi, methods=["GET"]),
              Route("/hooks/{event}", hook, methods=["POST"])]
    lifespan = None
    if mcp_app is not None:
        routes += list(mcp_app.routes)
        lifespan = mcp_app.router.lifespan_context
    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={ApiError: _api_error, VaultragError: _vaultrag_error, 404: _not_found,
                                        405: _method, Exception: _internal})
    return _Logged(InFlightLimit(BodyDeadline(AuthMiddleware(app, policy))), app)


async def hook_response(service: Service, request: Request, event: str) -> Response:
    """What the command hook would print, or `{}`; fail-open like it: any failure is `{}` plus a log line."""
    from ..hooks import log_line

    if not identity_matches(service.identity, request.headers.get(IDENTITY_HEADER)):
        return error(409, "other_index", "this server serves another vault or index than the hook's environment names")
    try:
        payload = await read_json(request, HOOK_MAX_BODY_BYTES)
        timeout = max(0.1, service.cfg.hook_timeout_ms / 1000)
        out = await run(lambda: service.hook(event, payload), timeout)
    except Exception as exc:  # noqa: BLE001 - a hook never fails the session
        log_line(f"{event} (http): {type(exc).__name__}: {exc}")  # log_line bounds it, keeping the fix
        out = None
    return Response(out or "{}", media_type="application/json")


def identity_matches(server: dict, header: str | None) -> bool:
    """True unless the hook's environment names another vault, index or config than the server's."""
    if not header:
        return True
    try:
        env = json.loads(header)
    except ValueError:
        return False
    if not isinstance(env, dict):
        return False
    for key in IDENTITY_ENV:
        value, mine = env.get(key), server.get(key)
        if value and mine and identity_value(key, str(value)) != mine:
            return False
    return True


def identity_value(key: str, value: str) -> str:
    """One identity variable as both sides compare it: a collection list as its names, a
    PostgreSQL URL without its password, anything else as a resolved path."""
    if key == "VAULTRAG_COLLECTION":
        return ",".join(dict.fromkeys(n.strip() for n in value.split(",") if n.strip()))
    if key == "VAULTRAG_STORE" and value.startswith(PG_SCHEMES):
        return store_identity(value)
    return str(Path(value).expanduser().resolve())


async def _api_error(request, exc: ApiError):
    return error(exc.status, exc.code, exc.message)


async def _vaultrag_error(request, exc: VaultragError):
    for cls, status, code in _STATUS:
        if isinstance(exc, cls):
            return error(status, code, str(exc))
    return error(422, "vaultrag_error", str(exc))


async def _not_found(request, exc):
    return error(404, "not_found", f"no route {request.url.path}; see /openapi.json")


async def _method(request, exc):
    return error(405, "method_not_allowed", f"{request.method} is not allowed on {request.url.path}")


async def _internal(request, exc):
    log.error("internal error on %s: %s", request.url.path, type(exc).__name__)  # no message: it may quote input
    return error(500, "internal", "internal error; the server log names it")


class _Logged:
    """One log line per request: method, path, status, role, ms. Nothing from bodies or headers."""

    def __init__(self, app, inner: Starlette):
        self.app = app
        self.inner = inner  # the Starlette app, for tests and lifespan

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started, status = time.perf_counter(), [0]

        async def capture(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, capture)
        finally:
            log.info("%s %s %d %s %.1f ms", scope.get("method"), scope.get("path", "")[:100], status[0],
                     scope.get(ROLE_KEY, "-"), (time.perf_counter() - started) * 1000)

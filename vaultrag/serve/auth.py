"""Who may call the server, as ASGI middleware in front of every route (HTTP API, hooks, /mcp).

1. Host and Origin are checked on every TCP request, tokens or not: a web page that rebinds its
   DNS name to 127.0.0.1 sends its own name as Host (and Origin), and is refused (403).
2. The Unix socket (a 0600 file in a 0700 folder) is reachable only by this user: maintainer.
3. With tokens configured (`vaultrag token create`), every TCP request needs
   `Authorization: Bearer <token>`: none or unknown -> 401. The role travels in the scope.
4. With no tokens configured, loopback requests from the same user are allowed (maintainer). On
   Linux "same user" is checked: the peer socket's owner in /proc/net/tcp{,6}. Where that table
   does not exist (macOS, Windows) any loopback client counts, as the README says.
"""
from __future__ import annotations

import ipaddress
import json
import os
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable
from urllib.parse import urlsplit

from .tokens import TokenRecord, load_tokens, tokens_path, verify

ROLE_KEY = "vaultrag.role"  # the caller's role, in the ASGI scope, for routes and MCP tools
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
OPEN_PATHS = frozenset({"/healthz", "/openapi.json"})  # no secrets there; Host/Origin still checked
PEER_CACHE_S = 10.0  # a keep-alive connection keeps its port: look its owner up once per 10 s
PEER_CACHE_MAX = 256


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _proc_form(ip: str, port: int) -> list[tuple[str, str]]:
    """How /proc/net/tcp{,6} spells ip:port (each 32-bit word printed little-endian)."""
    a = ipaddress.ip_address(ip)
    forms = []
    if a.version == 4:
        forms.append(("tcp", "%08X:%04X" % (int.from_bytes(a.packed, "little"), port)))
        a = ipaddress.IPv6Address("::ffff:" + ip)
    words = "".join("%08X" % int.from_bytes(a.packed[i:i + 4], "little") for i in range(0, 16, 4))
    forms.append(("tcp6", f"{words}:{port:04X}"))
    return forms


def peer_uid(ip: str, port: int, proc: Path = Path("/proc/net")) -> int | None | bool:
    """The uid owning the client socket ip:port; None if unknown; False if /proc has no table."""
    if not (proc / "tcp").exists():
        return False
    for table, local in _proc_form(ip, port):
        try:
            with open(proc / table, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        at = data.find(b": " + local.encode() + b" ")  # "  sl: local remote st ... uid ..."
        if at >= 0:
            cols = data[at:data.find(b"\n", at)].split()
            if len(cols) > 7 and cols[7].isdigit():
                return int(cols[7])
    return None


@dataclass
class Policy:
    """The settings auth decides by. `peer_uid` is replaceable in tests."""
    bind_host: str
    allowed_hosts: tuple[str, ...] = ()
    token_file: Path = field(default_factory=tokens_path)
    peer_uid: Callable[[str, int], int | None | bool] = peer_uid
    _tokens: list[TokenRecord] = field(default_factory=list)
    _tokens_sig: tuple | None = None
    _peers: dict = field(default_factory=dict)

    def tokens(self) -> list[TokenRecord]:
        """The token records, re-read when the file changes (a token created while serving counts)."""
        try:
            st = os.stat(self.token_file)
            sig = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            sig = None
        if sig != self._tokens_sig:
            self._tokens = load_tokens(self.token_file) if sig else []
            self._tokens_sig = sig
        return self._tokens

    def host_ok(self, host: str) -> bool:
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        name = name.strip("[]").lower()
        if not name:
            return False
        if is_loopback(name) or name in self.allowed_hosts:
            return True
        if is_loopback(self.bind_host):
            return False  # a loopback server answers to loopback names only: DNS rebinding
        if self.bind_host in ("0.0.0.0", "::", ""):
            return name in (socket.gethostname().lower(), socket.getfqdn().lower()) or _is_ip(name)
        return name == self.bind_host.lower()

    def same_user(self, ip: str, port: int) -> bool:
        now = time.monotonic()
        hit = self._peers.get((ip, port))
        if hit and now - hit[1] < PEER_CACHE_S:
            return hit[0]
        uid = self.peer_uid(ip, port)
        ok = uid is False or uid == os.getuid()
        if len(self._peers) >= PEER_CACHE_MAX:
            self._peers.clear()
        self._peers[(ip, port)] = (ok, now)
        return ok


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


def _headers(scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


async def _deny(send, status: int, code: str, message: str, extra: list | None = None) -> None:
    body = json.dumps({"code": code, "message": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
                + (extra or [])})
    await send({"type": "http.response.body", "body": body})


class AuthMiddleware:
    def __init__(self, app, policy: Policy):
        self.app = app
        self.policy = policy

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        server = scope.get("server")
        unix = bool(server) and server[1] is None
        if unix:
            scope[ROLE_KEY] = "maintainer"
            return await self.app(scope, receive, send)
        h = _headers(scope)
        if not self.policy.host_ok(h.get("host", "")):
            return await _deny(send, 403, "bad_host", "Host header not allowed for this server (DNS rebinding "
                                                      "guard); add the name to VAULTRAG_ALLOWED_HOSTS if it is yours")
        origin = h.get("origin")
        if origin is not None and not self.policy.host_ok(urlsplit(origin).netloc if "://" in origin else ""):
            return await _deny(send, 403, "bad_origin", "cross-origin request refused")
        role, why = self._role(scope, h)
        if role is None and scope.get("path") not in OPEN_PATHS:
            return await _deny(send, 401, "unauthorized", why, [(b"www-authenticate", b'Bearer realm="vaultrag"')])
        scope[ROLE_KEY] = role or "anonymous"
        return await self.app(scope, receive, send)

    def _role(self, scope, h: dict[str, str]) -> tuple[str | None, str]:
        tokens = self.policy.tokens()
        auth = h.get("authorization", "")
        if auth[:7].lower() == "bearer " and tokens:
            rec = verify(auth[7:].strip(), tokens)
            return (rec.role, "") if rec else (None, "unknown token")
        if tokens:
            return None, "send Authorization: Bearer <token> (see `vaultrag token create`)"
        client = scope.get("client") or ("", 0)
        if is_loopback(client[0]) and self.policy.same_user(client[0], int(client[1] or 0)):
            return "maintainer", ""
        return None, ("no tokens are configured, so only loopback requests from this user are allowed; "
                      "create one with `vaultrag token create --role reader`")

"""Hook processes forward to a running `vaultrag serve` through its Unix socket.

Standard library only, and nothing of vaultrag's is imported before forwarding: a hook process
that finds the server spends its time on interpreter start, one socket round trip and the
server's in-process answer. No socket file -> the caller runs the hook in process, as before.
Same fail-open rules as the hook: never raises, never waits past the hook's deadline (forward_timeout).
"""
from __future__ import annotations

import os
import sys
import time

# The hook's deadline is $VAULTRAG_HOOK_TIMEOUT_MS, else the config file's hooks.timeout_ms, else
# this (config.Config.hook_timeout_ms; not imported: the config loader is 30-50 ms of a forwarded
# hook's start under load, BENCHMARKS.md "fix12"). The forward may use all of it but LOG_RESERVE_S,
# and at least FORWARD_SHARE of a short one: giving up on a hung server is logged, and log_line's
# scrubber import takes ~0.2 s. The default deadline gives FORWARD_TIMEOUT_S; the server answers in ~10 ms.
DEFAULT_HOOK_TIMEOUT_MS = 1500
LOG_RESERVE_S = 0.3
FORWARD_SHARE = 0.5
FORWARD_TIMEOUT_S = 1.2  # = forward_share_s(DEFAULT_HOOK_TIMEOUT_MS)
MAX_CONFIG_BYTES = 1024 * 1024  # as config.MAX_CONFIG_BYTES
MAX_STDIN_BYTES = 32 * 1024 * 1024  # as vaultrag.hooks.MAX_STDIN_BYTES
# The environment that picks the index; the server refuses (409) a hook meant for another one.
IDENTITY_ENV = ("VAULTRAG_CONFIG", "VAULTRAG_VAULT", "VAULTRAG_DB", "VAULTRAG_STORE", "VAULTRAG_COLLECTION")
PG_SCHEMES = ("postgresql://", "postgres://")  # as store/open.POSTGRES_SCHEMES (not imported: hook path)
IDENTITY_HEADER = "X-Vaultrag-Identity"
SOCKET_NAME = "serve.sock"
MAX_RESPONSE_BYTES = 64 * 1024 * 1024  # a PostToolUse answer carries a compressed tool output


def default_socket() -> str:
    """`$VAULTRAG_SOCKET`, else `<XDG_STATE_HOME>/vaultrag/serve.sock` (`~/.local/state/...`)."""
    env = os.environ.get("VAULTRAG_SOCKET")
    if env:
        return env
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "vaultrag", SOCKET_NAME)


def identity() -> str:
    """The identity environment as a JSON object (ASCII, keys sorted), written without `json`:
    importing it is ~1-2 ms of a forwarded hook whose only other JSON is passed through as bytes."""
    items = sorted((k, store_identity(os.environ[k]) if k == "VAULTRAG_STORE" else os.environ[k])
                   for k in IDENTITY_ENV if os.environ.get(k))
    return "{" + ", ".join(f"{_json_string(k)}: {_json_string(v)}" for k, v in items) + "}"


def store_identity(location: str) -> str:
    """A PostgreSQL URL as the identity check compares it: without its password (which never
    travels in the header) and with one spelling of the scheme. A path is returned as it is."""
    for scheme in PG_SCHEMES:
        if location.startswith(scheme):
            netloc, slash, rest = location[len(scheme):].partition("/")
            userinfo, at, hostport = netloc.rpartition("@")
            user = userinfo.split(":", 1)[0] + at if at else ""
            return PG_SCHEMES[0] + user + hostport + slash + rest
    return location


def _json_string(text: str) -> str:
    """`text` as a JSON string literal in ASCII (what json.dumps(..., ensure_ascii=True) accepts back)."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= code < 0x7F:
            out.append(ch)
        elif code > 0xFFFF:
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            out.append(f"\\u{code:04x}")
    return '"' + "".join(out) + '"'


def request(path: str, method: str, route: str, body: bytes | None = None, timeout: float = FORWARD_TIMEOUT_S,
            headers: dict | None = None) -> tuple[int, bytes]:
    """One HTTP/1.1 exchange over the Unix socket at `path`: (status, body). Written on the bare
    socket: http.client pulls in the email package, ~5 ms of a hook's start (30 ms under load).
    Raises ConnectionError for a reply that is not HTTP, OSError (socket.timeout) past `timeout`."""
    try:  # the C module: `socket` builds its enums at import (~2 ms of a hook's start, 30 under load)
        import _socket as socket
    except ImportError:  # pragma: no cover - every CPython has it
        import socket

    deadline = time.monotonic() + timeout
    body = body or b""
    head = [f"{method} {route} HTTP/1.1", "Host: localhost", "Connection: close", f"Content-Length: {len(body)}",
            "Content-Type: application/json"] + [f"{k}: {v}" for k, v in (headers or {}).items()]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        chunks, size = [], 0
        while True:
            sock.settimeout(max(0.001, deadline - time.monotonic()))
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_RESPONSE_BYTES:
                raise ConnectionError("response too large")
    finally:
        sock.close()
    return _parse_response(b"".join(chunks))


def _parse_response(raw: bytes) -> tuple[int, bytes]:
    head, sep, body = raw.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if not sep or len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
        raise ConnectionError("not an HTTP response")
    fields = {}
    for line in lines[1:]:
        k, _, v = line.partition(b":")
        fields[k.strip().lower()] = v.strip()
    if fields.get(b"transfer-encoding", b"").lower() == b"chunked":
        body = _dechunk(body)
    elif fields.get(b"content-length", b"").isdigit():
        body = body[:int(fields[b"content-length"])]
    return int(parts[1]), body


def _dechunk(data: bytes) -> bytes:
    out, pos = [], 0
    while True:
        end = data.find(b"\r\n", pos)
        if end < 0:
            raise ConnectionError("truncated chunked response")
        n = int(data[pos:end].split(b";")[0] or b"0", 16)
        if n == 0:
            return b"".join(out)
        out.append(data[end + 2:end + 2 + n])
        pos = end + 2 + n + 2


def forwarded(event: str, sock: str | None = None) -> bool:
    """Answer the hook `event` through the server: True if done (output printed, or deliberately
    none); False to run it in process, with stdin restored for the caller to read."""
    sock = sock or default_socket()
    if not os.path.exists(sock):
        return False
    raw = b""
    try:
        raw = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
        if len(raw) > MAX_STDIN_BYTES:
            return False  # the in-process path logs and skips it
        status, out = request(sock, "POST", f"/hooks/{event}", raw, timeout=forward_timeout(),
                              headers={IDENTITY_HEADER: identity()})
    except (ConnectionError, FileNotFoundError):
        return _restore(raw)  # a stale socket file (no server behind it), or not a vaultrag server
    except TimeoutError:  # a hung server: fail open, like the hook itself (no context)
        _log(f"{event}: gave up on the server at {sock} after {forward_timeout():.2f} s "
             f"(hook deadline {hook_timeout_ms()} ms: hooks.timeout_ms or $VAULTRAG_HOOK_TIMEOUT_MS)")
        return True
    except OSError as exc:  # a broken server: fail open
        _log(f"{event}: server at {sock}: {type(exc).__name__}: {exc}")
        return True
    if status != 200:
        return _restore(raw)  # 409: the server serves another index; others: let the hook decide
    text = out.decode("utf-8", errors="replace").strip()
    if text and text != "{}":
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    return True


def forward_timeout() -> float:
    """How long to wait for the server: the hook's deadline (`hook_timeout_ms()`) less what logging
    a give-up needs. Trial finding: hooks.timeout_ms was not read here, so a hung server held a
    500 ms hook for 1.2 s, and a 4000 ms hook (a PostgreSQL store) gave up on a working server at 1.2 s."""
    return forward_share_s(hook_timeout_ms())


def forward_share_s(deadline_ms: int) -> float:
    deadline_s = deadline_ms / 1000
    return max(deadline_s * FORWARD_SHARE, deadline_s - LOG_RESERVE_S)


def hook_timeout_ms() -> int:
    """The hook's deadline as the in-process path takes it (hooks.main): $VAULTRAG_HOOK_TIMEOUT_MS,
    else the config file's `hooks.timeout_ms`, else DEFAULT_HOOK_TIMEOUT_MS."""
    try:
        env = int(os.environ.get("VAULTRAG_HOOK_TIMEOUT_MS") or 0)
    except ValueError:
        env = 0
    if env > 0:
        return env
    try:
        found = config_timeout_ms()
    except Exception:  # an unreadable file or folder: the in-process path reports it
        found = None
    return found if found is not None else DEFAULT_HOOK_TIMEOUT_MS


def config_file() -> str:
    """The config file config.config_file_path() names (not imported: see DEFAULT_HOOK_TIMEOUT_MS)."""
    explicit = os.environ.get("VAULTRAG_CONFIG")
    if explicit:
        return os.path.expanduser(explicit)
    base = os.environ.get("XDG_CONFIG_HOME", "")
    if not base or not os.path.isabs(base):
        home = os.environ.get("HOME", "")
        base = os.path.join(home if home and os.path.isabs(home) else os.path.expanduser("~"), ".config")
    return os.path.join(base, "vaultrag", "config.yaml")


def config_timeout_ms() -> int | None:
    """`hooks.timeout_ms` of the config file, or None (no file, no such key). Read with a line scan
    of the YAML (block `hooks:` with `  timeout_ms: N` under it, or flow `hooks: {timeout_ms: N}`),
    without yaml or the config loader; a value the scan cannot read as a positive integer (an
    anchor, a quoted or computed value) is asked of the config loader, which costs its import."""
    import stat

    path = config_file()
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_CONFIG_BYTES:
        return None
    with open(path, "rb") as f:
        text = f.read(MAX_CONFIG_BYTES).decode("utf-8")
    value = scan_hooks_timeout(text)
    if value is None or (value.isdigit() and int(value) > 0):
        return int(value) if value else None
    from .config import load_config  # the rare shape the scan does not read

    return load_config().hook_timeout_ms


def scan_hooks_timeout(text: str) -> str | None:
    """The text of `hooks.timeout_ms`'s value in a YAML config (the last one, as yaml keeps), or None."""
    found, in_hooks, indent = None, False, None
    for raw in text.splitlines():
        line = _uncomment(raw).rstrip()
        if not line.strip() or line.strip() in ("---", "..."):
            continue
        if not line[0].isspace():  # a top-level key
            key, _, rest = line.partition(":")
            in_hooks, indent = _unquote(key) == "hooks", None
            rest = rest.strip()
            if in_hooks and rest.startswith("{"):
                in_hooks = False
                for item in rest.strip("{}").split(","):
                    k, sep, v = item.partition(":")
                    if sep and _unquote(k) == "timeout_ms":
                        found = v.strip()
            elif in_hooks and rest:
                in_hooks = False  # `hooks: *anchor` or another scalar: not a mapping the scan reads
                found = rest if "timeout_ms" in text else found
            continue
        if in_hooks:
            depth = len(line) - len(line.lstrip())
            indent = depth if indent is None else indent
            key, sep, v = line.strip().partition(":")
            if depth == indent and sep and _unquote(key) == "timeout_ms":
                found = v.strip()
    return found


def _uncomment(line: str) -> str:
    i = line.find("#")
    while i >= 0:
        if i == 0 or line[i - 1] in " \t":
            return line[:i]
        i = line.find("#", i + 1)
    return line


def _unquote(key: str) -> str:
    key = key.strip()
    return key[1:-1] if len(key) >= 2 and key[0] == key[-1] and key[0] in "'\"" else key


def _restore(raw: bytes) -> bool:
    import io

    sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    return False


def _log(message: str) -> None:
    try:
        from .hooks import log_line

        log_line(message)
    except Exception:
        pass

"""`vaultrag serve`: bind, warm up, serve until SIGTERM/Ctrl-C, then clean up.

One process keeps the config, a Store per worker thread and the query encoder warm. It listens
on TCP (loopback by default) and on a Unix socket that the command hooks forward to. SIGTERM
lets the requests in flight finish (uvicorn's graceful shutdown), waits for a running reindex
to commit, closes the index, and removes the PID and socket files.
"""
from __future__ import annotations

import errno
import json
import logging
import os
import signal
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from ..api import Service
from ..errors import VaultragError
from ..serve_client import default_socket, request
from .auth import Policy, is_loopback

log = logging.getLogger("vaultrag.serve")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
GRACEFUL_S = 30  # SIGTERM: requests in flight get this long to finish
REINDEX_DRAIN_S = 30  # ... and a running reindex this long to commit the file it is writing and stop


@dataclass(frozen=True)
class ServeOptions:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    socket_path: str | None = None
    watch: bool = False
    allowed_hosts: tuple[str, ...] = ()


def store_to_db(url: str | None) -> str | None:
    """`--store` when it is not PostgreSQL (serve/cli.py opens that one itself): a SQLite path (or
    sqlite:///path)."""
    if not url:
        return None
    if url.startswith("sqlite:///"):
        return url[len("sqlite://"):]
    if "://" in url:
        raise VaultragError(f"--store {url.split('://')[0]}://... is not a store vaultrag knows; give a SQLite path or postgresql://...")
    return url


def bind_tcp(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise VaultragError(f"port {port} on {host} is already taken (another `vaultrag serve`?); "
                                f"stop it or pass --port N") from None
        raise VaultragError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def bind_unix(path: str) -> socket.socket:
    """A 0600 socket in a 0700 folder; a stale file is replaced, a live server is not."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if p.exists():
        try:
            request(str(p), "GET", "/healthz", timeout=0.5)
        except OSError:
            p.unlink()
        else:
            raise VaultragError(f"a vaultrag server already listens on {p}; stop it or pass --socket PATH")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(str(p))
    finally:
        os.umask(old)
    os.chmod(p, 0o600)
    sock.listen(128)
    return sock


def _warm(service: Service) -> None:
    """Open the index and load the query encoder now, not on the first hook."""
    try:
        service.search("vaultrag warm up")
    except VaultragError as exc:
        log.warning("index not ready yet: %s", exc)


def serve(service: Service, opts: ServeOptions, *, ready=None) -> int:
    import uvicorn

    from .app import build_app
    from .mcp_server import build_mcp, http_app

    policy = Policy(bind_host=opts.host, allowed_hosts=opts.allowed_hosts)
    if not is_loopback(opts.host) and not policy.tokens():
        raise VaultragError(f"--host {opts.host} is reachable from other machines: create a token first "
                            f"(`vaultrag token create --role reader`), or keep the default 127.0.0.1")
    sock_path = opts.socket_path or default_socket()
    tcp = bind_tcp(opts.host, opts.port)
    try:
        unix = bind_unix(sock_path)
    except BaseException:
        tcp.close()
        raise
    pid_file = Path(sock_path + ".pid")
    watcher = None
    try:
        pid_file.write_text(json.dumps({"pid": os.getpid(), "host": opts.host, "port": tcp.getsockname()[1],
                                        "socket": sock_path, "db": str(service.cfg.db_path())}), encoding="utf-8")
        _warm(service)
        service.keep_embedder_loaded()  # POST /reindex and --watch reuse one loaded model
        app = build_app(service, policy, mcp_app=http_app(build_mcp(service)))
        service.identity = _identity(service)
        if opts.watch:
            from .watch import Watcher

            watcher = Watcher(service)
            watcher.start()
        from .limits import GuardedH11Protocol

        # no limit_concurrency: it counts idle connections too (limits.py); InFlightLimit counts requests
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", http=GuardedH11Protocol,
                                timeout_graceful_shutdown=GRACEFUL_S)
        server = _Server(config, on_exit=service.stop_reindex)
        print(f"vaultrag: serving {service.cfg.vault} on http://{opts.host}:{tcp.getsockname()[1]} "
              f"and {sock_path}" + (" (watching)" if watcher else ""), file=sys.stderr, flush=True)
        if ready:
            ready(tcp.getsockname()[1])
        signal.signal(signal.SIGTERM, _exit_quietly)  # uvicorn re-raises SIGTERM after its graceful stop
        server.run(sockets=[tcp, unix])
    finally:
        service.drain(REINDEX_DRAIN_S)  # first: the watcher may be waiting on a reindex
        if watcher:
            watcher.stop()
        service.close()
        for s in (tcp, unix):
            s.close()
        for f in (Path(sock_path), pid_file):
            try:
                f.unlink()
            except FileNotFoundError:
                pass
    return 0


def _server_class():
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server, telling a running reindex to stop as soon as SIGTERM/Ctrl-C arrives,
        so that the graceful shutdown does not wait on a rebuild of the whole vault."""

        def __init__(self, config, on_exit):
            super().__init__(config)
            self.on_exit = on_exit

        def handle_exit(self, sig, frame):
            self.on_exit()
            super().handle_exit(sig, frame)

    return Server


def _Server(config, on_exit):
    return _server_class()(config, on_exit)


def _exit_quietly(*_):
    raise SystemExit(0)


def _identity(service: Service) -> dict:
    """What the hooks' environment variables must resolve to for this server to answer them."""
    from ..store.open import collection_names, is_postgres, store_location
    from .app import identity_value

    cfg = service.cfg
    store = str(store_location(cfg))
    return {"VAULTRAG_VAULT": str(Path(cfg.vault).expanduser().resolve()) if cfg.vault else None,
            "VAULTRAG_DB": str(Path(cfg.db_path()).expanduser().resolve()),
            "VAULTRAG_CONFIG": service.config_file,
            "VAULTRAG_STORE": identity_value("VAULTRAG_STORE", store),
            # a SQLite file holds one index: a collection named by the hook means nothing there
            "VAULTRAG_COLLECTION": ",".join(collection_names(cfg)) if is_postgres(store) else None}

"""The `serve`, `mcp` and `token` subcommands (added to `vaultrag` by one call in vaultrag/cli.py)."""
from __future__ import annotations

import argparse
import os
import sys

from ..errors import DependencyMissing, name_location

INSTALL_HINT = "pip install 'vaultrag[serve]'  (or: .venv/bin/pip install -e '.[serve]')"


def add_parsers(sub) -> None:
    p = sub.add_parser("serve", help="a resident server: HTTP API, MCP at /mcp, hooks over a Unix socket")
    _source(p)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; "
                   "anything else needs tokens, see `vaultrag token create`)")
    p.add_argument("--port", type=int, default=8765, help="TCP port (default 8765; 0 picks a free one)")
    p.add_argument("--watch", action="store_true", help="reindex notes as they are saved")
    p.add_argument("--socket", help="Unix socket the hooks forward to (default $XDG_STATE_HOME/vaultrag/serve.sock)")
    p.set_defaults(func=cmd_serve)
    p = sub.add_parser("mcp", help="an MCP server on stdio: claude mcp add vaultrag -- vaultrag mcp")
    _source(p)
    p.set_defaults(func=cmd_mcp)
    p = sub.add_parser("token", help="API tokens for `vaultrag serve`")
    tsub = p.add_subparsers(dest="token_command", required=True)
    c = tsub.add_parser("create", help="create a token; it is printed once, only its hash is stored")
    c.add_argument("--role", required=True, choices=("reader", "maintainer"))
    c.add_argument("--name", help="a label to recognise it by")
    c.add_argument("-v", "--verbose", action="store_true", help=argparse.SUPPRESS)
    c.set_defaults(func=cmd_token_create)


def _source(p) -> None:
    p.add_argument("--vault", help="vault folder (default: `vault:` from the config file)")
    p.add_argument("--config", help="config file (default: $VAULTRAG_CONFIG or ~/.config/vaultrag/config.yaml)")
    p.add_argument("--store", help="index: a SQLite file path (default: one file per vault under ~/.local/share/vaultrag/) "
                   "or postgresql://user:pass@host:port/db")
    p.add_argument("--collection", help="PostgreSQL: the collection(s) to answer from, a,b for several "
                   "(default: `collection:` / VAULTRAG_COLLECTION, else the vault folder's name)")
    p.add_argument("-v", "--verbose", action="store_true", help="log each request to stderr")


def _service(args):
    from ..api import Service
    from ..store import is_postgres
    from .runner import store_to_db

    if is_postgres(args.store):  # issue 15: a team index
        return Service.from_args(args.config, vault=args.vault, store=args.store,
                                 collection=getattr(args, "collection", None))
    db = store_to_db(args.store)
    # The fix commands in its errors (HTTP, MCP, log lines) are reindexes: `--store sqlite:///p` is `--store /p` there.
    name_location(vault=args.vault, config=args.config, store=db)
    # `store:` in the config file may name PostgreSQL: the collection given applies there
    return Service.from_args(args.config, vault=args.vault, db=db, collection=getattr(args, "collection", None))


def _need_serve_extra() -> None:
    try:
        import mcp  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise DependencyMissing(f"`vaultrag serve` and `vaultrag mcp` need {exc.name}: {INSTALL_HINT}") from None


def one_blas_thread() -> None:
    """A resident process answers many small queries, several at once on a thread pool: numpy's
    BLAS (the resident int8 vectors' one matrix-vector product a query, store/sqlite/resident.py)
    runs one thread unless the user says otherwise. Set before anything imports numpy."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def cmd_serve(args) -> int:
    one_blas_thread()
    _need_serve_extra()
    from .runner import ServeOptions, serve

    hosts = tuple(h.strip().lower() for h in os.environ.get("VAULTRAG_ALLOWED_HOSTS", "").split(",") if h.strip())
    opts = ServeOptions(host=args.host, port=args.port, socket_path=args.socket, watch=args.watch, allowed_hosts=hosts)
    return serve(_service(args), opts)


def cmd_mcp(args) -> int:
    one_blas_thread()
    _need_serve_extra()
    from .mcp_server import run_stdio

    run_stdio(_service(args))
    return 0


def cmd_token_create(args) -> int:
    from .tokens import create_token, tokens_path

    token, rec = create_token(args.role, args.name)
    print(token)
    print(f"vaultrag: {rec.role} token {rec.name!r} created; only its hash is kept in {tokens_path()}. "
          f"Copy it now: it is not shown again. Send it as `Authorization: Bearer <token>`.", file=sys.stderr)
    return 0

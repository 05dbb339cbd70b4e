"""The `vaultrag` command: a thin shell over the library (no SQL, no ranking here)."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from . import _when_logging

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
from .errors import LOCATION_OPTIONS, VaultragError, name_location

EXIT_INTERRUPTED = 130


def esc(text: str) -> str:
    """Human output never prints a control character from a file name or note (an ESC byte would
    drive the terminal): they are shown escaped (\\x1b)."""
    from .paths import escape_controls

    return escape_controls(str(text))


def _location(p: argparse.ArgumentParser) -> None:
    p.add_argument("--vault", help="vault folder (default: `vault:` from the config file)")
    p.add_argument("--config", help="config file (default: $VAULTRAG_CONFIG or ~/.config/vaultrag/config.yaml)")
    p.add_argument("--db", help="index database (default: one file per vault under ~/.local/share/vaultrag/)")
    p.add_argument("--store", help="where the index lives: a SQLite file path or postgresql://user:pass@host:port/db "
                                   "(default: $VAULTRAG_STORE, `store:`, else --db)")


def _common(p: argparse.ArgumentParser) -> None:
    _location(p)
    p.add_argument("--collection", help="PostgreSQL: the collection (default: the vault folder's name); "
                                        "search: a,b reads several")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("-v", "--verbose", action="store_true", help="log progress details to stderr")


def build_parser() -> argparse.ArgumentParser:
    import argparse  # lazy: `vaultrag search` usually parses without it (search_cli.quick_args, issue 18)

    parser = argparse.ArgumentParser(prog="vaultrag", description="Local hybrid search over a Markdown vault.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("reindex", help="bring the index in line with the vault (incremental)")
    _common(p)
    p.add_argument("--full", action="store_true", help="rebuild from scratch (also repairs a corrupt index)")
    p.add_argument("--no-embed", action="store_true", help="lexical index only, no vectors")
    p.add_argument("--model", help="embedding model: hub id, local folder, or 'bundled'")
    p.add_argument("--workers", type=int, metavar="N", help="processes that read, chunk and embed notes "
                   "(default `index.workers`, 0 = one per core; 1 = all in this process)")
    p.add_argument("--sessions", metavar="DIR", help="also index the Claude Code transcripts in DIR "
                   "(default: `sessions:` from the config; ~/.claude/projects holds them)")
    p = sub.add_parser("status", help="what the index holds, and what changed on disk since")
    _common(p)
    p = sub.add_parser("search", help="search the vault")
    _common(p)
    p.add_argument("query", nargs="?", help="the question or keywords")
    p.add_argument("--queries", help="JSONL file of {\"_id\", \"text\"}: one JSON answer a line on stdout")
    p.add_argument("--k", type=int, help="number of hits (default 10)")
    p.add_argument("--max-tokens", type=int, help="token budget of the answer (default: none, k whole hits; "
                   "with --context the configured hook budget; 0: none)")
    p.add_argument("--channels", help="comma-separated subset of meta,bm25,vec")
    p.add_argument("--no-graph", action="store_true", help="no wikilink expansion")
    p.add_argument("--no-gate", action="store_true",
                   help="show the best matches even when the evidence gate finds them too weak")
    p.add_argument("--explain", action="store_true", help="show each channel's rank and score per hit")
    p.add_argument("--context", action="store_true", help="print the Markdown context block a hook injects")
    p.add_argument("--scope", help="vault | sessions | all (default) | a `scopes:` rule's name; several comma-separated")
    p = sub.add_parser("doctor", help="check what the Claude Code hooks need; one line per problem and its fix",
                       description="Check what the Claude Code hooks need. The location options name another "
                                   "index to check than the configured one, which the hooks read.")
    _location(p)
    p.add_argument("--collection", help="PostgreSQL: the collection to check (default: the vault folder's name)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--plugin-dir", help="also check the plugin at DIR (as run by `claude --plugin-dir DIR`)")
    p.add_argument("-v", "--verbose", action="store_true", help=argparse.SUPPRESS)
    from .serve.cli import add_parsers  # serve, mcp, token (issue 16); their heavy imports are lazy
    add_parsers(sub)
    return parser


def _config(args):
    from .config import load_config

    return load_config(args.config, vault=args.vault, db=args.db, model=getattr(args, "model", None),
                       store=args.store, collection=args.collection, sessions=getattr(args, "sessions", None))


class _ProgressPrinter:
    """A bar on a terminal; otherwise a line every few seconds (logs and CI stay readable)."""

    INTERVAL_S = 5.0

    def __init__(self):
        self.tty = sys.stderr.isatty()
        self.last = 0.0

    def __call__(self, done: int, total: int, path: str) -> None:
        now = time.monotonic()
        if self.tty:
            width = 30
            filled = width * done // max(total, 1)
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {esc(path)[-40:]:<40}")
            if done == total:
                sys.stderr.write("\n")
            sys.stderr.flush()
        elif now - self.last >= self.INTERVAL_S or done == total:
            self.last = now
            print(f"reindex: {done}/{total} files", file=sys.stderr, flush=True)


def cmd_reindex(args) -> int:
    from .api import reindex

    cfg = _config(args)
    report = reindex(cfg, full=args.full, progress=None if args.json else _ProgressPrinter(),
                     embed=not args.no_embed, workers=getattr(args, "workers", None))
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, sort_keys=True))
    else:
        print(render_report(report))
    return EXIT_INTERRUPTED if report.interrupted else 0


def render_report(r) -> str:
    e = r.embedding
    lines = [
        f"vault:   {esc(r.vault)}",
        f"index:   {esc(r.db)}{' (full rebuild)' if r.full else ''}",
        # scanned = added + updated + unchanged + not read; deleted were in the index only; the paths
        # the scan passed by (symlinks, too large, unreadable folders) were never scanned
        f"files:   {r.scanned} scanned: {r.added} added, {r.updated} updated, {r.unchanged} unchanged, "
        f"{r.not_read} not read; {r.deleted} deleted; {len(r.skipped) - r.not_read} other paths skipped",
        f"chunks:  {r.chunks_written} written, {r.chunks_total} in the index",
    ]
    if e.available:
        lines.append(f"vectors: {e.model}: {e.embedded} embedded, {e.reused} reused"
                     + (" (model changed: every chunk re-embedded)" if e.reembedded_all else ""))
        if e.fallback_reason:
            lines.append(f"         configured model not used: {e.fallback_reason}")
    else:
        lines.append(f"vectors: NOT built ({e.reason}); lexical search only")
    if r.sessions:
        ss = r.sessions
        lines.append(f"sessions: {ss['transcripts']} transcripts in {esc(ss['folder'])}: {ss['segments_written']} "
                     f"read ({ss['messages']} messages), {ss['unchanged']} unchanged, {ss['deleted']} deleted, "
                     f"{ss['sessions_indexed']} in the index")
    if r.secrets:
        lines.append("secrets: " + ", ".join(f"{k} x{v}" for k, v in sorted(r.secrets.items())) + " (redacted)")
    for path, reason in r.skipped[:20]:
        lines.append(f"skipped: {esc(path)}: {esc(reason)}")
    if len(r.skipped) > 20:
        lines.append(f"skipped: ... and {len(r.skipped) - 20} more (see --json)")
    for path, warning in r.warnings[:10]:
        lines.append(f"warning: {esc(path)}: {esc(warning)}" if path else f"warning: {esc(warning)}")
    lines.append(f"time:    {r.seconds:.2f} s" + ("  INTERRUPTED: committed files are kept; run again to finish"
                                                  if r.interrupted else ""))
    return "\n".join(lines)


def cmd_status(args) -> int:
    from .api import status
    from .status import SKIPPED_LISTED

    info = status(_config(args))
    if args.json:
        print(json.dumps(info, indent=2, sort_keys=True))
        return 0
    e = info["embedding"]
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info["last_reindex"])) if info["last_reindex"] else "never"
    size = f"{info['db_bytes'] / 1e6:.1f} MB, " if info.get("db_bytes") is not None else ""
    print(f"index:    {esc(info['db'])} ({size}schema {info['schema_version']})")
    print(f"vault:    {esc(info['vault'])}")
    print(f"contents: {info['files']} files, {info['chunks']} chunks, {info['links']} links, {info['vectors']} vectors")
    print(f"vectors:  " + (f"{e['model']}" + (f" (fallback: {e['fallback_reason']})" if e["fallback_reason"] else "")
                           if e["available"] else f"not available ({e['reason'] or 'never built'})"))
    print(f"reindex:  last {when}; {info['changed_since_reindex']} files changed on disk since")
    if info.get("sqlite"):
        print(f"sqlite:   {sqlite_line(info['sqlite'])}")
    cov = info["coverage"]
    skips = len((cov.get("scopes") or {}).get("vault", {}).get("skipped") or [])
    print(f"coverage: {cov['files_indexed']} indexed of {cov['markdown_files_in_vault']} Markdown files in the vault"
          + (f"; {skips}{'+' if skips >= SKIPPED_LISTED else ''} skipped (below)" if skips else ""))
    for name, sc in (cov.get("scopes") or {}).items():
        print(f"  scope {esc(name)}: {sc['indexed']} indexed of {sc['present']} {sc['unit']} present"
              + (f"; skipped: " + "; ".join(f"{esc(s['path'])}: {esc(s['reason'])}" for s in sc["skipped"][:5])
                 if sc.get("skipped") else ""))
    stale = [r for r in info.get("rebuild_leftovers", []) if r["state"] == "stale"]
    if stale:
        print(f"leftover: {len(stale)} files ({sum(r['bytes'] for r in stale) / 1e6:.1f} MB) of an interrupted full "
              f"rebuild, e.g. {stale[0]['path']}; the next reindex removes them")
    for c in info.get("collections", []):  # PostgreSQL: every collection in the database
        print(f"collection: {esc(c['name'])}: {c['chunks']} chunks (generation {c['generation']})")
    return 0


def sqlite_line(lib: dict) -> str:
    """status's SQLite library in one line: `sqlean 3.50.4 (sqlite-vec loaded)`."""
    how = [] if lib["fts5"] else ["no FTS5"]
    how.append("sqlite-vec loaded" if lib["vec"] is None else f"no vectors: {lib['vec']}")
    if lib.get("forced"):
        how.append(f"VAULTRAG_SQLITE={lib['forced']}")
    return f"{lib['library']} {lib['version']} ({'; '.join(how)})"


def cmd_search(args) -> int:
    from .search_cli import cli_search

    return cli_search(args, _config(args))


def cmd_doctor(args) -> int:
    from .doctor import diagnose, render

    location = {name: getattr(args, name) for name in ("vault", "config", "db", "store", "collection")}
    report = diagnose(plugin_dir=Path(args.plugin_dir).resolve() if args.plugin_dir else None, location=location)
    print(json.dumps(report.to_dict(), indent=2) if args.json else render(report))
    return 0 if report.ok else 1


def main(argv: list[str] | None = None) -> int:
    from .search_cli import quick_args

    args = quick_args(sys.argv[1:] if argv is None else argv) or build_parser().parse_args(argv)
    # Warnings reach stderr as before, but `logging` is imported only by a command that uses it (~6 ms
    # of a `vaultrag search` process otherwise, issue 18).
    _when_logging(lambda logging: logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                                                      format="%(levelname)s %(name)s: %(message)s"))
    handler = getattr(args, "func", None) or {"reindex": cmd_reindex, "status": cmd_status, "search": cmd_search,
                                               "doctor": cmd_doctor}[args.command]
    name_location(**{name: getattr(args, name, None) for name in LOCATION_OPTIONS})  # fixes repeat them
    try:
        return handler(args)
    except VaultragError as exc:
        print(f"vaultrag: error: {esc(str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("vaultrag: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
    finally:
        name_location()  # a caller's next command (tests, a script calling main) starts from none


if __name__ == "__main__":
    sys.exit(main())

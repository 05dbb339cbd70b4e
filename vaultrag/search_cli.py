"""`vaultrag search`: parse the options, search, render (a face over retrieve.search)."""
from __future__ import annotations

import json
import sys


# `vaultrag search` options quick_args reads itself (cli.build_parser defines them all): flags, and
# options taking one value (int: parsed as argparse's type=int would).
_FLAGS = {"--json": "json", "-v": "verbose", "--verbose": "verbose", "--no-graph": "no_graph", "--no-gate": "no_gate",
          "--explain": "explain", "--context": "context"}
_VALUES = {"--vault": "vault", "--config": "config", "--db": "db", "--store": "store", "--collection": "collection",
           "--queries": "queries", "--k": "k", "--max-tokens": "max_tokens", "--channels": "channels", "--scope": "scope"}
_INTS = ("k", "max_tokens")


def quick_args(argv: list[str]):
    """The parsed arguments of a plain `vaultrag search ...` command line without argparse, or None
    for anything else (another command, help, an unknown or abbreviated option, a value that looks
    like an option, a bad number: argparse then parses it and says what is wrong). argparse, with
    gettext, locale and shutil (which imports bz2 and lzma), cost a fresh `vaultrag search` ~12 ms
    of imports on a loaded machine (issue 18). The result has the attributes argparse gives."""
    if not argv or argv[0] != "search":
        return None
    got: dict = {"command": "search", "query": None, **{a: False for a in _FLAGS.values()},
                 **{a: None for a in _VALUES.values()}}
    i, positional = 1, 0
    while i < len(argv):
        tok = argv[i]
        if tok in _FLAGS:
            got[_FLAGS[tok]] = True
        elif tok.split("=", 1)[0] in _VALUES and tok.startswith("--"):
            name, eq, value = tok.partition("=")
            if not eq:
                i += 1
                if i == len(argv) or argv[i].startswith("-"):
                    return None
                value = argv[i]
            dest = _VALUES[name]
            if dest in _INTS:
                try:
                    value = int(value)
                except ValueError:
                    return None
            got[dest] = value
        elif tok.startswith("-") or positional:
            return None
        else:
            got["query"], positional = tok, 1
        i += 1
    from types import SimpleNamespace

    return SimpleNamespace(**got)


def cli_search(args, cfg) -> int:
    """`vaultrag search`: one query, or a JSONL file of queries (one answer a line)."""
    from .errors import VaultragError
    from .render import render_context, render_human
    from .retrieve import search
    from .store import open_store

    channels = [c.strip() for c in args.channels.split(",")] if args.channels else None
    if channels:
        unknown = sorted(set(channels) - {"meta", "bm25", "vec"})
        if unknown:
            raise VaultragError(f"unknown channel(s) {', '.join(unknown)}; choose from meta,bm25,vec")
    if args.no_gate and args.context:
        raise VaultragError("--no-gate and --context do not go together: a hook never injects weak matches")
    # An explicit search asked for k hits returns k whole hits; the token budget shapes context
    # blocks (--context, hooks), or any search given --max-tokens.
    budget = args.max_tokens if args.max_tokens is not None else (None if args.context else 0)
    opts = dict(k=args.k, channels=channels, graph=not args.no_graph, max_tokens=budget,
                gate=not args.no_gate, scope=getattr(args, "scope", None))
    with open_store(cfg, readonly=True) as store:
        if args.queries:
            with open(args.queries, encoding="utf-8") as fh:
                for line in fh:
                    if not line.strip():
                        continue
                    item = json.loads(line)
                    ans = search(str(item.get("text", "")), cfg, store=store, **opts)
                    print(json.dumps({"_id": item.get("_id"), **ans.to_dict(timings=True)}, ensure_ascii=False))
            return 0
        if not args.query:
            raise VaultragError("give a query, or --queries FILE.jsonl")
        ans = search(args.query, cfg, store=store, **opts)
    if args.json:
        print(json.dumps(ans.to_dict(timings=args.explain), ensure_ascii=False, indent=2))
    elif args.context:
        print(render_context(ans))
    else:
        print(render_human(ans, explain=args.explain, color=sys.stdout.isatty()))
    return 0

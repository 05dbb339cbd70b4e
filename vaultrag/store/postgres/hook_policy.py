"""Whether a hook process may search a PostgreSQL store itself, or should leave it to `vaultrag serve`.

A hook that no running server answered is a fresh interpreter. With a PostgreSQL store it must
import the driver first: `python -X importtime -c "import psycopg"` puts ~1.0 s of a 1.5 s
deadline there on an idle 2-core machine (libpq and psycopg_binary's C module ~0.5 s, asyncio and
psycopg.errors ~0.3 s, which psycopg's package imports unconditionally), 2-4 s under load;
connecting and searching come after. Under the default deadline such a hook only ever ran out
of time after using it, so it does not start: it logs why and exits 0 (fail open), and a running
`vaultrag serve` (which hooks forward to) is the way to get context with a team store.
Standard library only: this runs before anything heavy is imported.
"""
from __future__ import annotations

import os

# Below this hook deadline a fresh hook process does not try a PostgreSQL store: the driver import
# alone is ~1 s idle, and a fresh PG hook measured p50 2.6-2.8 s / p95 2.8-3.6 s end to end on this
# machine under load (BENCHMARKS.md, issue 15). A user who raises hooks.timeout_ms to this or more
# gets the in-process search back.
MIN_IN_PROCESS_DEADLINE_MS = 4000


def hook_deadline_ms(cfg) -> int:
    """The deadline the hook runs under (hooks.main's rule: the environment, else the config)."""
    try:
        return int(os.environ.get("VAULTRAG_HOOK_TIMEOUT_MS") or 0) or int(cfg.hook_timeout_ms)
    except (TypeError, ValueError):
        return int(cfg.hook_timeout_ms)


def in_process_refusal(cfg) -> str | None:
    """Why this hook process leaves a PostgreSQL store alone (the log line), or None to search."""
    deadline = hook_deadline_ms(cfg)
    if deadline >= MIN_IN_PROCESS_DEADLINE_MS:
        return None
    return (f"the index is on PostgreSQL and no `vaultrag serve` answered: a fresh hook would spend ~1 s of its "
            f"{deadline} ms deadline importing the driver and time out, so no context was added. Run `vaultrag "
            f"serve` (hooks forward to it), or set hooks.timeout_ms to {MIN_IN_PROCESS_DEADLINE_MS} or more to "
            f"search in the hook itself")

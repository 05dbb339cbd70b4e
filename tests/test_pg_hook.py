"""A hook process with a PostgreSQL store and no `vaultrag serve` to forward to: under the default
deadline it fails open at once (exit 0, no output, one log line) without importing the driver;
with a deadline long enough for the driver's import it searches the real server itself."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pg_fixtures import pg_server, pg_url  # noqa: F401  (fixtures)
from vaultrag.config import load_config
from vaultrag.indexer import reindex
from vaultrag.store.postgres.hook_policy import MIN_IN_PROCESS_DEADLINE_MS

HOOK_CODE = ("import io, sys, json\n"
             "sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps({'session_id': 'x', 'hook_event_name': "
             "'UserPromptSubmit', 'prompt': 'daily snapshots retention backup plan'}).encode()))\n"
             "from vaultrag.hooks import main\n"
             "rc = main('UserPromptSubmit')\n"
             "print(json.dumps(['psycopg' in sys.modules, rc, 'vaultrag.store.postgres.store' in sys.modules]), "
             "file=sys.stderr)\n")


def _run_hook(vault: Path, url: str, **env_extra) -> tuple[str, list, str]:
    env = os.environ.copy()
    env.update(VAULTRAG_VAULT=str(vault), VAULTRAG_STORE=url, VAULTRAG_COLLECTION="notes",
               VAULTRAG_SOCKET=str(vault.parent / "no-server.sock"), **env_extra)
    # This checkout's code, not whichever one the environment's editable install points at (-I would
    # ignore PYTHONPATH and load that one: a worktree's tests then checked another tree's hook).
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    p = subprocess.run([sys.executable, "-s", "-c", HOOK_CODE], capture_output=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    log = Path(os.environ["XDG_STATE_HOME"]) / "vaultrag" / "hooks.log"
    return p.stdout.decode(), json.loads(p.stderr.decode().strip().splitlines()[-1]), \
        log.read_text(encoding="utf-8") if log.exists() else ""


def test_pg_hook_without_server_fails_open_without_the_driver(vault, pg_url, isolated_env):
    reindex(load_config(vault=str(vault), store=pg_url, collection="notes"))
    out, (imported, rc, store_loaded), log = _run_hook(vault, pg_url,
                                                       VAULTRAG_HOOK_TIMEOUT_MS=str(MIN_IN_PROCESS_DEADLINE_MS - 100))
    assert out == "" and rc == 0
    assert imported is False  # the ~1 s driver import was never paid
    assert store_loaded is False  # nor the PG store's ~0.2 s of modules: hook_policy loads without them
    assert "PostgreSQL" in log and "vaultrag serve" in log and f"{MIN_IN_PROCESS_DEADLINE_MS - 100} ms" in log


def test_pg_hook_with_a_long_deadline_searches_in_process(vault, pg_url, isolated_env):
    reindex(load_config(vault=str(vault), store=pg_url, collection="notes"))
    out, (imported, rc, store_loaded), log = _run_hook(vault, pg_url,
                                                       VAULTRAG_HOOK_TIMEOUT_MS=str(MIN_IN_PROCESS_DEADLINE_MS * 5))
    assert rc == 0 and imported is True and store_loaded is True
    assert "Backup plan" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "no `vaultrag serve` answered" not in log


def test_serve_takes_a_postgresql_store_and_answers_a_search(vault, pg_url, isolated_env):
    """`vaultrag serve --store postgresql://...` (the way hooks reach a team index) builds its
    service on that store; it used to refuse the URL."""
    import argparse

    from vaultrag.serve.cli import _service

    reindex(load_config(vault=str(vault), store=pg_url, collection="notes"))
    os.environ["VAULTRAG_COLLECTION"] = "notes"
    try:
        svc = _service(argparse.Namespace(config=None, vault=str(vault), store=pg_url))
        assert svc.cfg.store == pg_url
        from vaultrag.store import open_store

        with open_store(svc.cfg, readonly=True) as st:
            assert st.counts()["chunks"] > 0
    finally:
        os.environ.pop("VAULTRAG_COLLECTION", None)


def test_serve_reconnects_after_the_server_drops_its_connection(vault, pg_url, isolated_env):
    """The database restarted (here: the service's backend terminated, as a restart or a failover
    does): the call that finds the connection gone fails with one line, the next ones answer. The
    service used to keep its dead store, and every search and hook failed until serve restarted."""
    import psycopg

    from vaultrag.api import Service
    from vaultrag.errors import StoreUnavailable

    cfg = load_config(vault=str(vault), store=pg_url, collection="notes")
    reindex(cfg)
    svc = Service(cfg)
    prompt = {"session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": "how long are daily snapshots kept?"}

    def drop_connection():
        pid = svc._store().conn.info.backend_pid
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))

    try:
        assert svc.search("daily snapshots retention").hits
        drop_connection()
        with pytest.raises(StoreUnavailable, match="lost the connection to PostgreSQL"):
            svc.search("daily snapshots retention")
        assert svc.search("daily snapshots retention").hits
        drop_connection()
        with pytest.raises(StoreUnavailable):  # the server answers the hook with nothing and logs this line
            svc.hook("UserPromptSubmit", prompt)
        out = svc.hook("UserPromptSubmit", dict(prompt, session_id="s2"))
        assert "Backup plan" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    finally:
        svc.close()


def test_serve_and_mcp_take_a_collection_on_their_command_line(vault, pg_url, isolated_env, tmp_path):
    """`vaultrag serve --store URL --collection NAME` (and `mcp`): the flag status, doctor, search and
    reindex take; serve and mcp read the collection only from `collection:` / VAULTRAG_COLLECTION."""
    from vaultrag.cli import build_parser
    from vaultrag.serve.cli import _service
    from vaultrag.store import open_store

    other = tmp_path / "other"
    other.mkdir()
    (other / "Kiln.md").write_text("# Kiln\n\nCone 6 glaze firing took nine hours.\n", encoding="utf-8")
    reindex(load_config(vault=str(vault), store=pg_url, collection="notes"))
    reindex(load_config(vault=str(other), store=pg_url, collection="pottery"))
    for face in ("serve", "mcp"):
        args = build_parser().parse_args([face, "--vault", str(other), "--store", pg_url, "--collection", "pottery"])
        svc = _service(args)
        assert svc.cfg.collection == "pottery"
        with open_store(svc.cfg, readonly=True) as st:
            assert st.counts()["chunks"] == 1  # pottery's one note, not the notes collection's

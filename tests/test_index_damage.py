"""A damaged or locked index: what every command says, and what a plain reindex does (robust8).

A new-user trial wrote 64 KiB of garbage into the middle of a real index (not a truncation): search
and a reindex after an edit died with raw tracebacks, status and doctor called the index healthy, a
no-op reindex said "unchanged" and SessionStart said nothing. Another process holding SQLite's
write lock made reindex die with a traceback too. These tests damage and lock real SQLite
files the same ways; each failed on main bd414a4, but the guard that a file which is not
recognisably a vaultrag index is never replaced by a plain reindex (it held there already).
Skipped files: test_scan_skips.py.
"""
from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REPO, lorem_notes, write_notes
from vaultrag.errors import IndexCorrupt, IndexLocked, cli_command, fix_command
from vaultrag.indexer import reindex

GARBAGE_BYTES = 64 * 1024


@pytest.fixture
def notes(tmp_path, vault):
    """The example vault plus 60 filler notes: an index of a few hundred pages, vectors included."""
    return write_notes(vault, {f"Filler/{k}": v for k, v in lorem_notes().items()})


def damage(db: Path, table: str = "chunks_fts_data") -> int:
    """Write GARBAGE_BYTES of random bytes over the middle of `table`'s pages (as SQLite's own dbstat
    lists them), as the trial did: the file keeps its size and its header. Returns the offset."""
    con = sqlite3.connect(db)
    try:
        page_size = con.execute("PRAGMA page_size").fetchone()[0]
        pages = [p for (p,) in con.execute("SELECT pageno FROM dbstat WHERE name = ? ORDER BY pageno", (table,))]
    except sqlite3.OperationalError as exc:
        pytest.skip(f"this SQLite has no dbstat table to find {table}'s pages: {exc}")
    finally:
        con.close()
    assert pages and pages[0] > 1, "the damage must land inside a table's pages, after the header page"
    offset = (pages[len(pages) // 2] - 1) * page_size
    size = db.stat().st_size
    with open(db, "r+b") as fh:
        fh.seek(offset)
        fh.write(random.Random(offset).randbytes(min(GARBAGE_BYTES, size - offset)))
    assert db.stat().st_size == size
    return offset


def independent_check(db: Path) -> str:
    """The standard library's own verdict on the file (not vaultrag's): 'ok' or SQLite's complaint."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute("PRAGMA quick_check").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        return str(exc)
    finally:
        con.close()


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "vaultrag", *args], capture_output=True, text=True,
                          env=env or os.environ.copy(), timeout=180, cwd=str(REPO))


def one_error_line(p) -> str:
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    return lines[0]


@pytest.fixture
def damaged(notes, cfg_for):
    cfg = cfg_for(notes)
    reindex(cfg)
    damage(cfg.db_path())
    assert independent_check(cfg.db_path()) != "ok", "the garbage must really damage the index"
    return cfg


def test_search_and_status_on_a_damaged_index_say_one_line_naming_the_fix(damaged, notes):
    db = str(damaged.db_path())
    args = ("--vault", str(notes), "--db", db)
    for cmd in (("search", "common lorem ipsum"), ("search", "quokka", "--json"), ("status",), ("status", "--json")):
        line = one_error_line(cli(*cmd, *args))
        assert "damaged" in line and db in line, line
        # the command that runs this vaultrag, on the index the command named (test_fix_commands.py runs it)
        assert line.endswith(f"{fix_command('reindex --full')} --vault {notes.resolve()} --db {db}"), line
    from vaultrag.status import status

    with pytest.raises(IndexCorrupt, match="reindex --full"):
        status(damaged)


def test_plain_reindex_rebuilds_a_damaged_index_and_says_so(damaged, notes):
    db = damaged.db_path()
    report = reindex(damaged)  # nothing changed in the vault: it used to say "67 unchanged"
    assert report.full and report.added == 67 and report.unchanged == 0
    assert any("damaged" in w and "rebuilt from the vault" in w for _, w in report.warnings), report.warnings
    assert independent_check(db) == "ok"
    p = cli("search", "quokka", "--vault", str(notes), "--db", str(db), "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["status"] == "ok"
    again = reindex(damaged)  # a sound index: incremental as ever
    assert not again.full and again.unchanged == 67 and not any("damaged" in w for _, w in again.warnings)


def test_reindex_after_an_edit_on_a_damaged_index_is_not_a_traceback(damaged, notes):
    """The trial's second reindex (one note edited) died in store.delete_file on a malformed page."""
    note = notes / "Filler" / "n04.md"
    note.write_text(note.read_text() + "\nAn added line about a quokka colony.\n")
    p = cli("reindex", "--vault", str(notes), "--db", str(damaged.db_path()))
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert "(full rebuild)" in p.stdout and "damaged" in p.stdout
    assert independent_check(damaged.db_path()) == "ok"


def test_a_file_that_is_not_a_vaultrag_index_is_never_replaced_unasked(tmp_path, notes, cfg_for):
    cfg = cfg_for(notes)
    cfg.db_path().write_bytes(b"SQLite format 3\x00" + random.Random(3).randbytes(8192))  # header, then garbage
    with pytest.raises(IndexCorrupt, match="reindex --full"):
        reindex(cfg, embed=False)
    assert cfg.db_path().read_bytes()[:16] == b"SQLite format 3\x00" and cfg.db_path().stat().st_size == 8208


def test_doctor_calls_a_damaged_index_an_error_with_the_rebuild_as_fix(damaged):
    from vaultrag.doctor import index_problems

    problems = index_problems(damaged, [], {})
    assert [p.severity for p in problems] == ["error"], problems
    assert "damaged" in problems[0].problem and problems[0].fix.startswith(f"{cli_command()} reindex --full")


def test_doctor_log_fixes_name_the_rebuild_for_damage_and_waiting_for_a_lock(tmp_path, monkeypatch):
    from vaultrag.doctor import log_problems

    state = tmp_path / "state" / "vaultrag"
    state.mkdir(parents=True)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    import time

    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    (state / "hooks.log").write_text(f"{stamp} UserPromptSubmit: DatabaseError: database disk image is malformed\n"
                                     f"{stamp} UserPromptSubmit: OperationalError: database is locked\n")
    malformed, locked = log_problems([])
    assert "reindex --full" in malformed.fix, malformed  # it used to say "report it"
    assert "reindex --full" not in locked.fix and "nothing to rebuild" in locked.fix, locked  # it said `reindex`


def _session_start(env) -> str:
    payload = {"session_id": "s", "transcript_path": "", "cwd": "/tmp", "hook_event_name": "SessionStart",
               "source": "startup"}
    p = subprocess.run([sys.executable, str(REPO / "hooks" / "session_start.py")], input=json.dumps(payload),
                       capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def test_session_start_tells_the_user_the_hooks_failed_on_a_damaged_index(tmp_path, notes, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    from vaultrag.config import load_config
    from vaultrag.user_config import record_vault

    record_vault(notes)
    cfg = load_config()
    reindex(cfg)
    # PYTHONPATH: the hook scripts import this checkout's vaultrag even where another one is installed
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO)}
    assert _session_start(env) == ""
    damage(cfg.db_path())
    prompt = {"session_id": "s", "transcript_path": "", "cwd": "/tmp", "hook_event_name": "UserPromptSubmit",
              "prompt": "lorem ipsum dolor common quokka"}
    p = subprocess.run([sys.executable, str(REPO / "hooks" / "user_prompt_submit.py")], input=json.dumps(prompt),
                       capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0 and p.stdout == "", (p.stdout, p.stderr)  # fails open, and logs why
    message = json.loads(_session_start(env))["systemMessage"]
    assert "damaged index" in message and str(cfg.db_path()) in message
    assert fix_command("reindex --full") in message
    reindex(cfg)  # repairs it: the notice goes
    assert _session_start(env) == ""


def test_reindex_while_another_process_holds_the_write_lock_says_locked(notes, cfg_for, monkeypatch, capsys):
    cfg = cfg_for(notes)
    reindex(cfg, embed=False)
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sqlite3, sys, time
        con = sqlite3.connect({str(cfg.db_path())!r}, isolation_level=None)
        con.execute("BEGIN EXCLUSIVE")
        con.execute("UPDATE meta SET value = value WHERE key = 'schema_version'")
        print("held", flush=True)
        sys.stdin.read()
    """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        from vaultrag.store.sqlite import connection

        monkeypatch.setattr(connection, "_busy_ms", 300)  # SQLite's wait, 5 s by default
        with pytest.raises(IndexLocked, match="locked by another process"):
            reindex(cfg, embed=False)
        from vaultrag.cli import main

        assert main(["reindex", "--vault", str(notes), "--db", str(cfg.db_path()), "--no-embed"]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "locked by another process" in err[0] and "Traceback" not in err[0], err
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert reindex(cfg, embed=False).unchanged == 67  # the lock gone, nothing was lost


def test_fix_commands_name_the_running_interpreters_vaultrag(tmp_path, monkeypatch):
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    python = venv / "python"
    python.write_text("")
    monkeypatch.setattr(sys, "executable", str(python))
    assert fix_command("reindex --full") == f"{python} -m vaultrag reindex --full"  # no script beside it
    exe = venv / "vaultrag"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    assert fix_command("reindex --full") == f"{exe} reindex --full"


def test_the_resident_service_answers_a_damaged_index_with_503_naming_the_fix(damaged, tmp_path):
    """`vaultrag serve` keeps its store open: a search that meets damaged pages is HTTP 503
    `index_corrupt` with the CLI's one line (not a 500), and the service reopens the file after."""
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from vaultrag import api
    from vaultrag.serve import auth
    from vaultrag.serve.app import build_app

    svc = api.Service(damaged)
    policy = auth.Policy(bind_host="127.0.0.1", token_file=tmp_path / "tokens.json", peer_uid=lambda ip, port: os.getuid())
    try:
        with TestClient(build_app(svc, policy), base_url="http://127.0.0.1:8765", client=("127.0.0.1", 50123),
                        raise_server_exceptions=False) as client:
            r = client.post("/search", json={"query": "common lorem ipsum quokka", "k": 5})
            assert r.status_code == 503, r.text
            body = r.json()
            assert body["code"] == "index_corrupt", body
            assert "damaged" in body["message"] and body["message"].endswith(fix_command("reindex --full"))
            reindex(damaged, full=True)  # the fix it names; the same service then answers
            assert client.post("/search", json={"query": "common lorem ipsum quokka", "k": 5}).status_code == 200
    finally:
        svc.close()


def test_a_failure_and_a_rebuild_in_the_same_second_are_ordered(tmp_path, monkeypatch):
    """The hook log's stamps carry milliseconds: a rebuild right after a failure clears the notice,
    a failure right after a change (the damage itself) raises it, though both share one second."""
    from vaultrag.doctor import damaged_index_log_problems, log_time
    from vaultrag.hooks import log_stamp

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    (tmp_path / "state" / "vaultrag").mkdir(parents=True)
    index = tmp_path / "index.sqlite"
    index.write_bytes(b"x")
    second = int(index.stat().st_mtime)
    os.utime(index, (second + 0.5, second + 0.5))
    log = tmp_path / "state" / "vaultrag" / "hooks.log"
    for offset, expected in ((-0.2, 0), (+0.2, 1)):
        log.write_text(f"{log_stamp(second + 0.5 + offset)} UserPromptSubmit: DatabaseError: database disk image is malformed\n")
        assert len(damaged_index_log_problems({"index": str(index)})) == expected, offset
    assert abs(log_time(log_stamp(second + 0.25)) - (second + 0.25)) < 0.002
    assert log_time("2026-12-03T12:13:12") is not None and log_time("not a stamp") is None


def test_an_older_vaultraggs_index_in_the_hook_log_is_old_not_damaged(tmp_path, monkeypatch):
    """trial10: an index of an older schema failed the hooks with IndexCorrupt, and doctor/SessionStart
    called it damaged and named `reindex --full` while the quoted message named `reindex`."""
    from vaultrag.doctor import damaged_index_log_problems
    from vaultrag.errors import OUTDATED_SIGN
    from vaultrag.hooks import log_stamp

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    (tmp_path / "state" / "vaultrag").mkdir(parents=True)
    index = tmp_path / "index.sqlite"
    index.write_bytes(b"x")
    at = index.stat().st_mtime + 1
    (tmp_path / "state" / "vaultrag" / "hooks.log").write_text(
        f"{log_stamp(at)} UserPromptSubmit: IndexCorrupt: index {index} {OUTDATED_SIGN} (schema 2, this one reads 7); "
        f"rebuild it with: {fix_command('reindex')}\n")
    [problem] = damaged_index_log_problems({"index": str(index)})
    assert "damaged" not in problem.problem and "older vaultrag" in problem.problem
    assert problem.fix.startswith(fix_command("reindex") + " ") and "--full" not in problem.fix

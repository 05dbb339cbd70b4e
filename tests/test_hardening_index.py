"""Issue 14, findings 4, 5 and 7: nothing is left behind, no secret or control character in a
path is stored or printed, and the small things (permissions, HOME, exclude, read-only folders).

Each test here failed on the code before the fix (main 703a2bf).
"""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from contextlib import contextmanager
from pathlib import Path

import pytest

from vaultrag.indexer import reindex
from vaultrag.retrieve import search

GITHUB_TOKEN = "ghp_" + "wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx"  # token-shaped test value, not a credential
ANTHROPIC_KEY = "sk-ant-api03-" + "Zq3" * 30


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


# -- finding 4: a killed --full leaves nothing behind for long --------------------------------
def _kill_full_rebuild(cfg, vault: Path) -> None:
    """A real `reindex --full` killed with SIGKILL after its first file was written."""
    code = textwrap.dedent(f"""
        import os, signal
        from vaultrag.config import load_config
        from vaultrag.indexer import reindex
        cfg = load_config(vault={str(vault)!r}, db={str(cfg.db_path())!r})
        reindex(cfg, full=True, embed=False, progress=lambda done, total, path: os.kill(os.getpid(), signal.SIGKILL))
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert p.returncode == -signal.SIGKILL, p.stderr


def test_killed_full_rebuild_files_are_removed_by_the_next_run(vault, cfg_for):
    cfg = cfg_for(vault)
    reindex(cfg, embed=False)
    _kill_full_rebuild(cfg, vault)
    db = cfg.db_path()
    left = sorted(p.name for p in db.parent.iterdir() if ".rebuild-" in p.name)
    assert left, "the kill left a rebuild file (else this test tests nothing)"
    from vaultrag.status import status

    info = status(cfg)
    assert {r["state"] for r in info["rebuild_leftovers"]} == {"stale"}
    report = reindex(cfg, embed=False)  # an incremental run cleans up too
    assert not [p for p in db.parent.iterdir() if ".rebuild-" in p.name]
    assert any("interrupted full rebuild" in w for _, w in report.warnings)
    assert status(cfg)["rebuild_leftovers"] == []


def test_status_reports_leftovers_and_the_cli_says_so(vault, cfg_for):
    cfg = cfg_for(vault)
    reindex(cfg, embed=False)
    db = cfg.db_path()
    pid = _dead_pid()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}.rebuild-{pid}{suffix}").write_bytes(b"x" * 1000)
    p = subprocess.run([sys.executable, "-m", "vaultrag", "status", "--vault", str(vault), "--db", str(db)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "leftover: 3 files" in p.stdout and "next reindex removes them" in p.stdout
    reindex(cfg, full=True, embed=False)
    assert not list(db.parent.glob("*.rebuild-*"))


# -- finding 5: secrets and control characters in names ----------------------------------------
def _all_text(db: Path) -> str:
    conn = sqlite3.connect(db)
    parts = []
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE '%vec%'"):
        try:
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                parts.extend(str(v) for v in row if isinstance(v, str))
        except sqlite3.Error:
            pass
    conn.close()
    return "\n".join(parts)


@pytest.fixture
def secret_vault(vault):
    (vault / f"Keys {GITHUB_TOKEN}").mkdir()
    (vault / f"Keys {GITHUB_TOKEN}" / "deploy notes.md").write_text(
        "# Deploy notes\n\nThe staging deploy uses the blue-green switch on the load balancer.\n")
    (vault / f"{ANTHROPIC_KEY}.md").write_text("# API key page\n\nRotate the zebra-crossing credential monthly.\n")
    (vault / "Bell\x1b[31mred.md").write_text("# Bell\n\nTerminal colour codes in the flamingo palette.\n")
    return vault


def test_secret_in_a_path_is_stored_nowhere(secret_vault, cfg_for):
    # Before: files.path, the keys and every citation held the token as it is.
    cfg = cfg_for(secret_vault)
    report = reindex(cfg, embed=False)
    stored = _all_text(cfg.db_path())
    assert GITHUB_TOKEN not in stored and ANTHROPIC_KEY not in stored and "\x1b" not in stored
    assert "[REDACTED:" in stored
    out = json.dumps(report.to_dict())
    assert GITHUB_TOKEN not in out and ANTHROPIC_KEY not in out
    ans = search("blue-green switch load balancer", cfg)
    assert ans.status == "ok" and ans.hits[0].text.count("blue-green")
    hit = ans.hits[0]
    assert GITHUB_TOKEN not in hit.path and hit.path.startswith("Keys [REDACTED:")
    assert hit.citation == "fresh"  # the live citation still found the real file


def test_redacted_paths_converge_and_follow_edits(secret_vault, cfg_for):
    cfg = cfg_for(secret_vault)
    reindex(cfg, embed=False)
    again = reindex(cfg, embed=False)
    assert (again.added, again.updated, again.deleted) == (0, 0, 0)
    note = secret_vault / f"Keys {GITHUB_TOKEN}" / "deploy notes.md"
    note.write_text(note.read_text() + "\nRollback takes the pelican route.\n")
    ans = search("blue-green switch load balancer", cfg)
    assert ans.hits[0].citation == "source_changed"
    step = reindex(cfg, embed=False)
    assert (step.added, step.updated, step.deleted) == (0, 1, 0)
    os.rename(note, note.with_name("renamed.md"))
    step = reindex(cfg, embed=False)
    assert (step.added, step.deleted) == (1, 1)
    assert GITHUB_TOKEN not in _all_text(cfg.db_path())


def test_existing_index_with_raw_secret_paths_is_cleaned_by_reindex(secret_vault, cfg_for):
    cfg = cfg_for(secret_vault)
    reindex(cfg, embed=False)
    conn = sqlite3.connect(cfg.db_path())  # as an older vaultrag stored it
    conn.execute("UPDATE files SET path = :raw WHERE path LIKE 'Keys [REDACTED:%'",
                 {"raw": f"Keys {GITHUB_TOKEN}/deploy notes.md"})
    conn.commit()
    conn.close()
    reindex(cfg, embed=False)
    assert GITHUB_TOKEN not in _all_text(cfg.db_path())


def test_cli_escapes_control_characters(secret_vault, cfg_for):
    # Before: the ESC byte of a file name reached the terminal raw.
    cfg = cfg_for(secret_vault)
    base = ["--vault", str(secret_vault), "--db", str(cfg.db_path())]
    for args in (["reindex", "--no-embed"], ["search", "flamingo palette colour codes"], ["status"]):
        p = subprocess.run([sys.executable, "-m", "vaultrag", *args, *base], capture_output=True, timeout=120)
        assert p.returncode == 0, p.stderr
        assert b"\x1b" not in p.stdout + p.stderr
    p = subprocess.run([sys.executable, "-m", "vaultrag", "search", "flamingo palette colour codes", *base],
                       capture_output=True, timeout=120)
    assert b"Bell\\x1b[31mred.md" in p.stdout


def test_hook_log_lines_are_scrubbed(isolated_env):
    from vaultrag.hooks import log_line

    log_line(f"RuntimeError: cannot open /v/Keys {GITHUB_TOKEN}/x.md\x1b[2J")
    text = (isolated_env / "state" / "vaultrag" / "hooks.log").read_text()
    assert GITHUB_TOKEN not in text and "[REDACTED:" in text and "\x1b" not in text


# -- finding 7: the smaller things -------------------------------------------------------------
@contextmanager
def read_only(folder: Path):
    """A folder this process cannot write, even as root (chattr +i), undone afterwards."""
    if os.geteuid() == 0:
        if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
            pytest.skip("running as root without chattr +i: cannot make a read-only folder")
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(folder)], capture_output=True)
    else:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)


def test_read_only_data_folder_is_not_called_corrupt(vault, tmp_path):
    data = tmp_path / "data"
    db = data / "index.sqlite"
    base = ["--vault", str(vault), "--db", str(db)]
    assert subprocess.run([sys.executable, "-m", "vaultrag", "reindex", "--no-embed", *base],
                          capture_output=True, timeout=120).returncode == 0
    with read_only(data):
        for args in (["reindex", "--no-embed"], ["search", "daily snapshots"]):
            p = subprocess.run([sys.executable, "-m", "vaultrag", *args, *base], capture_output=True, text=True,
                               timeout=120)
            if p.returncode == 0:
                continue  # SQLite could read without creating files: nothing to report
            assert "not writable" in p.stderr or "read-only" in p.stderr, p.stderr
            assert "--full" not in p.stderr and "cannot be read" not in p.stderr and "Traceback" not in p.stderr


def test_empty_home_does_not_write_under_root(monkeypatch):
    import pwd

    from vaultrag.config import xdg_dir

    for var in ("XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", "")
    home = pwd.getpwuid(os.getuid()).pw_dir
    assert xdg_dir("state") == Path(home) / ".local/state/vaultrag"
    assert not str(xdg_dir("state")).startswith("/.local")
    monkeypatch.setenv("XDG_STATE_HOME", "relative/dir")  # relative XDG values are invalid (XDG spec)
    assert xdg_dir("state") == Path(home) / ".local/state/vaultrag"


def test_hook_with_no_home_at_all_fails_open_with_a_line(tmp_path, monkeypatch):
    from vaultrag import config

    monkeypatch.setattr(config, "home_dir", lambda: (_ for _ in ()).throw(config.ConfigError("no home folder")))
    for var in ("XDG_STATE_HOME",):
        monkeypatch.delenv(var)
    from vaultrag.hooks import log_line

    import io
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    log_line("something happened")
    assert "something happened" in err.getvalue()


def test_private_files_are_0600_in_0700_folders(vault, cfg_for, isolated_env):
    cfg_file = isolated_env / "config" / "vaultrag" / "config.yaml"
    cfg_file.parent.mkdir(parents=True)
    cfg_file.write_text(f"vault: {vault}\n")
    from vaultrag.config import load_config
    from vaultrag.hooks import log_line

    load_config()
    log_line("a line")
    cache = list((isolated_env / "cache" / "vaultrag").glob("config-*.json"))
    log = isolated_env / "state" / "vaultrag" / "hooks.log"
    assert cache
    for f in cache + [log]:
        assert f.stat().st_mode & 0o777 == 0o600, f
        assert f.parent.stat().st_mode & 0o777 == 0o700, f.parent
    old = isolated_env / "state" / "vaultrag" / "hooks.log"
    old.chmod(0o644)  # written by an older vaultrag
    log_line("another")
    assert old.stat().st_mode & 0o777 == 0o600


def test_absolute_exclude_inside_the_vault_works_and_outside_warns(vault, cfg_for, tmp_path):
    cfg = cfg_for(vault, exclude=[str(vault / "People"), str(tmp_path / "elsewhere")])
    report = reindex(cfg, embed=False)
    conn = sqlite3.connect(cfg.db_path())
    paths = {p for (p,) in conn.execute("SELECT path FROM files")}
    conn.close()
    assert paths and not any(p.startswith("People/") for p in paths)
    assert any("outside the vault" in w and "elsewhere" in w for _, w in report.warnings)

"""Fix commands name the index the failing command was using (fixcmd).

`vaultrag search q --vault B --db X` on a damaged X said "rebuild it with: vaultrag reindex --full",
and running that rebuilt the configured vault's default index, leaving X damaged. Each test here
damages or removes a real SQLite index, runs a face (the CLI as a subprocess, `vaultrag serve`,
`vaultrag mcp`, doctor), takes the fix command out of its message and RUNS it, then checks that the
index it rebuilt is the one named, and that the configured default index was not touched.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, lorem_notes, write_notes
from pg_fixtures import pg_server, pg_url  # noqa: F401  (fixtures)
from test_index_damage import damage, independent_check

from vaultrag import errors
from vaultrag.errors import fix_command, name_location

FIX_RE = re.compile(r"(?:rebuild it with|build it with|build one with|-> fix|\(fix): (.+?)(?:  \(|\)[;.]|$)")


@pytest.fixture
def setup(tmp_path, monkeypatch):
    """A configured vault A (the default, whose index a wrong fix would rebuild), and the user's own
    vault B (a space in its name) indexed into X, given by --vault and --db."""
    a = write_notes(tmp_path / "vault A", {"a.md": "# Alpha\n\nThe configured vault, about otters.\n"})
    b = write_notes(tmp_path / "my notes", {f"Filler/{k}": v for k, v in lorem_notes().items()})
    config = tmp_path / "config" / "vaultrag" / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"vault: {json.dumps(str(a))}\n")
    x = tmp_path / "elsewhere" / "x.sqlite"
    x.parent.mkdir()
    # PYTHONPATH: the fix runs the `vaultrag` script beside this interpreter, which must import this checkout
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    p = cli("reindex", "--vault", str(b), "--db", str(x), "--no-embed", env=env)
    assert p.returncode == 0, p.stderr
    from vaultrag.config import default_db_path

    return {"a": a, "b": b, "x": x, "default": default_db_path(a.resolve()), "env": env}


def cli(*args, env):
    return subprocess.run([sys.executable, "-m", "vaultrag", *args], capture_output=True, text=True, env=env,
                          timeout=180, cwd=str(REPO))


def the_fix(message: str) -> list[str]:
    """The command a message names, as argv (shlex: it must be a valid POSIX shell command)."""
    m = FIX_RE.search(message)
    assert m, message
    return shlex.split(m.group(1))


def run_fix(message: str, env) -> subprocess.CompletedProcess:
    argv = the_fix(message)
    assert argv[:1] == shlex.split(errors.cli_command())[:1], argv  # the vaultrag that printed it
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=180, cwd="/")
    assert p.returncode == 0, (argv, p.stdout, p.stderr)
    return p


def indexed_vault(db: Path) -> str:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute("SELECT value FROM meta WHERE key = 'vault'").fetchone()[0]
    finally:
        con.close()


def rebuilt(s) -> None:
    """X is sound again and indexes vault B; the configured vault's default index was never built."""
    assert independent_check(s["x"]) == "ok"
    assert Path(indexed_vault(s["x"])).resolve() == s["b"].resolve()
    assert not s["default"].exists(), "the fix rebuilt the configured default index instead"


@pytest.mark.parametrize("command", [("search", "lorem ipsum"), ("search", "--json", "quokka"), ("status",)])
def test_the_fix_for_a_damaged_index_rebuilds_the_index_named(setup, command):
    """`search` takes quick_args' fast path, `status` argparse's: both repeat --vault and --db."""
    s = setup
    damage(s["x"])
    p = cli(*command, "--vault", str(s["b"]), "--db", str(s["x"]), env=s["env"])
    assert p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "damaged" in p.stderr and str(s["x"]) in p.stderr
    run_fix(p.stderr, s["env"])
    rebuilt(s)
    assert cli(*command, "--vault", str(s["b"]), "--db", str(s["x"]), env=s["env"]).returncode == 0


def test_relative_locations_are_repeated_as_absolute_paths(setup):
    """The fix may be run from another folder (a log read later, a server's client)."""
    s = setup
    damage(s["x"])
    p = subprocess.run([sys.executable, "-m", "vaultrag", "search", "lorem", "--vault", os.path.relpath(s["b"], s["x"].parent),
                        "--db", "x.sqlite"], capture_output=True, text=True, env=s["env"], cwd=str(s["x"].parent))
    assert p.returncode == 1, p.stderr
    argv = the_fix(p.stderr)
    assert argv[argv.index("--db") + 1] == str(s["x"]) and argv[argv.index("--vault") + 1] == str(s["b"].resolve())
    run_fix(p.stderr, s["env"])  # from /
    rebuilt(s)


def test_a_missing_index_names_the_reindex_that_builds_it(setup):
    s = setup
    y = s["x"].with_name("y.sqlite")
    p = cli("search", "lorem", "--vault", str(s["b"]), "--db", str(y), env=s["env"])
    assert p.returncode == 1 and "no index at" in p.stderr, p.stderr
    assert "PATH" not in p.stderr  # the placeholder is filled in with the vault given
    run_fix(p.stderr, s["env"])
    assert independent_check(y) == "ok" and Path(indexed_vault(y)).resolve() == s["b"].resolve()
    assert not s["default"].exists()


def test_a_location_from_the_environment_needs_no_flag(setup):
    """$VAULTRAG_STORE names X: the fix runs in the same environment, so it names only --vault."""
    s = setup
    damage(s["x"])
    env = {**s["env"], "VAULTRAG_STORE": str(s["x"])}
    p = cli("search", "lorem", "--vault", str(s["b"]), env=env)
    assert p.returncode == 1 and "damaged" in p.stderr, p.stderr
    argv = the_fix(p.stderr)
    assert "--store" not in argv and "--db" not in argv and "--vault" in argv, argv
    run_fix(p.stderr, env)
    rebuilt(s)


def test_doctor_checks_the_index_it_is_given_and_names_its_fix(setup):
    s = setup
    p = cli("doctor", "--vault", str(s["b"]), "--db", str(s["x"]), "--json", env=s["env"])
    index = [q for q in json.loads(p.stdout)["problems"] if q["check"] == "index"]
    assert index == [], index  # X is sound: no "no index at <default>" for the configured vault
    damage(s["x"])
    p = cli("doctor", "--vault", str(s["b"]), "--db", str(s["x"]), env=s["env"])
    [line] = [ln for ln in p.stdout.splitlines() if ln.startswith("PROBLEM [index]")]
    assert str(s["x"]) in line
    run_fix("-> fix: " + line.split(" -> fix: ", 1)[1], s["env"])  # doctor's own fix, not the error's
    rebuilt(s)
    p = cli("doctor", "--vault", str(s["b"]), "--db", str(s["x"]), "--json", env=s["env"])
    assert [q for q in json.loads(p.stdout)["problems"] if q["check"] == "index"] == []


def test_doctor_without_location_options_checks_the_configured_index(setup):
    """The defaults are unchanged: the configured vault A, whose index was never built."""
    s = setup
    p = cli("doctor", "--json", env=s["env"])
    [problem] = [q for q in json.loads(p.stdout)["problems"] if q["check"] == "index"]
    assert problem["problem"] == f"no index at {s['default']}", problem
    assert problem["fix"].startswith(fix_command("reindex") + "  ("), problem  # no flags: the configured one


def test_serve_answers_503_naming_the_fix_for_the_store_it_serves(setup, tmp_path):
    pytest.importorskip("starlette")
    import urllib.error
    import urllib.request

    from serve_fixtures import free_port, start_server

    s = setup
    damage(s["x"])
    port = free_port()
    proc = start_server(s["b"], s["x"], tmp_path / "serve.sock", port)  # --vault B --store X
    try:
        req = urllib.request.Request(f"http://127.0.0.1:{port}/search", data=b'{"query": "lorem ipsum", "k": 3}',
                                     headers={"Content-Type": "application/json"}, method="POST")
        with pytest.raises(urllib.error.HTTPError) as got:
            urllib.request.urlopen(req, timeout=30)
        assert got.value.code == 503
        body = json.loads(got.value.read())
        assert body["code"] == "index_corrupt", body
        argv = the_fix(body["message"])
        assert argv[argv.index("--store") + 1] == str(s["x"]), argv  # serve's own option, which reindex takes
        run_fix(body["message"], s["env"])
        rebuilt(s)
        with urllib.request.urlopen(req, timeout=30) as r:
            assert r.status == 200
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_mcp_tool_error_names_the_fix_for_its_store(setup):
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    s = setup
    damage(s["x"])
    params = StdioServerParameters(command=sys.executable, args=["-m", "vaultrag", "mcp", "--vault", str(s["b"]),
                                                                 "--store", str(s["x"])], env=s["env"], cwd=str(REPO))

    async def call():
        async with Client(params) as client:
            return await client.call_tool("search", {"query": "lorem ipsum", "k": 2})

    result = anyio.run(call)
    assert result.is_error, result
    message = result.content[0].text
    assert "damaged" in message, message
    run_fix(message, s["env"])
    rebuilt(s)


def test_a_store_password_is_never_shown_and_the_fix_says_so():
    try:
        name_location(vault="/v", store="postgresql://bob:hunter2@db.example:5433/notes", collection="a,b")
        fix = fix_command("reindex --collection b")
        plain = fix_command("reindex")
    finally:
        name_location()
    for text in (fix, plain):
        assert "hunter2" not in text and "postgresql://bob:***@db.example:5433/notes" in text, text
        assert "*** stands for the store URL's password" in text
    argv = the_fix("build it with: " + fix)
    assert argv[argv.index("--collection") + 1] == "b" and argv.count("--collection") == 1, argv  # its own wins
    assert "--collection" in plain and "a,b" in plain
    name_location(store="postgresql://bob@db.example/notes")  # no password: nothing to mask, nothing said
    try:
        assert "***" not in fix_command("reindex")
    finally:
        name_location()
    assert fix_command("reindex --full") == f"{errors.cli_command()} reindex --full"  # a library caller: no flags


def test_a_postgres_collection_missing_names_its_reindex_without_the_password(pg_url, tmp_path, vault):
    """A real server (embedded, trust auth: the password in the URL is sent to no one): the one-line
    error hides it, and the fix, with the password put back as the note says, builds the collection."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(pg_url)
    url = urlunsplit(parts._replace(netloc=f"{parts.username or 'postgres'}:hunter2@{parts.hostname or ''}"
                                           + (f":{parts.port}" if parts.port else "")))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    p = cli("reindex", "--vault", str(vault), "--store", url, "--collection", "first", "--no-embed", env=env)
    assert p.returncode == 0, p.stderr
    p = cli("search", "snapshots", "--vault", str(vault), "--store", url, "--collection", "first,second", env=env)
    assert p.returncode == 1 and "no collection second" in p.stderr, p.stderr
    assert "hunter2" not in p.stderr and ":***@" in p.stderr and "stands for the store URL's password" in p.stderr
    argv = [a.replace(":***@", ":hunter2@") for a in the_fix(p.stderr)]
    assert argv[argv.index("--collection") + 1] == "second", argv
    done = subprocess.run(argv + ["--no-embed"], capture_output=True, text=True, env=env, timeout=180)
    assert done.returncode == 0, done.stderr
    p = cli("search", "snapshots", "--vault", str(vault), "--store", url, "--collection", "first,second", "--json", env=env)
    assert p.returncode == 0, p.stderr


def test_session_start_checks_the_index_its_process_was_given(setup, monkeypatch):
    """A hook process (nothing given) checks the configured index; `vaultrag serve --vault B --store Y`
    answering a forwarded SessionStart checks Y, which its hooks search, and names Y in the fix."""
    from vaultrag.session_start import session_message

    s = setup
    monkeypatch.setenv("XDG_CONFIG_HOME", s["env"]["XDG_CONFIG_HOME"])
    y = s["x"].with_name("y.sqlite")
    start = {"hook_event_name": "SessionStart", "source": "startup"}
    told = json.loads(session_message(start))["systemMessage"]
    assert f"no index at {s['default']}" in told and "--db" not in told and "--store" not in told, told
    try:
        name_location(vault=str(s["b"]), store=str(y))  # what serve.cli._service records
        told = json.loads(session_message(start))["systemMessage"]
    finally:
        name_location()
    assert f"no index at {y}" in told and str(s["default"]) not in told, told
    assert "doctor --vault" in told  # the details command checks the same index
    run_fix(told, s["env"])
    assert independent_check(y) == "ok" and Path(indexed_vault(y)).resolve() == s["b"].resolve()
    assert not s["default"].exists()

"""`vaultrag doctor`: check everything a Claude Code hook needs, and say how to fix each problem.

Checks, in the order a hook depends on them: the hooks are registered (user / project
settings.json, or the plugin enabled), each registered command's interpreter exists, imports
vaultrag and loads sqlite-vec, its scripts exist; the config file is valid and names a vault; the
vault folder exists; the index exists, belongs to that vault, holds chunks and is fresh; the
embedding model folder the index was built with is there; recent errors in the hook log. A
PostgreSQL index (`--store postgresql://...`) is checked by doctor_pg.py.

Standard library only (the SessionStart hook uses `quick_problems`). Severity `error` means a hook
would not inject anything; `warning` means it works, degraded or stale.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .errors import OUTDATED_SIGN, IndexLocked, VaultragError, fix_command, index_failure

# A hook log line newer than this is worth showing (older ones were fixed or forgotten).
RECENT_LOG_S = 24 * 3600
MAX_LOG_PROBLEMS = 3
PROBE_TIMEOUT_S = 20  # first start of a cold interpreter on a busy machine
# Run inside the hook's interpreter: import vaultrag the way hooks/*.py do, then open SQLite.
_PROBE = r"""
import json, os, sys
script = sys.argv[1]
out = {"python": sys.executable, "version": sys.version.split()[0]}
try:
    try:
        import vaultrag.hooks
    except Exception:
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(script))))
        import vaultrag.hooks
    import vaultrag
    out["vaultrag"] = os.path.dirname(vaultrag.__file__)
    from vaultrag.store.connection import load_vec, sqlite_module
    mod = sqlite_module()
    out["sqlite"] = mod.__name__
    conn = mod.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        out["fts5"] = None
    except Exception as exc:
        out["fts5"] = str(exc)
    out["vec"] = load_vec(conn)
except Exception as exc:
    out["import_error"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""


@dataclass(frozen=True)
class Problem:
    check: str
    problem: str
    fix: str
    severity: str = "error"  # error | warning

    def line(self) -> str:
        return f"{'PROBLEM' if self.severity == 'error' else 'warning'} [{self.check}] {self.problem} -> fix: {self.fix}"


@dataclass(frozen=True)
class Report:
    problems: tuple[Problem, ...]
    passed: tuple[str, ...]  # one line per check that passed, for the human output
    facts: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not any(p.severity == "error" for p in self.problems)

    def to_dict(self) -> dict:
        return {"ok": self.ok, "problems": [asdict(p) for p in self.problems], "passed": list(self.passed),
                "facts": self.facts}


def _repo_root() -> Path:
    return Path(__file__).resolve().parents[1]


# -- config, vault, index: what every hook process needs -----------------------------------------
def config_problems(passed: list[str], facts: dict, location: dict | None = None):
    """(Config or None, problems). `location`: the --vault, --config, --db, --store, --collection given
    (None: not given)."""
    from .config import config_file_path, load_config

    location = dict(location or {})
    config = location.pop("config", None)
    path, _explicit = config_file_path(config)
    facts["config_file"] = str(path)
    try:
        cfg = load_config(config, **location)
    except VaultragError as exc:
        return None, [Problem("config", str(exc), f"edit {path} (keys: vaultrag/config.example.yaml)")]
    if cfg.vault is None:
        where = f"{path} has no `vault:` key" if path.is_file() else f"no config file at {path}"
        return cfg, [Problem("config", f"no vault configured ({where})",
                             f"{_repo_root() / 'install.sh'} --vault PATH --claude")]
    where = str(path) if path.is_file() else "environment"
    passed.append(f"config: {where}{' and arguments' if 'arguments' in cfg.source else ''}: vault {cfg.vault}")
    facts["vault"] = str(cfg.vault)
    if not cfg.vault.is_dir():
        return cfg, [Problem("vault", f"vault folder {cfg.vault} does not exist",
                             f"restore it, or point the config at your notes: {_repo_root() / 'install.sh'} --vault PATH")]
    return cfg, []


def index_path(cfg) -> Path:
    """The SQLite index the hooks open (store/open.py's precedence): `store` when it is a path, else
    `db`, else the vault's default file. (Not imported from there: the SessionStart hook imports no store.)"""
    if cfg.store and "://" not in str(cfg.store):
        return Path(os.path.expanduser(str(cfg.store)))
    return cfg.db_path()


def _postgres_url(cfg) -> str | None:
    """The configured store when it is a PostgreSQL URL (serve_client's schemes: no store import)."""
    from .serve_client import PG_SCHEMES

    store = str(cfg.store or "")
    return store if store.startswith(PG_SCHEMES) else None


# A session start asks a PostgreSQL server's port this long whether anything listens (no driver import).
PG_REACH_TIMEOUT_S = 0.3


def pg_reach_problems(url: str) -> list[Problem]:
    """Whether a PostgreSQL URL's server can be reached at all, in a few milliseconds and without
    the driver: a TCP connect to its host and port, or its socket file when the URL names a socket
    folder (`?host=/run/postgresql`). A URL of several hosts, or none (libpq's built-in socket
    folder), is not judged: `vaultrag doctor` connects for real."""
    import socket
    from urllib.parse import parse_qs, urlsplit

    from .errors import redact_url

    try:
        parts = urlsplit(url)
        query = parse_qs(parts.query)
        port = int(parts.port or (query.get("port") or ["5432"])[0])
        host = parts.hostname or (query.get("host") or [""])[0]
    except ValueError:
        return []  # a malformed URL: the store's own error says what is wrong with it
    if not host or "," in (parts.netloc.rpartition("@")[2] + host):
        return []
    shown = redact_url(url)
    fix = f"start the server or correct --store / VAULTRAG_STORE / `store:`; then {fix_command('doctor')}"
    if host.startswith("/"):
        sock = Path(host) / f".s.PGSQL.{port}"
        return [] if sock.exists() else [Problem("store", f"PostgreSQL at {shown} is not running (no socket {sock})", fix)]
    try:
        socket.create_connection((host, port), timeout=PG_REACH_TIMEOUT_S).close()
    except OSError as exc:
        why = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or type(exc).__name__)
        return [Problem("store", f"cannot reach PostgreSQL at {shown} ({why})", fix)]
    return []


def _index_file_problems(cfg, facts: dict) -> list[Problem]:
    if _postgres_url(cfg):  # no file to look at: `index_problems` connects (doctor_pg); quick_problems probes the port
        return []
    try:
        db = index_path(cfg)
    except VaultragError as exc:
        return [Problem("index", str(exc), fix_command("reindex"))]
    facts["index"] = str(db)
    if not db.is_file() or db.stat().st_size == 0:
        return [Problem("index", f"no index at {db}", f"{fix_command('reindex')}  (builds it from {cfg.vault})")]
    return []


def index_problems(cfg, passed: list[str], facts: dict, *, freshness: bool = True) -> list[Problem]:
    """The index exists, opens, belongs to the vault and holds chunks (and, with `freshness`, is current)."""
    url = _postgres_url(cfg)
    if url:
        from .doctor_pg import pg_index_problems

        return pg_index_problems(cfg, url, passed, facts, freshness=freshness)
    found = _index_file_problems(cfg, facts)
    if found:
        return found
    db = index_path(cfg)
    from .store import Store

    try:
        with Store(db, readonly=True) as store:
            meta = store.all_meta()
            chunks = store.chunk_count()
            damage = store.check()  # every page (~0.1 s at 38k chunks)
    except IndexLocked as exc:
        return [Problem("index", str(exc), _LOCKED_FIX.format(db=db, doctor=fix_command("doctor")))]
    except Exception as exc:  # corrupt, or an old schema
        return [Problem("index", f"cannot read {db}: {exc}", f"{fix_command('reindex --full')}  (rebuilds it)")]
    if damage:
        return [Problem("index", f"{db} is damaged: {damage}; hooks fail on the notes stored there",
                        f"{fix_command('reindex --full')}  (rebuilds it from the vault)")]
    out: list[Problem] = []
    indexed_vault = meta.get("vault")
    if indexed_vault and Path(indexed_vault).resolve() != Path(cfg.vault).resolve():
        out.append(Problem("index", f"{db} indexes {indexed_vault}, not the configured vault {cfg.vault}",
                           fix_command("reindex --full")))
    if chunks == 0:
        out.append(Problem("index", f"{db} holds no chunks (no Markdown notes found in {cfg.vault}?)",
                           "check the vault path and index.include / index.exclude, then run "
                           + fix_command("reindex")))
    if out:
        return out
    last = json.loads(meta.get("last_reindex") or "{}").get("at")
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(last)) if last else "unknown"
    passed.append(f"index: {db}: {chunks} chunks, last reindex {when}")
    facts.update(chunks=chunks, last_reindex=last)
    out += model_problems(meta, passed)
    if freshness:
        out += freshness_problems(cfg, passed)
    return out


def model_problems(meta: dict, passed: list[str]) -> list[Problem]:
    emb = json.loads(meta.get("embedding") or "{}")
    model_path = meta.get("model_path")
    if not emb.get("available"):
        return [Problem("model", f"the index has no vectors ({emb.get('reason') or 'never embedded'}); "
                        "hooks search with BM25 and names only", fix_command("reindex"), "warning")]
    if not model_path or not Path(model_path).is_dir():
        return [Problem("model", f"embedding model folder {model_path} is gone; queries run without vectors",
                        f"{fix_command('reindex')}  (re-resolves the model)", "warning")]
    passed.append(f"model: {emb.get('model')} at {model_path}")
    return []


def freshness_problems(cfg, passed: list[str]) -> list[Problem]:
    from .status import status

    try:
        info = status(cfg)
    except Exception as exc:
        return [Problem("index", f"cannot compare the index with the vault: {exc}", fix_command("reindex"), "warning")]
    changed = info["changed_since_reindex"]
    if changed:
        sample = ", ".join(info["changed_paths"][:3])
        return [Problem("index", f"{changed} note(s) changed since the last reindex (e.g. {sample}); hooks cite "
                        "what was indexed", fix_command("reindex"), "warning")]
    passed.append("index: fresh (no note changed since the last reindex)")
    return []


def quick_problems(location: dict | None = None) -> list[Problem]:
    """The fast checks, what the SessionStart hook reports: config, vault folder, index file present,
    and whether the hooks have been failing on a damaged index since it last changed (the hook log).
    No vault scan, no subprocess, and the store is not even imported (~100 ms of a session start).
    `location`: as `diagnose`'s."""
    passed: list[str] = []
    facts: dict = {}
    cfg, out = config_problems(passed, facts, location)
    if cfg is None or out or cfg.vault is None:
        return out
    url = _postgres_url(cfg)
    if url:
        return pg_reach_problems(url)
    return _index_file_problems(cfg, facts) or damaged_index_log_problems(facts)


def log_time(stamp: str) -> float | None:
    """The time of a hook-log stamp (hooks.log_stamp: to the millisecond; whole seconds from older
    versions), or None when it is not one."""
    base, _, frac = stamp.partition(".")
    try:
        at = time.mktime(time.strptime(base, "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return None
    return at + int(frac) / 10 ** len(frac) if frac.isdigit() and len(frac) <= 6 else at


def damaged_index_log_problems(facts: dict) -> list[Problem]:
    """The hooks' last failure on a damaged index, from the hook log, when neither the index nor the
    config changed since (a rebuild replaces the index file: its mtime moves past the line). The
    hooks fail open, so without this a user learns of it only by missing notes."""
    from .config import xdg_dir

    changed = []
    for key in ("index", "config_file"):  # no config file: the environment names the vault
        try:
            changed.append(os.stat(facts[key]).st_mtime)
        except (OSError, KeyError):
            pass
    if not changed:
        return []
    since = max(changed)
    try:
        lines = (xdg_dir("state") / "hooks.log").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    for line in reversed(lines[-200:]):
        stamp, _, message = line.partition(" ")
        if index_failure(message) != "corrupt":
            continue
        at = log_time(stamp)
        if at is None:
            continue
        # a stamp of whole seconds (an older vaultrag's line) counts when in the change's second
        if at < (int(since) if "." not in stamp else since):
            return []
        if OUTDATED_SIGN in message:  # an older vaultrag's index: not damaged, and a plain reindex rebuilds it
            return [Problem("index", f"the hooks could not read the index {facts['index']} at {stamp}: it was built by "
                                     "an older vaultrag", f"{fix_command('reindex')}  (rebuilds it from the vault)")]
        return [Problem("index", f"the hooks failed on a damaged index {facts['index']} at {stamp} ({message})",
                        f"{fix_command('reindex --full')}  (rebuilds it from the vault)")]
    return []


# -- registration: does Claude Code run a working command? ----------------------------------------
def settings_files(project_dir: Path | None = None) -> list[Path]:
    project = project_dir or Path.cwd()
    paths = [Path.home() / ".claude" / "settings.json", project / ".claude" / "settings.json",
             project / ".claude" / "settings.local.json"]
    return list({p.resolve(): p for p in paths}.values())  # in ~ itself, user and project are one file


def _plugin_folder(key: str) -> Path:
    """Where the hooks of an enabled plugin run from. A `directory` marketplace (this checkout,
    added with `claude plugin marketplace add DIR`) runs in place: the copy under
    ~/.claude/plugins/cache drops the .venv's symlinks. Otherwise the recorded install path."""
    from .hook_check import read_json

    plugins = Path.home() / ".claude" / "plugins"
    market = key.split("@", 1)[1] if "@" in key else ""
    known, _ = read_json(plugins / "known_marketplaces.json")
    entry = (known or {}).get(market) or {}
    if (entry.get("source") or {}).get("source") == "directory" and entry.get("installLocation"):
        return Path(entry["installLocation"])
    installed, _ = read_json(plugins / "installed_plugins.json")
    entries = ((installed or {}).get("plugins") or {}).get(key) or [{}]
    folder = entries[-1].get("installPath") if isinstance(entries[-1], dict) else None
    return Path(folder) if folder else _repo_root()


def _enabled_plugin(paths: list[Path]) -> tuple[str, Path] | None:
    """(label, folder) of an enabled vaultrag plugin, from the settings' enabledPlugins."""
    from .hook_check import read_json

    for path in paths:
        data, _ = read_json(path)
        for key, on in ((data or {}).get("enabledPlugins") or {}).items():
            if on and str(key).split("@")[0] == "vaultrag":
                return f"{key} enabled in {path}", _plugin_folder(str(key))
    return None


def probe_python(python: str, script: Path) -> dict:
    """What the hook's interpreter can do: import vaultrag, FTS5, sqlite-vec (a JSON dict)."""
    try:
        proc = subprocess.run([python, "-I", "-c", _PROBE, str(script)], capture_output=True, text=True,
                              timeout=PROBE_TIMEOUT_S, env=os.environ.copy())
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"start_error": f"{type(exc).__name__}: {exc}"}
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"start_error": f"exit {proc.returncode}: {(proc.stderr or proc.stdout).strip()[-300:]}"}


def handler_problems(handler, passed: list[str], probes: dict) -> list[Problem]:
    where = f"{handler.event} hook in {handler.source}"
    python, script = handler.python(), handler.script()
    reinstall = f"rerun {_repo_root() / 'install.sh'} --claude (or remove the stale entry from {handler.source})"
    if script is None or not script.is_file():
        return [Problem("hooks", f"{where} runs {script or handler.display()}, which does not exist", reinstall)]
    if not python or not (Path(python).is_file() or "/" not in python):
        return [Problem("hooks", f"{where} runs the interpreter {python}, which does not exist",
                        f"{reinstall}; a moved checkout needs its .venv recreated: ./install.sh")]
    key = (python, str(script.parent))
    if key not in probes:
        probes[key] = probe_python(python, script)
    probe = probes[key]
    if "start_error" in probe:
        return [Problem("hooks", f"{where}: {python} does not start: {probe['start_error']}", reinstall)]
    if "import_error" in probe:
        return [Problem("hooks", f"{where}: {python} cannot import vaultrag ({probe['import_error']})",
                        f"{_repo_root() / 'install.sh'}  (installs vaultrag into .venv)")]
    out = []
    if probe.get("fts5"):
        out.append(Problem("sqlite", f"{python}: SQLite has no FTS5 ({probe['fts5']})",
                           f"{python} -m pip install sqlean-py"))
    if probe.get("vec"):
        # a forced driver (VAULTRAG_SQLITE, which the probe inherits) is fixed by unsetting it, not a pip install
        fix = ("unset VAULTRAG_SQLITE in the environment Claude Code starts hooks from"
               if probe["vec"].startswith("VAULTRAG_SQLITE=") and "unset VAULTRAG_SQLITE to use" in probe["vec"]
               else f"{python} -m pip install sqlite-vec sqlean-py")
        out.append(Problem("sqlite-vec", f"{python}: {probe['vec']}; hooks search without vectors", fix, "warning"))
    return out


def registration_problems(passed: list[str], facts: dict, project_dir: Path | None = None,
                          plugin_dir: Path | None = None) -> list[Problem]:
    """`plugin_dir`: the checkout given to `claude --plugin-dir` (nothing records that flag)."""
    from .hook_check import plugin_handlers, settings_handlers

    paths = settings_files(project_dir)
    handlers = [h for p in paths for h in settings_handlers(p)]
    plugin = (f"--plugin-dir {plugin_dir}", plugin_dir) if plugin_dir else _enabled_plugin(paths)
    if plugin:
        handlers += plugin_handlers(plugin[1])
        passed.append(f"plugin: {plugin[0]} ({plugin[1]})")
    facts["handlers"] = [{"event": h.event, "source": str(h.source), "command": h.display()} for h in handlers]
    events = {h.event for h in handlers}
    out: list[Problem] = []
    if "UserPromptSubmit" not in events:
        out.append(Problem("hooks", "no vaultrag UserPromptSubmit hook in " + ", ".join(str(p) for p in paths)
                           + (" and the vaultrag plugin is not enabled" if not plugin else ""),
                           f"{_repo_root() / 'install.sh'} --vault PATH --claude (for `claude --plugin-dir DIR`: "
                           "vaultrag doctor --plugin-dir DIR)"))
    if "PostToolUse" in events and "PostToolUseFailure" not in events:  # registered before it existed
        out.append(Problem("hooks", "no vaultrag PostToolUseFailure hook: a failed command's long output "
                           "reaches Claude without its digest", f"{_repo_root() / 'install.sh'} --claude "
                           "(adds the missing hook, keeps the others)", "warning"))
    probes: dict = {}
    working: dict[tuple, list[str]] = {}
    for h in handlers:
        found = handler_problems(h, passed, probes)
        out += found
        if not found:
            working.setdefault((h.source, h.python(), str(h.script().parent)), []).append(h.event)
    for (source, python, folder), names in working.items():
        probe = probes.get((python, folder), {})
        passed.append(f"hooks: {', '.join(names)} in {source} -> {python} (Python {probe.get('version')}, "
                      f"{probe.get('sqlite')}, sqlite-vec ok) runs {folder}/")
    return out


# -- the hook log ---------------------------------------------------------------------------------
# Another process holds the index's write lock: nothing is wrong with the index, nothing to rebuild.
_LOCKED_FIX = ("let the process writing to {db} finish, or close it (`lsof {db}` names it: a reindex, a "
               "sqlite3 shell, a database browser); then run {doctor} again")
_LOCKED_LOG_FIX = ("nothing to rebuild: another process held the index's write lock (a reindex, a sqlite3 shell, "
                   "a database browser); if it repeats, find it with `lsof` on the index file and close it")


def _log_fix(message: str) -> str:
    failure = index_failure(message)
    if failure == "corrupt":
        return f"{fix_command('reindex --full')}  (the index is damaged; this rebuilds it from the vault)"
    if failure == "locked":
        return _LOCKED_LOG_FIX
    if "ConfigError" in message or "no vault" in message:
        return "the config checks above; then new prompts stop logging this"
    if "deadline" in message:
        return "raise hooks.timeout_ms in the config, or check the machine's load"
    if "Index" in message or "index" in message:
        return fix_command("reindex")
    return "if it repeats after the fixes above, report it with this line"


def log_problems(passed: list[str], now: float | None = None, since: float = 0.0) -> list[Problem]:
    """Errors the hooks logged in the last day, after `since` (the last config or index change:
    older lines were about a setup that is gone)."""
    from .hook_check import hook_log_path

    path = hook_log_path()
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()[-200:]
    except OSError:
        passed.append(f"hook log: no errors logged ({path} absent)")
        return []
    now = time.time() if now is None else now
    recent = []
    for line in lines:
        stamp, _, message = line.partition(" ")
        at = log_time(stamp)
        if at is None:
            continue
        if now - at <= RECENT_LOG_S and at >= since and "ignored event" not in message:
            recent.append((stamp, message))
    if not recent:
        passed.append(f"hook log: no errors in the last {RECENT_LOG_S // 3600} h ({path})")
        return []
    return [Problem("hook-log", f"{stamp}: {message}", _log_fix(message), "warning")
            for stamp, message in recent[-MAX_LOG_PROBLEMS:]]


def diagnose(project_dir: Path | None = None, plugin_dir: Path | None = None,
             location: dict | None = None) -> Report:
    """Run every check. Never raises for a problem it can name. `location`: the index to check, as
    `vaultrag doctor --vault/--config/--db/--store` name it (None values and no `location`: the
    configured one, which the hooks read)."""
    passed: list[str] = []
    facts: dict = {"python": sys.executable}
    problems = registration_problems(passed, facts, project_dir, plugin_dir)
    cfg, found = config_problems(passed, facts, location)
    problems += found
    if cfg is not None and cfg.vault is not None and not found:
        problems += index_problems(cfg, passed, facts)
    changed = [Path(p).stat().st_mtime for p in (facts.get("config_file"), facts.get("index"))
               if p and Path(p).is_file()]
    problems += log_problems(passed, since=int(max(changed, default=0.0)))
    return Report(tuple(problems), tuple(passed), facts)


def render(report: Report) -> str:
    lines = [f"ok       {p}" for p in report.passed] + [p.line() for p in report.problems]
    errors = sum(p.severity == "error" for p in report.problems)
    lines.append("vaultrag doctor: a hook would work" if report.ok
                 else f"vaultrag doctor: {errors} problem(s): the hooks will inject nothing until they are fixed")
    return "\n".join(lines)

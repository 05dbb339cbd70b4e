"""One exception hierarchy. Every message says what happened and what to do next."""
from __future__ import annotations


class VaultragError(Exception):
    """Base class for every error vaultrag raises on purpose."""


class ConfigError(VaultragError):
    """A configuration key is unknown or has a bad value."""


class VaultNotFound(VaultragError):
    """The configured vault folder does not exist."""


class IndexMissing(VaultragError):
    """No index database exists yet for this vault."""


class IndexCorrupt(VaultragError):
    """The index database cannot be read; it is disposable and can be rebuilt."""


class IndexUnwritable(VaultragError):
    """The index folder or file cannot be written (permissions, read-only disk); it is not corrupt."""


class IndexLocked(VaultragError):
    """Another process holds the index (a reindex is running)."""


class ModelMismatch(VaultragError):
    """The index was built with another embedding model than the one configured."""


class DependencyMissing(VaultragError):
    """An optional heavy dependency is not installed."""


class StoreUnavailable(VaultragError):
    """The configured store (a PostgreSQL server) cannot be reached or lacks what vaultrag needs."""


def cli_command() -> str:
    """The `vaultrag` command spelt so that it runs this vaultrag: the `vaultrag` executable beside
    the running interpreter (a venv's or pipx's bin/), else this interpreter with `-m vaultrag`.
    Messages used to say `python -m vaultrag...`, which runs whatever `python` the user's shell
    finds first (a pyenv shim, the system's), often one without vaultrag."""
    import os
    import shlex
    import sys

    exe = os.path.join(os.path.dirname(sys.executable), "vaultrag")
    if sys.executable and os.path.isfile(exe) and os.access(exe, os.X_OK):
        return shlex.quote(exe)
    return f"{shlex.quote(sys.executable) if sys.executable else 'python3'} -m vaultrag"


# The options that name an index, in the order `vaultrag --help` lists them.
LOCATION_OPTIONS = ("vault", "config", "db", "store", "collection")
_PATH_OPTIONS = ("vault", "config", "db", "store")  # made absolute (a `store` URL is kept as it is)
# The location options this process's command line gave (("--db", "/abs/x.db"), ...), set by the face
# that parsed it (cli.main, `vaultrag serve` / `mcp`); a library caller's and a hook's stay empty.
_given: tuple[tuple[str, str], ...] = ()


def name_location(**options) -> None:
    """Record the location options (LOCATION_OPTIONS) this process was given on its command line,
    None or absent for one not given: every fix command then repeats them. A fix used to say
    `vaultrag reindex --full` after `vaultrag search --db /tmp/x.db` failed on /tmp/x.db, and running
    it rebuilt the configured vault's default index instead. Locations from the environment
    ($VAULTRAG_STORE, $VAULTRAG_CONFIG) or the config file need no flag: the fix runs where they hold."""
    import os

    global _given
    given = []
    for name in LOCATION_OPTIONS:
        value = options.get(name)
        if value is None or str(value) == "":
            continue
        value = str(value)
        if name in _PATH_OPTIONS and "://" not in value:
            value = os.path.abspath(os.path.expanduser(value))
        given.append((f"--{name}", value))
    _given = tuple(given)


def given_location() -> dict[str, str]:
    """The location options `name_location` recorded, by name (`{"db": "/abs/x.db"}`), for a check
    of the index they name (doctor's, SessionStart's in a server)."""
    return {flag[2:]: value for flag, value in _given}


def redact_url(url: str) -> str:
    """A URL without its password (`postgresql://user:***@host/db`): what messages, logs and reports show."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if not parts.password:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _placeholder(token: str) -> bool:
    """A value a message spells for the user to fill in: PATH, URL, NAME."""
    return token.isupper() and token.isalpha()


def fix_command(args: str) -> str:
    """`vaultrag ARGS` as `cli_command` spells it, plus the location options this process was given
    (`name_location`), quoted for a POSIX shell: the command a message tells the user to run. An
    option ARGS names itself wins, but for a placeholder (`--vault PATH`), which the given value
    replaces. A store URL's password is never shown: it reads `***`, and the command says so."""
    import shlex

    shown = {flag: redact_url(value) if "://" in value else value for flag, value in _given}
    tokens, used = args.split(), []
    for i, tok in enumerate(tokens[:-1]):
        if tok in shown and _placeholder(tokens[i + 1]):
            tokens[i + 1] = shlex.quote(shown[tok])
            used.append(tok)
    extra = [flag for flag in shown if flag not in tokens]
    command = " ".join([cli_command(), *tokens, *(part for flag in extra for part in (flag, shlex.quote(shown[flag])))])
    if any(shown[flag] != value for flag, value in _given if flag in used + extra):
        command += MASKED_NOTE
    return command


MASKED_NOTE = ("  (*** stands for the store URL's password, not shown here: put it back, "
               "or drop `:***` and set PGPASSWORD)")


FIX_MAX_CHARS = 4500  # a fix command is kept whole up to this (a PATH_MAX path, 4096, and the command)
LEAD_IN_CHARS = 60  # of a cut message, the words just before its fix ("...; rebuild it with: ") are kept


def shorten(text: str, limit: int) -> str:
    """`text` in about `limit` characters, keeping the fix command it names whole (from
    `cli_command()` on, up to FIX_MAX_CHARS): the message before it is cut in the middle ("…"),
    its start and the words leading into the fix kept. Hook log lines were cut at 200 characters,
    which cut `... rebuild it with: /home/u/.venv/bin/vaultrag reindex --full --db '/long/p...`
    to a command that rebuilt another index, or none. Without a fix command: the first `limit`."""
    if len(text) <= limit:
        return text
    at = text.find(cli_command())
    if at < 0:
        return text[:limit - 1] + "…"
    head, fix = text[:at], text[at:at + FIX_MAX_CHARS]
    room = max(limit - len(fix), 2 * LEAD_IN_CHARS)
    if len(head) > room:
        head = head[:room - LEAD_IN_CHARS - 1] + "…" + head[-LEAD_IN_CHARS:]
    return head + fix


# How SQLite reports an index it cannot use, by the driver's message (what a hook logs): pages that
# are not what they claim (SQLITE_CORRUPT "database disk image is malformed", SQLITE_NOTADB "file is
# not a database"; sqlite-vec reading damaged shadow tables says "vectors blob read error for N",
# "Could not find a row with rowid N" or "Could not fetch vector data for N"), or another connection
# holding the write lock (SQLITE_BUSY, SQLITE_LOCKED).
OUTDATED_SIGN = "was built by an older vaultrag"  # an index of an older schema (IndexCorrupt: unreadable here)
CORRUPT_SIGNS = ("malformed", "not a database", "blob read error", "Could not find a row with rowid",
                 "Could not fetch vector data", "IndexCorrupt")
LOCKED_SIGNS = ("database is locked", "database table is locked", "IndexLocked")


def damaged_index(location, why: str) -> IndexCorrupt:
    """The error for an index whose pages do not read (SQLite's complaint in `why`)."""
    return IndexCorrupt(f"index {location} is damaged and cannot be read ({why}); it is a copy of the vault, "
                        f"rebuild it with: {fix_command('reindex --full')}")


def index_failure(text: str) -> str | None:
    """"corrupt", "locked" or None: what an error message (or a hook log line) says about the index."""
    if any(sign in text for sign in CORRUPT_SIGNS):
        return "corrupt"
    if any(sign in text for sign in LOCKED_SIGNS):
        return "locked"
    return None

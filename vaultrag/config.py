"""Configuration: defaults < YAML file < environment < arguments, into one frozen `Config`.

The file is `$VAULTRAG_CONFIG`, else `$XDG_CONFIG_HOME/vaultrag/config.yaml` (`~/.config/...`);
`--config FILE` wins over both. Unknown keys and bad values raise `ConfigError` naming the key.
`config.example.yaml` in the package documents every key.

The hook path must not import yaml (40-57 ms per process, see BENCHMARKS.md), so a parsed
config file is cached as JSON beside the index data, keyed by the file's path, size and mtime.
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from .digest import sha256
from .errors import ConfigError
from .frozen import field, fields, frozen

TYPE_CHECKING = False  # typing costs a fresh hook process ~2 ms to import (issue 18); annotations are strings
if TYPE_CHECKING:
    from typing import Any

DEFAULT_MODEL = "minishlab/potion-base-8M"
# Folders never indexed, whatever the config says: app state, trash, version control.
ALWAYS_EXCLUDED = (".obsidian", ".trash", ".git")
# Notes bigger than this are almost always pasted dumps or exports; they drown the index.
DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024


@frozen
class Config:
    vault: Path | None = None
    db: Path | None = None  # None: derived from the vault path (see `db_path`)
    include: tuple[str, ...] = ()  # allowlist of top-level folders; empty = everything
    exclude: tuple[str, ...] = ()  # folder names or globs (fnmatch on the vault-relative path)
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    min_chars: int = 30
    max_chars: int = 2000
    overlap_chars: int = 0
    skip_sections: tuple[str, ...] = ("related", "see also", "links", "references")
    model: str = DEFAULT_MODEL
    embed_batch_size: int = 64
    workers: int = 0  # reindex worker processes (issue 18): 0 = one per core, 1 = in process (index_pool.py)
    vector_type: str = "int8"  # int8 | float32
    # Retrieval (issue 5/7): see vaultrag/retrieve for the reasons behind each default.
    k: int = 10
    candidates: int = 30
    rrf_k: int = 60
    weight_meta: float = 1.0
    weight_bm25: float = 1.0
    # Vectors weigh a quarter of BM25: with the bundled static model, weight 0.25 beat 0.5 and 1.0
    # on every eval set (BENCHMARKS.md, fusion weights).
    weight_vec: float = 0.25
    # Vectors re-score BM25's candidates: minmax(BM25) + vec_rerank * known-word share * minmax(cosine).
    vec_rerank: float = 0.3
    # ... + title_boost * share of the note title's words the query contains (a metadata signal).
    title_boost: float = 0.3
    # ... and a note's best chunk + note_agg * the BM25 + cosine blend of the note's second-best chunk:
    # a note several chunks of which match ranks over a note with one (issue 19, BENCHMARKS.md "sem10":
    # obsidian-help description MRR@10 en 0.877 -> 0.909, ru 0.876 -> 0.910, anchors de/ru/pl +0.03..+0.04;
    # SciFact/XQuAD unchanged; one fall past 0.005: obs-zh anchors -0.006, about one query; 0 = off).
    note_agg: float = 0.5
    # "rescore" (the above) or "rrf": plain Reciprocal Rank Fusion of all three channels, every
    # vector hit included (kept for comparison: it scored below BM25 alone, BENCHMARKS.md).
    fusion: str = "rescore"
    max_per_note: int = 2
    graph_seeds: int = 5
    graph_fanout: int = 3
    max_tokens: int = 2000
    hook_max_tokens: int = 500
    hook_timeout_ms: int = 1500
    pretool_tools: tuple[str, ...] = ("Grep", "Glob", "WebSearch", "WebFetch", "Task", "Agent")
    compress_threshold_chars: int = 8000
    compress_budget_chars: int = 4000
    # Issue 15: where the index lives (a SQLite path or a postgresql:// URL; None: `db`, else one
    # file per vault) and, on PostgreSQL, the collection (None: the vault folder's name; "a,b" to search several).
    store: str | None = None
    collection: str | None = None
    # Issue 17: past Claude Code sessions. `sessions`: a folder of transcripts (config `sessions:
    # true` means ~/.claude/projects, honouring CLAUDE_CONFIG_DIR); None: not indexed. `scopes`:
    # named path rules for vault files ((name, (glob, ...)), ...), searchable as `--scope name`.
    # `hook_scopes`: what hooks may inject (sessions only once the eval says they help).
    sessions: Path | None = None
    scopes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    hook_scopes: tuple[str, ...] = ("vault",)
    source: tuple[str, ...] = field(default=(), compare=False)  # where values came from, for status

    def db_path(self) -> Path:
        if self.db is not None:
            return self.db
        if self.vault is None:
            raise ConfigError("no vault configured: pass --vault PATH or set `vault:` in the config file")
        return default_db_path(self.vault)


_SECTIONS = {"chunking", "retrieval", "hooks", "index"}
_ALIASES = {  # YAML section.key -> Config field
    "chunking.min_chars": "min_chars", "chunking.max_chars": "max_chars",
    "chunking.overlap_chars": "overlap_chars", "chunking.skip_sections": "skip_sections",
    "index.include": "include", "index.exclude": "exclude", "index.max_file_bytes": "max_file_bytes",
    "index.model": "model", "index.embed_batch_size": "embed_batch_size", "index.vector_type": "vector_type",
    "index.workers": "workers",
    "retrieval.k": "k", "retrieval.candidates": "candidates", "retrieval.rrf_k": "rrf_k",
    "retrieval.max_per_note": "max_per_note", "retrieval.graph_seeds": "graph_seeds",
    "retrieval.graph_fanout": "graph_fanout", "retrieval.max_tokens": "max_tokens",
    "retrieval.weights.meta": "weight_meta", "retrieval.weights.bm25": "weight_bm25",
    "retrieval.weights.vec": "weight_vec", "retrieval.vec_rerank": "vec_rerank",
    "retrieval.title_boost": "title_boost",
    "retrieval.note_agg": "note_agg",
    "retrieval.fusion": "fusion",
    "hooks.max_tokens": "hook_max_tokens", "hooks.timeout_ms": "hook_timeout_ms",
    "hooks.pretool_tools": "pretool_tools", "hooks.compress_threshold_chars": "compress_threshold_chars",
    "hooks.compress_budget_chars": "compress_budget_chars", "hooks.scopes": "hook_scopes",
}
_ENV = {
    "VAULTRAG_VAULT": "vault", "VAULTRAG_DB": "db", "VAULTRAG_MODEL": "model", "VAULTRAG_STORE": "store",
    "VAULTRAG_COLLECTION": "collection",
    "VAULTRAG_MAX_TOKENS": "max_tokens", "VAULTRAG_HOOK_MAX_TOKENS": "hook_max_tokens",
}
_FIELDS = {f.name: f for f in fields(Config) if f.name != "source"}


# The config file and its JSON cache are small; anything bigger is not ours (or is /dev/zero).
MAX_CONFIG_BYTES = 1024 * 1024


def home_dir() -> Path:
    """$HOME if it is an absolute path, else the user database's home folder.

    `HOME=''` made Path.home() return `/`, so state went to `/.local/state` (issue 14)."""
    home = os.environ.get("HOME", "")
    if home and os.path.isabs(home):
        return Path(home)
    try:
        import pwd

        entry = pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError, OSError):
        entry = ""
    if entry and os.path.isabs(entry) and entry != "/":
        return Path(entry)
    if os.name == "nt" and os.environ.get("USERPROFILE"):
        return Path(os.environ["USERPROFILE"])
    raise ConfigError(f"no home folder: HOME is {home!r} and the user database names none; "
                      f"set HOME (or XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_CACHE_HOME, XDG_STATE_HOME)")


def xdg_dir(kind: str) -> Path:
    """`$XDG_<KIND>_HOME/vaultrag`, else the XDG default under the home folder. A relative XDG value
    is ignored, as the XDG spec says."""
    env, default = {"config": ("XDG_CONFIG_HOME", ".config"), "data": ("XDG_DATA_HOME", ".local/share"),
                    "cache": ("XDG_CACHE_HOME", ".cache"), "state": ("XDG_STATE_HOME", ".local/state")}[kind]
    base = os.environ.get(env, "")
    if not base or not os.path.isabs(base):
        base = str(home_dir() / default)
    return Path(base) / "vaultrag"


def default_db_path(vault: Path) -> Path:
    """One database per vault, outside it: `<XDG_DATA_HOME>/vaultrag/<name>-<hash of path>.sqlite`."""
    vault = Path(vault).expanduser().resolve()
    digest = sha256(str(vault).encode()).hexdigest()[:10]
    name = "".join(c if c.isalnum() or c in "-_" else "_" for c in vault.name)[:40] or "vault"
    return xdg_dir("data") / f"{name}-{digest}.sqlite"


def _coerce(name: str, value: Any) -> Any:
    f = _FIELDS[name]
    kind = str(f.type)
    if name == "sessions" and isinstance(value, bool):  # `sessions: true` = Claude Code's own folder
        from .sessions import claude_projects_dir

        return claude_projects_dir() if value else None
    if name == "scopes":
        return _coerce_scopes(value)
    try:
        if value is None and "None" in kind:
            return None
        if "Path" in kind:
            if not isinstance(value, (str, os.PathLike)) or not str(value):
                raise TypeError("a path")
            return Path(os.path.expandvars(str(value))).expanduser()
        if kind.startswith("tuple"):
            if isinstance(value, str):
                value = [v.strip() for v in value.split(",") if v.strip()]
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
                raise TypeError("a list of strings")
            return tuple(value)
        if kind == "int":
            if isinstance(value, bool) or not isinstance(value, (int, str)):
                raise TypeError("an integer")
            v = int(value)
            if v < 0:
                raise ValueError("a non-negative integer")
            return v
        if kind == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise TypeError("a number")
            v = float(value)
            if v < 0:
                raise ValueError("a non-negative number")
            return v
        if not isinstance(value, str):
            raise TypeError("a string")
        return value
    except (TypeError, ValueError) as exc:
        expected = exc.args[0] if exc.args and " " in str(exc.args[0]) else kind
        raise ConfigError(f"config key `{name}`: expected {expected}, got {value!r}") from None


def _coerce_scopes(value: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """`scopes:` {name: glob or [globs]} (vault-relative, `**` crosses folders) as sorted pairs."""
    from .sessions import RESERVED_SCOPES

    if not isinstance(value, Mapping):
        raise ConfigError(f"config key `scopes`: expected a mapping of name: glob, e.g. adr: \"docs/adr/**\", got {value!r}")
    out = []
    for name, globs in value.items():
        if not isinstance(name, str) or not name.strip() or name in RESERVED_SCOPES or "," in name:
            raise ConfigError(f"config key `scopes`: {name!r} cannot name a scope (not empty, no comma, "
                              f"not one of {', '.join(RESERVED_SCOPES)})")
        globs = [globs] if isinstance(globs, str) else globs
        if not isinstance(globs, (list, tuple)) or not globs or not all(isinstance(g, str) and g for g in globs):
            raise ConfigError(f"config key `scopes.{name}`: expected a glob or a list of globs, got {globs!r}")
        out.append((name, tuple(globs)))
    return tuple(out)


def _flatten(data: Mapping, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        full = f"{prefix}{key}"
        if isinstance(value, Mapping) and (full in _SECTIONS or full == "retrieval.weights"):
            out.update(_flatten(value, full + "."))
        else:
            out[full] = value
    return out


def from_mapping(data: Mapping, origin: str = "config") -> dict[str, Any]:
    """Validate a (possibly nested) mapping of config keys into Config field values."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{origin}: the top level must be a mapping of keys, got {type(data).__name__}")
    values: dict[str, Any] = {}
    for key, value in _flatten(data).items():
        name = _ALIASES.get(key, key)
        if name not in _FIELDS:
            known = sorted(set(_FIELDS) - set(_ALIASES.values()) | set(_ALIASES))
            raise ConfigError(f"{origin}: unknown key `{key}`; known keys: {', '.join(known)}")
        values[name] = _coerce(name, value)
    if values.get("vector_type", "int8") not in ("int8", "float32"):
        raise ConfigError(f"{origin}: `vector_type` must be int8 or float32, got {values['vector_type']!r}")
    if values.get("workers", 0) < 0:
        raise ConfigError(f"{origin}: `workers` must be 0 (one per core) or more, got {values['workers']}")
    if values.get("fusion", "rescore") not in ("rescore", "rrf"):
        raise ConfigError(f"{origin}: `fusion` must be rescore or rrf, got {values['fusion']!r}")
    for name in ("max_chars", "k", "candidates", "embed_batch_size"):
        if name in values and values[name] < 1:
            raise ConfigError(f"{origin}: `{name}` must be at least 1")
    return values


def config_file_path(explicit: str | os.PathLike | None = None) -> tuple[Path, bool]:
    """(path, explicitly_requested). An explicitly named file must exist; the default may not."""
    if explicit:
        return Path(explicit).expanduser(), True
    if os.environ.get("VAULTRAG_CONFIG"):
        return Path(os.environ["VAULTRAG_CONFIG"]).expanduser(), True
    return xdg_dir("config") / "config.yaml", False


def _read_yaml(path: Path) -> Any:
    """Parse the YAML file, through a JSON cache so hook processes skip importing yaml."""
    from .safe_io import private_dir, read_regular, write_private

    st = path.stat()
    key = sha256(f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()[:16]
    cache = xdg_dir("cache") / f"config-{key}.json"
    try:
        return json.loads(read_regular(cache, MAX_CONFIG_BYTES, follow_symlinks=False).decode("utf-8"))
    except (OSError, ValueError):
        pass
    import yaml  # lazy: only when the file changed since the last parse

    try:
        raw = read_regular(path, MAX_CONFIG_BYTES)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config file ({exc}); it must be a regular file under "
                          f"{MAX_CONFIG_BYTES // 1024} KB") from None
    try:
        data = yaml.safe_load(raw.decode("utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({str(exc).splitlines()[0]}); fix the file") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    try:  # 0600 in a 0700 folder: the config names the vault and its folders
        private_dir(cache.parent)
        write_private(cache, json.dumps(data, default=str).encode("utf-8"))
    except OSError:
        pass  # a read-only cache dir only costs speed
    return data


def load_config(config_file: str | os.PathLike | None = None, **overrides: Any) -> Config:
    """Build the Config: defaults < file < env < non-None keyword overrides (CLI arguments)."""
    values: dict[str, Any] = {}
    sources: list[str] = []
    path, explicit = config_file_path(config_file)
    if path.is_file():
        values.update(from_mapping(_read_yaml(path), origin=str(path)))
        sources.append(str(path))
    elif explicit:
        raise ConfigError(f"config file {path} does not exist; create it (see config.example.yaml) or drop --config")
    for env, name in _ENV.items():
        if os.environ.get(env):
            values[name] = _coerce(name, os.environ[env])
            sources.append(env)
    given = {k: v for k, v in overrides.items() if v is not None}
    if given:
        values.update(from_mapping(given, origin="arguments"))
        sources.append("arguments")
    if values.get("vault") is not None:
        values["vault"] = Path(values["vault"]).expanduser().resolve()
    _check_hook_scopes(values)
    return Config(**values, source=tuple(sources))


def _check_hook_scopes(values: dict) -> None:
    from .sessions import RESERVED_SCOPES

    known = RESERVED_SCOPES + tuple(name for name, _ in values.get("scopes", ()))
    bad = [s for s in values.get("hook_scopes", ()) if s not in known]
    if bad:
        raise ConfigError(f"config key `hooks.scopes`: unknown scope {', '.join(bad)}; choose from {', '.join(known)}")

"""Which files of the vault the index covers: one `os.scandir` walk, string paths, one stat a file.

Symlinks are never followed: a link out of the vault could leak other files into the index, and a
link inside it would index its target twice or loop. Hidden folders are skipped, as Obsidian itself
hides them. Paths are built as strings from the folder's own relative prefix (no `Path.relative_to`:
it was a third of the scan's time at 46k files), and `exclude` patterns are compiled once.
"""
from __future__ import annotations

import os
import re
import stat as stat_mode
from array import array
from fnmatch import fnmatch, translate
from operator import attrgetter
from pathlib import Path

from .config import ALWAYS_EXCLUDED, Config
from .paths import display_path

MARKDOWN_SUFFIXES = (".md", ".markdown")


def scan(cfg: Config, root: Path, start: str = "") -> tuple[dict[str, os.stat_result], list[tuple[str, str]]]:
    """Markdown files under `root` allowed by the config, as {relative path: stat}, plus skips
    (as (display path, reason)). Entries come in name order within each folder. `start`: only the
    vault-relative folder under it (the caller checked the folder itself is allowed)."""
    found: dict[str, os.stat_result] = {}
    skipped: list[tuple[str, str]] = []
    excluded = _matcher(exclude_patterns(cfg.exclude, root)[0])
    include = cfg.include
    stack: list[tuple[str, str]] = [(os.path.join(str(root), *start.split("/")) if start else str(root),
                                     start.strip("/") + "/" if start else "")]  # (folder on disk, its vault-relative prefix)
    while stack:
        folder, prefix = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=_NAME)
        except OSError as exc:
            skipped.append((display_path(prefix.rstrip("/")) + "/", f"folder unreadable: {exc.strerror}"))
            continue
        for entry in entries:
            name = entry.name
            rel = prefix + name
            if entry.is_symlink():
                if name.lower().endswith(MARKDOWN_SUFFIXES) or _is_dir(entry.path):
                    inside = Path(os.path.realpath(entry.path)).is_relative_to(root)
                    skipped.append((display_path(rel), "symlink not followed" + ("" if inside else " (points outside the vault)")))
                continue
            if entry.is_dir(follow_symlinks=False):
                if name.startswith(".") or name in ALWAYS_EXCLUDED or excluded(rel, name):
                    continue
                stack.append((entry.path, rel + "/"))
                continue
            if not name.lower().endswith(MARKDOWN_SUFFIXES):
                continue
            # The folders above were checked on the way down, so the file's own name and path remain.
            if excluded(rel, name) or (include and not included(rel, include)):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                skipped.append((display_path(rel), f"cannot stat: {exc.strerror}"))
                continue
            # A file the index will not hold is a skip with its reason, never a change waiting for
            # a reindex (status and doctor compare the scan with the index).
            why = unindexable(st, cfg.max_file_bytes)
            if why:
                skipped.append((display_path(rel), why))
            else:
                found[rel] = st
    return found, skipped


def unindexable(st: os.stat_result, max_bytes: int) -> str | None:
    """Why a Markdown-named entry of the vault is not read (not a regular file, or too large), or None."""
    if not stat_mode.S_ISREG(st.st_mode):
        kind = next((k for test, k in _KINDS if test(st.st_mode)), "special file")
        return f"not a regular file ({kind}); not read"
    return too_large(st.st_size, max_bytes)


def too_large(size: int, max_bytes: int) -> str | None:
    return f"larger than max_file_bytes ({size / 1e6:.1f} MB > {max_bytes / 1e6:.1f} MB)" if size > max_bytes else None


_KINDS = ((stat_mode.S_ISFIFO, "a FIFO"), (stat_mode.S_ISSOCK, "a socket"), (stat_mode.S_ISCHR, "a character device"),
          (stat_mode.S_ISBLK, "a block device"))


def snapshot(found: dict[str, os.stat_result], salt: str) -> str:
    """Digest of a `scan` result: every path with its (mtime_ns, size), in scan order, and `salt`
    (what else decides how the paths are stored). Equal digests: the same files, unchanged by the
    same test the incremental reindex applies file by file."""
    import hashlib  # lazy: scan's filters are on the hook path, hashlib is not (vaultrag/digest.py)

    h = hashlib.blake2b(salt.encode("utf-8", "surrogateescape") + b"\0", digest_size=16)
    h.update("\0".join(found).encode("utf-8", "surrogateescape"))  # no path holds a NUL
    stats = found.values()
    h.update(array("q", map(_MTIME, stats)).tobytes())  # C loops: formatting 38k ints as text cost ~3x
    h.update(array("q", map(_SIZE, stats)).tobytes())
    return h.hexdigest()


_MTIME, _SIZE, _NAME = attrgetter("st_mtime_ns"), attrgetter("st_size"), attrgetter("name")


def _is_dir(path: str) -> bool:
    try:
        return os.path.isdir(path)
    except OSError:
        return False


def _matcher(patterns: tuple[str, ...]):
    """f(rel, name) -> True when `rel` or its last part matches one of `patterns` (fnmatch rules)."""
    if not patterns:
        return lambda rel, name: False
    rx = re.compile("|".join(f"(?:{translate(os.path.normcase(p))})" for p in patterns))
    norm = os.path.normcase
    return lambda rel, name: rx.match(norm(rel)) is not None or rx.match(norm(name)) is not None


def exclude_patterns(patterns: tuple[str, ...], root: Path) -> tuple[tuple[str, ...], list[str]]:
    """`exclude` as vault-relative patterns, plus a warning per pattern that cannot apply.

    An absolute pattern (or `~/...`) inside the vault becomes relative to it (it used to match
    nothing, silently); one outside the vault is dropped with a warning."""
    out: list[str] = []
    warnings: list[str] = []
    for pat in patterns:
        expanded = os.path.expanduser(pat)
        if not os.path.isabs(expanded):
            out.append(pat)
            continue
        for base in (root, Path(os.path.realpath(root))):
            try:
                rel = Path(os.path.normpath(expanded)).relative_to(base).as_posix()
                break
            except ValueError:
                rel = None
        if rel is None or rel == ".":
            warnings.append(f"exclude pattern {pat!r} is outside the vault {root} (or is the vault itself); "
                            f"ignored. Use a path relative to the vault, e.g. 'Private' or 'Archive/*'")
        else:
            out.append(rel)
    return tuple(out), warnings


def excluded(rel: str, patterns: tuple[str, ...]) -> bool:
    """True when `rel` or any of its parts matches one of `patterns`."""
    parts = rel.split("/")
    return any(fnmatch(rel, p) or any(fnmatch(part, p) for part in parts) for p in patterns)


def included(rel: str, include: tuple[str, ...]) -> bool:
    if not include:
        return True
    return any(inc in (".", "/") and "/" not in rel or rel == inc.strip("/") or
               rel.startswith(inc.strip("/") + "/") for inc in include)


def allowed(cfg: Config, root: Path, rel: str) -> bool:
    """Whether the config lets the index hold the vault-relative `rel` (the checks `scan` makes on
    the way down, for one path: a watched change, say)."""
    parts = rel.split("/")
    if any(p.startswith(".") for p in parts) or any(p in ALWAYS_EXCLUDED for p in parts[:-1]):
        return False
    if not parts[-1].lower().endswith(MARKDOWN_SUFFIXES):
        return False
    return not excluded(rel, exclude_patterns(cfg.exclude, root)[0]) and included(rel, cfg.include)

"""File access that cannot be turned against vaultrag. Standard library only (the hook path uses it).

- Reads are of regular files only, size-capped, opened non-blocking: a path pointing at `/dev/zero`,
  a FIFO, a directory or a 5 GB file is refused in microseconds instead of hanging a hook or eating
  its memory (issue 14, finding 2).
- A vault file read at query time is opened one path component at a time relative to the vault
  folder, never following a symlink (`O_NOFOLLOW` at every step where the OS has `dir_fd`), and must
  be a regular file: a note swapped for a link to `/etc/passwd` after indexing is refused, not read
  (finding 1).
- Files vaultrag writes that hold note paths or prompts (hook log, session state, config cache) are
  0600 in 0700 folders, like the index itself (finding 7).
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO opens at once instead of waiting for a writer
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOCTTY = getattr(os, "O_NOCTTY", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows
_READ_FLAGS = os.O_RDONLY | _O_NONBLOCK | _O_CLOEXEC | _O_NOCTTY | _O_BINARY
_READ_CHUNK = 1 << 20


class RefusedFile(OSError):
    """A path vaultrag will not read: not a regular file, a symlink, outside the vault, or too big."""


def _read_fd(fd: int, max_bytes: int, tail: bool, name: str) -> bytes:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise RefusedFile(f"{name}: not a regular file")
    if st.st_size > max_bytes:
        if not tail:
            raise RefusedFile(f"{name}: larger than {max_bytes} bytes")
        os.lseek(fd, st.st_size - max_bytes, os.SEEK_SET)
    parts: list[bytes] = []
    got = 0
    while got <= max_bytes:  # the file may grow while we read: never take more than the cap
        block = os.read(fd, min(_READ_CHUNK, max_bytes + 1 - got))
        if not block:
            break
        parts.append(block)
        got += len(block)
    data = b"".join(parts)
    if len(data) > max_bytes:
        if not tail:
            raise RefusedFile(f"{name}: larger than {max_bytes} bytes")
        data = data[-max_bytes:]
    return data


def read_regular(path: str | os.PathLike, max_bytes: int, *, tail: bool = False,
                 follow_symlinks: bool = True) -> bytes:
    """The bytes of a regular file, at most `max_bytes` (its last ones when `tail`, else a bigger
    file is refused). Raises OSError (RefusedFile for special files, links when not followed, size)."""
    if not isinstance(path, (str, os.PathLike)):
        raise RefusedFile(f"not a path: {type(path).__name__}")  # open(1) would be our own stdout
    flags = _READ_FLAGS | (0 if follow_symlinks else _O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if not follow_symlinks and os.path.islink(path):
            raise RefusedFile(f"{path}: a symlink") from None
        raise exc
    try:
        return _read_fd(fd, max_bytes, tail, str(path))
    finally:
        os.close(fd)


def _parts(rel: str) -> list[str]:
    parts = rel.replace("\\", "/").split("/") if os.sep == "\\" else rel.split("/")
    if not rel or "\x00" in rel or os.path.isabs(rel) or any(p in ("", ".", "..") for p in parts):
        raise RefusedFile(f"{rel!r}: not a plain path inside the vault")
    return parts


def read_in_vault(root: str | os.PathLike, rel: str, max_bytes: int) -> bytes:
    """Read `root/rel` only if every component is a real folder or, last, a regular file inside
    `root` (no symlink anywhere below the vault folder), at most `max_bytes`. Raises OSError."""
    parts = _parts(rel)
    if os.open in os.supports_dir_fd and _O_NOFOLLOW and _O_DIRECTORY:
        fd = os.open(root, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
        try:
            for part in parts[:-1]:
                try:
                    nxt = os.open(part, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (getattr(os, "ELOOP", -1), getattr(os, "ENOTDIR", -1)):
                        raise RefusedFile(f"{rel}: a folder on the way is a symlink or not a folder") from None
                    raise
                os.close(fd)
                fd = nxt
            try:
                leaf = os.open(parts[-1], _READ_FLAGS | _O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno == getattr(os, "ELOOP", -1):
                    raise RefusedFile(f"{rel}: a symlink") from None
                raise
        finally:
            os.close(fd)
        try:
            return _read_fd(leaf, max_bytes, False, rel)
        finally:
            os.close(leaf)
    # No dir_fd (Windows): resolve and compare, then open without following the last link.
    base = os.path.realpath(root)
    full = os.path.join(base, *parts)
    if os.path.realpath(full) != full:
        raise RefusedFile(f"{rel}: resolves outside its place in the vault (a symlink on the way)")
    return read_regular(full, max_bytes, follow_symlinks=False)


def lstat_in_vault(root: str | os.PathLike, rel: str) -> os.stat_result:
    """`lstat` of a vault file, refusing paths that climb out of the vault."""
    return os.lstat(os.path.join(root, *_parts(rel)))


# -- private files ----------------------------------------------------------------------------
def private_dir(path: str | os.PathLike) -> Path:
    """Create `path` (and parents) and make the leaf folder 0700. Returns it as a Path."""
    p = Path(path)
    p.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
    try:
        if stat.S_IMODE(p.stat().st_mode) != PRIVATE_DIR_MODE and os.name == "posix":
            os.chmod(p, PRIVATE_DIR_MODE)
    except OSError:
        pass  # not ours to change: the files inside are still 0600
    return p


def open_private(path: str | os.PathLike, flags: int) -> int:
    """os.open with 0600, never through a symlink; an older 0644 file is tightened."""
    fd = os.open(path, flags | _O_NOFOLLOW | _O_CLOEXEC | _O_BINARY, PRIVATE_FILE_MODE)
    try:
        if os.name == "posix" and stat.S_IMODE(os.fstat(fd).st_mode) != PRIVATE_FILE_MODE:
            os.fchmod(fd, PRIVATE_FILE_MODE)
    except OSError:
        pass
    return fd


def write_private(path: str | os.PathLike, data: bytes) -> None:
    """Replace `path` atomically with `data`, mode 0600 (a temporary file, then os.replace)."""
    p = Path(path)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    fd = open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    os.replace(tmp, p)


def append_private(path: str | os.PathLike, data: bytes) -> None:
    fd = open_private(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)

"""Keep the full (scrubbed) text of a shortened output on disk, so the agent can read any part.

Files live in `$XDG_STATE_HOME/vaultrag/outputs/` (directory 0700, files 0600: tool output can
hold private paths and data even after scrubbing). A file is named by the hash of its text, so the
same output gives the same path (deterministic hook output) and is written once. The directory is
bounded: beyond SPILL_MAX_FILES files or SPILL_MAX_BYTES bytes the oldest files are deleted.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

SPILL_MAX_FILES = 50  # a session rarely needs more than its last few dozen long outputs
SPILL_MAX_BYTES = 64 * 1024 * 1024  # a bound for the whole directory, whatever the outputs' size
# One file keeps at most this much (half from the head, half from the tail): scrubbing costs
# ~70 ms per MB and the hook has a 1.5 s deadline; a test log's ends are its setup and summary.
SPILL_MAX_CHARS = 4 * 1024 * 1024


def outputs_dir() -> Path:
    from vaultrag.config import xdg_dir

    return xdg_dir("state") / "outputs"


def bounded(text: str) -> str:
    if len(text) <= SPILL_MAX_CHARS:
        return text
    half = SPILL_MAX_CHARS // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n[... {cut:,} characters omitted from the middle ...]\n{text[-half:]}"


def spill(text: str, directory: Path | None = None) -> Path:
    """Write `text` (already scrubbed) to a 0600 file named by its hash; return the path.
    Raises OSError when the directory cannot be written: the caller says so instead."""
    directory = Path(directory) if directory else outputs_dir()
    data = text.encode("utf-8", errors="replace")
    path = directory / f"{hashlib.sha256(data).hexdigest()[:20]}.txt"
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(directory, 0o700)
    if not path.exists():
        tmp = directory / f".{path.name}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    else:
        os.utime(path)  # recently used: pruned last
    prune(directory, keep=path)
    return path


def prune(directory: Path, keep: Path | None = None) -> None:
    """Delete the oldest files beyond SPILL_MAX_FILES / SPILL_MAX_BYTES (never `keep`)."""
    entries = []
    for p in directory.glob("*.txt"):
        try:
            st = p.stat()
        except OSError:
            continue
        entries.append((st.st_mtime, p.name, st.st_size, p))
    entries.sort(reverse=True)  # newest first
    total = 0
    for i, (_, _, size, p) in enumerate(entries):
        total += size
        if p != keep and (i >= SPILL_MAX_FILES or total > SPILL_MAX_BYTES):
            try:
                p.unlink()
            except OSError:
                pass

"""Vault paths as vaultrag stores and shows them: scrubbed and escaped like text. Standard library only.

A folder or file name can hold a secret (`Keys/ghp_....md`) or a control character (an ESC byte
that recolours a terminal). Before issue 14 both were stored as they are in `files.path`, the
metadata keys and every citation. Now each path component goes through the same scrubber as note
text, then control characters are escaped (`\\x1b`): that is the *display path*, and it is the
only form that reaches the index, search output, context blocks, reports and logs.

When the display path differs from the real one, the stored path is the display path plus
`#id-` and 12 hex digits of an HMAC-SHA256 of the real path, keyed by a random key kept in the
index (`meta.path_key`): two secret-named files stay two notes, incremental reindex recognises
each file again, and the tag reveals nothing (without the key not even a guessable password can be
confirmed from it). Nothing but `.md`/`.markdown` files is indexed, so a stored path ending in a tag
can never be a real vault path. To read such a file again (live citations), its folder is listed
and the one entry whose stored form matches is taken: the real name never needs to be stored.

Choice: a user expects a note whose *name* holds a secret to be found by its content, not to
vanish from search, and not to have its name copied into the index. So such notes are indexed
under their redacted name; only a note whose name redacts to nothing useful is shown as
`[REDACTED:rule]` - its content is still searchable.
"""
from __future__ import annotations

import os
import stat
import unicodedata

TAG_MARK = "#id-"
TAG_HEX = 12  # 48 bits: unique among a vault's secret-named files, too short to matter if leaked
KEY_META = "path_key"  # meta row holding the hex HMAC key
MAX_RESOLVE_ENTRIES = 20_000  # folder entries examined to find one tagged file (then: not found)
# Bidirectional overrides reorder what a terminal shows ("Trojan Source"); escape them too.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f")


def escape_controls(text: str, keep: str = "") -> str:
    """`text` with control characters (C0, DEL, C1, bidi overrides) written as `\\xNN` / `\\uNNNN`.
    Characters in `keep` (e.g. "\\n\\t" for multi-line output) stay as they are."""
    if text.isprintable() and not any(c in _BIDI for c in text):
        return text
    out = []
    for c in text:
        if c in keep or (unicodedata.category(c) != "Cc" and c not in _BIDI):
            out.append(c)
        else:
            out.append(f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
    return "".join(out)


def display_component(name: str) -> str:
    shown = _SHOWN.get(name)
    if shown is None:
        from .scrubber import scrub  # lazy: the hook path imports this module for escape_controls only

        if len(_SHOWN) >= SHOWN_CACHE_NAMES:
            _SHOWN.clear()
        shown = _SHOWN[name] = escape_controls(scrub(name)[0])
    return shown


# Display form of each name part already scrubbed: folder names repeat across a vault (a full index
# of 38k tldr pages scrubbed 115k parts, 7 s of its time on this machine; 38k distinct). Bounded.
SHOWN_CACHE_NAMES = 65_536
_SHOWN: dict[str, str] = {}


def display_path(rel: str) -> str:
    """The form of a vault-relative POSIX path that may be stored and shown."""
    return "/".join(display_component(part) for part in rel.split("/"))


def new_key() -> str:
    import secrets  # lazy: hmac, hashlib and secrets cost a hook ~3 ms at import; only tagging needs them

    return secrets.token_hex(32)


def _tag(rel: str, key: str) -> str:
    import hashlib
    import hmac

    return hmac.new(bytes.fromhex(key), rel.encode("utf-8", "surrogateescape"), hashlib.sha256).hexdigest()[:TAG_HEX]


def stored_path(rel: str, key: str) -> str:
    """What `files.path` holds for the real path `rel`: `rel` itself when it is clean."""
    shown = display_path(rel)
    return rel if shown == rel else f"{shown}{TAG_MARK}{_tag(rel, key)}"


def is_tagged(stored: str) -> bool:
    head, mark, tag = stored.rpartition(TAG_MARK)
    return bool(mark) and len(tag) == TAG_HEX and all(c in "0123456789abcdef" for c in tag)


def shown_part(stored: str) -> str:
    """The display path of a stored path (without its tag)."""
    return stored.rpartition(TAG_MARK)[0] if is_tagged(stored) else stored


def resolve(root: str | os.PathLike, stored: str, key: str | None) -> str | None:
    """The real vault-relative path of `stored`, or None when no file matches (or no key).
    Never follows a symlink; examines at most MAX_RESOLVE_ENTRIES folder entries."""
    if not is_tagged(stored):
        return stored
    if not key:
        return None
    want = shown_part(stored).split("/")
    budget = [MAX_RESOLVE_ENTRIES]

    def candidates(folder: str, shown: str) -> list[tuple[str, int]]:
        if "[REDACTED:" not in shown and "\\" not in shown:  # a clean name is its only preimage
            try:
                return [(shown, os.lstat(os.path.join(folder, shown)).st_mode)]
            except OSError:
                return []
        out = []
        try:
            with os.scandir(folder) as it:
                for entry in it:
                    budget[0] -= 1
                    if budget[0] < 0:
                        break
                    if display_component(entry.name) == shown:
                        try:
                            out.append((entry.name, entry.stat(follow_symlinks=False).st_mode))
                        except OSError:
                            pass
        except OSError:
            return []
        return sorted(out)

    def walk(folder: str, rel_parts: list[str], depth: int) -> str | None:
        for name, mode in candidates(folder, want[depth]):
            rel = "/".join(rel_parts + [name])
            if depth == len(want) - 1:
                if stat.S_ISREG(mode) and stored_path(rel, key) == stored:
                    return rel
            elif stat.S_ISDIR(mode):
                found = walk(os.path.join(folder, name), rel_parts + [name], depth + 1)
                if found:
                    return found
        return None

    return walk(os.fspath(root), [], 0)

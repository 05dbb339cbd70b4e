"""API tokens: created once, printed once, stored only as a SHA-256 hash in a 0600 file.

A token is 32 random bytes (256 bits), so a fast hash is enough: there is nothing to brute-force
that a slow KDF would protect (GitHub and PyPI store their API tokens the same way). Standard
library only.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import VaultragError

ROLES = ("reader", "maintainer")  # reader: search/get/status/coverage/hooks/MCP; maintainer: + reindex
TOKEN_PREFIX = "vrt_"  # recognisable in a leaked log or paste, so it can be revoked
TOKEN_BYTES = 32
MAX_NAME_CHARS = 80


@dataclass(frozen=True)
class TokenRecord:
    name: str
    role: str
    sha256: str
    created: float


def tokens_path() -> Path:
    """`$VAULTRAG_TOKENS`, else `<XDG_CONFIG_HOME>/vaultrag/tokens.json`."""
    from ..config import xdg_dir

    env = os.environ.get("VAULTRAG_TOKENS")
    return Path(env) if env else xdg_dir("config") / "tokens.json"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def load_tokens(path: Path | None = None) -> list[TokenRecord]:
    path = path or tokens_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise VaultragError(f"token file {path} is unreadable ({exc}); fix or delete it, then "
                            f"`vaultrag token create` again") from None
    try:
        return [TokenRecord(str(t["name"]), str(t["role"]), str(t["sha256"]), float(t.get("created", 0)))
                for t in data.get("tokens", [])]
    except (AttributeError, KeyError, TypeError, ValueError):
        raise VaultragError(f"token file {path} is not in vaultrag's format; delete it and "
                            f"`vaultrag token create` again") from None


def create_token(role: str, name: str | None = None, path: Path | None = None) -> tuple[str, TokenRecord]:
    """A new token (returned once, never stored) and its record (stored, hash only)."""
    if role not in ROLES:
        raise VaultragError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    path = path or tokens_path()
    existing = load_tokens(path)
    name = (name or f"{role}-{len(existing) + 1}")[:MAX_NAME_CHARS]
    token = TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)
    rec = TokenRecord(name, role, _digest(token), round(time.time(), 3))
    data = {"tokens": [rec.__dict__ for rec in existing + [rec]]}
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    return token, rec


def verify(token: str, records: list[TokenRecord]) -> TokenRecord | None:
    """The record whose hash matches `token`, compared in constant time; None if none does."""
    digest = _digest(token)
    found = None
    for rec in records:
        if hmac.compare_digest(rec.sha256, digest):
            found = rec
    return found

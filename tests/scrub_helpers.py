"""What the scrubber tests ask of `scrub`: a secret gone (with a finding), a text left as it was."""
from __future__ import annotations

from vaultrag.scrubber import scrub


def gone(text: str, secret: str) -> bool:
    clean, findings = scrub(text)
    return secret not in clean and bool(findings)


def untouched(text: str) -> bool:
    return scrub(text) == (text, ())

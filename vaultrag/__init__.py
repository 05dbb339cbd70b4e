"""vaultrag: local hybrid search over a Markdown vault, for people and for Claude Code hooks.

    from vaultrag import load_config, reindex, search
    cfg = load_config(vault="~/Notes")
    reindex(cfg)
    print(search("how long are snapshots kept?", cfg).to_dict())

Nothing heavy is imported here: names load on first use, so hook processes stay fast.
"""
from __future__ import annotations

import logging as _logging

_logging.getLogger("vaultrag").addHandler(_logging.NullHandler())  # library code logs, never prints

__version__ = "0.1.0"
__all__ = ["load_config", "Config", "reindex", "search", "status", "scrub", "Answer", "VaultragError"]

_LAZY = {
    "load_config": ("vaultrag.config", "load_config"),
    "Config": ("vaultrag.config", "Config"),
    "reindex": ("vaultrag.indexer", "reindex"),
    "search": ("vaultrag.retrieve.pipeline", "search"),
    "status": ("vaultrag.status", "status"),
    "scrub": ("vaultrag.scrubber", "scrub"),
    "Answer": ("vaultrag.retrieve.types", "Answer"),
    "VaultragError": ("vaultrag.errors", "VaultragError"),
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'vaultrag' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)

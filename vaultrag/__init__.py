"""vaultrag: local hybrid search over a Markdown vault, for people and for Claude Code hooks.

    from vaultrag import load_config, reindex, search
    cfg = load_config(vault="~/Notes")
    reindex(cfg)
    print(search("how long are snapshots kept?", cfg).to_dict())

Nothing heavy is imported here: names load on first use, so hook processes stay fast.
"""
from __future__ import annotations

import sys as _sys


class _QuietLogging:
    """Library code logs, never prints: the "vaultrag" logger gets a NullHandler (so Python's
    last-resort handler never writes a warning to stderr), attached when `logging` is imported,
    by whoever imports it. Importing `logging` here would cost every hook process ~6 ms
    (issue 18); the hook path does without it."""

    then: list = []  # callables run with the module once it is imported (see `_when_logging`)

    @classmethod
    def attach(cls, logging) -> None:
        logging.getLogger("vaultrag").addHandler(logging.NullHandler())
        for fn in cls.then:
            fn(logging)
        cls.then.clear()

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "logging":
            return None
        _sys.meta_path.remove(cls)
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec

        run = loader.exec_module

        def exec_module(module):
            run(module)
            cls.attach(module)

        loader.exec_module = exec_module
        return spec


if "logging" in _sys.modules:
    _QuietLogging.attach(_sys.modules["logging"])
else:
    _sys.meta_path.insert(0, _QuietLogging)


def _when_logging(fn) -> None:
    """Run `fn(logging)` now if `logging` is imported, else as soon as anything imports it (the CLI
    configures its stderr handler this way without paying for the import on `search`)."""
    if "logging" in _sys.modules and _QuietLogging not in _sys.meta_path:
        fn(_sys.modules["logging"])
    else:
        _QuietLogging.then.append(fn)

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

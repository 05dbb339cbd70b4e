"""Merge vaultrag's hooks into a Claude Code settings.json (`install.sh --claude`).

Keeps every existing setting and hook, writes a timestamped backup first, and is idempotent: a
handler already present (same command and args) is not added again.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

SNIPPET = Path(__file__).resolve().parents[1] / "settings.snippet.json"
PLACEHOLDER = "__VAULTRAG_ROOT__"


def snippet_for(root: Path, python: str | None = None) -> dict:
    data = json.loads(SNIPPET.read_text(encoding="utf-8").replace(PLACEHOLDER, root.as_posix()))
    if python:
        for groups in data["hooks"].values():
            for group in groups:
                for h in group["hooks"]:
                    h["command"] = python
    return data


def _key(handler: dict) -> tuple:
    return handler.get("type"), handler.get("command"), tuple(handler.get("args") or ())


def merge(settings: dict, snippet: dict) -> tuple[dict, int]:
    """Return (merged settings, number of handlers added). `settings` is not modified."""
    merged = json.loads(json.dumps(settings))
    hooks = merged.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ValueError("settings.json: `hooks` is not an object; fix it by hand first")
    added = 0
    for event, groups in snippet["hooks"].items():
        existing = hooks.setdefault(event, [])
        present = {_key(h) for g in existing if isinstance(g, dict) for h in g.get("hooks", []) if isinstance(h, dict)}
        for group in groups:
            new = [h for h in group["hooks"] if _key(h) not in present]
            if new:
                existing.append({**group, "hooks": new})
                added += len(new)
    return merged, added


def install(settings_path: Path, snippet: dict) -> int:
    settings = {}
    if settings_path.exists():
        try:
            settings = json.loads(settings_path.read_text(encoding="utf-8") or "{}")
        except ValueError as exc:
            raise SystemExit(f"{settings_path} is not valid JSON ({exc}); fix it first, nothing was changed")
        if not isinstance(settings, dict):
            raise SystemExit(f"{settings_path} does not hold a JSON object; nothing was changed")
    merged, added = merge(settings, snippet)
    if added == 0:
        return 0
    settings_path.parent.mkdir(parents=True, exist_ok=True)
    if settings_path.exists():
        shutil.copy2(settings_path, settings_path.with_name(settings_path.name + time.strftime(".bak-%Y%m%d-%H%M%S")))
    tmp = settings_path.with_name(settings_path.name + ".tmp")
    tmp.write_text(json.dumps(merged, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, settings_path)
    return added


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m vaultrag.install_hooks")
    p.add_argument("--scope", choices=["user", "project"], default="user")
    p.add_argument("--python", help="interpreter the hooks run with (default: the repo's .venv)")
    p.add_argument("--settings", help="settings file to edit (default by --scope)")
    args = p.parse_args(argv)
    root = SNIPPET.parent
    target = Path(args.settings) if args.settings else (
        Path.home() / ".claude" / "settings.json" if args.scope == "user" else Path.cwd() / ".claude" / "settings.json")
    added = install(target, snippet_for(root, args.python))
    print(f"{target}: {'added ' + str(added) + ' vaultrag hook(s)' if added else 'vaultrag hooks already present'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

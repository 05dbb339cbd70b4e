"""install.sh's steps: merge vaultrag's hooks into a Claude Code settings.json (`--claude`), record
the vault in the user config, pick a sample question, and run the registered hook once.

Merging keeps every existing setting and hook, writes a timestamped backup first, and is idempotent: a
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


def _scripts(snippet: dict) -> set[str]:
    """The file names of the hook scripts the snippet runs (session_start.py, ...)."""
    return {os.path.basename(a) for groups in snippet["hooks"].values() for g in groups for h in g["hooks"]
            for a in h.get("args") or () if a.endswith(".py")}


def _is_stale(handler: dict, scripts: set[str]) -> bool:
    """A vaultrag handler of a checkout that is gone: it runs `<root>/hooks/<one of our scripts>`
    and that file no longer exists (Claude Code then fails it on every event)."""
    args = handler.get("args") if isinstance(handler.get("args"), list) else []
    return any(isinstance(a, str) and os.path.basename(a) in scripts and os.path.basename(os.path.dirname(a)) == "hooks"
               and not os.path.exists(a) for a in args)


def merge(settings: dict, snippet: dict) -> tuple[dict, int, int]:
    """Return (merged settings, handlers added, stale vaultrag handlers removed: those of a checkout
    that is gone, which a reinstall from a new clone used to leave beside its own). `settings` is
    not modified."""
    merged = json.loads(json.dumps(settings))
    hooks = merged.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ValueError("settings.json: `hooks` is not an object; fix it by hand first")
    added = removed = 0
    scripts = _scripts(snippet)
    ours = {_key(h) for groups in snippet["hooks"].values() for g in groups for h in g["hooks"]}
    for event, groups in snippet["hooks"].items():
        existing = hooks.setdefault(event, [])
        if not isinstance(existing, list):
            raise ValueError(f"settings.json: `hooks.{event}` is not a list; fix it by hand first")
        for g in [g for g in existing if isinstance(g, dict) and isinstance(g.get("hooks"), list)]:
            kept = [h for h in g["hooks"] if not (isinstance(h, dict) and _key(h) not in ours and _is_stale(h, scripts))]
            removed += len(g["hooks"]) - len(kept)
            if not kept and g["hooks"]:
                existing.remove(g)
            g["hooks"] = kept
        present = {_key(h) for g in existing if isinstance(g, dict) for h in g.get("hooks", []) if isinstance(h, dict)}
        for group in groups:
            new = [h for h in group["hooks"] if _key(h) not in present]
            if new:
                existing.append({**group, "hooks": new})
                added += len(new)
    return merged, added, removed


def install(settings_path: Path, snippet: dict) -> tuple[int, int]:
    """(handlers added, stale vaultrag handlers removed) in `settings_path`."""
    settings = {}
    if settings_path.exists():
        try:
            settings = json.loads(settings_path.read_text(encoding="utf-8") or "{}")
        except ValueError as exc:
            raise SystemExit(f"{settings_path} is not valid JSON ({exc}); fix it first, nothing was changed")
        if not isinstance(settings, dict):
            raise SystemExit(f"{settings_path} does not hold a JSON object; nothing was changed")
    merged, added, removed = merge(settings, snippet)
    if added == 0 and removed == 0:
        return 0, 0
    settings_path.parent.mkdir(parents=True, exist_ok=True)
    if settings_path.exists():
        shutil.copy2(settings_path, settings_path.with_name(settings_path.name + time.strftime(".bak-%Y%m%d-%H%M%S")))
    tmp = settings_path.with_name(settings_path.name + ".tmp")
    tmp.write_text(json.dumps(merged, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, settings_path)
    return added, removed


def settings_path(scope: str, explicit: str | None = None) -> Path:
    if explicit:
        return Path(explicit).expanduser()
    return (Path.home() if scope == "user" else Path.cwd()) / ".claude" / "settings.json"


def cmd_register(args) -> int:
    target = settings_path(args.scope, args.settings)
    added, removed = install(target, snippet_for(SNIPPET.parent, args.python))
    print(f"{target}: {'added ' + str(added) + ' vaultrag hook(s)' if added else 'vaultrag hooks already present'}"
          + (f"; removed {removed} of a vaultrag checkout that is gone" if removed else ""))
    return 0


def cmd_config(args) -> int:
    from .errors import VaultragError
    from .user_config import record_vault

    try:
        w = record_vault(args.vault)
    except VaultragError as exc:
        print(f"install: {exc}", file=sys.stderr)
        return 1
    if w.action == "created":
        print(f"config:  {w.path}: created with vault: {Path(args.vault).expanduser().resolve()}")
    elif w.action == "updated":
        was = f" (was {w.previous_vault})" if w.previous_vault else ""
        print(f"config:  {w.path}: vault set to {Path(args.vault).expanduser().resolve()}{was}; backup {w.backup.name}")
    else:
        print(f"config:  {w.path}: vault already set, unchanged")
    return 0


def cmd_sample(args) -> int:
    """Print a sample question from the configured (or given) vault's index; nothing if none."""
    from .config import load_config
    from .hook_check import sample_question

    found = sample_question(load_config(vault=args.vault))
    if found:
        print(found[0])
    return 0


def cmd_check(args) -> int:
    """Run the registered UserPromptSubmit hook once, as Claude Code would, and show what it injected."""
    from .hook_check import plugin_handlers, run_prompt_hook, settings_handlers

    target = settings_path(args.scope, args.settings)
    source, handlers = str(target), ([] if args.plugin else settings_handlers(target))
    if not any(h.event == "UserPromptSubmit" for h in handlers) and not args.settings:
        # Not registered in settings.json: the plugin route (claude --plugin-dir / marketplace).
        source, handlers = "the plugin's hooks/hooks.json", plugin_handlers()
        print(f"hook:    plugin route: claude --plugin-dir {SNIPPET.parent}  "
              f"(or ./install.sh --claude for {target})")
    prompt_handlers = [h for h in handlers if h.event == "UserPromptSubmit"]
    if not prompt_handlers:
        print(f"hook:    no vaultrag UserPromptSubmit hook registered in {source}")
        return 1
    run = run_prompt_hook(prompt_handlers[-1], args.prompt)
    print(f"hook:    ran {run.handler.display()}")
    print(f"         (registered in {source}) with the prompt {args.prompt!r}: {run.seconds * 1000:.0f} ms")
    for line in render_run(run):
        print(line)
    return 0 if run.injected else 1


def render_run(run) -> list[str]:
    """What a hook run gave Claude, or why it gave nothing."""
    if run.error:
        return [f"hook:    FAILED: {run.error}"]
    if run.injected:
        return ["hook:    injected into Claude's context:", "", *("    " + ln for ln in run.injected.splitlines()), ""]
    why = [ln.split(" ", 1)[-1] for ln in run.log_lines]
    if why:
        return ["hook:    injected nothing; the hook log says:", *("         " + w for w in why[-3:]),
                "         (run `vaultrag doctor` for what to fix)"]
    if run.exit_code:
        return [f"hook:    injected nothing; exit code {run.exit_code}: {run.stderr.strip()[:300]}"]
    return ["hook:    injected nothing: the notes hold no strong evidence for this prompt "
            "(the hook stays silent rather than inject weak matches)"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m vaultrag.install_hooks",
                                description="install.sh's steps: register hooks, record the vault, check a hook")
    sub = p.add_subparsers(dest="step")
    steps = {"register": cmd_register, "config": cmd_config, "sample": cmd_sample, "check": cmd_check}
    for name in ("register", "check"):
        s = sub.add_parser(name)
        s.add_argument("--scope", choices=["user", "project"], default="user")
        s.add_argument("--settings", help="settings file (default by --scope)")
        if name == "register":
            s.add_argument("--python", help="interpreter the hooks run with (default: the repo's .venv)")
        else:
            s.add_argument("--plugin", action="store_true",
                           help="run the plugin's hooks/hooks.json command (the default when settings.json has none)")
            s.add_argument("--prompt", required=True, help="the prompt to send")
    sub.add_parser("config").add_argument("--vault", required=True)
    sub.add_parser("sample").add_argument("--vault")
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or (argv[0] not in steps and argv[0] not in ("-h", "--help")):
        argv = ["register", *argv]  # the form earlier install.sh versions used
    args = p.parse_args(argv)
    return steps[args.step](args)


if __name__ == "__main__":
    sys.exit(main())

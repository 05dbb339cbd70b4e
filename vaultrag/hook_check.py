"""Find the registered vaultrag hook commands and run one for real (install.sh's last step, doctor).

A registration is read back from the file Claude Code reads (a settings.json, or the plugin's
hooks/hooks.json with `${CLAUDE_PLUGIN_ROOT}` filled in), so what is run is exactly what Claude
Code will run: the same argv, real stdin JSON, the caller's environment.
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from .config import xdg_dir

REPO_ROOT = Path(__file__).resolve().parents[1]
PLUGIN_HOOKS = REPO_ROOT / "hooks" / "hooks.json"
PLUGIN_ROOT_VAR = "${CLAUDE_PLUGIN_ROOT}"
# The scripts that make a handler ours, by event.
HOOK_SCRIPTS = {"UserPromptSubmit": "user_prompt_submit.py", "PreToolUse": "pre_tool_use.py",
                "PostToolUse": "post_tool_use.py", "PostToolUseFailure": "post_tool_use_failure.py",
                "SessionStart": "session_start.py", "SessionEnd": "session_end.py"}
# Claude Code's own UserPromptSubmit timeout when the handler names none (reference §3.4).
DEFAULT_TIMEOUT_S = 30
# Sample questions come from a note of about the vault's median size (big notes are often dumps,
# tiny ones stubs); the candidates are the closest this many notes to the median.
SAMPLE_CANDIDATE_NOTES = 25
SAMPLE_MIN_SECTION_CHARS = 200  # a section this long has something to find
SAMPLE_TRIED = 12  # candidate questions put to the hook's own answer (~50 ms each) before settling
SAMPLE_WORDS = 10  # opening words of a note without sections


@dataclass(frozen=True)
class Handler:
    """One registered hook handler of ours, as Claude Code would spawn it."""
    event: str
    source: Path  # the settings.json or hooks.json it was read from
    command: str
    args: tuple[str, ...] | None  # None: shell form (`command` goes to sh -c)
    timeout_s: float

    def argv(self) -> list[str]:
        return ["/bin/sh", "-c", self.command] if self.args is None else [self.command, *self.args]

    def script(self) -> Path | None:
        """The hook script it runs, when one of ours is named in it."""
        words = list(self.args) if self.args is not None else shlex.split(self.command)
        for w in words:
            if Path(w).name in HOOK_SCRIPTS.values():
                return Path(w)
        return None

    def python(self) -> str | None:
        """The interpreter it runs (exec form: the command; shell form: the first word)."""
        if self.args is not None:
            return self.command
        words = shlex.split(self.command)
        return words[0] if words else None

    def display(self) -> str:
        return " ".join(shlex.quote(a) for a in self.argv()) if self.args is not None else self.command


@dataclass(frozen=True)
class HookRun:
    handler: Handler
    prompt: str
    exit_code: int | None  # None: timed out, or could not start
    stdout: str
    stderr: str
    injected: str | None  # the additionalContext / plain text Claude would get
    log_lines: tuple[str, ...]  # lines the hook added to the hook log during the run
    seconds: float
    error: str | None = None  # why it could not run at all


def _ours(handler: dict, event: str) -> bool:
    words = [str(handler.get("command") or "")] + [str(a) for a in handler.get("args") or ()]
    return any(HOOK_SCRIPTS[event] in w and "hooks" in w for w in words)


def handlers_in(hooks: dict, source: Path, plugin_root: Path | None = None) -> list[Handler]:
    """Our handlers in a `hooks` mapping (settings.json's or hooks.json's), placeholders filled."""
    out: list[Handler] = []
    if not isinstance(hooks, dict):
        return out

    def fill(s: str) -> str:
        return s.replace(PLUGIN_ROOT_VAR, str(plugin_root)) if plugin_root is not None else s

    for event in HOOK_SCRIPTS:
        for group in hooks.get(event) or ():
            for h in (group.get("hooks") or ()) if isinstance(group, dict) else ():
                if isinstance(h, dict) and h.get("type", "command") == "command" and _ours(h, event):
                    args = h.get("args")
                    out.append(Handler(event, source, fill(str(h.get("command") or "")),
                                       None if args is None else tuple(fill(str(a)) for a in args),
                                       float(h.get("timeout") or DEFAULT_TIMEOUT_S)))
    return out


def read_json(path: Path) -> tuple[dict | None, str | None]:
    """(data, None), or (None, why not) for a missing or broken file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except FileNotFoundError:
        return None, "missing"
    except (OSError, ValueError) as exc:
        return None, f"not valid JSON ({exc})"
    return (data, None) if isinstance(data, dict) else (None, "does not hold a JSON object")


def settings_handlers(path: Path) -> list[Handler]:
    data, _err = read_json(path)
    return handlers_in((data or {}).get("hooks") or {}, path)


def plugin_handlers(root: Path = REPO_ROOT) -> list[Handler]:
    hooks_json = root / "hooks" / "hooks.json"
    data, _err = read_json(hooks_json)
    return handlers_in((data or {}).get("hooks") or {}, hooks_json, plugin_root=root)


def hook_log_path() -> Path:
    return xdg_dir("state") / "hooks.log"


def _log_size() -> int:
    try:
        return hook_log_path().stat().st_size
    except OSError:
        return 0


def _new_log_lines(start: int) -> tuple[str, ...]:
    try:
        with open(hook_log_path(), "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(start if size >= start else 0)  # the log was trimmed meanwhile: read it all
            return tuple(fh.read().decode("utf-8", errors="replace").splitlines())
    except OSError:
        return ()


def _injected(stdout: str) -> str | None:
    text = stdout.strip()
    if not text:
        return None
    if not text.startswith("{"):
        return text  # plain stdout is context too, for UserPromptSubmit
    try:
        out = json.loads(text)
    except ValueError:
        return None
    spec = out.get("hookSpecificOutput") if isinstance(out, dict) else None
    return spec.get("additionalContext") if isinstance(spec, dict) else None


def run_prompt_hook(handler: Handler, prompt: str, *, cwd: str | None = None,
                    env: dict[str, str] | None = None) -> HookRun:
    """Run a UserPromptSubmit handler once with `prompt`, as Claude Code would (fresh session id)."""
    payload = {"session_id": f"vaultrag-check-{uuid.uuid4()}", "transcript_path": "",
               "cwd": cwd or os.getcwd(), "permission_mode": "default",
               "hook_event_name": handler.event, "prompt": prompt}
    start_log = _log_size()
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(handler.argv(), input=json.dumps(payload), capture_output=True, text=True,
                              timeout=handler.timeout_s, cwd=cwd, env=env)
    except subprocess.TimeoutExpired:
        return HookRun(handler, prompt, None, "", "", None, _new_log_lines(start_log), time.perf_counter() - t0,
                       f"timed out after {handler.timeout_s:g} s (Claude Code drops its output)")
    except OSError as exc:
        return HookRun(handler, prompt, None, "", "", None, (), time.perf_counter() - t0,
                       f"cannot start {handler.argv()[0]}: {exc}")
    return HookRun(handler, prompt, proc.returncode, proc.stdout, proc.stderr, _injected(proc.stdout),
                   _new_log_lines(start_log), time.perf_counter() - t0)


def sample_question(cfg) -> tuple[str, str] | None:
    """(question, note path) built from a section of a typical note of the indexed vault, or None.

    The candidates, in order: "title: heading" of a long enough section, then the note's title and
    its opening words, then "what do my notes say about <title>?". The first that the hook would
    inject for, citing its own note, is the one asked (at most SAMPLE_TRIED are tried): the first
    run should show the hook working when the vault can show it. Otherwise the first candidate."""
    from .store import Store

    try:
        with Store(cfg.db_path(), readonly=True) as store:
            files = sorted(store.files().values(), key=lambda f: f.path)
            if not files:
                return None
            sizes = sorted(f.size for f in files)
            median = sizes[len(sizes) // 2]
            near = sorted(files, key=lambda f: (abs(f.size - median), f.path))[:SAMPLE_CANDIDATE_NOTES]
            chunks = store.chunks_of_files([f.id for f in near])
    except Exception:  # no index, or unreadable: the caller says so
        return None
    by_path = {f.path: i for i, f in enumerate(near)}
    chunks.sort(key=lambda c: (by_path.get(c.path, 0), c.section_index, c.chunk_index))
    candidates = list(dict.fromkeys(_sample_candidates(chunks)))
    if not candidates:
        return None
    for question, path in candidates[:SAMPLE_TRIED]:
        if _would_inject(question, path, cfg):
            return question, path
    return candidates[0]


def _sample_candidates(chunks):
    for c in chunks:
        heading = c.heading_path.split(" > ")[-1].strip() if c.heading_path else ""
        if heading and heading.casefold() != c.title.casefold() and len(c.text) >= SAMPLE_MIN_SECTION_CHARS:
            yield f"{c.title}: {heading}", c.path
    for c in sorted(chunks, key=lambda c: len(c.text) < SAMPLE_MIN_SECTION_CHARS):  # long sections first
        # the note's title and its opening words (notes without sections, tldr's pages, small vaults)
        words = _opening_words(c.text)
        if len(words) >= 4:
            yield f"{c.title}: {' '.join(words).rstrip('.,:;')}", c.path
    for c in chunks:
        if len(c.text) >= SAMPLE_MIN_SECTION_CHARS:
            yield f"what do my notes say about {c.title}?", c.path
    if chunks:
        yield f"what do my notes say about {chunks[0].title}?", chunks[0].path


def _opening_words(text: str) -> list[str]:
    """The first SAMPLE_WORDS words of a section's prose: no heading, code, table or link."""
    words: list[str] = []
    for line in text.splitlines():
        line = line.strip().lstrip(">-*+ ").strip()
        if not line or line.startswith(("#", "```", "|", "<", "!")):
            continue
        words += [w for w in line.split() if not w.startswith(("`", "[", "<", "!", "(")) and "://" not in w]
        if len(words) >= SAMPLE_WORDS:
            break
    return words[:SAMPLE_WORDS]


def _would_inject(question: str, path: str, cfg) -> bool:
    """Whether the hook's answer for `question` injects a block that cites `path`."""
    from .retrieve.inject import hook_answer

    try:
        answer = hook_answer(question, cfg)
    except Exception:  # the check that follows runs the real hook and reports what it does
        return False
    return answer.status == "ok" and any(h.path == path for h in answer.hits)

"""Tool shapes: read a PostToolUse `tool_response`, compress its text fields, give back the same
shape (Claude Code silently ignores any other, reference/claude-code-hooks.md §2.5).

Bash results over PERSIST_CHARS are persisted by the client by their ORIGINAL size, and the model
then sees only a ~2 KB preview of what the hook returned (§2.6; issue 12, item 8). So such a
result starts with a note naming the full scrubbed output on disk and a digest (summary lines,
failure ids, their key lines), all inside PREVIEW_CHARS; the compressed output follows.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .clean import clean, scrub_text
from .persisted import read_persisted
from .read import compress_read
from .spill import bounded, spill
from .text import BUDGET_CHARS, MIN_BUDGET, compress_planned, compress_text, lead_text, plan

# Below this there is little to gain and every omission risks losing context: pass through.
THRESHOLD_CHARS = 8000
# "Bash tool results are inline up to about 30,000 characters and otherwise a file plus preview"
# (reference/claude-code-hooks.md §2.6, docs tools-reference); measured by the original size.
PERSIST_CHARS = 30_000
# The preview the model gets of a persisted result: "Preview (first 2KB)", observed 1,949
# characters (§2.6). The note and the digest stay within this, with room to spare.
PREVIEW_CHARS = 1800
LEAD_END = "[... the compressed output in its own order follows ...]"
# The client's note that it kept the whole output on disk. A replacement that still carries them
# is shown as a `<persisted-output>` preview (its first ~2 KB); one without them arrives inline.
PERSISTED_KEYS = ("persistedOutputPath", "persistedOutputSize")
# PostToolUseFailure gives a failing Bash command's output as `error`, middle-truncated by the
# client at 10,000 characters (reference §1.4), and takes no replacement, only additionalContext.
# Above this size a digest of it goes next to the result, small enough to arrive whole.
FAILURE_DIGEST_MIN_CHARS = 4000
# Claude Code caps a Bash output at this many characters before it builds PostToolUseFailure's
# `error` (recorded, CLI 2.1.332: a 39,437-character log gave an `error` of the head and tail of
# its first 30,000 around "... [20012 characters truncated] ..."). Past the cap the end of the
# output (a test run's summary and failure ids) reaches no hook and is kept in no file.
CLIENT_BASH_CAP_CHARS = 30_000
_CLIENT_CUT_RE = re.compile(r"\n\.\.\. \[(\d+) characters truncated\] \.\.\.\n")
RERUN_COMMAND_MAX_CHARS = 300  # a longer command is not repeated in the note
# The error lines the rerun in that note greps for (case-insensitive): what logs, tracebacks, test
# runners and compilers print on a failure.
RERUN_ERROR_PATTERN = "error|exception|traceback|fatal|fail|panic"

# Tools whose output is file or search content rather than a process reporting its status: there
# an "error" word is data, not an event, so error/warning classes are off and definitions count.
_CONTENT_PROGRAMS = frozenset(
    "grep egrep fgrep rg ag ack find fd ls tree cat bat nl head tail less more sed awk jq yq "
    "du wc sort uniq cut column xxd hexdump od strings locate".split()
)
_GIT_CONTENT = frozenset("log show diff blame grep ls-files ls-tree shortlog reflog".split())
# Of those, the searches and listings: one line per hit or file, where every line matching the
# stated intent is kept (in a log, diff or file dump the outline comes first instead).
_SEARCH_PROGRAMS = frozenset("grep egrep fgrep rg ag ack find fd ls tree locate".split())
_GIT_SEARCH = frozenset("grep ls-files ls-tree".split())


@dataclass(frozen=True)
class Compressed:
    """What a PostToolUse hook returns: `updatedToolOutput`, and a note for `additionalContext`
    (what a shortened Read left out and how to read it; a redaction in a Read)."""

    tool_response: dict
    note: str | None = None


_SEGMENT_RE = re.compile(r"&&|\|\||;|\n")
_WRAPPERS = frozenset("sudo time command nice nohup env exec xargs timeout stdbuf".split())


def is_content_command(command: str) -> bool:
    """Whether a Bash command's output is file/search content (grep, cat, git log...), judged by
    the first program of the last pipeline: `. venv/bin/activate && pytest` is a test run."""
    return command_kind(command) is not None


def command_kind(command: str) -> str | None:
    """"search" (grep, rg, find, ls, git ls-files...), "content" (cat, git log/diff...) or None
    (a process reporting its status: tests, builds, installs)."""
    segments = [s.strip() for s in _SEGMENT_RE.split(command) if s.strip()]
    if not segments:
        return None
    words = segments[-1].split("|")[0].replace("(", " ").split()
    i = 0
    while i < len(words) and ("=" in words[i] or words[i] in _WRAPPERS or words[i].startswith("-")):
        i += 1
    if i >= len(words):
        return None
    program = words[i].rsplit("/", 1)[-1]
    if program == "git":
        rest = [w for w in words[i + 1 :] if not w.startswith("-")]
        if not rest or rest[0] not in _GIT_CONTENT:
            return None
        return "search" if rest[0] in _GIT_SEARCH else "content"
    if program not in _CONTENT_PROGRAMS:
        return None
    return "search" if program in _SEARCH_PROGRAMS else "content"


def _text(value) -> str:
    return value if isinstance(value, str) else ""


def _shares(lengths: list[int], budget: int) -> list[int]:
    """Split a budget over several text fields: small fields whole, the rest by size."""
    shares = [0] * len(lengths)
    left = budget
    big = []
    for i, size in sorted(enumerate(lengths), key=lambda p: (p[1], p[0])):
        if size <= left // max(1, len(lengths) - i) // 2 or size <= budget // 8:
            shares[i] = size
            left -= size
        else:
            big.append(i)
    total = sum(lengths[i] for i in big) or 1
    for i in big:
        shares[i] = max(int(left * lengths[i] / total), min(lengths[i], budget // 4))
    excess = sum(shares) - budget
    if excess > 0 and big:  # the floors overshot: the largest field gives it back
        largest = max(big, key=lambda i: (shares[i], -i))
        shares[largest] = max(shares[largest] - excess, MIN_BUDGET)
    return shares



def _compress_list(items: list, budget: int, **kw) -> list:
    """A list of short strings (file names) compressed like lines; markers become entries."""
    text = "\n".join(str(x).replace("\n", " ") for x in items)
    return compress_text(text, budget_chars=budget, **{**kw, "content": True}).split("\n")


def _scrub_value(value):
    """(scrubbed value, found) for a str or a list of str; other values pass unchanged."""
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        pairs = [scrub_text(x) for x in value]
        return [p[0] for p in pairs], any(p[1] for p in pairs)
    return value, False


def compress_tool_output(tool_name: str, tool_input: dict, tool_response: object, *, prompt: str | None = None,
                         budget_chars: int = BUDGET_CHARS, threshold_chars: int = THRESHOLD_CHARS,
                         spill_dir=None, transcript_path: str | None = None) -> dict | None:
    """A replacement `tool_response` for a PostToolUse hook's `updatedToolOutput`, or None.
    See `compress_post_tool_use`, which also gives the note that goes with it."""
    out = compress_post_tool_use(tool_name, tool_input, tool_response, prompt=prompt, budget_chars=budget_chars,
                                 threshold_chars=threshold_chars, spill_dir=spill_dir,
                                 transcript_path=transcript_path)
    return out.tool_response if out is not None else None


def compress_post_tool_use(tool_name: str, tool_input: dict, tool_response: object, *, prompt: str | None = None,
                           budget_chars: int = BUDGET_CHARS, threshold_chars: int = THRESHOLD_CHARS,
                           spill_dir=None, transcript_path: str | None = None) -> Compressed | None:
    """What to hand Claude Code for one tool result, or None to leave it as it is.

    The response has the original's keys and types with only text fields shortened (Bash `stdout`
    / `stderr`, Read `file.content` as one window, Grep `content` / `filenames`, Glob `filenames`,
    WebFetch `result`). None when the output is small and holds no secret (a Read below
    READ_INTACT_CHARS is never changed except to hide a secret), when the tool or shape is
    unknown, or on anything unexpected: the caller fails open. `spill_dir` overrides where a
    long Bash output's full scrubbed text is written (default `$XDG_STATE_HOME/vaultrag/outputs`).
    `transcript_path` (the hook input's) locates the session folder where Claude Code persists a
    Bash output over ~30,000 characters: the whole of it is read from there (persisted.py).
    """
    try:
        return _compress(tool_name, tool_input, tool_response, prompt or "", max(int(budget_chars), MIN_BUDGET),
                         threshold_chars, spill_dir, transcript_path)
    except Exception:  # never break a tool call over a compression problem
        return None


def digest_tool_failure(tool_name: str, tool_input: dict, error: object, *, prompt: str | None = None,
                        budget_chars: int = PREVIEW_CHARS) -> str | None:
    """additionalContext for a PostToolUseFailure of Bash: the summary lines, failure ids and their
    key lines (a log's error records) of the failed command's output, and, when the client cut
    the output (its end past its cap, or its middle), a note saying so and how to see the end and
    every error line; or None (short output, another tool, nothing to say, any error)."""
    try:
        if tool_name != "Bash" or not isinstance(error, str) or len(error) <= FAILURE_DIGEST_MIN_CHARS:
            return None
        tool_input = tool_input if isinstance(tool_input, dict) else {}
        command = _text(tool_input.get("command"))
        kind = command_kind(command)
        budget = max(int(budget_chars), MIN_BUDGET)
        cut = _cut_note(error, command)
        head = "vaultrag: the key lines of the failed command's output (summary, failures, errors):"
        p = plan(clean(error), budget, command, prompt or "", kind is not None,
                 _text(tool_input.get("description")), kind == "search")
        lead = lead_text(p, budget - len(head) - len(cut) - 2)
        if lead.strip() == error.split("\n", 1)[0].strip():
            lead = ""  # only the `Exit code N` line: nothing worth a digest
        parts = [f"{head}\n{lead}" if lead else "", cut]
        return "\n".join(x for x in parts if x) or None
    except Exception:  # fail open
        return None


def _cut_note(error: str, command: str) -> str:
    """The note for an `error` the client cut (at CLIENT_BASH_CAP_CHARS, or in its middle), else "".
    The hook cannot know what the lost part held, so the note says so and gives one rerun that
    shows both the end and every error line, with its line number, wherever it is."""
    m = _CLIENT_CUT_RE.search(error)
    if m is None:
        return ""
    first_line = error.split("\n", 1)[0]
    cut = int(m.group(1))  # characters the client left out
    shown = len(error) - len(first_line) - len(m.group(0))
    total = cut + shown
    # `( cmd )` with spaces: `((` would start arithmetic; a `#` comment would swallow the `)`.
    one_line = (command and "\n" not in command and "#" not in command
                and len(command) <= RERUN_COMMAND_MAX_CHARS)
    grep = f"grep -n -i -E '{RERUN_ERROR_PATTERN}'"
    if cut + len(error) - len(m.group(0)) >= CLIENT_BASH_CAP_CHARS:
        lost = (f"Claude Code kept only the first {CLIENT_BASH_CAP_CHARS:,} characters of this failed command's "
                f"output and showed {shown:,} of them (its head and tail); the rest, where test runners and "
                f"builds print their summary and failures, reached no hook and was not saved")
        what = "its end and its error lines"
        rerun = (f'`f=$(mktemp); ( {command} ) >"$f" 2>&1; tail -n 100 "$f"; {grep} "$f" | head -n 50`'
                 if one_line else f"the command with its output saved to a file, then `tail -n 100` and "
                                  f"`{grep} | head -n 50` of that file")
    else:
        lost = (f"Claude Code showed {shown:,} of this failed command's {total:,} characters of output (its head "
                f"and tail); the {cut:,} in the middle reached no hook")
        what = "its error lines"
        rerun = (f"`( {command} ) 2>&1 | {grep} | head -n 50`" if one_line
                 else f"the command with its output piped to `{grep} | head -n 50`")
    return (f"vaultrag: {lost}, so whether it holds an error is unknown here. To see {what} with their line "
            f"numbers, rerun {rerun}.")


def _compress(tool_name, tool_input, response, prompt, budget, threshold, spill_dir,
              transcript_path=None) -> Compressed | None:
    if not isinstance(response, dict) or not isinstance(tool_name, str):
        return None
    tool_input = tool_input if isinstance(tool_input, dict) else {}
    kw = {"prompt": prompt}
    if tool_name == "Bash":
        return _bash(tool_input, _whole(response, transcript_path), budget, threshold, spill_dir, kw)
    if tool_name == "Read":
        out = compress_read(tool_input, response, prompt)
        return Compressed(*out) if out is not None else None
    if tool_name in ("Grep", "Glob"):
        fields = [k for k in ("content", "filenames") if k in response]
        if not fields:
            return None
        query = " ".join(_text(tool_input.get(k)) for k in ("pattern", "path", "glob", "type"))
        out = _rewrite(response, fields, budget, threshold, {**kw, "query": query, "content": True, "search": True})
        if out is not None and tool_name == "Glob" and isinstance(response.get("truncated"), bool):
            if len(out.get("filenames") or []) != len(response.get("filenames") or []):
                out["truncated"] = True
        return Compressed(out, _whole_note(response, fields, budget, threshold, spill_dir)) if out is not None else None
    if tool_name == "WebFetch":
        if not isinstance(response.get("result"), str):
            return None
        query = f"{_text(tool_input.get('url'))} {_text(tool_input.get('prompt'))}"
        out = _rewrite(response, ["result"], budget, threshold, {**kw, "query": query, "content": True})
        return Compressed(out, _whole_note(response, ["result"], budget, threshold, spill_dir)) if out is not None else None
    return None


def _whole_note(response: dict, fields: list[str], budget: int, threshold: int, spill_dir) -> str | None:
    """additionalContext for a shortened Grep, Glob or WebFetch result: how much was cut and where
    the whole (scrubbed) is, as the client says where it saved a large result it did not show.
    Not in the result itself: a Grep's first line is a hit, a Glob's entries are file names."""
    size = sum(_size(response.get(k)) for k in fields)
    if size <= max(threshold, budget):
        return None  # only scrubbed, not shortened
    texts = [v if isinstance(v, str) else "\n".join(x for x in v if isinstance(x, str))
             for k in fields if isinstance(v := response.get(k), (str, list)) and v]
    return (f"{_where(chr(10).join(texts), size, spill_dir)} The gaps are marked `[... N lines omitted ...]`; "
            f"Read or Grep that file for the rest.")


def _whole(response: dict, transcript_path) -> dict:
    """The Bash response with `stdout` the whole output when the client persisted it and the file
    can be read (without the persisted keys then: the replacement arrives inline); else as given."""
    stdout = response.get("stdout")
    if not isinstance(stdout, str) or not isinstance(response.get("persistedOutputPath"), str):
        return response
    full = read_persisted(response["persistedOutputPath"], transcript_path, stdout)
    if full is None:
        return response
    return {**{k: v for k, v in response.items() if k not in PERSISTED_KEYS}, "stdout": full}


def _bash(tool_input, response, budget, threshold, spill_dir, kw) -> Compressed | None:
    if response.get("isImage") or not isinstance(response.get("stdout"), str):
        return None
    fields = [k for k in ("stdout", "stderr") if isinstance(response.get(k), str)]
    command = _text(tool_input.get("command"))
    kind = command_kind(command)
    kw = {**kw, "query": command, "intent": _text(tool_input.get("description")), "content": kind is not None,
          "search": kind == "search"}
    plans: dict = {}
    out = _rewrite(response, fields, budget, threshold, kw, plans)
    size = sum(len(response[k]) for k in fields)
    if out is None or size <= threshold:
        return Compressed(out) if out is not None else None
    # Shortened: say where the whole output is and, if the client will show only a preview,
    # put the digest first.
    full = "\n".join(plans[k].text if k in plans else clean(response[k]) for k in fields if response[k])
    head = _where(full, size, spill_dir)
    lead = ""
    if size > PERSIST_CHARS and plans:
        room = PREVIEW_CHARS - len(head) - len(LEAD_END) - 2
        biggest = max(plans, key=lambda k: (len(response[k]), k))  # the digest of the field that was cut most
        lead = lead_text(plans[biggest], room)
    out["stdout"] = "\n".join(x for x in (head, lead, LEAD_END if lead else "", out["stdout"]) if x)
    return Compressed(out)


def _where(full: str, size: int, spill_dir) -> str:
    """The first line of a shortened Bash output: how much was cut, and where the whole is."""
    try:
        path = f"full output (scrubbed): {spill(scrub_text(bounded(full))[0], spill_dir)}"
    except OSError as exc:
        path = f"full output not saved ({type(exc).__name__}): rerun the command to see all of it"
    return f"[vaultrag: {size:,}-character output shortened; {path}]"


def _size(value) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return sum(len(x) + 1 for x in value if isinstance(x, str))
    return 0


def _rewrite(obj: dict, fields: list[str], budget: int, threshold: int, kw: dict, plans: dict | None = None):
    """`obj` with its text `fields` compressed (or only scrubbed when small), or None if unchanged.
    `plans` receives the plan of each text field that was cut."""
    values = {k: obj[k] for k in fields if isinstance(obj.get(k), (str, list))}
    for v in values.values():
        if isinstance(v, list) and not all(isinstance(x, str) for x in v):
            return None  # a shape we do not know: leave it alone
    sizes = [_size(v) for v in values.values()]
    out = dict(obj)
    changed = False
    if sum(sizes) <= threshold:
        for k, v in values.items():
            clean_v, found = _scrub_value(v)
            if found:
                out[k] = clean_v
                changed = True
        return out if changed else None
    for (k, v), share in zip(values.items(), _shares(sizes, budget)):
        if _size(v) > share:
            if isinstance(v, list):
                v = _compress_list(v, share, **kw)
            else:
                v, p = compress_planned(v, share, **kw)
                if p is not None and plans is not None:
                    plans[k] = p
        clean_v, _ = _scrub_value(v)
        if clean_v != obj[k]:
            out[k] = clean_v
            changed = True
    return out if changed else None

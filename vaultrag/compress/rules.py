r"""Line rules used by the classify stage: summaries, errors, warnings, noise, outline headers,
definitions, paths. Patterns use [ \t], not \s, so a whole-text scan never crosses a line.

Python's regex engine is fast for one anchored pattern or one literal but slow for a long
unanchored alternation (236 ms per MB), hence `Rule`: an anchored regex plus confirmed literals.
"""
from __future__ import annotations

import re
from bisect import bisect_right


class Rule:
    """Lines matching a line-start regex, or containing a literal (optionally confirmed by a
    regex on that line)."""

    def __init__(self, anchored: str, literals=()):
        self.anchored = re.compile(r"^(?:" + anchored + ")", re.M) if anchored else None
        self.literals = [(lit, re.compile(conf) if conf else None) for lit, conf in literals]

    def lines(self, joined: str, starts: list[int], texts: list[str]) -> set[int]:
        hits = set()
        if self.anchored is not None:
            hits.update(bisect_right(starts, m.start()) - 1 for m in self.anchored.finditer(joined))
        for lit, confirm in self.literals:
            i = joined.find(lit)
            while i != -1:
                u = bisect_right(starts, i) - 1
                if u not in hits and (confirm is None or confirm.search(texts[u])):
                    hits.add(u)
                nxt = starts[u + 1] if u + 1 < len(starts) else len(joined)
                i = joined.find(lit, max(nxt, i + 1))
        return hits


SUMMARY = Rule(
    r"=+ .*\b(?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|no tests ran)\b.*=+$"
    r"|(?:OK|FAILED) \((?:failures|errors|skipped)="
    r"|[ \t]*(?:test result:"
    r"|(?:Test Files|Tests|Test Suites|Snapshots)(?::|[ \t]{2,})[ \t]*\d"
    r"|Found \d+ (?:errors?|warnings?|problems?|issues?|vulnerabilit)"
    r"|\[\*\] \d+ fixable"
    r"|\u2716? ?\d+ problems? \("
    r"|Successfully (?:installed|built|tagged|uninstalled|created)"
    r"|(?:added|removed|changed|updated|audited) \d+ packages?"
    r"|found \d+ vulnerabilit"
    r"|\d+ files? changed"
    r"|\d+ director(?:y|ies), \d+ files?"
    r"|(?:Finished|Compiled successfully|Build succeeded|BUILD (?:SUCCESSFUL|FAILED))\b"
    r"|error: could not compile"
    r"|Ran \d+ tests? in "
    r"|\d+ (?:passing|failing|pending)\b"
    r"|\d+ (?:tests?|examples?), \d+ failures?)",
    [
        ("Interrupted: ", r"Interrupted: \d+ errors? during"),
        ("istening on", None),
        ("erver started", None),
        ("hutting down", None),
        ("erver exit", None),
        ("xited with code", None),
        ("xit code", r"[Ee]xit code[: =]+\d"),
        ("xit status", r"[Ee]xit status[: =]+\d"),
    ],
)
ERROR = Rule(
    r"E {2,}\S"
    r"|Traceback \(most recent call last\)"
    r"|[ \t]*(?:[\u2502\u2503|][ \t]*)?(?:FAILED|FAIL|FAILURE|ERROR|ERR!|FATAL|PANIC|CRITICAL|Error|Exception)\b"
    r"|[ \t]*\u25cf "  # jest: "● Suite › test"
    r"|[ \t]*\d+:\d+[ \t]+error[ \t]"  # eslint stylish: "  14:9  error  message  rule"
    r"|[ \t]*(?:[\w./-]+ )?(?:error|fatal|panic)(?:\[\w+\])?:"
    r"|[ \t]*npm (?:ERR!|error)"
    r"|[ \t]*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Failure|Fault|Interrupt|Exit)\b(?::|$)"
    r"|[ \t]*[\u00d7\u2717\u2718\u2716\u274c] ",
    [(" FAILED", None), (" FAIL", r" FAIL(?:[ \t:]|$)"), (" ERROR", r" ERROR(?:ED)?(?:[ \t:]|$)"),
     (" FAILURE", None), ("panicked at", None),
     ("Error: ", r"[A-Z]\w*Error: \S"), ("Exception: ", r"[A-Z]\w*Exception: \S"),
     ("Unhandled ", r"Unhandled (?:Rejection|Exception|Error|promise)"), ("Serialized Error", None),
     ("HTTP/", r"HTTP/\d(?:\.\d)? [45]\d\d")]
    + [(f"{m} /", rf"\b{m} /\S* [45]\d\d\b") for m in "GET POST PUT PATCH DELETE HEAD OPTIONS".split()]
    + [('"error', r"\"errors?\"[ \t]*:"), ('"message"', r"\"message\"[ \t]*:"),
       ("Segmentation fault", None), ("core dumped", None), ("Out of memory", None),
       ("Killed", r"\bKilled\b"), ("Aborted", r"\bAborted\b"),
       ("No such file or directory", None), ("Permission denied", None), ("command not found", None),
       ("annot find", r"[Cc]annot find"), ("ould not ", r"[Cc]ould not "), ("nable to ", r"[Uu]nable to "),
       ("ailed to ", r"[Ff]ailed to "), ("imed out", r"[Tt]imed out"), ("onnection refused", None),
       ("incompatible", r"\bincompatible\b"), ("onflict", r"\b[Cc]onflict(?:s|ing)? (?:with|between|for|in|detected)\b|\b(?:dependency|version|merge) conflict"),
       ("CONFLICT", r"\bCONFLICT\b"), ("EBADENGINE", None),
       ("ERESOLVE", None), ("ResolutionImpossible", None)]
    + [(status, None) for status in ("CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "OOMKilled",
                                     "CreateContainerConfigError")],
)
WARN = Rule(
    r"[ \t]*(?:npm )?(?:warning|warn|WARNING|WARN)\b",
    [("Warning", r"[A-Z]\w*Warning\b"), ("eprecat", r"\b[Dd]eprecat(?:ed|ion)\b"), ("XFAIL", r"\bXFAIL\b"),
     ("XPASS", r"\bXPASS\b")],
)
# A diff's stat summary: how a diff, a merge or a pull ended when it appears once; repeated, it is
# each commit's stat line (git log --stat, git show of several commits), not a summary.
FILES_CHANGED_RE = re.compile(r"[ \t]*\d+ files? changed\b")
NOISE = Rule(r"[ \t]*(?:PASSED|ok|\u2713|\u2714|\u221a)\b", [("PASSED", r"\bPASSED\b"), ("... ok", r"\.\.\. ok$")])
# Structural headers, one scan with a named group per kind; kinds in HEADER_ENDS keep their first
# and last line at high priority (they bound the output: first and last commit, file, section).
HEADER_RE = re.compile(
    r"^(?:(?P<commit>commit [0-9a-f]{7,40}\b)"
    r"|(?P<diff>diff (?:--git|-r|-u|-N) )"
    r"|(?P<banner>(?:={3,}|-{3,}(?! (?:a/|b/|/dev/null))|_{3,}|\*{3,}|#{3,}|>{3,})[ \t]*\S)"
    r"|(?P<mdhead>#{1,6} \S)"
    r"|(?P<dirhead>\.{0,2}/?[\w.@+-]+(?:/[\w.@+ -]+)*:$)"
    r"|(?P<tree0>(?:├──|└──|\|--|`--) \S)"
    r"|(?P<diag>[A-Z]{1,4}\d{2,5}\b|[^ \t\n:]+\.\w+:\d+(?::\d+)?: )"
    r"|(?P<hunk>@@ [^\n]* @@))",
    re.M,
)
HEADER_ENDS = frozenset({"commit", "diff", "banner", "mdhead", "dirhead", "tree0", "def0"})
# Kinds whose bigger sections come first when not all fit (the files with the most changes, the
# largest directories); other kinds (diagnostics, banners) go in output order.
BY_SECTION = frozenset({"commit", "diff", "mdhead", "dirhead", "tree0", "def0"})
# A path's prior: code first, then docs/tests/config, then lock files and generated output.
PATH_RE = re.compile(r"[\w.@+-]*(?:/[\w.@+-]+)+|[\w@+-]+\.[A-Za-z]\w{0,4}\b")
GENERATED_RE = re.compile(
    r"\.lock\b|-lock\.|lock\.json|\.min\.|\.map$|\.snap$|\.svg$|_pb2|\.pb\.|(?:^|/)(?:vendor|node_modules|dist)/"
)
DOCS_TESTS_RE = re.compile(
    r"(?:^|/)(?:docs?|tests?|spec|__tests__|examples?|\.github)/|(?:^|/)test_|_test\.|\.test\.|\.spec\.|\.(?:md|rst|txt|adoc)$"
)
CODE_RE = re.compile(
    r"\.(?:py|pyi|rs|ts|tsx|js|jsx|mjs|go|java|kt|c|cc|cpp|h|hpp|cs|rb|php|swift|scala|sh|sql|lua|zig|ex|exs|hs|ml|vue|svelte)$"
)
# Prefixes put in front of file lines by cat -n, grep -n and git blame; stripped to see the code.
CONTENT_PREFIX_RE = re.compile(
    r"^(?:[ \t]*\d+(?:\t|→| \| )"
    r"|\^?[0-9a-f]{7,40} (?:[^\n(]*)?\([^\n)]*? \d+\) "
    r"|[^\t\n: ]+?:\d+[:-])",
    re.M,
)
DEF_RE = re.compile(
    r"^([ \t]*)(?:export |pub(?:\([\w:]+\))? |public |private |protected |static |async |default )*"
    r"(?:class|def|fn|func|function|struct|enum|trait|impl|interface|type|module|object|macro_rules!)"
    r"[ \t]+[\w<(]",
    re.M,
)
# `ls -l` lines: the size column lets the largest files stand out (an outlier is news).
LS_LONG_RE = re.compile(r"^-[rwxsStT-]{9}[.@+]?[ \t]+\d+[ \t]+\S+[ \t]+\S+[ \t]+(\d+) ", re.M)
LS_LARGEST = 5
# pytest tracebacks. The raising line is `>` then the source indented to its column (npm's
# `> pkg@1.0 prepare` has one space); a `--showlocals` (-l) local is `name<pad> = value` at
# column 0, which source lines (indented) never are. Both count only inside a FAILURES or
# ERRORS section, so a `key = value` config dump elsewhere stays ordinary text.
PYTEST_RAISE_RE = re.compile(r"^> {2,}\S", re.M)
PYTEST_LOCAL_RE = re.compile(r"^[A-Za-z_]\w* +=(?: |$)", re.M)
PYTEST_SECTION_RE = re.compile(r"^=+ (FAILURES|ERRORS) =+$|^=+ (short test summary info|warnings summary)\b.*$"
                               r"|^=+ .* in [\d.]+s(?: \([\d:]+\))? =+$", re.M)
# A failure's section in FAILURES / ERRORS: `____ test_name ____` (pytest's sep("_", title), at least one
# underscore a side for a long id; not the `_ _ _ _` frame separator), its E lines (`E   ValueError: ...`),
# and the short test summary's lines for failures and errors (not -rA's PASSED / SKIPPED lines).
PYTEST_FAILURE_HEAD_RE = re.compile(r"^_+ (?!_ |_$)[^\n]*\S _+$", re.M)
PYTEST_E_LINE_RE = re.compile(r"^E {1,}\S", re.M)
PYTEST_SHORT_FAILURE_RE = re.compile(r"^(?:FAILED|ERROR) \S", re.M)
# A failure's id line: what to read first when only a preview reaches the model.
FAILURE_ID_RE = re.compile(
    r"^(?:(?:FAILED|ERROR) \S+::\S*"  # pytest short test summary
    r"|test \S+.* \.\.\. FAILED$"  # cargo test
    r"|[ \t]*(?:[\u00d7\u2717\u2718\u2716\u274c]|FAIL) \S"  # vitest / jest
    r"|error\[E\d+\]: "  # rustc
    r"|[ \t]*\u25cf \S)",  # jest "● Suite › test"
    re.M,
)
# A test that passed or was skipped, whatever its reason says ("SKIPPED (Could not find ...)").
PASSING_RE = re.compile(r"^\S+::\S+.* (?:PASSED|SKIPPED|XFAIL|XPASS)\b|^\S+\.py \S*::\S+ (?:PASSED|SKIPPED)\b", re.M)

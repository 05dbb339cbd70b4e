"""Unsolicited injection: should a hook put a block in front of the model for this prompt?

An explicit `vaultrag search` shows what the evidence gate lets through (and weak matches with
--no-gate). A hook is not asked: it injects into every prompt of a coding session, and most of
those prompts ("fix the failing test", "Loosen requirement versions") are not about the notes. In a
big vault their common words meet in some chunk by chance and pass the gate. So injection needs
more, and "more" depends on the vault: how strong does the evidence look for prompts this vault is
not about?

Calibration (`calibrate`, at reindex time): run the null prompts (null_prompts.py, written for
this purpose) against this vault, score each (`score`), and keep a high quantile of the scores per
kind of prompt as that kind's threshold, in the index meta; also how often they hold a note's name
or title (the name routes). A prompt is injected when the gate passes and its score beats its
kind's threshold, or it holds a note's name where null prompts rarely do (`decide`). The
calibration is redone when the vault changed enough (`needs_recalibration`). A prompt of several
questions that is not injected as a whole is decided question by question (`questions`).

Standard library only: `hook_answer` runs inside the hook process.
"""
from __future__ import annotations

import json
import math
import re
import time

from ..frozen import frozen, replace
from ..textutil import is_stopword, words

META_KEY = "inject_calibration"
CALIBRATION_VERSION = 3
# Threshold = this quantile of the null prompts' scores (per kind): by construction ~3% of prompts
# like them would be injected by chance; measured on held-out off-topic prompts in
# benchmarks/inject_eval.py (BENCHMARKS.md, "Unsolicited injection").
NULL_QUANTILE = 0.97
# The threshold of an index without a calibration (built before it): the match must be a little
# less likely than chance. A measured threshold of 0 means null prompts (almost) never pass the
# gate in this vault (small or one-topic vaults: the example vault, a single long note): there the
# gate alone decides, as it does for explicit searches.
MIN_SCORE = 0.1
# The name routes (a note's name in the prompt; a note's whole title in it) inject on their own
# only where null prompts of the kind take them at most this often: in the Obsidian help almost
# never, in tldr-pages often (its notes are named like words: make, hello, coffee, sure).
ROUTE_MAX_RATE = 0.02
# "command": the prompt uses the top note's one-word name as a name ("the ss command", "use `tar`
# to", retrieve/name_use); a calibration measured before it existed keeps it closed.
ROUTES = ("named", "title", "command")
# Recalibrate when the chunk count moved this much since the last calibration.
RECALIBRATE_SHARE = 0.2
# A prompt that asks several questions ("how do I restore a backup? And where do alerts go?") is
# scored as one: the best chunk covers one question's share of the words, so the whole is weak
# evidence even when each question alone is specific. When the whole is not injected, each
# question is decided on its own, at most MAX_QUESTIONS of them, against a stricter threshold
# (Calibration.split) so that m chances are no likelier to inject by chance than one; only when
# the whole had evidence (the gate passed) and each question as of the whole prompt's kind.
MAX_QUESTIONS = 3
MIN_QUESTION_TERMS = 3  # content words (not stopwords) a question needs to be decided alone
MIN_UNSPACED_CHARS = 4  # a question in a script written without spaces
_QUESTION_END_RE = re.compile(r"(?<=[?？])\s*")


# Prompt kinds (see prompt_kind). "code": an instruction about code or the session; "topic": the rest.
KINDS = ("code", "topic")

_CODE_WORDS = frozenset("""
test tests testing pytest unittest bug bugs fix fixes fixed fixing refactor refactoring commit commits merge
rebase branch ci lint linter linting typo typos deps dependency dependencies release changelog readme pr
docstring docstrings traceback exception exceptions regression flaky deprecated deprecation migration
codebase repo repository function functions method methods class module modules import imports stacktrace
compile compiler debug build builds mypy ruff black formatter venv pip npm cargo makefile justfile
endpoint endpoints api cli argument arguments param params kwarg kwargs async refactored bump bumped
changelog docs fixture fixtures coverage benchmark benchmarks
""".split())
_CODE_TOKEN_RE = re.compile(
    r"`|\b\w+\.(?:py|js|ts|rs|go|md|toml|json|ya?ml|cfg|ini|txt|sh|sql|c|h|cpp|java|rb)\b"
    r"|\b[a-z]+_[a-z0-9_]+\b|\b[a-z]+[A-Z]\w*\b|(?:^|\s)--?[a-z][\w-]*|#\d+\b|\bv?\d+\.\d+(?:\.\d+)?\b"
    r"|\b\w+/\w+")


def prompt_kind(text: str) -> str:
    """'code' for an instruction about code or the session (code words, identifiers, paths,
    flags, issue numbers, versions), else 'topic'."""
    if _CODE_TOKEN_RE.search(text):
        return "code"
    return "code" if any(w in _CODE_WORDS for w in words(text)) else "topic"


def score(evidence: dict) -> float:
    """How specific the best lexical match is: `specificity` (ln of how unlikely its terms meet in
    one chunk by chance) times the square of the share of the query's weight it covers (a chunk
    holding half the prompt is weak evidence however rare that half is).

    Chosen on the two dev vaults (benchmarks/inject_eval.py --dump, then a grid over the dump):
    at the 0.97 null quantile, right note / off-topic blocks, obsidian-help descriptions and tldr:
    specificity alone 75% 4.0% / 85% 6.3%; x coverage 79% 1.6% / 91% 2.2%; x coverage^2
    79% 1.3% / 94% 2.5%; adding a vector-similarity route (its own null quantile) lifted
    descriptions to 83-88% but off-topic blocks to 4-7%."""
    cov = evidence.get("term_coverage") or 0.0
    spec = evidence.get("near_specificity", evidence.get("specificity")) or 0.0
    return round(spec * cov * cov, 4)


@frozen
class Calibration:
    thresholds: dict  # kind -> score threshold
    chunks: int  # chunk count when measured
    prompts: int
    seconds: float
    route_rates: dict = None  # kind -> route -> share of null prompts it would have injected
    version: int = CALIBRATION_VERSION
    # kind -> thresholds for a prompt of 2, 3 questions decided one by one: each at the quantile
    # 1 - (1 - NULL_QUANTILE) / m, so the prompt as a whole is injected by chance no more often
    # than one question (Bonferroni); None in calibrations stored before it (remeasured).
    split: dict = None

    def threshold(self, kind: str, questions: int = 1) -> float:
        if questions > 1:
            return self.split[kind][min(questions, MAX_QUESTIONS) - 2]
        return self.thresholds.get(kind, MIN_SCORE)

    def route_open(self, kind: str, route: str) -> bool:
        rates = (self.route_rates or {}).get(kind, {})
        if route not in rates:  # measured without it (before the route existed): closed; nothing measured: open
            return not rates
        return rates[route] <= ROUTE_MAX_RATE

    def to_json(self) -> str:
        return json.dumps(self.__dict__, sort_keys=True)

    @staticmethod
    def from_json(raw: str | None) -> "Calibration | None":
        try:
            d = json.loads(raw) if raw else None
            if not isinstance(d, dict) or d.get("version") != CALIBRATION_VERSION:
                return None
            rates = {k: {r: float(x) for r, x in v.items()} for k, v in (d.get("route_rates") or {}).items()}
            split = d.get("split")
            if split is not None:
                split = {k: [float(x) for x in v] for k, v in split.items()}
                if any(len(v) != MAX_QUESTIONS - 1 for v in split.values()) or set(split) != set(KINDS):
                    split = None
            return Calibration(thresholds={k: float(v) for k, v in d["thresholds"].items()}, chunks=int(d["chunks"]),
                               prompts=int(d["prompts"]), seconds=float(d["seconds"]), route_rates=rates, split=split)
        except (ValueError, KeyError, TypeError, AttributeError):
            return None


def quantile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    pos = q * (len(s) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def calibrate(cfg, store, prompts: list[str] | None = None) -> Calibration:
    """Score the null prompts against this vault's index; thresholds per kind (see module doc)."""
    from .null_prompts import all_prompts
    from .pipeline import search

    t0 = time.perf_counter()
    prompts = prompts if prompts is not None else all_prompts()
    by_kind: dict[str, list[float]] = {k: [] for k in KINDS}
    routed: dict[str, dict[str, int]] = {k: dict.fromkeys(ROUTES, 0) for k in KINDS}
    # k=1 and no vectors: the evidence is lexical and known before citations, which only cost time.
    for p in prompts:
        ans = search(p, cfg, store=store, k=1, channels=("meta", "bm25"), graph=False, max_tokens=0, gate=False,
                     scope=",".join(cfg.hook_scopes))  # what the hooks search (issue 17: not past sessions by default)
        ev, kind = ans.evidence, prompt_kind(p)
        by_kind[kind].append(score(ev) if ev.get("passed") else 0.0)
        for route in ROUTES:
            routed[kind][route] += bool(ev.get("passed") and _takes_route(ev, route))
    everything = [s for v in by_kind.values() for s in v]
    thresholds = {k: round(quantile(v or everything, NULL_QUANTILE), 4) for k, v in by_kind.items()}
    rates = {k: {r: round(n / max(1, len(by_kind[k])), 4) for r, n in routed[k].items()} for k in KINDS}
    split = {k: [round(quantile(v or everything, 1 - (1 - NULL_QUANTILE) / m), 4) for m in range(2, MAX_QUESTIONS + 1)]
             for k, v in by_kind.items()}
    return Calibration(thresholds, store.chunk_count(), len(prompts), round(time.perf_counter() - t0, 2), rates,
                       split=split)


def _takes_route(evidence: dict, route: str) -> bool:
    if route == "named":
        return bool(evidence.get("pinned") or evidence.get("named"))
    if route == "command":
        return bool(evidence.get("command"))
    return bool(evidence.get("title_named"))


def needs_recalibration(store) -> bool:
    cal = Calibration.from_json(store.get_meta(META_KEY))
    if cal is None or cal.split is None:
        return True
    n = store.chunk_count()
    return abs(n - cal.chunks) > RECALIBRATE_SHARE * max(cal.chunks, 1)


def recalibrate(cfg, store, *, force: bool = False, measured=None) -> Calibration | None:
    """Measure and store the calibration when missing or stale (a writable store). Returns it,
    or None when the stored one still holds. `measured`: a Calibration already measured on this
    index's committed rows (the indexer's, on a second connection), stored instead of measuring."""
    if not force and not needs_recalibration(store):
        return None
    try:
        cal = measured if isinstance(measured, Calibration) else calibrate(cfg, store)
        with store.transaction():
            store.set_meta(META_KEY, cal.to_json())
    except Exception as exc:  # the index is fine without it: hooks fall back to MIN_SCORE
        import logging  # lazy: only this failure logs (importing it costs a hook ~6 ms)

        logging.getLogger(__name__).warning("injection calibration failed (%s); hooks use the default threshold", exc)
        return None
    return cal


@frozen
class Decision:
    inject: bool
    reason: str  # named | title (a note's name / whole title in the prompt) | command (the top note's name
    # used as a name: retrieve/name_use) | specific | gate_suffices
    # (null prompts never pass the gate here) | gate (no evidence) | weak_for_kind; in hook_answer's
    # evidence also `questions` (a prompt of several questions, injected for those that earn it)
    kind: str
    score: float
    threshold: float


def decide(answer, prompt: str, calibration: Calibration | None, questions: int = 1,
           kind: str | None = None) -> Decision:
    """Inject `answer` unsolicited? Only when the gate passed and: the prompt holds a note's name
    (exactly, or whole inside it) or the top note's whole title, where this vault's null prompts
    of the kind rarely do; or the match is more specific than this vault gives prompts of its kind
    by chance. Without a calibration (an index older than it) the routes are open and the floor
    MIN_SCORE holds. `questions`: the prompt is one of that many questions of one prompt, decided
    one by one (needs a calibration with `split`), of the whole prompt's `kind`."""
    kind = kind or prompt_kind(prompt)
    ev = answer.evidence or {}
    s = score(ev)
    threshold = calibration.threshold(kind, questions) if calibration else MIN_SCORE
    if answer.status != "ok" or not ev.get("passed", True):
        return Decision(False, "gate", kind, s, threshold)
    for route in ROUTES:
        if _takes_route(ev, route) and (calibration is None or calibration.route_open(kind, route)):
            return Decision(True, route, kind, s, threshold)
    if s > threshold or threshold <= 0:
        return Decision(True, "specific" if s > threshold else "gate_suffices", kind, s, threshold)
    return Decision(False, "weak_for_kind", kind, s, threshold)


def questions(prompt: str) -> list[str]:
    """The prompt's questions, split after each question mark (`?`, `？`), when it asks two or
    more that can stand alone: a part with fewer than MIN_QUESTION_TERMS content words ("And
    paginate them?", "Should it use backoff?", a trailing "thanks") leans on its neighbour and
    joins the question before it (or after it, if it comes first)."""
    parts = [p.strip() for p in _QUESTION_END_RE.split(prompt.strip()) if p.strip()]
    merged: list[str] = []
    for part in parts:
        if merged and not (_stands_alone(part) and _stands_alone(merged[-1])):
            merged[-1] += " " + part
        else:
            merged.append(part)
    return merged if len(merged) > 1 and all(map(_stands_alone, merged)) else []


def _stands_alone(question: str) -> bool:
    if " " not in question and not question.isascii():  # 如何恢复备份？: a script without spaces
        return len(question.rstrip("?？")) >= MIN_UNSPACED_CHARS
    return sum(not is_stopword(w) for w in words(question)) >= MIN_QUESTION_TERMS


def _round_robin(answers: list) -> tuple:
    """Each question's first hit, then each one's second...; a chunk cited twice comes once."""
    out, seen = [], set()
    for rank in range(max(len(a.hits) for a in answers)):
        for a in answers:
            if rank < len(a.hits):
                h = a.hits[rank]
                key = (h.path, h.line_start, h.line_end)
                if key not in seen:
                    seen.add(key)
                    out.append(h)
    return tuple(out)


def _by_question(query: str, parts: list[str], kind: str, cfg, store, calibration, max_tokens, scope: dict):
    """(Answer of the injected questions merged, or None if none is injected; every question's decision)."""
    from .budget import fit_budget
    from .pipeline import search

    took, decisions = [], []
    parts = parts[:MAX_QUESTIONS]
    for q in parts:
        a = search(q, cfg, store=store, max_tokens=max_tokens, **scope)
        d = decide(a, q, calibration, questions=len(parts), kind=kind)
        decisions.append({"question": q, **d.__dict__})
        if d.inject:
            took.append(a)
    if not took:
        return None, decisions
    hits = _round_robin(took)
    if max_tokens:
        hits = tuple(fit_budget(hits, max_tokens))
    return replace(took[0], query=query, hits=hits), decisions


def hook_answer(query: str, cfg, *, max_tokens: int | None = None, store=None, **scope):
    """search() as a hook should use it: the Answer when it earns unsolicited injection, else a
    no_evidence Answer with reason "not_injected" (its evidence says why: `inject`; for a prompt of
    several questions decided one by one, `inject.questions`)."""
    from ..store import open_store
    from .pipeline import search

    own = store is None
    store = store or open_store(cfg, readonly=True)
    try:
        ans = search(query, cfg, store=store, max_tokens=max_tokens, **scope)  # scope, exclude_session (issue 17)
        calibration = Calibration.from_json(store.get_meta(META_KEY))
        d = decide(ans, query, calibration)
        # Only a prompt with evidence that was too weak as a whole (not one the gate refused), and
        # each question of the prompt's own kind (a question inside a coding instruction is one).
        split = d.reason == "weak_for_kind" and calibration is not None and calibration.split is not None
        parts = questions(query) if split else []
        merged, decisions = _by_question(query, parts, d.kind, cfg, store, calibration, max_tokens, scope) \
            if parts else (None, [])
    finally:
        if own:
            store.close()
    evidence = {**ans.evidence, "inject": d.__dict__}
    if d.inject:
        return replace(ans, evidence=evidence)
    if decisions:
        evidence["inject"] = {**d.__dict__, "questions": decisions}
    if merged is not None:
        evidence["inject"]["inject"] = True
        evidence["inject"]["reason"] = "questions"
        evidence["inject"]["whole_reason"] = d.reason
        return replace(merged, evidence=evidence)
    return replace(ans, status="no_evidence", reason=ans.reason or "not_injected", hits=(), evidence=evidence)

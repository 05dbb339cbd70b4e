"""The words a question spends on asking the vault rather than on its topic: "what do my notes say
about the router", "what did I write down on X", "according to my notes, ...", "was steht in
meinen Notizen über X". They name no topic, yet a vault that never says "notes" or "say" weighed
them as words it lacks (the gate refused), BM25 matched notes about note-taking on them and the
vectors leaned that way too. `topic()` drops them before any channel reads the query; the hook's
judgement of the prompt's kind still reads it whole. Standard library only.
"""
from __future__ import annotations

import re

_WHERE = r"(?:notes?|vault|docs|documentation|journal|wiki|files|knowledge\s+base|second\s+brain)"
_OWNER = r"(?:my|our|the|these|those)"
_ABOUT = r"(?:about|on|regarding|concerning|re)"
# (words one of which the phrase must hold, the phrase): a pattern is compiled (0.1-0.3 ms) only on
# the first query that holds one of its words, and tried only on such queries.
_PATTERNS = (
    # what do my notes say about X / what does the vault have on X / anything my notes mention about X
    (("notes", "note ", "vault", "docs", "documentation", "journal", "wiki", "files", "knowledge", "brain"),
     rf"\b(?:what|which|anything|something)\s+(?:do|does|did|have|has|can|could|would)?\s*{_OWNER}\s+{_WHERE}\s+"
     rf"(?:say|says|said|tell(?:\s+me)?|mention|mentions|mentioned|contain|contains|have|has|record|recorded|know)"
     rf"(?:\s+{_ABOUT})?\b"),
    # what did I write (down) about X / what have we noted on X
    ((" i ", " we "),
     rf"\b(?:what|anything)\s+(?:did|have|had)\s+(?:i|we)\s+(?:written|wrote|write|noted|note|jotted|jot|saved|save|"
     rf"recorded|record|kept|keep)(?:\s+down)?\s+{_ABOUT}\b"),
    # do I have (any) notes on X / have we got anything about X
    (("notes", "note ", "anything", "something"),
     rf"\b(?:do|did|have)\s+(?:i|we)\s+(?:have|got)\s+(?:any\s+)?(?:notes?|anything|something)\s+{_ABOUT}\b"),
    # in / from / according to my notes; search my vault for (not "my notes app")
    ((" my ", " our "),
     rf"\b(?:in|from|according\s+to|based\s+on|across|per|search|check|look\s+(?:in|through)|find\s+in)\s+"
     rf"(?:my|our)\s+{_WHERE}(?!\s+(?:app|application|folder|directory)\b)(?:\s+for)?\b"),
    # (find / show me) my notes on X
    ((" my note", " our note"),
     rf"\b(?:(?:find|show|get|list|search)\s+(?:me\s+)?)?(?:my|our)\s+notes?\s+(?:{_ABOUT}|for|that\s+mention)\b"),
    # German: was steht in meinen Notizen über X / in meinen Notizen / meine Notizen zu X
    (("notizen", "unterlagen", "aufzeichnungen"),
     r"\bwas\s+(?:steht|stand|sagen|sagt|haben|habe)\s+(?:in\s+)?(?:meinen|meine|unseren|unsere|den|die)\s+"
     r"(?:notizen|unterlagen|aufzeichnungen)(?:\s+(?:über|zu|zum|zur|von))?(?=\W|$)"),
    (("notizen", "unterlagen", "aufzeichnungen"),
     r"\b(?:in|aus)\s+(?:meinen|unseren)\s+(?:notizen|unterlagen|aufzeichnungen)(?=\W|$)"),
    (("notizen",), r"\b(?:meine|unsere)\s+notizen\s+(?:über|zu|zum|zur)(?=\W|$)"),
)
_COMPILED: dict[int, re.Pattern] = {}


def topic(query: str) -> str:
    """`query` without the phrases that only ask the vault; the query itself when nothing is left
    but punctuation and stopword-sized scraps, or when it holds no such phrase."""
    low = " " + query.lower() + " "
    rest = query
    for i, (words, pattern) in enumerate(_PATTERNS):
        if any(w in low for w in words):
            rx = _COMPILED.get(i) or _COMPILED.setdefault(i, re.compile(pattern, re.IGNORECASE))
            rest = rx.sub(" ", rest)
    if rest == query or not any(len(w) > 2 for w in re.findall(r"\w+", rest)):
        return query
    return " ".join(rest.split())

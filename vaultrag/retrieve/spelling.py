"""British and American spellings of one English word ("colour" / "color", "organise" /
"organize", "centre" / "center"): every channel searches the vault's spelling when the
query's is in no chunk, or in far fewer than the other (channels.respelled, channels.respell).
Rules on word endings and a few whole words, both directions; a variant is only ever used when
the index holds it, so a rule that makes a non-word costs one lookup and changes nothing.
Standard library only."""
from __future__ import annotations

MIN_CHARS = 4
MAX_VARIANTS = 4

# (British ending, American ending), longest first within a family so "isations" wins over "ise".
_ENDINGS = (
    ("isations", "izations"), ("isation", "ization"),
    ("ising", "izing"), ("ised", "ized"), ("ises", "izes"), ("iser", "izer"), ("isers", "izers"), ("ise", "ize"),
    ("ysing", "yzing"), ("ysed", "yzed"), ("yses", "yzes"), ("yse", "yze"),
    ("tres", "ters"), ("tre", "ter"),
    ("ogues", "ogs"), ("ogue", "og"),
    ("ences", "enses"), ("ence", "ense"),
    ("lled", "led"), ("lling", "ling"), ("ller", "ler"), ("llers", "lers"),
)

# Pairs no ending rule makes (or would make wrongly), British first.
_WORDS = {
    "grey": "gray", "greys": "grays", "programme": "program", "programmes": "programs",
    "judgement": "judgment", "judgements": "judgments", "aluminium": "aluminum",
    "mould": "mold", "moulds": "molds", "enrol": "enroll", "enrols": "enrolls", "enrolment": "enrollment",
    "fulfil": "fulfill", "fulfils": "fulfills", "fulfilment": "fulfillment", "skilful": "skillful",
    "plough": "plow", "draught": "draft", "cheque": "check", "cheques": "checks",
    "tyre": "tire", "tyres": "tires", "kerb": "curb", "pyjamas": "pajamas", "storey": "story",
}
_WORDS_BACK = {a: b for b, a in _WORDS.items() if a not in ("check", "checks", "draft", "story", "curb", "tire", "tires")}


def variants(word: str) -> list[str]:
    """Other spellings of a lowercase ASCII word, most likely first; [] for short or non-letter
    words. Candidates, not facts: the caller keeps the first the index holds."""
    if len(word) < MIN_CHARS or not (word.isascii() and word.isalpha()):
        return []
    w = word.lower()
    out: list[str] = []

    def add(v: str) -> None:
        if v != w and v not in out and len(v) >= 3:
            out.append(v)

    if w in _WORDS:
        add(_WORDS[w])
    if w in _WORDS_BACK:
        add(_WORDS_BACK[w])
    for brit, amer in _ENDINGS:
        for a, b in ((brit, amer), (amer, brit)):
            if w.endswith(a) and len(w) - len(a) >= 2:
                stem = w[: len(w) - len(a)]
                if a in ("led", "ling", "ler", "lers") and not (
                        len(stem) >= 4 and stem[-1] in "aeiou" and stem[-2] not in "aeiou"):
                    continue  # doubling follows one vowel after a consonant: "filed", "sealed" stay
                add(stem + b)
    _our_or(w, add)
    for digraph in ("ae", "oe"):  # anaemia, oestrogen, encyclopaedia -> e
        i = w.find(digraph)
        if i >= 0:
            add(w[:i] + "e" + w[i + 2:])
    return out[:MAX_VARIANTS]


def _our_or(w: str, add) -> None:
    """colour <-> color, behaviour(s) <-> behavior(s), favourite <-> favorite: "our" after a
    consonant or vowel past the word's first two letters (never "our", "four", "tour" heads)."""
    i = w.find("our", 2)
    if i >= 0:
        add(w[:i] + "or" + w[i + 3:])
        return
    i = w.find("or", 2)
    while i >= 0:
        if w[i - 1] not in "o":
            add(w[:i] + "our" + w[i + 2:])
            return
        i = w.find("or", i + 1)

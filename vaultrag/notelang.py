"""The language of a note, for stemming its Latin- and Cyrillic-script words (issue 20, second round).

Many languages share the Latin and Cyrillic alphabets, so the script says nothing about which
Snowball stemmer fits; the note does. In order:
- frontmatter `lang` or `language` ("tr", "tr-TR", "pt_BR", "Turkish", "turkish"): its stemmer, or
  none when the language has no Snowball stemmer or is English (FTS5's porter stems English
  already);
- else detection by stopword counts over the note's first DETECT_MAX_WORDS words, with the lists of
  the maintained stopwords-iso package (`stopwordsiso`, already a dependency): each word that is
  a stopword of some languages votes 1/k for each of its k languages (a word every Romance list
  holds says little; "ve", "bir" say Turkish). The best language must clear DETECT_MIN_SCORE,
  hold DETECT_MIN_SHARE of the words and lead the next by DETECT_MARGIN; otherwise the note keeps
  today's analysis (no stemmer). A detected language stems only if agglutinative
  (DETECT_STEM_CODES: see there for the figures); the index keeps each word beside its stem.
Languages without a stemmer (Vietnamese, Slovak, Ukrainian...) take part in the vote, so their
notes are not given a neighbour's stemmer. The detection runs at index time only; the stems are
made here for the index (textutil.fts_text) and for queries (`note_stems`, imported by
retrieve/channels.py only for a vault with note languages).
"""
from __future__ import annotations

import re
import unicodedata
from typing import Mapping

from . import textutil
from .textutil import CJK_RE, NOTE_LANGS_META, SEG_RE, STEM_CACHE_MAX

# ISO 639-1 code -> Snowball algorithm (PyStemmer 3.1). English maps to None: porter stems it in
# FTS5. Scripts with their own stemmer by script (Greek, Arabic, Hindi...) are textutil's.
SNOWBALL = {
    "ca": "catalan", "cs": "czech", "da": "danish", "nl": "dutch", "eo": "esperanto", "et": "estonian",
    "eu": "basque", "fi": "finnish", "fr": "french", "de": "german", "hu": "hungarian", "id": "indonesian",
    "ga": "irish", "it": "italian", "lt": "lithuanian", "no": "norwegian", "nb": "norwegian",
    "nn": "norwegian", "pl": "polish", "pt": "portuguese", "ro": "romanian", "ru": "russian",
    "sr": "serbian", "es": "spanish", "sv": "swedish", "tr": "turkish", "st": "sesotho",
}
_NAMES = {name: name for name in SNOWBALL.values()} | {"english": None, "en": None}
# Languages of the stopwords-iso lists written in Latin or Cyrillic letters: the detection's
# candidates (with or without a stemmer).
DETECT_LANGS = ("af", "bg", "br", "ca", "cs", "da", "de", "en", "eo", "es", "et", "eu", "fi", "fr", "ga",
                "gl", "ha", "hr", "hu", "id", "it", "la", "lt", "lv", "ms", "nl", "no", "pl", "pt", "ro",
                "ru", "sk", "sl", "so", "st", "sv", "sw", "tl", "tr", "uk", "vi", "yo", "zu")
DETECT_MAX_WORDS = 400  # the note's first words: enough for a stable vote, bounded cost per note
# A note of a few words says too little; measured on the dev vaults (BENCHMARKS.md "Issue 20,
# second round"): obsidian-help de/pl/ru notes and xquad de/es/ru paragraphs detected as their
# language, English ones as English.
DETECT_MIN_SCORE = 3.0
DETECT_MIN_SHARE = 0.08
DETECT_MARGIN = 1.5

_WORD_RE = re.compile(r"[^\W\d_]+")
_VOTES: dict[str, tuple[tuple[str, float], ...]] | None = None


def _votes() -> dict[str, tuple[tuple[str, float], ...]]:
    """word -> ((language, its vote), ...), from the stopwords-iso lists ({} without the package)."""
    global _VOTES
    if _VOTES is None:
        import importlib.util
        import json
        from pathlib import Path

        spec = importlib.util.find_spec("stopwordsiso")
        lists: dict = {}
        if spec is not None and spec.submodule_search_locations:
            raw = (Path(list(spec.submodule_search_locations)[0]) / "stopwords-iso.json").read_text(encoding="utf-8")
            lists = json.loads(raw)
        owners: dict[str, set[str]] = {}
        for code in DETECT_LANGS:
            for w in lists.get(code, ()):
                if isinstance(w, str) and _WORD_RE.fullmatch(w.lower()):
                    owners.setdefault(w.lower(), set()).add(code)
        _VOTES = {w: tuple((c, 1.0 / len(cs)) for c in sorted(cs)) for w, cs in owners.items()}
    return _VOTES


_ASCII_WORD_RE = re.compile(r"[a-z]+")  # _WORD_RE in lowered ASCII text: \w less digits and "_" is a-z there
_HEAD_CHARS = 16 * DETECT_MAX_WORDS  # the window the words are read from


def head_words(text: str) -> list[str]:
    """The first DETECT_MAX_WORDS words (lowered runs of letters) of the text's first _HEAD_CHARS
    characters. An ASCII window is read with an ASCII pattern and lowered alone (lower() keeps its
    length, so the window is the same): the same words at ~0.6x the CPU (most notes, SciFact 77%)."""
    head = text[:_HEAD_CHARS]
    if head.isascii():
        return _ASCII_WORD_RE.findall(head.lower())[:DETECT_MAX_WORDS]
    return _WORD_RE.findall(text.lower(), 0, _HEAD_CHARS)[:DETECT_MAX_WORDS]


def detect(text: str) -> str | None:
    """The ISO 639-1 code of the language `text` is written in, by stopword votes; None when the
    vote is too thin or too close."""
    votes = _votes()
    words = head_words(text)
    if not words or not votes:
        return None
    score: dict[str, float] = {}
    for w in words:
        for code, v in votes.get(w, ()):
            score[code] = score.get(code, 0.0) + v
    ranked = sorted(score.items(), key=lambda kv: -kv[1])
    if not ranked:
        return None
    best, top = ranked[0]
    second = ranked[1][1] if len(ranked) > 1 else 0.0
    if top < DETECT_MIN_SCORE or top < DETECT_MIN_SHARE * len(words) or top < DETECT_MARGIN * second:
        return None
    return best


def declared(frontmatter: Mapping) -> tuple[bool, str | None]:
    """(whether frontmatter names a language, its Snowball stemmer or None)."""
    keys = {str(k).strip().lower(): k for k in frontmatter}
    for key in ("lang", "language"):
        value = frontmatter.get(keys[key]) if key in keys else None
        if isinstance(value, list) and value:
            value = value[0]
        if isinstance(value, str) and value.strip():
            name = value.strip().lower()
            if name in _NAMES:
                return True, _NAMES[name]
            code = re.split(r"[-_]", name, maxsplit=1)[0]
            return True, SNOWBALL.get(code)
    return False, None


# Whether a detected language (no frontmatter `lang`) stems the note, and which detected languages
# do. Measured (BENCHMARKS.md "Issue 20, third round"; both forms indexed, see note_index_form):
# for the agglutinative languages a 70% prefix cannot bridge suffix chains ("sistemlerinde" /
# "sistemi"): tldr-pages Turkish (benchmarks/tldr_lang.py, page descriptions against the rest of
# the page) MRR ranking 0.567 -> 0.586, as answered 0.311 -> 0.361, abstained 0.553 -> 0.507. For
# the fusional languages the prefix rule was tuned on it moved figures both ways within noise
# (tldr de 0.580 -> 0.561, es 0.560 -> 0.593, ru 0.538 -> 0.517, it 0.628 -> 0.638) and cost
# xquad-de nDCG@10 ranking 0.9438 -> 0.9385, so those keep today's analysis unless a note
# declares its language. Stems alone (second round) had cost xquad-es 0.964 -> 0.946.
DETECT_STEMS = True
DETECT_STEM_CODES = frozenset({"tr", "fi", "hu", "et", "eu"})  # Turkish, Finnish, Hungarian, Estonian, Basque


def note_stemmer(frontmatter: Mapping, text: str) -> str | None:
    """The Snowball stemmer for a note's Latin/Cyrillic words (see the module docstring), or None:
    the frontmatter's language, else (DETECT_STEMS) the detected one if in DETECT_STEM_CODES."""
    named, stemmer = declared(frontmatter)
    if named:
        return stemmer
    code = detect(text) if DETECT_STEMS else None
    return SNOWBALL.get(code) if code in DETECT_STEM_CODES else None


# The query side (retrieve/channels.py) cannot tell a query's language; it searches each word as
# itself OR the stems of the vault's note languages: those stemming at least NOTE_LANG_MIN_SHARE of
# all its notes (of the stemmed ones only, a vault of 38k English tldr pages with 720 Turkish ones
# would widen every English query with Turkish stems), at most NOTE_LANGS_MAX of them (each costs a
# C stemmer call per query word and widens the OR). Kept in the index metadata under
# NOTE_LANGS_META, comma-separated.
NOTE_LANGS_MAX = 3
NOTE_LANG_MIN_SHARE = 0.05
# ... and at least this many notes: a note or two misdetected in a vault of another language (1,000
# English tldr pages: one "Norwegian", one "Catalan") would otherwise widen every query with their
# stems (tldr en, example descriptions MRR 0.955 -> 0.933).
NOTE_LANG_MIN_NOTES = 3


_ASCII_SPLIT_RE = re.compile(r"(\w+)")


def _wordish_split(text: str) -> list[str]:
    textutil._token_re()
    return textutil._WORDISH_SPLIT_RE.split(text)


def vault_languages(counts: Mapping[str, int], notes: int = 0) -> str:
    """The NOTE_LANGS_META value for `counts` (Store.note_languages) in a vault of `notes` notes
    (Store.note_count; never fewer than the stemmed ones): most notes first."""
    total = max(sum(counts.values()), notes)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ",".join(lang for lang, n in ranked[:NOTE_LANGS_MAX]
                    if n >= NOTE_LANG_MIN_SHARE * total and n >= NOTE_LANG_MIN_NOTES)


# A note whose language is known (notelang.note_stemmer: frontmatter `lang`, or stopword votes) has
# its alphabetic words outside the stemmed scripts stemmed by that language's Snowball stemmer at
# index time. A query's language is unknown, so a query word is searched as itself OR the stem each
# of the vault's note languages makes of it (`note_stems`; channels.build_fts_query).
# A stem shorter than this is not used, on either side: the query searches stems as prefixes
# (Term.alternatives), and "ev"* (Turkish "evler", houses) would match evet, evren... The word
# stays whole in the index instead, where its exact form still meets the query's.
NOTE_STEM_MIN_CHARS = 4
_NOTE_STEM_CACHE: dict[tuple[str, str], str] = {}


def note_stem(word: str, lang: str) -> str:
    """`word` (lowercased, folded) as `lang`'s Snowball stemmer makes it; a word of a script with its
    own stemmer, a CJK or spaceless run, or one holding digits or '_' is returned as is."""
    key = (lang, word)
    got = _NOTE_STEM_CACHE.get(key)
    if got is not None:
        return got
    if not word.isalpha() or (not word.isascii() and (textutil._STEM_RE.search(word) or CJK_RE.search(word)
                                                      or SEG_RE.search(word))):
        got = word
    else:
        got = textutil._stemmer(lang).stemWord(word) or word
        got = got if len(got) >= NOTE_STEM_MIN_CHARS else word
    if len(_NOTE_STEM_CACHE) >= STEM_CACHE_MAX:
        _NOTE_STEM_CACHE.clear()
    _NOTE_STEM_CACHE[key] = got
    return got


def _bare(word: str) -> str:
    """`word` without the Latin diacritics FTS5's unicode61 (remove_diacritics 2) folds away; a
    word with letters past Latin is returned as is (unicode61 folds no Cyrillic or Greek marks)."""
    if word.isascii() or max(word) >= "\u0250":
        return word
    return "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c))


def note_index_form(word: str, lang: str) -> str:
    """What the index holds for `word` (lowercased, folded) of a `lang` note: the word itself, and
    its stem after it when the stem is not a prefix of the word ("kitabı" -> "kitabı kitap"). A
    query searches its words' stems as prefixes (`note_stems`, Term.alternatives), so a stem that
    begins the word already meets it; keeping the word keeps the exact and 70%-prefix matches the
    query has without stems (stems alone cost xquad-es 0.964 -> 0.946, BENCHMARKS.md)."""
    key = ("+" + lang, word)
    got = _NOTE_STEM_CACHE.get(key)
    if got is None:
        st = note_stem(word, lang)
        got = word if st == word or _bare(word).startswith(_bare(st)) else f"{word} {st}"
        _NOTE_STEM_CACHE[key] = got
    return got


def note_stem_text(text: str, lang: str) -> str:
    """`text` (folded) with every alphabetic Latin/Cyrillic word that its `lang` stem does not begin
    followed by that stem (`note_index_form`)."""
    if text.isascii():
        parts = _ASCII_SPLIT_RE.split(text)
    else:
        parts = _wordish_split(text)
    parts[1::2] = [note_index_form(w.lower(), lang) for w in parts[1::2]]
    return "".join(parts)


def note_stems(word: str, langs) -> tuple[str, ...]:
    """The stems the vault's note languages `langs` make of a query word, other than the word
    itself and those its own search prefix covers, in `langs` order."""
    out: list[str] = []
    own = None if word.isascii() else textutil.word_prefix(word)  # the prefix the word is searched by
    for lang in langs:
        st = note_stem(word, lang)
        if st != word and st not in out and not (own and st.startswith(own)):
            out.append(st)  # (a stem the word's own prefix already begins adds no match, only weight)
    return tuple(out)


# -- the gate: function words of the vault's note languages ---------------------------------
# A query word no chunk holds weighs the most in the evidence gate (retrieve/pipeline.py
# term_evidence): rightly for a content word, wrongly for a question or function word the vault's
# notes never use ("hangi", "nasıl": a Turkish vault of statements never asks). Document frequency
# cannot tell those two apart once the word is absent, so for the languages the vault's notes are
# written in (NOTE_LANGS_META) the maintained stopwords-iso list says which absent words are
# function words; only that language's entry is read, on the first query that needs it.
_ISO_CODE = {name: code for code, name in SNOWBALL.items() if code not in ("nb", "nn")}
_LANG_STOP_TERMS: dict[str, frozenset[str]] = {}


def absent_function_terms(langs) -> frozenset[str]:
    """The query-term texts (channels.query_term of each folded, lowercased stopword: a prefix for a
    long non-ASCII word) of the stopwords of the Snowball languages `langs`."""
    from .retrieve.channels import query_term

    out: set[str] = set()
    for lang in langs:
        got = _LANG_STOP_TERMS.get(lang)
        if got is None:
            code = _ISO_CODE.get(lang)
            raw = textutil._iso_stopwords(code) if code else []
            got = set()
            for w in raw:
                for word in textutil.words(w):
                    got.add(query_term(word).text)
            got = _LANG_STOP_TERMS[lang] = frozenset(got)
        out |= got
    return frozenset(out)

"""Text analysis shared by the index, the query path, the evidence gate and the compressor:
the one place terms are made. Standard library only.

By script, not by language list (issue 20):
- Scripts written without spaces. SQLite FTS5's unicode61 tokenizer treats a run of Chinese,
  Japanese or Korean characters as one token, so a question never matches a sentence (XQuAD-zh
  nDCG@10 0.114). We index each CJK character as its own token (`fts_text`) and query runs as
  2-character phrases (`query_terms`), which keeps word order without a dictionary segmenter.
  Thai, Lao, Khmer, Myanmar (and Tai Tham) get the same treatment with the grapheme cluster (a
  letter and the marks on it) as the unit and SEG_GRAM-cluster phrases as terms.
- Combining marks (Thai vowel and tone marks, Devanagari and other Indic matras, Arabic harakat)
  stay inside their words: the FTS5 tokenizer counts category M as token characters
  (store/sqlite/schema.py FTS_TOKENIZE), and so does the word pattern here (textmarks.MARKS).
- `fold`: NFKC, Turkish dotted/dotless i to i, Greek accents and final sigma, Arabic diacritics,
  tatweel and alef wasla (alef with hamza/madda after the stemmer); applied identically at index time (`fts_text`) and
  query time (`words`), before FTS5 lowercases and folds Latin diacritics itself.
"""
from __future__ import annotations

import math
import re
import unicodedata


class _LazyPattern:
    """`re.compile(*args)` on first use (issue 18): the CJK character class alone costs ~3 ms to
    compile, several patterns here hold it, and a hook process uses only some of them."""

    __slots__ = ("_args", "_compiled")

    def __init__(self, *args):
        self._args, self._compiled = args, None

    def __getattr__(self, name):
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        return getattr(self._compiled, name)


class _NonAsciiPattern(_LazyPattern):
    """A lazy pattern that matches no ASCII character: `search`/`match` of ASCII text answer None
    without compiling it (issue 18: an English prompt in a hook compiled the CJK, SEG and stemmer
    classes, ~4 ms quiet, only to find nothing)."""

    __slots__ = ()

    def search(self, text, *args):
        return None if text.isascii() else self.__getattr__("search")(text, *args)

    def match(self, text, *args):
        return None if text.isascii() else self.__getattr__("match")(text, *args)

# Hiragana/Katakana, CJK Unified (+ext A, compat), Hangul syllables and jamo, CJK ext B+ planes.
_CJK_CLASS = (
    "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002ffff"
)
CJK_RE = _NonAsciiPattern(f"[{_CJK_CLASS}]")
_CJK_RUN_RE = _LazyPattern(f"[{_CJK_CLASS}]+")
# Scripts of South-East Asia written without spaces between words: Thai, Lao, Myanmar (+ext A/B),
# Khmer (+symbols), Tai Tham. Whole blocks, so a run keeps its vowel and tone marks.
_SEG_CLASS = "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u19e0-\u19ff\u1a20-\u1aaf\ua9e0-\ua9ff\uaa60-\uaa7f"
SEG_RE = _NonAsciiPattern(f"[{_SEG_CLASS}]")
_SEG_RUN_RE = _LazyPattern(f"[{_SEG_CLASS}]+")
# Query phrases of a spaceless alphabetic script are this many grapheme clusters long (a Thai
# cluster is about a letter). xquad-th, nDCG@10 ranking / as answered: 2 0.934 / 0.854,
# 3 0.917 / 0.853 (with CJK's straddle rule), 4 0.923 / 0.882 (BENCHMARKS.md, "Languages").
SEG_GRAM = 2
# A word: letters/digits/underscore runs, with combining marks, outside the spaceless scripts;
# CJK and spaceless runs separately. Text outside ASCII uses the mark-aware pattern (compiled on
# first need: ~2 ms, paid only by non-ASCII text).
_TOKEN_RE_ASCII = re.compile(r"\w+")
_TOKEN_RE: re.Pattern | None = None
_WORDISH_RE: re.Pattern | None = None
_WORDISH_SPLIT_RE: re.Pattern | None = None
_CLUSTER_RE: re.Pattern | None = None


def _token_re() -> re.Pattern:
    global _TOKEN_RE, _WORDISH_RE, _WORDISH_SPLIT_RE, _CLUSTER_RE
    if _TOKEN_RE is None:
        from .textmarks import MARKS

        _CLUSTER_RE = re.compile(f"[^{MARKS}][{MARKS}]*|[{MARKS}]+")
        _TOKEN_RE = re.compile(f"[{_CJK_CLASS}]+|[{_SEG_CLASS}]+|(?:[^\\W{_CJK_CLASS}{_SEG_CLASS}]|[{MARKS}])+")
        # One character class, ~50x faster than the alternation above (which costs ~2 us a
        # character): the same tokens wherever a match holds no CJK or spaceless-script character.
        _WORDISH_RE = re.compile(f"[\\w{MARKS}]+")
        _WORDISH_SPLIT_RE = re.compile(f"([\\w{MARKS}]+)")
    return _TOKEN_RE


def _tokens(text: str) -> list[str]:
    """`_TOKEN_RE.findall(text)`, fast: word-ish runs, split further only where CJK/SEG occur."""
    slow = _token_re()
    out: list[str] = []
    for m in _WORDISH_RE.findall(text):
        if CJK_RE.search(m) or SEG_RE.search(m):
            out.extend(slow.findall(m))
        else:
            out.append(m)
    return out


def clusters(run: str) -> list[str]:
    """Grapheme clusters of `run`, approximately: each character with the combining marks after it."""
    _token_re()
    return _CLUSTER_RE.findall(run)


# -- fold: what FTS5's unicode61 does not fold, done the same way on both sides ------------------
# Arabic: harakat, superscript alef, Quranic marks and tatweel removed; alef wasla to bare alef
# (hamza/madda forms: _ALEF_FOLD, after stemming). Alef maqsura and teh marbuta are left to the Snowball stemmer, which strips
# them as endings: folding them first (to yeh / heh) cost xquad-ar 0.940 -> 0.923 ranking and
# 0.867 -> 0.853 as answered. Turkish: dotted capital and dotless small i to i (unicode61 lowercases I to i,
# so "ISPARTA" and "ılık" would otherwise never meet their other spellings). Greek: final sigma.
_FOLD_CHARS = {0x0130: "i", 0x0131: "i", 0x03C2: "\u03c3", 0x0640: None, 0x0671: "\u0627", 0x0670: None}
# Alef with hamza or madda becomes bare alef after stemming (`_stem`), not before: Snowball's
# Arabic stemmer folds them itself, and strips a leading conjunction only before a hamza ("وأرمينيا"
# -> ارميني, but "وارمينيا" stays whole when folded first).
_ALEF_FOLD = {0x0622: "\u0627", 0x0623: "\u0627", 0x0625: "\u0627"}
_FOLD_CHARS.update({cp: None for cp in range(0x064B, 0x0660)})
_FOLD_CHARS.update({cp: None for cp in range(0x0610, 0x061B)})
_FOLD_RE = _LazyPattern("[\u0130\u0131\u0370-\u03ff\u1f00-\u1fff\u0610-\u061a"
                      "\u0640\u064b-\u065f\u0670\u0671]")
_FOLD_TABLE: dict[int, str | None] | None = None


def _fold_table() -> dict[int, str | None]:
    """The translate table of `fold`, with Greek letters stripped of tonos, dialytika and the
    polytonic accents (built on first need: Greek is decomposed once, ~0.3 ms)."""
    global _FOLD_TABLE
    if _FOLD_TABLE is None:
        table = dict(_FOLD_CHARS)
        for cp in list(range(0x0370, 0x0400)) + list(range(0x1F00, 0x2000)):
            base = unicodedata.normalize("NFD", chr(cp))
            if len(base) > 1 and unicodedata.category(base[0]).startswith("L"):
                table[cp] = base[0]
        _FOLD_TABLE = table
    return _FOLD_TABLE


def fold(text: str) -> str:
    """`text` in its search form before FTS5's own folding: NFKC, then the folds above. ASCII
    text is returned as is."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFKC", text)
    return text.translate(_fold_table()) if _FOLD_RE.search(text) else text


# Small stopword lists for the languages users write notes in, question words included (a question
# is the usual query; "wann" or "cuándo" says nothing about the answer's topic); pruning them keeps
# long prompts cheap (a raw 20-word OR query cost 187 ms at 50k chunks, pruned 9 ms) and focused.
STOPWORDS = frozenset(
    """
a about above after again all also am an and any are as at be because been before being below between
both but by can could did do does doing done down during each either else etc even ever every few for
from further get gets got had has have having he her here hers him his how however i if in into is it
its itself just let like may me might more most much must my no nor not now of off on once one only or
other our ours out over own per please same shall she should so some such than that the their theirs
them then there these they this those though through to too under until up upon us use used using very
via was we were what whatever when where whether which while who whom whose why will with within
without would yes yet you your yours
tell show give find explain describe know need want make
der die das den dem des ein eine einer eines einem einen und oder aber ist sind war waren wird werden
hat haben mit von zu zum zur im in auf für fur nicht auch als wie wo was wer wenn dass sich es ich du er
sie wir ihr man kann können konnen soll noch nur bei nach aus über uber unter
el la los las un una unos unas y o pero es son fue ser está esta están de del al en con por para que
se su sus lo le les como cuando donde qué cual cuál quién
le la les un une des et ou mais est sont été de du au aux en dans sur pour par que qui ce cette ces il
elle ils elles nous vous je tu ne pas plus
и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее мне было
вот от меня еще нет о из ему теперь когда даже ну вдруг ли если уже или ни быть был него до вас нибудь
опять уж вам ведь там потом себя ничего ей может они тут где есть надо ней для мы тебя их чем была сам
чтоб без будто чего раз тоже себе под будет ж тогда кто этот того потому этого какой совсем ним здесь
этом один почти мой тем чтобы нее сейчас были куда зачем всех никогда можно при наконец два об
другой хоть после над больше тот через эти нас про всего них какая много разве три эту моя впрочем
хорошо свою этой перед иногда лучше чуть том нельзя такой им более всегда конечно всю между как
i w z na do nie się że to jest są od po za o jak co ale lub czy ten ta te tym przez dla tak jego jej
wann warum weshalb wieso welche welcher welches welchen welchem wem wen wessen woher wohin womit wofür
cuándo dónde cómo cuánto cuántos cuánta cuántas cuáles quiénes quienes cuanto cuantos cuanta cuantas cuales
quand où pourquoi quel quelle quels quelles lequel laquelle combien
какие каких каком какое какую каким сколько почему чей чья чьи который которая которое которые которых
котором которой
kiedy gdzie dlaczego który która które którego ile kto
""".split()
)
# Single CJK characters too common to say anything on their own (particles, copulas).
CJK_STOP_CHARS = frozenset("的了是在和有也就都而及与或之其这那个我你他她它们吗呢吧啊么什怎")
# Chinese question words: a CJK run is cut at them before it is split into bigrams, so neither
# they nor the bigrams straddling them ("怎样工作" -> 样工) become terms.
# Only forms that are rarely part of a content word (not 多少 as in 很多少年, 是否 as in 于是否决,
# or a bare 哪 as in 哪吒); simplified and traditional.
_CJK_QUESTION_RE = _LazyPattern(
    "为什么|為什麼|怎么样|怎麼樣|怎么|怎麼|怎样|怎樣|如何|为何|為何|何时|何時|哪些|哪个|哪個|哪里|哪裡|哪儿|哪兒"
    "|哪一|哪位|哪种|哪種|什么|什麼|甚麼|谁|誰")


# -- stemming by script ---------------------------------------------------------------------
# A script written by (nearly) one language gets that language's Snowball stemmer (PyStemmer, a C
# extension, imported on first need: ~1 ms warm; English-only text never loads it). The article
# and clitics of Arabic ("البانثرز" / "بانثرز") and the case endings of Greek or Hindi are what a
# 70% prefix cannot bridge. Latin and Cyrillic are written by many languages and keep the porter
# stemmer of FTS5 (English) and the prefix rule (`word_prefix`) for the rest. Measured per
# script in BENCHMARKS.md ("Languages").
STEM_SCRIPTS = (  # (first, last code point, Snowball language)
    (0x0370, 0x03FF, "greek"), (0x1F00, 0x1FFF, "greek"),
    (0x0530, 0x058F, "armenian"),
    (0x0600, 0x06FF, "arabic"), (0x0750, 0x077F, "arabic"), (0x08A0, 0x08FF, "arabic"),
    (0x0900, 0x097F, "hindi"),
    (0x0B80, 0x0BFF, "tamil"),
)
_STEM_RE = _NonAsciiPattern("[" + "".join(f"\\u{a:04x}-\\u{b:04x}" for a, b, _ in STEM_SCRIPTS) + "]")
_STEMMERS: dict[str, object] = {}


def stem_language(token: str) -> str | None:
    """The Snowball language of a token whose first and last characters are of a stemmed script."""
    a, b = ord(token[0]), ord(token[-1])
    for lo, hi, lang in STEM_SCRIPTS:
        if lo <= a <= hi:
            return lang if lo <= b <= hi else None
    return None


_STEM_CACHE: dict[str, str] = {}
STEM_CACHE_MAX = 200_000  # words; a vault's vocabulary is mostly far smaller (Zipf), cleared when full


def _stem(token: str) -> str:
    """`token` (lowercased, folded) stemmed by its script's language, else as is. Cached: the
    same words recur, and a Python call per word dominated indexing Arabic text (480 paragraphs:
    2 ms without stemming, 1.1 s stemming each word afresh on this loaded machine)."""
    got = _STEM_CACHE.get(token)
    if got is not None:
        return got
    lang = stem_language(token) if _STEM_RE.match(token) else None
    if lang is None:
        return token
    st = _stemmer(lang)
    if len(_STEM_CACHE) >= STEM_CACHE_MAX:
        _STEM_CACHE.clear()
    got = st.stemWord(token) or token
    got = _STEM_CACHE[token] = got.translate(_ALEF_FOLD) if lang == "arabic" else got
    return got


def _stemmer(lang: str):
    st = _STEMMERS.get(lang)
    if st is None:
        import Stemmer  # PyStemmer: Snowball in C

        st = _STEMMERS[lang] = Stemmer.Stemmer(lang)
    return st


# -- stemming by note language (second round): notelang.py, loaded when a note or vault has one
NOTE_LANGS_META = "note_langs"  # index metadata: the vault's note languages (notelang.vault_languages)


def _stem_text(text: str) -> str:
    """`text` (folded) with every word of a stemmed script replaced by its stem, lowercased as
    FTS5 would lowercase it: the index side of what `words` does to a query."""
    def one(tok: str) -> str:
        got = _STEM_CACHE.get(tok)
        if got is not None:
            return got
        if not _STEM_RE.match(tok):
            return tok
        return _stem(tok.lower().replace("\u03c2", "\u03c3"))

    slow = _token_re()
    if CJK_RE.search(text) or SEG_RE.search(text):  # rare: the exact tokens, a call per match
        return slow.sub(lambda m: one(m.group(0)), text)
    # words at the odd indices of the split (one C call), then a dict lookup per word
    parts = _WORDISH_SPLIT_RE.split(text)
    parts[1::2] = [one(w) for w in parts[1::2]]
    return "".join(parts)


# -- stopwords of the scripts the hand list above does not cover -----------------------------
# Question and function words of a query weigh in the evidence gate as words the vault lacks when
# its notes never ask questions ("ماذا", "متى": XQuAD-ar abstained on 16% of answerable questions
# with them). Document frequency cannot tell an absent question word from an absent content word,
# so these come from a maintained list (stopwords-iso, MIT, the `stopwordsiso` package), for a
# script that (nearly) one language writes; read on first need, only that language's entry.
STOP_SCRIPT_LANGS = {"arabic": "ar", "greek": "el", "hindi": "hi", "armenian": "hy"}
_SCRIPT_STOPWORDS: dict[str, frozenset[str]] = {}


def _iso_stopwords(code: str) -> list[str]:
    """One language's list from the stopwordsiso package's JSON, parsed alone (the whole file
    takes 25+ ms to load; one entry well under 1 ms). [] when the package is missing."""
    import importlib.util
    import json
    from pathlib import Path

    spec = importlib.util.find_spec("stopwordsiso")
    if spec is None or not spec.submodule_search_locations:
        return []
    raw = (Path(list(spec.submodule_search_locations)[0]) / "stopwords-iso.json").read_text(encoding="utf-8")
    at = raw.find(f'"{code}":[')
    if at < 0:
        return []
    words_, _ = json.JSONDecoder().raw_decode(raw, at + len(code) + 3)
    return [w for w in words_ if isinstance(w, str)]


def script_stopwords(lang: str) -> frozenset[str]:
    """Stopwords of a stemmed script's language, folded and stemmed as query words are."""
    got = _SCRIPT_STOPWORDS.get(lang)
    if got is None:
        code = STOP_SCRIPT_LANGS.get(lang)
        raw = _iso_stopwords(code) if code else []
        got = _SCRIPT_STOPWORDS[lang] = frozenset(
            _stem(fold(w).lower().replace("\u03c2", "\u03c3")) for w in raw if w.strip())
    return got


def is_stopword(token: str) -> bool:
    """A word that names no topic: in the hand list, or in its script's list (`words` form)."""
    if token in STOPWORDS:
        return True
    lang = stem_language(token) if token and _STEM_RE.match(token) else None
    return lang is not None and token in script_stopwords(lang)


def normalize(text: str) -> str:
    """`fold` + casefold, hamza forms of alef as bare alef: the form every comparison (metadata
    keys, term matching) uses."""
    text = fold(text).casefold()
    return text if text.isascii() else text.translate(_ALEF_FOLD)


def _spaced(run: str) -> str:
    return " " + " ".join(run) + " "


def fts_text(text: str, *, stem: bool = True, lang: str | None = None) -> str:
    """The form of `text` stored in FTS5: folded, words of a stemmed script stemmed, every CJK
    character and every cluster of a spaceless script a separate token. A query term (already
    made by `query_terms`, so stemmed) passes with stem=False: stems are not stemmed twice.
    `lang`: the note's Snowball language (notelang), for its Latin and Cyrillic words."""
    if text.isascii():
        if lang and stem:
            from .notelang import note_stem_text

            return note_stem_text(text, lang)
        return text
    text = fold(text)
    if stem and _STEM_RE.search(text):
        text = _stem_text(text)
    if stem and lang:
        from .notelang import note_stem_text

        text = note_stem_text(text, lang)
    if CJK_RE.search(text):
        text = _CJK_RUN_RE.sub(lambda m: _spaced(m.group(0)), text)
    if SEG_RE.search(text):
        text = _SEG_RUN_RE.sub(lambda m: " " + " ".join(clusters(m.group(0))) + " ", text)
    return text


def words(text: str) -> list[str]:
    """Word tokens folded as the index folds them (`fold`, then lower() as FTS5's unicode61 does:
    casefold() would turn "ß" into "ss", which the index never contains); a CJK or spaceless-script
    run comes back as one token."""
    if text.isascii():
        return _TOKEN_RE_ASCII.findall(text.lower())
    low = fold(text).lower()
    toks = _tokens(low.replace("\u03c2", "\u03c3") if "\u03c2" in low else low)
    return [_stem(t) for t in toks] if _STEM_RE.search(low) else toks


def is_run(token: str) -> bool:
    """A CJK or spaceless-script run (from `words`): searched as gram phrases, not as a word."""
    return not token.isascii() and bool(CJK_RE.match(token) or SEG_RE.match(token))


def gram_units(term: str) -> list[str]:
    """The units (characters, clusters) of a gram term ("中 国", "ค ะ แ"); [] for a word."""
    return term.split(" ") if is_run(term) else []


def _seg_grams(run: str) -> list[str]:
    """A spaceless-script run as SEG_GRAM-cluster phrases (a shorter run stays whole)."""
    cl = clusters(run)
    n = SEG_GRAM
    return [" ".join(cl[i:i + n]) for i in range(max(1, len(cl) - n + 1))]


def _cjk_grams(run: str) -> list[str]:
    """A CJK run as 2-character grams (a lone character stays one), cut at question words first:
    a 1-character piece a cut leaves is dropped, and a run of question words only is kept whole
    so the query is not empty."""
    pieces = _CJK_QUESTION_RE.split(run)
    if len(pieces) == 1:  # no question word
        parts = [run]
    elif any(pieces):
        parts = [p for p in pieces if len(p) > 1]
    else:
        parts = [run]
    return [p[i : i + 2] if len(p) > 1 else p for p in parts for i in range(max(1, len(p) - 1))]


def spaceless_runs(text: str) -> list[tuple[str, ...]]:
    """The grapheme clusters of each spaceless-script run of `text` (Thai...), in query form (as
    `query_terms` makes its grams): what the evidence gate checks for adjacency. [] for ASCII."""
    if text.isascii() or not SEG_RE.search(text):
        return []
    return [tuple(clusters(tok)) for tok in words(text) if SEG_RE.match(tok)]


def query_terms(text: str) -> list[str]:
    """Search terms of free user text, in order, deduplicated, stopwords dropped.

    A term is a word, or for CJK a 2-character phrase ("中 国") or a lone character. If every word
    is a stopword (e.g. the query "who are you"), the stopwords are kept so the query is not empty.
    """
    out: list[str] = []
    seen: set[str] = set()
    kept_any = False
    fallback: list[str] = []
    for tok in words(text):
        if SEG_RE.match(tok):
            for term in _seg_grams(tok):
                if term not in seen:
                    seen.add(term)
                    out.append(term)
                    kept_any = True
            continue
        if CJK_RE.match(tok):
            grams = _cjk_grams(tok)
            for g in grams:
                if all(ch in CJK_STOP_CHARS for ch in g):
                    continue
                term = " ".join(g)
                if term not in seen:
                    seen.add(term)
                    out.append(term)
                    kept_any = True
            continue
        if is_stopword(tok) or (len(tok) == 1 and not tok.isdigit()):
            fallback.append(tok)
            continue
        if tok not in seen:
            seen.add(tok)
            out.append(tok)
            kept_any = True
    if not kept_any:
        for tok in fallback:
            if tok not in seen:
                seen.add(tok)
                out.append(tok)
    return out


# Inflected languages: FTS5's porter stemmer only knows English, so "столицы" never matches
# "столица" and "größten" never matches "größte". For a word outside ASCII we search its leading
# part as an FTS5 prefix query instead (truncation stemming). Measured with benchmarks/eval.py,
# BM25 alone, nDCG@10: xquad-ru 0.875 -> 0.957, de 0.930 -> 0.935, es 0.958 -> 0.960, English
# sets unchanged; truncating ASCII words as well hurt English (scifact 0.687 -> 0.641), where
# porter already stems.
PREFIX_MIN_CHARS = 5  # shorter words are searched whole
PREFIX_KEEP = 0.7  # share of the word kept, at least 4 characters


def word_prefix(term: str, *, stems: bool = False) -> str | None:
    """The truncated form searched for an inflectable word, or None to search it whole. A stem
    (a word of a stemmed script) is searched whole by BM25; with `stems` its prefix is returned
    too, the looser form the evidence gate accepts (channels.build_fts_query), as for ASCII."""
    if " " in term or len(term) < PREFIX_MIN_CHARS or (
            not term.isascii() and (CJK_RE.search(term) or SEG_RE.search(term))):
        return None
    if not stems and stem_language(term):
        return None
    return term[: max(4, math.ceil(len(term) * PREFIX_KEEP))]


_NON_WORD_RE = _LazyPattern(r"[\W_]+", re.UNICODE)


def meta_key(text: str) -> str:
    """Key for exact / near-exact name matching: normalised, punctuation and case folded away.

    'Use `vaultrag`: Quick-Start!' and 'use vaultrag quick start' give the same key.
    """
    return " ".join(_NON_WORD_RE.sub(" ", normalize(text)).split())


# Embeds of files that are not notes (`![[diagram.webp]]`, `![[paper.pdf#page=3]]`,
# `![alt](img/shot.png)`): in a context block they are file names, not content.
_ASSET_EMBED_RE = _LazyPattern(
    r"!\[\[[^\]|#\n]+\.(?!md\b)[A-Za-z0-9]{1,5}(?:[#|][^\]\n]*)?\]\]"
    r"|!\[[^\]\n]*\]\(\s*<?[^)\s>]+\.(?!md\b)[A-Za-z0-9]{1,5}>?(?:\s+\"[^\"\n]*\")?\s*\)")


def strip_asset_embeds(text: str) -> str:
    """`text` without asset embeds; a line left empty by it goes too."""
    if "![" not in text:
        return text
    out = []
    for line in text.split("\n"):
        new = _ASSET_EMBED_RE.sub("", line)
        if new == line or new.strip():
            out.append(new.rstrip() if new != line else line)
    return "\n".join(out)

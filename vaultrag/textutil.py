"""Text normalisation shared by the index, the query path and the compressor. Standard library only.

Why CJK is special: SQLite FTS5's unicode61 tokenizer treats a run of Chinese, Japanese or Korean
characters as one token, so a question never matches a sentence (XQuAD-zh nDCG@10 0.114). We index
each CJK character as its own token (`fts_text`) and query runs as 2-character phrases
(`query_terms`), which keeps word order without a dictionary segmenter.
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

# Hiragana/Katakana, CJK Unified (+ext A, compat), Hangul syllables and jamo, CJK ext B+ planes.
_CJK_CLASS = (
    "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002ffff"
)
CJK_RE = _LazyPattern(f"[{_CJK_CLASS}]")
_CJK_RUN_RE = _LazyPattern(f"[{_CJK_CLASS}]+")
# A word: letters/digits/underscore runs that are not CJK; CJK runs separately.
_TOKEN_RE = _LazyPattern(f"[{_CJK_CLASS}]+|[^\\W{_CJK_CLASS}]+", re.UNICODE)

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


def normalize(text: str) -> str:
    """NFKC + casefold: the form every comparison (metadata keys, term matching) uses."""
    return unicodedata.normalize("NFKC", text).casefold()


def fts_text(text: str) -> str:
    """The form of `text` stored in FTS5: every CJK character becomes a separate token."""
    if not CJK_RE.search(text):
        return text
    return _CJK_RUN_RE.sub(lambda m: " " + " ".join(m.group(0)) + " ", text)


def words(text: str) -> list[str]:
    """Word tokens folded as FTS5's unicode61 folds them (NFKC + lower(): casefold() would turn
    "ß" into "ss", which the index never contains); a CJK run comes back as one token."""
    return _TOKEN_RE.findall(unicodedata.normalize("NFKC", text).lower())


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
        if tok in STOPWORDS or (len(tok) == 1 and not tok.isdigit()):
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


def word_prefix(term: str) -> str | None:
    """The truncated form searched for an inflectable word, or None to search it whole."""
    if " " in term or len(term) < PREFIX_MIN_CHARS or CJK_RE.search(term):
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

"""Language copies of one note: `pages/common/mpd.md`, `pages.es/common/mpd.md` and
`pages.ko/common/mpd.md` in tldr-pages, `en/Sync.md` and `de/Sync.md` in a documentation vault.

A block that cites three translations of one page spends its budget on one answer (trial9). Notes
are copies of each other when their paths are equal once each folder's language tag is taken away:
a folder that is a language code (`de`, `pt_BR`, `zh-Hans`) or ends in one after `.`, `_` or `-`
(`pages.es`, `docs-fr`). Of a note's copies among the candidates, one is kept, in the place of the
best-ranked: the one written in the prompt's language, judged by how many of the prompt's words,
function words included, its text holds (a language-neutral test: an English prompt shares "how",
"the", "with" with the English copy, a Chinese one its characters with the Chinese copy); on a tie
the copy in an untagged folder (the vault's own language: tldr's `pages/`), then the best-ranked. Standard library only.
"""
from __future__ import annotations

import re
from functools import lru_cache

from ..textutil import fold, query_terms, words

# ISO 639-1: the two-letter codes a language folder is named with (a region or script may follow).
ISO_639_1 = frozenset("""
aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz ee
el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik io is
it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms
mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg sh si
sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh
yi yo za zh zu
""".split())
_TAGGED_RE = re.compile(r"^(?:(?P<base>.*?)[._-])?(?P<lang>[a-z]{2})(?:[_-][A-Za-z]{2,4})?$")


def _untagged(folder: str) -> str:
    """`folder` without its language tag ("pages.es" -> "pages", "de" -> ""); others unchanged."""
    m = _TAGGED_RE.match(folder)
    if m is None or m.group("lang") not in ISO_639_1:
        return folder
    return m.group("base") or ""


def copy_key(path: str) -> tuple[str, ...]:
    """What a note's language copies have in common: its path with every folder's language tag
    removed (the file name stays as it is: translated file names are other notes)."""
    parts = path.replace("\\", "/").split("/")
    return tuple(_untagged(p) for p in parts[:-1]) + (parts[-1].lower(),)


# Characters of a copy's text read (a chunk's worth). Its opening alone is too little: tldr's
# English cmus page holds "pause/unpause current song" only in its examples, and the Portuguese
# copy's opening held more of the prompt's words ("do": of the) than the English one's.
COPY_TEXT_CHARS = 4000
_SPLIT_RE = re.compile(r"[\W_]+")


@lru_cache(maxsize=64)
def _terms(text: str) -> frozenset[str]:
    """The prompt's words with their function words ("how", "the", "de": what says the language of
    a short prompt best), and the grams of its CJK runs, unspaced ("列出")."""
    return frozenset(words(text)) | {t.replace(" ", "") for t in query_terms(text)}


@lru_cache(maxsize=256)  # a search judges the same copies twice (its ranking, the evidence's lead)
def _held(terms: frozenset[str], text: str) -> int:
    """How many of `terms` `text` holds: words whole, CJK grams anywhere (one regex split, not
    the tokenizer: tokenizing every copy cost the tldr hook a third of its search time)."""
    low = fold(text[:COPY_TEXT_CHARS]).lower()
    toks = set(_SPLIT_RE.split(low))
    return sum(t in toks or (not t.isascii() and t in low) for t in terms)


def _tagged(path: str) -> bool:
    return copy_key(path)[:-1] != tuple(path.replace("\\", "/").split("/")[:-1])


def preferred_copies(query: str, order: list[tuple[int, str, str]]) -> dict[int, int]:
    """file id -> the file id of the copy kept in its place, for the notes of `order` ((file id,
    path, its best chunk's text), best-ranked first) that have copies among them. Notes without a
    copy are absent."""
    groups: dict[tuple[str, ...], list[tuple[int, str, str]]] = {}
    for fid, path, text in order:
        groups.setdefault(copy_key(path), []).append((fid, path, text))
    out: dict[int, int] = {}
    terms = None
    for members in groups.values():
        if len(members) < 2:
            continue
        if terms is None:
            terms = _terms(query)
        best = max(range(len(members)), key=lambda i: (_held(terms, members[i][2]), not _tagged(members[i][1]), -i))
        for fid, _, _ in members:
            out[fid] = members[best][0]
    return out

"""retrieve/proximity: the specificity of a chunk's match counted where the prompt's words stand
together (trial finding: 'home' and 'Wi-Fi' seventy words apart in an Android help section)."""
from __future__ import annotations

import math

from vaultrag.retrieve.proximity import NEAR_WINDOW, near_specificity, positions
from vaultrag.store import StoredChunk, Term


def chunk(text: str, title: str = "Note", heading: str = "", context: str = "") -> StoredChunk:
    return StoredChunk(id=1, file_id=1, path="n.md", title=title, file_hash="h", mtime_ns=0, size=len(text),
                       section_index=0, chunk_index=0, heading_path=heading, context=context, text=text,
                       line_start=1, line_end=1, content_hash="c", tokens=0, block_ids="")


FILLER = " ".join(f"word{i}" for i in range(NEAR_WINDOW + 10))
N = 1000
W = math.log(N / 1)  # a term in one chunk of N


def test_positions_of_words_prefixes_alternatives_and_phrases():
    toks = "works on your home screen and lock screen toggles like wi fi and bluetooth".split()
    assert positions(Term("home"), toks) == [3]
    assert positions(Term("screen"), toks) == [4, 7]
    assert positions(Term("bluetoo", prefix=True), toks) == [13]
    assert positions(Term("wifi", alternatives=("wi fi",)), toks) == [10]  # the compound's other writing
    assert positions(Term("screens"), toks) == [4, 7]  # the gate's looser prefix: "scree" for "screens"
    assert positions(Term("password"), toks) == []


def test_words_far_apart_count_one_at_a_time():
    far = chunk(f"Works on your Home Screen. {FILLER} Toggles like Wi-Fi.")
    near = chunk("Your home Wi-Fi network and its password.")
    held = [(Term("home"), math.log(N / 14)), (Term("wifi", alternatives=("wi fi",)), W)]
    whole = sum(w for _, w in held) - math.log(N)
    assert near_specificity(near, held, N) == round(whole, 3)
    assert near_specificity(far, held, N) == 0.0  # the rarer one alone: ln(N/1) - ln N


def test_title_heading_and_context_words_count_in_every_window():
    text = f"Home is where you start. {FILLER} Toggles like Wi-Fi."
    held = [(Term("home"), 2.0), (Term("wifi", alternatives=("wi fi",)), W)]
    assert near_specificity(chunk(text), held, N) == 0.0
    assert near_specificity(chunk(text, heading="Home"), held, N) == round(2.0 + W - math.log(N), 3)
    assert near_specificity(chunk(text, title="Home screen"), held, N) == round(2.0 + W - math.log(N), 3)
    assert near_specificity(chunk(text, context="Home | guide"), held, N) == round(2.0 + W - math.log(N), 3)


def test_a_term_it_cannot_locate_counts_everywhere_and_one_term_says_nothing():
    text = f"alpha {FILLER} beta"
    held = [(Term("alpha"), 3.0), (Term("beta"), 3.0), (Term("zzz"), 1.5)]  # zzz: not among the words
    assert near_specificity(chunk(text), held, N) == round(max(0.0, 3.0 + 1.5 - math.log(N)), 3)
    assert near_specificity(chunk(text), held[:1], N) is None
    assert near_specificity(None, held, N) is None


def test_stemmed_and_non_ascii_words():
    text = "Пароль от роутера: смотри наклейку. " + FILLER + " Домашний роутер."
    held = [(Term("парол"), 4.0), (Term("роутер"), 4.0)]  # stems as the query's are
    assert near_specificity(chunk(text), held, N) == round(8.0 - math.log(N), 3)
    assert near_specificity(chunk("Straße und Café " + FILLER + " cafe"), [(Term("straße"), 4.0), (Term("café"), 4.0)],
                            N) == round(8.0 - math.log(N), 3)

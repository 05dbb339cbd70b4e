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


def test_the_parts_of_a_hyphenated_word_count_once():
    from vaultrag.retrieve.channels import build_fts_query, hyphenated_words
    from vaultrag.retrieve.proximity import one_word_each

    assert hyphenated_words("what is my home Wi-Fi password") == (("wi", "fi"),)
    assert hyphenated_words("real-time e-mail, sign-in") == (("real", "time"),)  # 'e', 'in': no terms
    assert hyphenated_words("WLAN-Router") == (("wlan", "router"),)
    assert hyphenated_words("no hyphen here") == () and hyphenated_words("a - b") == ()
    fq = build_fts_query("what is my home Wi-Fi password")
    held = [(Term("home"), 2.0), (Term("wi"), W), (Term("fi"), W)]
    merged = one_word_each(held, fq)
    assert [tuple((t.text, w) for t, w in e) for e in merged] == [(("home", 2.0),), (("wi", W), ("fi", W))]
    text = f"Works on your Home Screen. {FILLER} Toggles like Wi-Fi."
    assert near_specificity(chunk(text), held, N) == round(2 * W - math.log(N), 3)  # counted apart: ln N of evidence
    assert near_specificity(chunk(text), merged, N) == 0.0  # one word: the rarer part alone


def test_a_hyphenated_word_is_in_every_window_only_when_the_label_holds_all_of_it():
    text = f"Make a table of it. {FILLER} Then create the rows. {FILLER} release notes"
    held = [((Term("create"), 5.0), (Term("table"), 1.5)), ((Term("release"), 4.0),)]
    # 'table' in the heading alone does not put the rarer 'create' in every window
    assert near_specificity(chunk(text, heading="Table"), held, N) == round(max(0.0, 5.0 - math.log(N)), 3)
    assert near_specificity(chunk(text, heading="Create table"), held, N) == round(9.0 - math.log(N), 3)


def test_a_hyphenated_word_weighs_its_rarest_part_only_where_written_together():
    held = [((Term("create"), 5.0), (Term("table"), 1.5)), ((Term("release"), 4.0),)]
    apart = f"create {FILLER} the table and release notes"
    together = f"create {FILLER} run create-table before the release"
    assert near_specificity(chunk(apart), held, N) == round(max(0.0, 1.5 + 4.0 - math.log(N)), 3)  # 'table' alone: its own weight
    assert near_specificity(chunk(together), held, N) == round(5.0 + 4.0 - math.log(N), 3)

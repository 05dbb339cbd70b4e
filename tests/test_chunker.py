"""Tests for vaultrag.chunker: unit tests for each rule, and hypothesis properties over generated notes."""
from __future__ import annotations

import hashlib
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vaultrag.chunker import ChunkSettings, chunk_document
from vaultrag.markdown import parse


def md(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def chunks_of(text: str, path: str = "n.md", **kw):
    return chunk_document(parse(text, path), ChunkSettings(**kw))


def test_small_note_sections_heading_paths_and_context():
    text = md("""
        ---
        title: Demo
        tags: [x, a/b]
        type: howto
        ---
        # Demo
        Intro paragraph long enough to be a chunk.

        ## Install
        Run the installer, then check it.

        ### On Linux
        apt-get install demo works here.
        """)
    cs = chunks_of(text)
    assert [(c.section_index, c.chunk_index, c.heading_path, c.line_start, c.line_end) for c in cs] == [
        (0, 0, (), 6, 7), (1, 0, ("Install",), 9, 13)]
    assert cs[0].text == "# Demo\nIntro paragraph long enough to be a chunk."
    assert cs[1].context == "Demo | howto | #x #a/b"
    assert cs[1].content_hash == hashlib.sha256(cs[1].text.encode()).hexdigest()[:16]
    assert cs[1].search_text == cs[1].text and cs[1].path == "n.md"


def test_oversize_section_splits_at_h3_with_paths():
    body = "word " * 30
    text = f"# T\n\n## Install\nIntro {body}\n\n### On Linux\n{body}\n\n### On Mac\n{body}\n"
    cs = chunks_of(text, max_chars=200)
    assert [c.heading_path for c in cs] == [("Install",), ("Install", "On Linux"), ("Install", "On Mac")]
    assert [c.chunk_index for c in cs] == [0, 1, 2]
    assert cs[1].text.startswith("### On Linux\n")


def test_skipped_sections_consume_an_index_and_match_loosely():
    text = "# T\nlead text that is long enough\n## See also:\n- [[A]]\n## **References**\n- x\n## Body\nreal body text here\n"
    cs = chunks_of(text)
    assert [(c.section_index, c.heading_path) for c in cs] == [(0, ()), (3, ("Body",))]
    cs = chunks_of(text, skip_sections=())
    assert [c.section_index for c in cs] == [0, 1, 2, 3]


def test_all_sections_skipped_falls_back_to_everything():
    cs = chunks_of("# Title\n## Links\n- [[A]]\n- [[B]]\n")
    assert [c.section_index for c in cs] == [0, 1]
    assert "[[A]]" in cs[1].text


def test_title_only_lead_is_dropped_but_kept_when_alone():
    cs = chunks_of("# Title\n\n## Part\nSome body text for the part.\n")
    assert [c.section_index for c in cs] == [1]
    cs = chunks_of("# Title\n")
    assert [(c.text, c.line_start) for c in cs] == [("# Title", 1)]


def test_h1_sections_when_h1_is_not_the_title():
    cs = chunks_of("---\ntitle: Other\n---\n# Alpha\naaa aaa aaa\n# Beta\nbbb bbb bbb\n## Sub\nccc\n")
    assert [(c.section_index, c.heading_path) for c in cs] == [(1, ("Alpha",)), (2, ("Beta",)),
                                                               (3, ("Beta", "Sub"))]


def test_tiny_pieces_merge_within_section_and_tiny_section_is_kept():
    para = "Sentence number one is here. " * 5
    text = f"## A\n{para}\n\n## B\nok\n"
    cs = chunks_of(text, max_chars=100)
    assert cs[0].text.startswith("## A\nSentence")  # the heading line merged forward
    assert all(len(c.text) >= 30 for c in cs if c.section_index == 1)
    assert cs[-1].text == "## B\nok" and cs[-1].section_index == 2


def test_frontmatter_only_note_and_empty_notes():
    cs = chunks_of("---\nemail: a@b.c\nrole: lead\n---\n")
    assert [(c.text, c.line_start, c.line_end) for c in cs] == [("email: a@b.c\nrole: lead", 2, 3)]
    assert chunks_of("") == [] and chunks_of("\n\n  \n") == [] and chunks_of("---\n---\n") == []
    assert [c.text for c in chunks_of("---\ntitle: x\n---\nok\n")] == ["ok"]  # below min, still a chunk


def test_sentence_split_latin_and_cjk():
    para = "First sentence here. Second one! Third one? " * 4
    cs = chunks_of(f"## S\n{para}\n", max_chars=60, min_chars=0)
    assert all(len(c.text) <= 60 for c in cs)
    assert all(c.text.rstrip().endswith((".", "!", "?")) for c in cs[1:])
    cjk = "这是第一句话。这是第二句话！这是第三句话？" * 6
    cs = chunks_of(f"## S\n{cjk}\n", max_chars=40, min_chars=0)
    assert all(len(c.text) <= 40 for c in cs)
    assert all(c.text.endswith(("。", "！", "？")) for c in cs[1:])
    assert "".join(c.text for c in cs[1:]) + "" in cjk * 2


def test_word_and_hard_split():
    words = " ".join(["alpha"] * 50)
    cs = chunks_of(f"## W\n{words}\n", max_chars=40, min_chars=0)
    assert all(len(c.text) <= 40 for c in cs) and all(not c.text.endswith(" ") for c in cs)
    blob = "QUJD" * 300
    cs = chunks_of(f"## B\n{blob}\n", max_chars=100, min_chars=0)
    assert all(len(c.text) <= 100 for c in cs)
    assert "".join(c.text for c in cs[1:]) == blob


def test_long_list_splits_per_item():
    items = "\n".join(f"- item number {i} without a full stop" for i in range(20))
    cs = chunks_of(f"## L\n{items}\n", max_chars=120, min_chars=0)
    assert all(c.text.startswith(("- ", "## L")) for c in cs)
    assert all(c.text == "\n".join(c.text.splitlines()) for c in cs)


def test_fence_is_not_split_when_it_fits_and_split_at_lines_when_not():
    code = "\n".join(f"x = {i}  # line" for i in range(8))
    text = f"## C\nIntro words before code.\n\n```python\n{code}\n```\n\nAfter the code.\n"
    for max_chars in (150, 200, 500):
        cs = chunks_of(text, max_chars=max_chars, min_chars=0)
        assert sum("```python" in c.text for c in cs) == 1
        assert any(f"```python\n{code}\n```" in c.text for c in cs)
    cs = chunks_of(text, max_chars=40, min_chars=0)
    inside = [c for c in cs if "x = " in c.text]
    assert len(inside) > 1
    lines = text.split("\n")
    for c in inside:  # cut at line boundaries only
        assert c.text == "\n".join(lines[c.line_start - 1:c.line_end])


def test_json_and_yaml_fences_get_key_paths():
    text = md("""
        ## Config
        ```json
        {"review": {"threshold": 3, "on": true}, "steps": [{"name": "lint"}], "top": 1}
        ```
        ```yaml
        review:
          threshold: 4
        ```
        ```json
        {not json
        ```
        """)
    (c,) = chunks_of(text)
    extra = c.search_text[len(c.text):].split("\n")
    assert c.search_text.startswith(c.text)
    assert [e for e in extra if e] == ["review.threshold: 3", "review.on: true", "steps[0].name: lint",
                                       "review.threshold: 4"]


def test_block_ids_per_chunk():
    text = "## A\nFirst para long enough here ^one\n\n## B\nSecond para long enough too ^two\n"
    cs = chunks_of(text)
    assert [c.block_ids for c in cs] == [("^one",), ("^two",)]


def test_overlap_prefixes_previous_words_and_covers_lines():
    para = " ".join(f"w{i}" for i in range(60))
    cs0 = chunks_of(f"## O\n{para}\n", max_chars=60, min_chars=0)
    cs = chunks_of(f"## O\n{para}\n", max_chars=60, min_chars=0, overlap_chars=12)
    assert len(cs) == len(cs0)
    for prev, c, own in zip(cs, cs[1:], cs0[1:]):
        assert c.text.endswith(own.text) and len(c.text) - len(own.text) <= 12
        head = c.text[: len(c.text) - len(own.text)].strip()
        assert head and prev.text.endswith(head)  # starts at a word boundary of the previous chunk
        assert c.heading_path == own.heading_path
    assert cs[0].text == cs0[0].text


def test_settings_are_validated():
    with pytest.raises(ValueError):
        ChunkSettings(max_chars=0)
    with pytest.raises(ValueError):
        ChunkSettings(overlap_chars=-1)


def test_chunker_survives_lone_surrogates_and_nul():
    cs = chunks_of("## \ud800 head\nbody \udfff text\x00 more text here\n")
    assert cs and cs[0].content_hash


def test_chunker_does_not_import_yaml_at_module_import():
    import subprocess
    import sys

    code = "import sys, vaultrag.chunker; assert 'yaml' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# -- properties ----------------------------------------------------------------------------------
WORDS = st.sampled_from(["alpha", "beta", "Gamma.", "delta!", "eps?", "中文。", "текст", "x", "#tag", "[[L]]",
                         "QUJDRA" * 12, "end.", "    ", "`code`", "^id1"])
LINE = st.lists(WORDS, min_size=1, max_size=14).map(" ".join)
HEADING = st.tuples(st.integers(1, 4), st.sampled_from(["Intro", "See also", "Links", "Setup", "Notes", "T"])
                    ).map(lambda t: "#" * t[0] + " " + t[1])
FENCE = st.tuples(st.sampled_from(["```", "~~~", "```json", "```yaml"]), st.lists(LINE | st.just(""), max_size=6),
                  st.booleans()).map(lambda t: [t[0], *t[1]] + ([t[0][:3]] if t[2] else []))
BLOCK = st.one_of(LINE.map(lambda s: [s]), HEADING.map(lambda s: [s]), st.just([""]), st.just(["", ""]), FENCE,
                  st.lists(LINE.map(lambda s: "- " + s), min_size=1, max_size=5),
                  st.just(['```json', '{"a": {"b": [1, {"c": "d"}]}}', '```']))
FRONT = st.sampled_from([[], ["---", "title: T", "tags: [x]", "---"], ["---", "bad: [", "---"], ["---", "k: v"]])
NOTE = st.tuples(FRONT, st.lists(BLOCK, max_size=25)).map(lambda t: "\n".join(t[0] + [ln for b in t[1] for ln in b]))
SETTINGS = st.builds(lambda mx, mn, ov: ChunkSettings(min_chars=mn, max_chars=mx, overlap_chars=ov),
                     st.integers(8, 400), st.integers(0, 40), st.sampled_from([0, 0, 5, 30]))
PROP = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def locate(doc, cs, overlap0=True):
    """Absolute (start, end) of each chunk's own text in the file, checked against its line range."""
    full = "\n".join(doc.lines)
    starts = [0]
    for line in doc.lines:
        starts.append(starts[-1] + len(line) + 1)
    spans = [(0, 0)]
    for c in cs:
        joined = "\n".join(doc.lines[c.line_start - 1:c.line_end])
        assert 1 <= c.line_start <= c.line_end <= len(doc.lines)
        assert c.text in joined and c.text.strip()
        first, last = c.text.split("\n")[0], c.text.split("\n")[-1]
        assert first in doc.lines[c.line_start - 1] and last in doc.lines[c.line_end - 1]
        prev = spans[-1][1] if overlap0 else spans[-1][0]
        pos = full.find(c.text, max(starts[c.line_start - 1], prev))
        assert starts[c.line_start - 1] <= pos < starts[c.line_start]
        assert starts[c.line_end - 1] < pos + len(c.text) <= starts[c.line_end] - 1
        spans.append((pos, pos + len(c.text)))
    return full, spans[1:]


@PROP
@given(NOTE, SETTINGS)
def test_property_sizes_lines_order_and_determinism(text, cfg):
    doc = parse(text, "p.md")
    cs = chunk_document(doc, cfg)
    assert cs == chunk_document(parse(text, "p.md"), cfg)
    for c in cs:
        assert len(c.text) <= cfg.max_chars + cfg.min_chars + cfg.overlap_chars
    full, spans = locate(doc, cs, cfg.overlap_chars == 0)
    keys = [(c.section_index, c.chunk_index) for c in cs]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    for (si, ci), (sj, cj) in zip(keys, keys[1:]):
        assert (sj == si and cj == ci + 1) or (sj > si and cj == 0)
    if cfg.overlap_chars == 0:
        for (_, e), (s, _) in zip(spans, spans[1:]):
            assert e <= s  # in order, no overlap
        for a, b in zip(cs, cs[1:]):
            assert a.line_end <= b.line_start


@PROP
@given(NOTE, SETTINGS)
def test_property_no_text_lost_without_skips(text, cfg):
    cfg = ChunkSettings(cfg.min_chars, cfg.max_chars, 0, skip_sections=())
    doc = parse(text, "p.md")
    cs = chunk_document(doc, cfg)
    full, spans = locate(doc, cs)
    covered = bytearray(len(full))
    for s, e in spans:
        covered[s:e] = b"\x01" * (e - s)
    has_body = any(line.strip() for line in doc.lines[doc.body_start - 1:])
    # a body's lines; for a note with no body text, the frontmatter lines inside the '---'
    check = range(doc.body_start, len(doc.lines) + 1) if has_body else range(2, doc.body_start - 1)
    title_h1 = {h.line for h in doc.headings if h.level == 1 and h.text == doc.title}
    starts = [0]
    for line in doc.lines:
        starts.append(starts[-1] + len(line) + 1)
    for no in check:
        line = doc.lines[no - 1]
        if no in title_h1 and not any(c.line_start <= no <= c.line_end for c in cs):
            assert cs  # a title-only lead is dropped only when the note has other chunks
            continue
        for k, ch in enumerate(line):
            if not ch.isspace():
                assert covered[starts[no - 1] + k], (no, line)
    if any(line.strip() for line in doc.lines):
        assert cs  # every note with content has a chunk


@PROP
@given(NOTE, SETTINGS)
def test_property_fences_that_fit_are_never_split(text, cfg):
    doc = parse(text, "p.md")
    cs = chunk_document(doc, cfg)
    for f in doc.fences:
        fence_text = "\n".join(doc.lines[f.start - 1:f.end])
        if not f.closed or len(fence_text) > cfg.max_chars:
            continue
        touching = [c for c in cs if c.line_start <= f.end and f.start <= c.line_end]
        if not touching:
            continue  # in a skipped section
        whole = [c for c in touching if c.line_start <= f.start and f.end <= c.line_end and fence_text in c.text]
        assert whole
        if cfg.overlap_chars == 0:
            assert touching == whole[:1]


@PROP
@given(NOTE)
def test_property_skipped_sections_are_not_indexed(text):
    doc = parse(text, "p.md")
    cs = chunk_document(doc)
    if not cs or all(c.section_index == 0 for c in cs):
        return
    skipped = {"see also", "links"}
    first_h1_or_h2 = next((h for h in doc.headings if h.level <= 2), None)
    title_line = first_h1_or_h2.line if first_h1_or_h2 and first_h1_or_h2.level == 1 and \
        first_h1_or_h2.text == doc.title else None
    starts = [h for h in doc.headings if h.level <= 2 and h.line != title_line]
    indexed = {c.section_index for c in cs}
    bad = {i + 1 for i, h in enumerate(starts) if h.text.casefold() in skipped}
    if indexed - bad - {0}:  # not the everything-skipped fallback
        assert not (indexed & bad)


@PROP
@given(st.lists(st.sampled_from(["---", "```", "~~~", "## H", "### S", "[[A|b]]", "#t", "title: x", "\r", "\t-",
                                 "。", ". ", "", " ", "\x00", "\u2028", "x" * 50, "# T"]), max_size=40),
       st.text(max_size=200), SETTINGS)
def test_property_arbitrary_text_keeps_line_invariants(parts, noise, cfg):
    doc = parse("\n".join(parts) + noise, "p.md")
    cs = chunk_document(doc, cfg)
    locate(doc, cs, cfg.overlap_chars == 0)
    assert all(len(c.text) <= cfg.max_chars + cfg.min_chars + cfg.overlap_chars for c in cs)


def test_big_note_is_fast():
    import time

    para = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 20
    text = "\n\n".join(f"## S{i}\n{para}\n\n### Sub\n{para}\n```json\n{{\"a\": {{\"b\": {i}}}}}\n```" for i in range(300))
    text += "\n" + "word " * 200_000 + "\n" + "Q" * 300_000
    t0 = time.perf_counter()
    doc = parse(text, "big.md")
    cs = chunk_document(doc)
    assert time.perf_counter() - t0 < 10
    assert all(len(c.text) <= 2030 for c in cs) and len(cs) > 600

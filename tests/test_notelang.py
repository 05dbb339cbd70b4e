"""Issue 20, second round: a note's language (frontmatter or stopword votes) picks the Snowball
stemmer of its Latin/Cyrillic words; queries search each word OR its stems in the vault's languages."""
from __future__ import annotations

import pytest

from conftest import write_notes
from vaultrag import notelang
from vaultrag.errors import IndexCorrupt
from vaultrag.indexer import reindex
from vaultrag.retrieve import search
from vaultrag.store import Store
from vaultrag.notelang import note_stems
from vaultrag.textutil import NOTE_LANGS_META, fts_text

TURKISH = ("Bu hafta kütüphaneden üç kitap aldım ve hepsini evde okudum. Kitaplarımızdan biri tarih "
           "hakkında, diğeri de bir roman. Her akşam biraz okuyorum, çünkü bu benim için çok önemli.")
GERMAN = ("Die Stadt hat im Sommer viele Besucher, und die meisten kommen wegen der alten Häuser. "
          "Wir haben uns die größten Gebäude angesehen, aber das Museum war leider geschlossen.")
ENGLISH = ("The backup plan keeps thirty days of snapshots offsite, and the restore drill runs "
           "every month so that we know the copies are good when we need them.")
TR_NOTE = "---\nlang: tr\n---\n" + TURKISH
VIETNAMESE = ("Hôm nay tôi đã đọc một cuốn sách rất hay về lịch sử của thành phố này, và tôi "
              "muốn viết lại những điều mà tôi đã học được trong những ngày qua.")


def test_detect_by_stopword_votes():
    assert notelang.detect(TURKISH) == "tr"
    assert notelang.detect(GERMAN) == "de"
    assert notelang.detect(ENGLISH) == "en"
    assert notelang.detect(VIETNAMESE) == "vi"
    assert notelang.detect("kitap") is None  # too few words to vote


def test_stemmer_of_a_note(monkeypatch):
    assert notelang.note_stemmer({}, TURKISH) == "turkish"  # detected (DETECT_STEMS, on)
    assert notelang.detect(GERMAN) == "de" and notelang.note_stemmer({}, GERMAN) is None  # fusional: prefix rule
    assert notelang.note_stemmer({"lang": "de"}, GERMAN) == "german"  # declared: stemmed
    monkeypatch.setattr(notelang, "DETECT_STEMS", False)
    assert notelang.note_stemmer({}, TURKISH) is None  # off: only a declared language stems
    assert notelang.note_stemmer({"lang": "tr"}, ENGLISH) == "turkish"
    monkeypatch.setattr(notelang, "DETECT_STEMS", True)
    assert notelang.note_stemmer({}, ENGLISH) is None  # porter stems English in FTS5
    assert notelang.note_stemmer({}, VIETNAMESE) is None  # no Snowball stemmer: not a neighbour's
    # frontmatter wins over the text, in any spelling, and a language without a stemmer means none
    assert notelang.note_stemmer({"lang": "ro-RO"}, ENGLISH) == "romanian"
    assert notelang.note_stemmer({"Language": "Turkish"}, ENGLISH) == "turkish"
    assert notelang.note_stemmer({"lang": ["pt_BR"]}, ENGLISH) == "portuguese"
    assert notelang.note_stemmer({"lang": "vi"}, TURKISH) is None
    assert notelang.note_stemmer({"lang": "en"}, TURKISH) is None


def test_vault_languages_keeps_the_main_ones():
    assert notelang.vault_languages({"turkish": 80, "german": 15, "french": 2}) == "turkish,german"
    assert notelang.vault_languages({"catalan": 1, "norwegian": 1}) == ""  # a stray misdetected note or two
    assert notelang.vault_languages({}) == ""
    # a share of all the vault's notes, not of the stemmed ones: 720 Turkish pages among 38k English
    assert notelang.vault_languages({"turkish": 720}, 38_000) == ""
    assert notelang.vault_languages({"turkish": 720}, 10_000) == "turkish"


def test_index_and_query_forms_meet():
    # index side: the word, and its stem after it where the stem does not begin the word (the
    # query searches stems as prefixes); a stem under NOTE_STEM_MIN_CHARS is not used
    assert fts_text("Kitaplarımızdan evlerde x_y 42", lang="turkish") == "kitaplarimizdan evlerde x_y 42"
    assert fts_text("kitabı", lang="turkish") == "kitabi kitap"
    assert fts_text("Größten Häuser", lang="german") == "größten grosst häuser"
    assert fts_text("canción", lang="spanish") == "canción"  # "cancion" begins it once FTS5 folds the accent
    assert fts_text("Kitaplarımızdan") == "Kitaplarimizdan"  # no language: folded only, as before
    assert note_stems("kitapları", ("turkish", "german")) == ("kitap",)
    assert note_stems("evlerde", ("turkish",)) == ()
    # a stem that the word's own search prefix (70%, non-ASCII) begins adds nothing: left out
    assert note_stems("столицы", ("russian",)) == ()
    assert note_stems("kitapların", ("turkish",)) == ("kitap",)


def test_gate_leaves_out_absent_function_words_of_the_vault_language(tmp_path, cfg_for):
    """Question words a vault of statements never holds ("hangi", "nasıl") are function words of
    its (detected) language: the gate does not weigh them as missing content words."""
    from vaultrag.retrieve import pipeline
    from vaultrag.retrieve.channels import build_fts_query
    from vaultrag.store import Term

    notes = {f"tr{i}.md": TURKISH.replace("tarih", w) for i, w in enumerate(("tarih", "müzik", "resim"))}
    notes["plain.md"] = "Bir iki üç dört beş altı yedi sekiz dokuz on. Bu bir sayı listesidir ve başka bir şey değil."
    cfg = cfg_for(write_notes(tmp_path / "v", notes))
    reindex(cfg, embed=False)
    with Store(cfg.db_path(), readonly=True) as s:
        assert s.get_meta(NOTE_LANGS_META) == "turkish"
        got = pipeline._absent_function_words(s, [Term("hangi"), Term("nasil"), Term("zeplin")])
        assert got == {Term("hangi"), Term("nasil")}
        fq = build_fts_query("hangi roman nasıl", s)
        ids = [cid for cid, _ in s.lexical(fq.terms, 3, (1.0, 0.5, 0.3))]
        assert pipeline.term_evidence(s, fq, ids)["term_coverage"] == 1.0
        fq = build_fts_query("zeplin roman", s)  # an absent content word still weighs
        assert pipeline.term_evidence(s, fq, ids)["term_coverage"] < 0.33


def test_turkish_vault_finds_inflected_forms(tmp_path, cfg_for):
    notes = {"tr.md": "---\nlang: tr\n---\n# Okuma\n\n" + TURKISH, "en.md": "# Backups\n\n" + ENGLISH,
             "ro.md": "---\nlang: ro\n---\n# Orașe\n\nOrașele mari au multe parcuri."}
    # a language counts for queries from NOTE_LANG_MIN_NOTES notes on (no English words in these)
    notes |= {f"tr{i}.md": f"---\nlang: tr\n---\nNot {i}: defterler masada." for i in range(2)}
    notes |= {f"ro{i}.md": f"---\nlang: ro\n---\nNota {i}: caietele sunt pe masă." for i in range(2)}
    cfg = cfg_for(write_notes(tmp_path / "v", notes))
    reindex(cfg, embed=False)
    s = Store(cfg.db_path(), readonly=True)
    try:
        assert s.note_languages() == {"turkish": 3, "romanian": 3}
        assert set(s.get_meta(NOTE_LANGS_META).split(",")) == {"turkish", "romanian"}
    finally:
        s.close()

    def top(q):
        ans = search(q, cfg, channels=("meta", "bm25"), graph=False, max_tokens=0)
        return ans.hits[0].path if ans.status == "ok" and ans.hits else None

    assert top("kitapların tarihi") == "tr.md"  # neither form is in the note
    assert top("orașul parcurile") == "ro.md"
    assert top("snapshots restore") == "en.md"


def test_fts_stays_in_sync_when_a_stemmed_note_changes(tmp_path, cfg_for):
    from vaultrag.config import load_config

    vault = write_notes(tmp_path / "v", {"tr.md": TR_NOTE, "de.md": "---\nlanguage: German\n---\n" + GERMAN})
    cfg = cfg_for(vault)
    reindex(cfg, embed=False)
    (vault / "tr.md").write_text(TR_NOTE.replace("kitap", "defter").replace("Kitap", "Defter"), encoding="utf-8")
    (vault / "de.md").unlink()
    reindex(cfg, embed=False)
    fresh = tmp_path / "fresh.db"
    reindex(load_config(vault=str(vault), db=str(fresh)), embed=False)
    a, b = Store(cfg.db_path(), readonly=True), Store(fresh, readonly=True)
    try:
        vocab = a.fts_vocabulary()
        assert vocab == b.fts_vocabulary()
        assert any(row[0] == "defter" for row in vocab) and not any(row[0] == "kitap" for row in vocab)
    finally:
        a.close()
        b.close()


def test_a_version_4_index_is_rebuilt_and_its_notes_stemmed(tmp_path, cfg_for):
    """Schema 4 had no files.lang (nor the snapshot triggers of issue 18): schema 5 is a new base,
    so a writer rebuilds such an index from the vault, which stems the notes by their language."""
    from vaultrag.store.sqlite import schema

    vault = write_notes(tmp_path / "v", {"tr.md": TR_NOTE})
    cfg = cfg_for(vault)
    reindex(cfg, embed=False)
    with Store(cfg.db_path()) as s, s.transaction():
        s.set_meta("schema_version", "4")  # what matters to the writer: the recorded version
    with pytest.raises(IndexCorrupt, match="older vaultrag"):  # readers refuse it until a writer rebuilds
        Store(cfg.db_path(), readonly=True)
    r = reindex(cfg, embed=False)
    assert any("rebuilt" in w for _, w in r.warnings)
    with Store(cfg.db_path(), readonly=True) as s:
        assert s.schema_version() == schema.SCHEMA_VERSION
        assert s.note_languages() == {"turkish": 1}


def _reference_words(text: str) -> list[str]:  # the expression detect() read its words with before
    return notelang._WORD_RE.findall(text.lower(), 0, 16 * notelang.DETECT_MAX_WORDS)[:notelang.DETECT_MAX_WORDS]


def test_head_words_as_the_unicode_pattern_reads_them():
    window = 16 * notelang.DETECT_MAX_WORDS
    texts = ["Hello World_42 foo-bar x2y", "", "___ 123", "ÇA İstanbul straße Ⅷ ½ x²y", "a" * (window + 10),
             "word " * 1000, ("ab " * window)[:window - 1] + "cdef ghi", "x" * (window - 1) + "é" + " next words",
             "é" + "word " * 2000, "İ" * 3 + " tail " * 2000, "The QUICK brown\tfox\njumps"]
    for text in texts:
        assert notelang.head_words(text) == _reference_words(text), text[:40]


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("abcXYZ _-1\n\té İßⅧ²"), max_size=7000))
def test_head_words_property(text):
    assert notelang.head_words(text) == _reference_words(text)

"""Issue 20: text analysis by script (textutil), identical at index and query time, on a real index."""
from __future__ import annotations

import re
import unicodedata

import pytest

from conftest import write_notes
from vaultrag.indexer import reindex
from vaultrag.retrieve import search
from vaultrag.store import Store
from vaultrag.textutil import fold, fts_text, is_stopword, query_terms, words

NOTES = {
    "thai.md": """
        # ทีมแพนเธอร์ส
        ทีมรับของแพนเธอร์สยอมแพ้เพียง 308 คะแนน และอยู่อันดับที่หกของลีก
    """,
    "arabic.md": """
        # الدفاع
        لم يتخلى فريق بانثرز سوى عن 308 نقطة، ليحتل المركز السادس في الدوري.
    """,
    "hindi.md": """
        # पुस्तकालय
        इस पुस्तकालय में पुरानी किताबें और पांडुलिपियाँ रखी जाती हैं।
    """,
    "greek.md": """
        # Οδυσσέας
        Ο Οδυσσέας ταξίδεψε δέκα χρόνια μέχρι να γυρίσει στην Ιθάκη.
    """,
    "turkish.md": """
        # ISPARTA
        ISPARTA gül yağı üretimiyle bilinir.
    """,
    "english.md": """
        # Backups
        The backup plan keeps thirty days of snapshots offsite.
    """,
}


@pytest.fixture
def lang_cfg(tmp_path, cfg_for):
    v = write_notes(tmp_path / "v", NOTES)
    cfg = cfg_for(v)
    reindex(cfg, embed=False)
    return cfg


def top_path(cfg, query: str, gate: bool = False) -> str | None:
    ans = search(query, cfg, channels=("meta", "bm25"), graph=False, max_tokens=0, gate=gate)
    return ans.hits[0].path if ans.status == "ok" and ans.hits else None


def test_marks_table_matches_unicodedata():
    from vaultrag.textmarks import MARKS

    r = re.compile(f"[{MARKS}]")
    wrong = [hex(cp) for cp in range(0x300, 0x30000)
             if bool(r.match(chr(cp))) != unicodedata.category(chr(cp)).startswith("M")]
    assert wrong == []


def test_combining_marks_stay_inside_words():
    assert words("हिन्दी भाषा") != ["ह", "न", "द", "भ", "ष"]
    assert len(words("हिन्दी भाषा")) == 2
    # a Thai run is one token for words(), split into clusters (letter + its marks) for FTS5
    assert words("ที่แพ้") == ["ที่แพ้"]
    assert fts_text("ที่แพ้").split() == ["ที่", "แ", "พ้"]  # แ is a leading vowel letter


def test_fold_is_the_same_for_every_spelling():
    assert fold("İSTANBUL").lower() == fold("ıstanbul").lower() == "istanbul"
    assert words("ΟΔΟΣ") == words("οδός") == words("Οδός")
    assert words("مُحَمَّد") == words("محمد") == words("مـحـمـد")
    assert words("أحمد") == words("احمد") == words("إحمد")


def test_index_and_query_analysis_agree_in_every_script(lang_cfg):
    for query, note in [("ทีมรับของแพนเธอร์สยอมแพ้ที่คะแนนเท่าไร", "thai.md"),
                        ("كم نقطة تخلى عنها دفاع البانثرز؟", "arabic.md"),
                        ("पुस्तकालय में किताबें", "hindi.md"),
                        ("ΟΔΥΣΣΕΑΣ ΙΘΑΚΗ", "greek.md"),
                        ("ısparta gül", "turkish.md"),
                        ("backup snapshots", "english.md")]:
        assert top_path(lang_cfg, query) == note, query


def test_arabic_article_and_clitics_are_stemmed_on_both_sides(lang_cfg):
    # the note says "بانثرز" (no article), the question "البانثرز"
    assert query_terms("البانثرز") == query_terms("بانثرز")
    assert top_path(lang_cfg, "البانثرز", gate=True) == "arabic.md"


def test_arabic_conjunction_before_hamza_is_stemmed_before_the_alef_is_folded():
    # Snowball strips "و" ("and") before a hamza, not before a bare alef: folding أ first kept
    # "وأرمينيا" whole, so it never met "أرمينيا" or "ارمينيا"
    assert words("وأرمينيا") == words("أرمينيا") == words("ارمينيا")
    assert words("وإيطاليا") == words("إيطاليا")


def test_question_words_of_other_scripts_are_stopwords():
    assert is_stopword(words("ماذا")[0]) and is_stopword(words("متى")[0])
    assert not is_stopword(words("بانثرز")[0])
    assert query_terms("متى تم إعلان هذا المرسوم؟") and all(
        not is_stopword(t) for t in query_terms("متى تم إعلان هذا المرسوم؟"))


def test_english_analysis_unchanged():
    assert words("Straße größten backups") == ["straße", "größten", "backups"]
    assert query_terms("how do the backups work") == ["backups", "work"]


@pytest.mark.parametrize("old", ["2", "3"])  # before issue 20; issue 17's origins table on the old analysis
def test_an_index_of_the_old_analysis_is_rebuilt(vault, cfg_for, old):
    from vaultrag.errors import IndexCorrupt
    from vaultrag.store.sqlite import schema

    cfg = cfg_for(vault)
    reindex(cfg, embed=False)
    with Store(cfg.db_path()) as s, s.transaction():
        s.set_meta("schema_version", old)
    with pytest.raises(IndexCorrupt, match="older vaultrag"):
        Store(cfg.db_path(), readonly=True)
    r = reindex(cfg, embed=False)
    assert any("rebuilt" in w for _, w in r.warnings)
    with Store(cfg.db_path(), readonly=True) as s:
        assert s.schema_version() == schema.SCHEMA_VERSION >= 5

"""PostgreSQL lexical path: the vocabulary table stays equal to a recount of the stored tsvectors
through edits, deletes and rebuilds, and pruned BM25 (candidates by the rarest terms) ranks
exactly as FTS5's bm25() does over the same notes."""
from __future__ import annotations


import pytest

from conftest import lorem_notes, write_notes
from pg_fixtures import pg_server, pg_url  # noqa: F401  (fixtures)
from vaultrag.config import load_config
from vaultrag.indexer import reindex
from vaultrag.retrieve.channels import BM25_WEIGHTS, build_fts_query
from vaultrag.store import open_store
from vaultrag.store.postgres import analyzer, lexical, schema

RECOUNT = ("SELECT u.lexeme, count(*) FROM chunks c CROSS JOIN LATERAL unnest(c.tsv) AS u(lexeme, positions, weights) "
           "WHERE c.gen = %s GROUP BY u.lexeme")


def _vocabulary(store) -> tuple[dict[str, int], dict[str, int]]:
    """(the table, a recount from the tsvectors) for the store's live generation."""
    table = dict(store.conn.execute("SELECT lexeme, df FROM lexemes WHERE gen = %s", (store.gen,)).fetchall())
    return table, dict(store.conn.execute(RECOUNT, (store.gen,)).fetchall())


def test_vocabulary_matches_a_recount_after_edits_deletes_and_rebuild(vault, pg_url):
    cfg = load_config(vault=str(vault), store=pg_url, collection="notes")
    reindex(cfg)
    with open_store(cfg, readonly=True) as s:
        table, recount = _vocabulary(s)
    assert table == recount and len(table) > 50
    notes = sorted(vault.rglob("*.md"))
    notes[0].write_text(notes[0].read_text(encoding="utf-8") + "\n\nQuokkas quokka zygomorphic edit.\n",
                        encoding="utf-8")
    notes[1].unlink()
    write_notes(vault, {"New note.md": "# New note\n\nA zygomorphic flower, and a quokka.\n"})
    reindex(cfg)
    with open_store(cfg, readonly=True) as s:
        table, recount = _vocabulary(s)
        assert table == recount and table["quokka"] == 2  # lexemes as the index stems them
        assert min(table.values()) > 0  # a lexeme whose last chunk went is removed
        assert s.doc_freq(build_fts_query("zygomorphic", s).terms[0], 100) == 2
    notes[0].unlink()
    reindex(cfg, full=True)  # a rebuild counts its generation once, after the bulk load
    with open_store(cfg, readonly=True) as s:
        table, recount = _vocabulary(s)
        assert table == recount and table["quokka"] == 1
        gens = s.conn.execute("SELECT count(DISTINCT gen) FROM lexemes").fetchone()[0]
        assert gens == 1  # the replaced generation's vocabulary went with it


def test_migration_counts_the_vocabulary_of_an_existing_index(vault, pg_url):
    cfg = load_config(vault=str(vault), store=pg_url, collection="notes")
    reindex(cfg)
    with open_store(cfg) as s:  # back to schema 1, as a database built before the table existed
        s.conn.execute("DROP TABLE lexemes")
        s.conn.execute("UPDATE vaultrag_schema SET version = 1")
    from vaultrag.store.postgres import connection

    connection._ready.clear()
    with pytest.raises(Exception, match="reindex"):
        open_store(cfg, readonly=True)  # a reader says what to do, it does not migrate
    with open_store(cfg, readonly=False) as s:  # a writer migrates
        table, recount = _vocabulary(s)
    assert table == recount and table


class _Spy:
    """A connection that records which candidate query each scoring statement used."""

    def __init__(self, conn):
        self.conn, self.candidates = conn, []

    def execute(self, sql, params=None):
        if params and "tqall" in params:
            self.candidates.append(params["tq"] == params["tqall"])
        return self.conn.execute(sql, params)


def _both_stores(tmp_path, pg_url, notes: dict[str, str]):
    """`notes` written to a vault and indexed into SQLite and PostgreSQL: their two configs."""
    vault = write_notes(tmp_path / "v", notes)
    sq = load_config(vault=str(vault), db=str(tmp_path / "i.sqlite"))
    pg = load_config(vault=str(vault), store=pg_url, collection="v")
    reindex(sq)
    reindex(pg)
    return sq, pg


def _assert_same_ranking(a, want, b, got) -> None:
    """PostgreSQL's hits `got` (store b) are FTS5's `want` (store a): same notes, same scores."""
    key = lambda s, hits: [s.chunks_by_id([c])[c].path for c, _ in hits]  # noqa: E731
    assert key(a, want) == key(b, got)
    assert all(abs(x - y) < 1e-6 * max(1.0, abs(x)) for (_, x), (_, y) in zip(want, got))


@pytest.fixture
def corpus(tmp_path, pg_url):
    """60 notes: 'common' in all of them, 'rare' words in a few, lengths and repeats varied."""
    notes = lorem_notes(lambda i: ["zygomorphic", "quokkas"] if i % 7 == 0 else [])
    return _both_stores(tmp_path, pg_url, notes)


@pytest.mark.parametrize("q,limit", [("common quokka zygomorphic", 5), ("common quokka", 10), ("common quokka", 30),
                                     ("zygomorphic common", 3), ("quokk common", 5)])
def test_pruned_bm25_ranks_as_fts5_does(corpus, q, limit, monkeypatch):
    monkeypatch.setattr(lexical, "PRUNE_CANDIDATES", 20)  # the 60 'common' chunks are never candidates first
    sq, pg = corpus
    with open_store(sq) as a, open_store(pg) as b:
        terms = build_fts_query(q, a).terms
        if q.startswith("quokk"):
            terms = (terms[0].__class__("quokk", prefix=True),) + terms[1:]
        want = a.lexical(terms, limit, BM25_WEIGHTS)
        flat = analyzer.flatten(terms)
        stats = lexical.term_stats(b.conn, list(b.gens), flat)
        spy = _Spy(b.conn)
        got = lexical.bm25(spy, list(b.gens), flat, stats, *b._stats(), limit, BM25_WEIGHTS).hits
        _assert_same_ranking(a, want, b, got)
        assert spy.candidates[0] is False  # the first try read the rare terms' chunks only
        if q == "common quokka zygomorphic":
            assert spy.candidates == [False]  # ... and its bound held: no second query
        assert b.lexical(terms, limit, BM25_WEIGHTS) == got
    assert schema.SCHEMA_VERSION >= 2


def test_a_token_fts5_empties_counts_as_it_does_there(tmp_path, pg_url):
    """A lone combining mark is a token whose term is empty once diacritics go (mojibake in the
    xquad-ar set has them): PostgreSQL stores no lexeme for it but counts it in the length."""
    notes = {"broken.md": "# Broken\n\nZeichen \u0304\u2020\u00e9TM kaputt \u0308\u017e\u00e5 zeichen kaputt.\n",
             "plain.md": "# Plain\n\nZeichen und noch mehr Zeichen, nichts kaputt hier, gar nichts.\n",
             "other.md": "# Other\n\nkaputt kaputt kaputt.\n"}
    sq, pg = _both_stores(tmp_path, pg_url, notes)  # raised TypeError on the empty token before
    with open_store(sq) as a, open_store(pg) as b:
        for q in ("zeichen kaputt", "kaputt", "zeichen"):
            terms = build_fts_query(q, a).terms
            want, got = a.lexical(terms, 10, BM25_WEIGHTS), b.lexical(terms, 10, BM25_WEIGHTS)
            assert want
            _assert_same_ranking(a, want, b, got)


def test_thai_two_cluster_terms_score_as_fts5_phrases(tmp_path, pg_url):
    """Thai is indexed one grapheme cluster a token and queried as 2-cluster phrases (textutil):
    PostgreSQL stores each adjacent pair as one lexeme, so the phrase counts as FTS5 counts it."""
    notes = {"a.md": "# ภาษาไทย\n\nภาษาไทยเป็นภาษาราชการของประเทศไทย มีผู้พูดภาษาไทยหลายล้านคน\n",
             "b.md": "# ประเทศ\n\nประเทศไทยตั้งอยู่ในเอเชียตะวันออกเฉียงใต้ มีเมืองหลวงคือกรุงเทพ\n",
             "c.md": "# อาหาร\n\nอาหารไทยมีรสเผ็ด ภาษาของอาหารคือรสชาติ\n"}
    sq, pg = _both_stores(tmp_path, pg_url, notes)
    with open_store(sq) as a, open_store(pg) as b:
        for q in ("ภาษาไทย", "ประเทศไทย เมืองหลวง", "อาหารไทย"):
            terms = build_fts_query(q, a).terms
            want, got = a.lexical(terms, 10, BM25_WEIGHTS), b.lexical(terms, 10, BM25_WEIGHTS)
            assert want
            _assert_same_ranking(a, want, b, got)
            for t in terms:
                assert a.doc_freq(t, 100) == b.doc_freq(t, 100)


@pytest.mark.parametrize("q", ["common quokka", "common lorem ipsum", "common"])
def test_past_the_scan_cap_the_ranking_is_capped_true_bm25_and_says_so(corpus, q, monkeypatch):
    """Terms too common to score every match (more than SCAN_CAP chunks in all): at most 2 x SCAN_CAP
    candidates are scored (those holding every term first), each with its exact FTS5 score, and
    the store reports the ranking as approximate; under the cap the same query is exact."""
    sq, pg = corpus
    with open_store(sq) as a, open_store(pg) as b:
        terms = build_fts_query(q, a).terms
        full = {a.chunks_by_id([c])[c].path: s for c, s in a.lexical(terms, 60, BM25_WEIGHTS)}
        assert b.lexical(terms, 10, BM25_WEIGHTS) and b.lexical_exact  # 60 notes: under the default cap
        monkeypatch.setattr(lexical, "SCAN_CAP", 8)
        flat = analyzer.flatten(terms)
        ranked = lexical.bm25(b.conn, list(b.gens), flat, lexical.term_stats(b.conn, list(b.gens), flat),
                                     *b._stats(), 30, BM25_WEIGHTS)
        assert ranked.exact is False
        assert 0 < len(ranked.hits) <= 2 * 8  # never more candidates than the cap allows
        paths = [b.chunks_by_id([c])[c].path for c, _ in ranked.hits]
        for path, (_, score) in zip(paths, ranked.hits):
            assert abs(full[path] - score) < 1e-6 * max(1.0, abs(score))  # each one's true BM25 score
        assert [s for _, s in ranked.hits] == sorted((s for _, s in ranked.hits), reverse=True)
        b.lexical(terms, 30, BM25_WEIGHTS)
        assert b.lexical_exact is False


def test_compounds_join_and_split_as_in_sqlite(tmp_path, pg_url):
    """retrieve/compounds asks the store for a word and a two-word phrase: PostgreSQL proposes the
    same alternatives as SQLite and ranks them alike ("roll back" / "rollback", "wifi" / "Wi-Fi")."""
    notes = {"deploy.md": "# Deploys\n\nA failed migration is undone with the rollback script, then promoted.\n",
             "home.md": "# Home\n\nThe Wi-Fi router sits in the hall; reboot it when the printer drops off.\n",
             "game.md": "# Games\n\nRoll the dice twice and move back three squares.\n"}
    sq, pg = _both_stores(tmp_path, pg_url, notes)
    with open_store(sq) as a, open_store(pg) as b:
        for q in ("how do I roll back a migration", "where is the wifi"):
            terms = build_fts_query(q, a).terms
            assert any(t.alternatives for t in terms), q
            assert terms == build_fts_query(q, b).terms, q
            want, got = a.lexical(terms, 10, BM25_WEIGHTS), b.lexical(terms, 10, BM25_WEIGHTS)
            assert want
            _assert_same_ranking(a, want, b, got)

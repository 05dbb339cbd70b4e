"""PostgreSQL bulk writes (store/postgres/bulk.py): the binary tsvector and halfvec built in Python
are the values the server's own text input makes, and a group written by COPY reads back as the
row-by-row statements wrote it (ids, links in order, keys, vectors reused and re-embedded)."""
from __future__ import annotations

import math
import random

import pytest

from pg_fixtures import pg_server, pg_url  # noqa: F401  (fixtures)
from vaultrag.config import load_config
from vaultrag.indexer import reindex
from vaultrag.store import open_store
from vaultrag.store.postgres import analyzer, bulk

psycopg = pytest.importorskip("psycopg")

TEXTS = [
    ("Git rebase moves commits onto another base; rebasing rewrites history.", "Git > Rebase", "git | tool | vcs"),
    ("读书笔记：中国历史", "读书 > 笔记", "notes"),
    ("Ünïcödé naïve café — l'été, it's \\ back'slash", "Quotes 'and' \\ slashes", ""),
    (" ".join(["repeat"] * 400), "Many positions", "ctx"),  # more than PostgreSQL's 256 positions a lexeme
    ("", "", ""),
]


def _text_form(positions: dict[str, list[tuple[int, str]]]) -> str:
    """The same tsvector in the text input syntax (what the store sent before bulk.py)."""
    def q(lx: str) -> str:
        return "'" + lx.replace("\\", "\\\\").replace("'", "''") + "'"
    return " ".join(f"{q(lx)}:{','.join(f'{p}{w}' for p, w in occ)}" for lx, occ in positions.items())


def test_binary_tsvector_equals_the_servers_text_input(pg_url):
    rng = random.Random(5)
    cases = [dict(a) for a in ({"a": [(1, "A"), (3, "B")], "b'c": [(2, "C")]},
                               {"x": [(16383, "A"), (16383, "C"), (16383, "B")]},  # clamped repeats
                               {"many": [(i, "A") for i in range(1, 400)]})]
    words = ["alpha", "beta", "中国", "naïve", "o'neil", "back\\slash", "zz"]
    for _ in range(20):
        pos: dict[str, list[tuple[int, str]]] = {}
        for i in range(rng.randint(1, 40)):
            pos.setdefault(rng.choice(words), []).append((rng.randint(1, 16383), rng.choice("ABC")))
        cases.append({k: sorted(v) for k, v in pos.items()})
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (id int, tsv tsvector)")
        with conn.cursor() as cur:
            bulk.copy_rows(cur, "t", ("id", "tsv"), ("int4", "bytea"),
                           [(i, bulk.tsvector_binary(c)) for i, c in enumerate(cases)])
        for i, c in enumerate(cases):
            same, got, want = conn.execute("SELECT tsv = %s::tsvector, tsv::text, %s::tsvector::text FROM t "
                                           "WHERE id = %s", (_text_form(c), _text_form(c), i)).fetchone()
            assert same and got == want, (c, got, want)


def test_analysed_chunks_store_the_same_tsvector_as_text_input(pg_url):
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (id int, tsv tsvector)")
        lex = analyzer.analyse(TEXTS)
        with conn.cursor() as cur:
            bulk.copy_rows(cur, "t", ("id", "tsv"), ("int4", "bytea"), [(i, a.tsvector) for i, a in enumerate(lex)])
        rows = dict(conn.execute("SELECT id, length(tsv) FROM t").fetchall())
        assert rows[0] > 5 and rows[4] == 0
        assert conn.execute("SELECT tsv @@ '中国'::tsquery FROM t WHERE id = 1").fetchone()[0]  # the CJK bigram
        npos = conn.execute("SELECT array_length(positions, 1) FROM t, unnest(tsv) WHERE id = 3 "
                            "AND lexeme = 'repeat'").fetchone()[0]
        assert npos == bulk.MAX_POSITIONS


def test_binary_halfvec_round_trips_through_the_server(pg_url):
    import numpy as np

    rng = np.random.default_rng(1)
    m = rng.normal(size=(4, 256)).astype(np.float32)
    m[2] = 0.0
    packed = bulk.halfvec_binary(m)
    assert packed[2] is None
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute("CREATE TABLE v (id int, e halfvec)")
        with conn.cursor() as cur:
            bulk.copy_rows(cur, "v", ("id", "e"), ("int4", "bytea"), list(enumerate(packed)))
        for i in (0, 1, 3):
            text = conn.execute("SELECT e::text FROM v WHERE id = %s", (i,)).fetchone()[0]
            got = np.array([float(x) for x in text.strip("[]").split(",")])
            assert np.allclose(got, m[i].astype(np.float16).astype(np.float64))
            sent = conn.execute("SELECT halfvec_send(e) FROM v WHERE id = %s", (i,)).fetchone()[0]
            assert bytes(sent) == packed[i]
            assert bulk.halfvec_text(packed[i]) and math.isclose(
                conn.execute("SELECT %s::halfvec <=> e FROM v WHERE id = %s",
                             (bulk.halfvec_text(packed[i]), i)).fetchone()[0], 0.0, abs_tol=1e-3)
        assert conn.execute("SELECT e IS NULL FROM v WHERE id = 2").fetchone()[0]


def test_a_copied_group_reads_back_like_the_files(vault, pg_url):
    cfg = load_config(vault=str(vault), store=pg_url, collection="notes")
    sq = load_config(vault=str(vault), db=str(vault.parent / "x.sqlite"))
    reindex(cfg, full=True)
    reindex(sq, full=True)
    with open_store(cfg, readonly=True) as pg, open_store(sq, readonly=True) as lite:
        counts = pg.counts()
        assert counts == lite.counts() and counts["vectors"] == counts["chunks"] > 0
        pg_links = sorted((r.target_key, r.kind, r.line) for r in pg.links_from(list(
            f.id for f in pg.files().values())))
        sq_links = sorted((r.target_key, r.kind, r.line) for r in lite.links_from(list(
            f.id for f in lite.files().values())))
        assert pg_links == sq_links and pg_links
        gen_chunks = pg.conn.execute("SELECT chunks FROM generations WHERE id = %s", (pg.gen,)).fetchone()[0]
        assert gen_chunks == counts["chunks"]
    # an incremental run over an edited note keeps the vocabulary and reuses unchanged vectors
    note = sorted(vault.rglob("*.md"))[0]
    note.write_text(note.read_text(encoding="utf-8") + "\n\nA quokkabulk sentence.\n", encoding="utf-8")
    reindex(cfg)
    with open_store(cfg, readonly=True) as pg:
        assert pg.counts()["vectors"] == pg.counts()["chunks"]
        assert pg.conn.execute("SELECT df FROM lexemes WHERE gen = %s AND lexeme = 'quokkabulk'",
                               (pg.gen,)).fetchone()[0] == 1

"""The PostgreSQL store on index_pool's workers: the tsvectors the workers make are the ones the
writer made, so 1 and 2 workers build the same collection row for row (full and incremental), and
the group's batched delete keeps the generation's counts and vocabulary exact."""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from pg_fixtures import pg_server, pg_url  # noqa: F401  (fixtures)
from vaultrag import index_pool
from vaultrag.config import load_config
from vaultrag.indexer import reindex
from vaultrag.store import ChunkRow, FileWrite, open_store
from vaultrag.store.postgres import analyzer

from conftest import shared_path, write_notes

psycopg = pytest.importorskip("psycopg")


@pytest.fixture
def help_vault(tmp_path) -> Path:
    """obsidian-help's English pages (real Markdown: links, embeds, tags, several chunks a page)
    and a German one, plus a note with a secret."""
    src = shared_path("eval", "vaults", "obsidian-help")
    dest = tmp_path / "vault"
    shutil.copytree(src / "en", dest / "en")
    shutil.copy(src / "de" / "Erste Schritte" / "Glossar.md", dest / "glossar.md")
    write_notes(dest, {"ops/keys.md": "# Keys\n\nprod: AKIAIOSFODNN7EXAMPLF and the word pelican\n"})
    return dest


def _collection(url: str, name: str) -> dict[str, list]:
    """Every row of the collection's live generation, ids and generation numbers left out."""
    with psycopg.connect(url) as conn:
        gen = conn.execute("SELECT live FROM collections WHERE name = %s", (name,)).fetchone()[0]
        q = {
            "files": "SELECT path, mtime_ns, size, hash, title, note_type, stem_key, lang FROM files WHERE gen = %(g)s",
            "chunks": "SELECT f.path, c.section_index, c.chunk_index, c.heading_path, c.context, c.text, c.line_start, "
                      "c.line_end, c.content_hash, c.embed_hash, c.tokens, c.block_ids, c.ntok, c.tsv::text, "
                      "c.embedding::text FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.gen = %(g)s",
            "links": "SELECT f.path, l.target, l.target_key, l.anchor, l.kind, l.text, l.line, l.chunk_id IS NULL "
                     "FROM links l JOIN files f ON f.id = l.file_id WHERE f.gen = %(g)s",
            "keys": "SELECT f.path, k.key, k.kind, k.chunk_id = 0 FROM keys k JOIN files f ON f.id = k.file_id "
                    "WHERE k.gen = %(g)s",
            "lexemes": "SELECT lexeme, df FROM lexemes WHERE gen = %(g)s AND df > 0",
            "generation": "SELECT chunks, tokens FROM generations WHERE id = %(g)s",
        }
        return {k: sorted(map(repr, conn.execute(sql, {"g": gen}).fetchall())) for k, sql in q.items()}


def _vocabulary_recounted(url: str, name: str) -> list:
    """The vocabulary counted again from the stored tsvectors (what the kept counts must equal)."""
    with psycopg.connect(url) as conn:
        gen = conn.execute("SELECT live FROM collections WHERE name = %s", (name,)).fetchone()[0]
        return sorted(map(repr, conn.execute(
            "SELECT u.lexeme, count(*) FROM chunks c CROSS JOIN LATERAL unnest(c.tsv) AS u(lexeme, positions, weights) "
            "WHERE c.gen = %s GROUP BY u.lexeme", (gen,)).fetchall()))


def test_one_and_two_workers_build_the_same_collection(help_vault, pg_url, monkeypatch):
    # fork, or spawn when another test left a thread running: the pool starts either way
    monkeypatch.setattr(index_pool, "POOL_MIN_FILES", 1)
    monkeypatch.setattr(index_pool, "POOL_MIN_FILES_SPAWN", 1)
    monkeypatch.setattr(index_pool, "TASK_FILES", 5)
    analysed_here = []
    real_analyse = analyzer.analyse

    cfgs = {w: load_config(vault=str(help_vault), store=pg_url, collection=f"w{w}", model="bundled") for w in (1, 2)}
    reports = {w: reindex(cfg, full=True, workers=w) for w, cfg in cfgs.items()}
    assert reports[1].workers == 0 and reports[2].workers == 2
    assert reports[1].added == reports[2].added > 100 and reports[1].chunks_total == reports[2].chunks_total
    assert reports[1].secrets == reports[2].secrets and reports[1].secrets
    a, b = _collection(pg_url, "w1"), _collection(pg_url, "w2")
    for table in a:
        assert a[table] == b[table], table
    assert a["lexemes"] == _vocabulary_recounted(pg_url, "w2")

    # incremental: edited notes (the batched delete, vocabulary kept up to date) and touched ones
    notes = sorted(help_vault.rglob("*.md"))[:60]
    for i, p in enumerate(notes):
        if i % 3 == 0:
            p.write_text(p.read_text(encoding="utf-8") + f"\n\nAppended line {i} about quokkapool.\n", encoding="utf-8")
        else:
            os.utime(p, ns=(time.time_ns(), time.time_ns() + i * 1000))
    (help_vault / "ops" / "keys.md").unlink()
    # counts this process's analyses only (a forked worker appends to its own copy of the list)
    monkeypatch.setattr(analyzer, "analyse", lambda chunks, lang=None: analysed_here.append(1) or real_analyse(chunks, lang))
    reports = {w: reindex(cfg, workers=w) for w, cfg in cfgs.items()}
    assert reports[1].updated == reports[2].updated == len(notes[::3])
    assert reports[1].touched == reports[2].touched > 0 and reports[1].deleted == reports[2].deleted == 1
    a, b = _collection(pg_url, "w1"), _collection(pg_url, "w2")
    for table in a:
        assert a[table] == b[table], table
    assert "('quokkapool', 20)" in a["lexemes"] and not any("pelican" in r for r in a["lexemes"])
    for name in ("w1", "w2"):
        assert _collection(pg_url, name)["lexemes"] == _vocabulary_recounted(pg_url, name)
    # the in-process run analysed its 20 edited notes in the writer; the pooled run's were made by
    # the workers
    assert len(analysed_here) == len(notes[::3])


def _fw(path: str, text: str) -> FileWrite:
    ch = ChunkRow(section_index=0, chunk_index=0, heading_path="", context="", text=text, search_text=None,
                  line_start=1, line_end=1, content_hash="00" * 32, embed_hash="11" * 8, tokens=len(text.split()),
                  block_ids="")
    return FileWrite(path=path, mtime_ns=1, size=len(text), hash="22" * 32, title=path, note_type=None,
                     stem_key=path, chunks=(ch,), links=(), keys=())


def test_a_note_written_twice_in_one_transaction_keeps_the_last(pg_url):
    cfg = load_config(vault="/tmp", store=pg_url, collection="twice")
    with open_store(cfg, readonly=False) as st:
        with st.transaction():
            st.write_file(_fw("a.md", "first wombat"), None)
            st.write_file(_fw("b.md", "other note"), None)
            st.write_file(_fw("a.md", "second numbat"), None)
        with st.transaction():  # rewritten in a later group: the old rows go in the group's one delete
            st.write_file(_fw("b.md", "other note again numbat"), None)
        rows = st.conn.execute("SELECT f.path, c.text FROM chunks c JOIN files f ON f.id = c.file_id "
                               "WHERE c.gen = %s ORDER BY f.path", (st.gen,)).fetchall()
        assert rows == [("a.md", "second numbat"), ("b.md", "other note again numbat")]
        gen = st.conn.execute("SELECT chunks, tokens FROM generations WHERE id = %s", (st.gen,)).fetchone()
        ntok = [r[0] for r in st.conn.execute("SELECT ntok FROM chunks WHERE gen = %s", (st.gen,))]
        assert gen == (2, sum(ntok)) and sum(ntok) == 6
        df = dict(st.conn.execute("SELECT lexeme, df FROM lexemes WHERE gen = %s", (st.gen,)).fetchall())
        assert df.get("numbat") == 2 and df.get("wombat", 0) == 0 and df.get("note") == 1

"""The Store contract: the same tests on every backend (SQLite file, PostgreSQL + pgvector).

Plus cross-backend oracle tests: the PostgreSQL lexical channel must rank exactly as FTS5's bm25()
does over the same chunks (SQLite is the reference implementation), and search() must give the
same answers through either store.
"""
from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from conftest import write_notes
from pg_fixtures import pg_server, pg_url  # noqa: F401  (fixtures)
from vaultrag.config import load_config
from vaultrag.errors import IndexLocked, IndexMissing
from vaultrag.indexer import reindex
from vaultrag.retrieve import search
from vaultrag.retrieve.channels import BM25_WEIGHTS, build_fts_query, encoder_for
from vaultrag.store import Term, backend_for, open_store

BACKENDS = ["sqlite", "postgres"]
QUERIES = ["restore drill", "how does the backup schedule work", "Model2Vec static embeddings", "中文 搜索",
           "读书笔记", "snapshot retention policy", "Ada Lovelace", "sqlite fts5 tokenizer porter"]


@pytest.fixture(params=BACKENDS)
def make_cfg(request, tmp_path):
    """A function vault -> Config on the parametrised backend."""
    if request.param == "postgres":
        url = request.getfixturevalue("pg_url")
        return lambda vault, **kw: load_config(vault=str(vault), store=url, collection=kw.pop("collection", "notes"),
                                               **kw)
    return lambda vault, **kw: load_config(vault=str(vault), db=str(tmp_path / "index.sqlite"),
                                           **{k: v for k, v in kw.items() if k != "collection"})


def _key(store, ids):
    chunks = store.chunks_by_id(ids)
    return [(chunks[i].path, chunks[i].section_index, chunks[i].chunk_index) for i in ids]


def test_write_read_roundtrip_and_counts(vault, make_cfg):
    cfg = make_cfg(vault)
    report = reindex(cfg)
    with open_store(cfg) as s:
        counts = s.counts()
        files = s.files()
        assert counts["files"] == len(list(vault.rglob("*.md"))) == len(files)
        assert counts["chunks"] == report.chunks_total == s.chunk_count() > 0
        assert counts["vectors"] == counts["chunks"]
        leads = s.lead_chunks([f.id for f in files.values()])
        chunks = s.chunks_by_id(list(leads.values()))
        for rec in files.values():
            ch = chunks[leads[rec.id]]
            assert ch.path == rec.path and ch.file_hash == rec.hash
            assert ch.text and (vault / ch.path).read_text(encoding="utf-8").count(ch.text.splitlines()[0]) >= 1
        meta = s.meta()
        assert meta.vault == str(vault.resolve()) and meta.vector_dim == 256 and meta.model_path
        assert not meta.vectors_invalid and meta.last_reindex["report"]["scanned"] == counts["files"]


def test_notes_stemmed_by_their_language_on_every_backend(tmp_path, make_cfg):
    """Issue 20: a note whose frontmatter names its language is indexed with that language's stems
    (files.lang), the vault's note languages reach the query, and both backends find it by forms
    it does not contain."""
    notes = {"tr.md": "---\nlang: tr\n---\n# Okuma\n\nBu hafta kütüphaneden üç kitap aldım ve hepsini "
                      "evde okudum. Kitaplarımızdan biri tarih hakkında, diğeri de bir roman.\n",
             "en.md": "# Backups\n\nThe backup plan keeps thirty days of snapshots offsite.\n"}
    cfg = make_cfg(write_notes(tmp_path / "tr-vault", notes))
    reindex(cfg, embed=False)
    with open_store(cfg) as s:
        assert s.note_languages() == {"turkish": 1}
    ans = search("kitapların tarihi", cfg, channels=("bm25",), graph=False, max_tokens=0)
    assert ans.status == "ok" and ans.hits[0].path == "tr.md"


def test_lexical_terms_prefix_cjk_and_doc_freq(vault, make_cfg):
    write_notes(vault, {"Städte.md": "# Städte\n\nDie größten Städte liegen am Fluss. Templates are stored here.\n"})
    cfg = make_cfg(vault)
    reindex(cfg, embed=False)
    with open_store(cfg) as s:
        hits = s.lexical((Term("größt", prefix=True),), 10, BM25_WEIGHTS)
        assert [p for p, *_ in _key(s, [c for c, _ in hits])] == ["Städte.md"]
        assert s.lexical((Term("templat", prefix=True),), 10, BM25_WEIGHTS)  # stemmed like the index
        zh = s.lexical((Term("读 书"),), 10, BM25_WEIGHTS)
        assert zh and all("读书" in (vault / path).read_text(encoding="utf-8") for path, *_ in _key(s, [c for c, _ in zh]))
        assert s.lexical((Term("书 读"),), 10, BM25_WEIGHTS) == []  # order matters: a bigram, not two chars
        assert s.doc_freq(Term("backup"), 100) == len(s.lexical((Term("backup"),), 100, BM25_WEIGHTS)) > 0
        assert s.doc_freq(Term("backup"), 1) == 1
        ids = [c for c, _ in s.lexical((Term("backup"),), 100, BM25_WEIGHTS)]
        assert s.contains((Term("backup"),), ids) == set(ids)
        assert s.contains((Term("zzzzqqq"),), ids) == set()
        assert s.lexical((Term('" OR * NEAR( :'),), 10, BM25_WEIGHTS) == []  # user text is never syntax


def test_vectors_knn_and_similarities_agree(vault, make_cfg):
    cfg = make_cfg(vault)
    reindex(cfg)
    with open_store(cfg) as s:
        vec = encoder_for(s.meta().model_path).encode("restore drill")
        knn = s.knn(vec, 5)
        assert len(knn) == 5 and [x for _, x in knn] == sorted((x for _, x in knn), reverse=True)
        sims = s.similarities(vec, [c for c, _ in knn])
        assert set(sims) == {c for c, _ in knn}
        assert all(abs(sims[c] - x) < 1e-3 for c, x in knn)
        assert s.knn([0.0] * len(vec), 5) == []


def test_typed_meta_roundtrip(vault, make_cfg):
    cfg = make_cfg(vault)
    reindex(cfg, embed=False)
    with backend_for(cfg).open() as s:
        with s.transaction():
            s.update_meta(vectors_invalid=True, embedding={"available": False, "reason": "x"})
        assert s.meta().vectors_invalid and s.meta().embedding["reason"] == "x"
        with s.transaction():
            s.update_meta(vectors_invalid=False)
        assert s.meta().vectors_invalid is False
        with pytest.raises(KeyError):
            s.update_meta(no_such_field=1)


def test_string_meta_keys_of_hardening_and_gate(vault, make_cfg):
    """The path key (paths.py) and the injection calibration (inject.py) are string meta keys on
    every backend, readable through the typed meta too."""
    cfg = make_cfg(vault)
    reindex(cfg, embed=False)
    with backend_for(cfg).open() as s:
        key = s.get_meta("path_key")
        assert key and s.meta().path_key == key
        with s.transaction():
            s.set_meta("inject_calibration", '{"x": 1}')
        assert s.get_meta("inject_calibration") == '{"x": 1}' == s.meta().inject_calibration
        assert s.get_meta("no_such_key", "fallback") == "fallback"


def test_typo_alternatives_widen_the_match_and_both_propose_them(vault, make_cfg):
    cfg = make_cfg(vault)
    reindex(cfg, embed=False)
    with open_store(cfg) as s:
        typo = Term("snapshoot")
        assert s.lexical([typo], 50, BM25_WEIGHTS) == [] and s.doc_freq(typo, 10) == 0
        fixed = Term("snapshoot", alternatives=("snapshot",))
        found = {cid for cid, _ in s.lexical([fixed], 50, BM25_WEIGHTS)}
        assert found and found == {cid for cid, _ in s.lexical([Term("snapshot", prefix=True)], 50, BM25_WEIGHTS)}
        assert s.doc_freq(fixed, 1000) == len(found) and s.contains([fixed], sorted(found)) == found
        near = s.near_terms("snapshoot", 1, 3)  # PostgreSQL: from its vocabulary table
        assert "snapshot" in [t for t, _, _ in near]
        assert all(df == s.doc_freq(Term(t), 10000) for t, _, df in near)
        assert s.stem(["snapshots", "Snapshot"]) == {"snapshots": "snapshot", "Snapshot": "snapshot"}


def test_deleted_notes_leave_nothing_behind(vault, make_cfg):
    cfg = make_cfg(vault)
    reindex(cfg)
    for p in vault.rglob("*.md"):
        p.unlink()
    reindex(cfg)
    with open_store(cfg) as s:
        assert s.counts() == {"files": 0, "chunks": 0, "links": 0, "vectors": 0}
        assert s.chunk_count() == 0 and s.match_keys(["backup plan"]) == []
        assert s.lexical((Term("backup"),), 10, BM25_WEIGHTS) == []


def test_rebuild_is_invisible_until_published_and_abandoned_rebuild_keeps_the_index(vault, make_cfg):
    cfg = make_cfg(vault)
    reindex(cfg, embed=False)
    backend = backend_for(cfg)
    with open_store(cfg) as reader:
        before = reader.counts()
        with backend.rebuild() as rb:
            assert rb.store.counts()["chunks"] == 0  # the shadow starts empty ...
            reader.meta()
            assert reader.counts() == before  # ... and readers still see the live index
        reader.meta()  # (PostgreSQL resolves the live generation when a search starts)
        assert reader.counts() == before  # not published: discarded, the old index intact
    write_notes(vault, {"Extra.md": "# Extra\n\nOne more note about kimchi.\n"})
    reindex(cfg, full=True, embed=False)
    with open_store(cfg) as s:
        assert s.counts()["files"] == before["files"] + 1


def test_writer_lock_is_exclusive(vault, make_cfg):
    cfg = make_cfg(vault)
    reindex(cfg, embed=False)
    backend = backend_for(cfg)
    with backend.lock(1):
        with pytest.raises(IndexLocked):
            with backend_for(cfg).lock(0):
                pass
    with backend.lock(0):  # released
        pass


def test_missing_index_is_a_clear_error(tmp_path, make_cfg):
    cfg = make_cfg(tmp_path / "nowhere")
    with pytest.raises(IndexMissing, match="reindex"):
        open_store(cfg)


# -- cross-backend oracles ------------------------------------------------------------------------
@pytest.fixture
def both(vault, tmp_path, pg_url):
    write_notes(vault, {"Städte.md": "# Städte\n\nDie größten Städte liegen am Fluss.\n",
                        "Code.md": "# Code\n\nThe snake_case name max_tokens sets the budget; connections connect.\n",
                        "Palette.md": "# Palette\n\nEach tag gets a color; organize the colors by project.\n"})
    sq = load_config(vault=str(vault), db=str(tmp_path / "i.sqlite"))
    pg = load_config(vault=str(vault), store=pg_url, collection="notes")
    reindex(sq)
    reindex(pg)
    return sq, pg


@pytest.mark.parametrize("q", QUERIES + ["größte Städte", "snake_case max_tokens", "connecting"])
def test_postgres_bm25_ranks_as_fts5_does(both, q):
    sq, pg = both
    with open_store(sq) as a, open_store(pg) as b:
        terms = build_fts_query(q, a).terms
        ra, rb = a.lexical(terms, 30, BM25_WEIGHTS), b.lexical(terms, 30, BM25_WEIGHTS)
        assert _key(a, [c for c, _ in ra]) == _key(b, [c for c, _ in rb])
        assert all(abs(x - y) < 1e-6 * max(1.0, abs(x)) for (_, x), (_, y) in zip(ra, rb))
        for t in terms:
            assert a.doc_freq(t, 1000) == b.doc_freq(t, 1000)


@pytest.mark.parametrize("q", QUERIES)
def test_search_answers_the_same_through_either_store(both, q):
    sq, pg = both
    where = lambda ans: [(h.path, h.heading_path, h.line_start) for h in ans.hits]  # noqa: E731
    lexical = ["meta", "bm25"]  # exactly the same: the lexical side is the same computation
    a, b = search(q, sq, gate=False, channels=lexical), search(q, pg, gate=False, channels=lexical)
    assert where(a) == where(b) and a.evidence == b.evidence
    # With vectors: int8 (SQLite) and halfvec (PostgreSQL) cosines differ in the 3rd decimal, so
    # near-ties may swap; the gate's decision and the best hit agree.
    a, b = search(q, sq), search(q, pg)
    assert a.status == b.status and where(a)[:1] == where(b)[:1]
    assert a.evidence["term_coverage"] == b.evidence["term_coverage"]


@pytest.mark.parametrize("q", ["which colour does a tag get", "organise colours by project"])
def test_british_spelling_is_respelled_alike_on_either_store(both, q):
    sq, pg = both
    with open_store(sq) as a, open_store(pg) as b:
        fa, fb = build_fts_query(q, a), build_fts_query(q, b)
        assert fa.respelt and fa.respelt == fb.respelt and fa.terms == fb.terms
    ra, rb = search(q, sq), search(q, pg)
    assert ra.status == rb.status == "ok" and ra.hits[0].path == rb.hits[0].path == "Palette.md"


def test_collections_are_separate_and_can_be_read_together(vault, tmp_path, pg_url):
    other = write_notes(tmp_path / "other", {"Kimchi.md": "# Kimchi\n\nFermented cabbage, a backup of vegetables.\n"})
    reindex(load_config(vault=str(vault), store=pg_url, collection="a"))
    reindex(load_config(vault=str(other), store=pg_url, collection="b"))
    only_a = search("backup kimchi", load_config(vault=str(vault), store=pg_url, collection="a"), gate=False)
    only_b = search("backup kimchi", load_config(vault=str(other), store=pg_url, collection="b"), gate=False)
    both_ = search("backup kimchi", load_config(store=pg_url, collection="a,b"), gate=False)
    assert only_a.hits and "Kimchi.md" not in {h.path for h in only_a.hits}
    assert {h.path for h in only_b.hits} == {"Kimchi.md"}
    assert "Kimchi.md" in {h.path for h in both_.hits} and len({h.path for h in both_.hits}) > 1
    from vaultrag.status import status
    names = {c["name"]: c["chunks"] for c in status(load_config(vault=str(other), store=pg_url,
                                                                collection="b"))["collections"]}
    assert set(names) == {"a", "b"} and names["b"] == 1


def test_searcher_without_the_files_cites_stored_text(vault, pg_url):
    reindex(load_config(vault=str(vault), store=pg_url, collection="notes"))
    remote = load_config(store=pg_url, collection="notes")  # another machine: no vault folder here
    import shutil
    shutil.rmtree(vault)
    ans = search("restore drill", remote)
    assert ans.status == "ok" and ans.hits and {h.citation for h in ans.hits} == {"stored"}
    assert "restore" in ans.hits[0].text.lower()


def test_sqlite_and_hook_paths_never_import_psycopg(vault, tmp_path):
    cfg = load_config(vault=str(vault), db=str(tmp_path / "i.sqlite"))
    reindex(cfg)
    code = ("import sys; from vaultrag.config import load_config; from vaultrag.retrieve import search; "
            f"a = search('restore drill', load_config(vault={str(vault)!r}, db={str(tmp_path / 'i.sqlite')!r})); "
            "print(a.status, 'psycopg' in sys.modules, 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["ok", "False", "False"]


def test_pg_search_path_stays_lean(vault, pg_url):
    reindex(load_config(vault=str(vault), store=pg_url, collection="notes"))
    code = ("import sys; from vaultrag.config import load_config; from vaultrag.retrieve import search; "
            f"a = search('restore drill', load_config(vault={str(vault)!r}, store={pg_url!r}, collection='notes')); "
            "print(a.status, 'psycopg' in sys.modules, *(m in sys.modules for m in ('numpy', 'model2vec', 'tiktoken', 'yaml')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["ok", "True", "False", "False", "False", "False"]


def test_killed_full_rebuild_leaves_the_collection_answering_and_converges(vault, pg_url, tmp_path):
    cfg = load_config(vault=str(vault), store=pg_url, collection="notes")
    reindex(cfg)
    before = search("restore drill", cfg)
    for i in range(40):  # enough notes that the kill lands mid-build
        write_notes(vault, {f"Bulk/n{i}.md": f"# Note {i}\n\nFiller text number {i} about gardening.\n"})
    code = ("import sys, os; from vaultrag.config import load_config; from vaultrag.indexer import reindex; "
            f"cfg = load_config(vault={str(vault)!r}, store={pg_url!r}, collection='notes'); "
            "reindex(cfg, full=True, progress=lambda d, t, p: (d == 10 and (print('at10', flush=True), os.kill(os.getpid(), 9))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == -9 and "at10" in proc.stdout
    during = search("restore drill", cfg)
    assert [h.path for h in during.hits] == [h.path for h in before.hits]  # the live generation untouched
    reindex(cfg)  # the next run drops the orphan and converges
    with open_store(cfg) as s:
        assert s.counts()["files"] == len(list(vault.rglob("*.md")))
        import psycopg
        with psycopg.connect(pg_url) as conn:
            assert conn.execute("SELECT count(*) FROM generations").fetchone()[0] == 1


def test_cli_store_and_collection_flags(vault, pg_url):
    run = lambda *a: subprocess.run([sys.executable, "-m", "vaultrag", *a], capture_output=True, text=True)  # noqa: E731
    r = run("reindex", "--vault", str(vault), "--store", pg_url, "--collection", "cli", "--json")
    assert r.returncode == 0, r.stderr
    r = run("search", "restore drill", "--vault", str(vault), "--store", pg_url, "--collection", "cli", "--json")
    assert r.returncode == 0 and '"Projects/Backup plan.md"' in r.stdout
    r = run("status", "--vault", str(vault), "--store", pg_url, "--collection", "cli")
    assert r.returncode == 0 and "collection: cli:" in r.stdout
    r = run("search", "restore drill", "--store", pg_url, "--collection", "nope")
    assert r.returncode == 1 and "no collection nope" in r.stderr


def test_env_and_config_file_name_the_store(vault, pg_url, tmp_path, monkeypatch):
    monkeypatch.setenv("VAULTRAG_STORE", pg_url)
    cfg = load_config(vault=str(vault))
    assert cfg.store == pg_url
    assert backend_for(cfg).location.endswith(f"(collection {vault.name})")
    conf = tmp_path / "c.yaml"
    conf.write_text(f"store: {tmp_path / 'x.sqlite'}\ncollection: team\n")
    monkeypatch.delenv("VAULTRAG_STORE")
    cfg = load_config(conf, vault=str(vault))
    assert backend_for(cfg).location == str(tmp_path / "x.sqlite") and cfg.collection == "team"
    assert dataclasses.replace(cfg, store=None).db_path() != tmp_path / "x.sqlite"

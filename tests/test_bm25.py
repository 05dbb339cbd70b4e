"""The oracle for store/sqlite/bm25.py: its top k equals FTS5's bm25() ordered top k -- every id,
every score to the bit, ties in the same order -- on real indexes (the example vault and a
generated one full of shared words, prefixes, CJK bigrams, words in titles, headings and tags,
duplicate notes), before and after notes change."""
from __future__ import annotations

import random

import pytest

from conftest import write_notes
from vaultrag.indexer import reindex
from vaultrag.retrieve.channels import BM25_WEIGHTS, build_fts_query
from vaultrag.store import Term, open_store
from vaultrag.store.sqlite import bm25, fts

COMMON = ["file", "files", "list", "directory", "show", "create", "config", "configure", "configuration",
          "process", "port", "server", "network", "git", "commit", "branch"]
RARE = ["kerberos", "gratuitous", "failover", "zeroconf", "symlink", "tarball", "checksum", "hexdump",
        "quorum", "raft", "paxos", "gossip", "sharding", "vacuum", "mmap", "inode"]
CJK = "数据库索引查询网络服务器配置文件目录进程端口"


def _generated(seed: int) -> dict[str, str]:
    rnd = random.Random(seed)
    notes = {}
    for i in range(160):
        words = [rnd.choice(COMMON) for _ in range(rnd.randint(3, 40))] + \
                [rnd.choice(RARE) for _ in range(rnd.randint(0, 4))]
        rnd.shuffle(words)
        title = " ".join(rnd.sample(COMMON + RARE, 2))
        tags = " ".join(f"#{t}" for t in rnd.sample(RARE, rnd.randint(0, 2)))
        heading = " ".join(rnd.sample(COMMON + RARE, rnd.randint(1, 3)))
        cjk = "".join(rnd.choice(CJK) for _ in range(rnd.randint(0, 30)))
        body = " ".join(words)
        notes[f"n{i:03d}.md"] = (f"---\ntitle: {title}\ntags: [{tags.replace('#', '')}]\n---\n# {title}\n\n"
                                 f"{body}\n\n## {heading}\n\n{' '.join(rnd.sample(words, len(words) // 2))} {cjk}\n")
    for i in range(6):  # identical notes: equal scores, the rowid decides
        notes[f"dup{i}.md"] = "# same\n\nkerberos file list directory 数据库\n"
    return notes


def _queries(rnd: random.Random) -> list[tuple[Term, ...]]:
    vocab = COMMON + RARE
    out = []
    for _ in range(60):
        terms = [Term(w) for w in rnd.sample(vocab, rnd.randint(1, 6))]
        if rnd.random() < 0.4:
            terms.append(Term(rnd.choice(["conf", "fil", "proc", "kerb", "dire", "comm"]), prefix=True))
        if rnd.random() < 0.4:
            a, b = rnd.sample(CJK, 2)
            terms.append(Term(f"{a} {b}"))
            terms.append(Term(rnd.choice(CJK)))
        if rnd.random() < 0.3:
            terms.append(Term("kerberose", alternatives=("kerbero",)))
        out.append(tuple(dict.fromkeys(terms)))
    return out


def _check(store, queries, monkeypatch, limits=(1, 5, 30, 500)) -> int:
    """Every query: pruned top k == bm25() top k. Returns how many answers were compared."""
    monkeypatch.setattr(bm25, "SQL_MATCHES", 0)  # always the pruned path, however few the matches
    monkeypatch.setattr(bm25, "READ_BUDGET", 10 ** 9)
    top = bm25.Bm25(store.conn, cache=store.readonly)
    compared = 0
    for terms in queries:
        match = fts.match_any(terms)
        for limit in limits:
            want = [(cid, -s) for cid, s in store.fts_search(match, limit, BM25_WEIGHTS)]
            got = top.top(terms, limit, BM25_WEIGHTS)
            assert got == want, (terms, limit)
            compared += bool(want)
    return compared


@pytest.mark.parametrize("weights", [BM25_WEIGHTS, (1.0, 1.0, 1.0), (0.3, 2.0, 0.7)])
def test_pruned_top_k_is_bm25s_on_a_generated_vault(tmp_path, cfg_for, monkeypatch, weights):
    cfg = cfg_for(write_notes(tmp_path / "v", _generated(1)))
    reindex(cfg)
    store = open_store(cfg, readonly=True)
    try:
        monkeypatch.setattr(bm25, "SQL_MATCHES", 0)
        monkeypatch.setattr(bm25, "READ_BUDGET", 10 ** 9)
        top = bm25.Bm25(store.conn, cache=True)
        n = 0
        for terms in _queries(random.Random(2)):
            match = fts.match_any(terms)
            for limit in (1, 7, 30):
                want = [(cid, -s) for cid, s in store.fts_search(match, limit, weights)]
                assert top.top(terms, limit, weights) == want, (terms, limit)
                n += bool(want)
        assert n > 150
    finally:
        store.close()


def test_the_same_after_notes_change_and_through_the_store(tmp_path, cfg_for, monkeypatch):
    root = write_notes(tmp_path / "v", _generated(3))
    cfg = cfg_for(root)
    reindex(cfg)
    for i in range(0, 160, 3):  # deletes and edits: FTS5 delete markers under the vocabulary
        (root / f"n{i:03d}.md").unlink()
    for i in (i for i in range(1, 160, 7) if i % 3):
        p = root / f"n{i:03d}.md"
        p.write_text(p.read_text(encoding="utf-8") + "\nkerberos quorum kerberos file\n", encoding="utf-8")
    reindex(cfg)
    store = open_store(cfg, readonly=True)
    try:
        assert _check(store, _queries(random.Random(4)), monkeypatch) > 150
        # through Store.lexical (the seam), and the document counts it leaves for the gate
        terms = (Term("file"), Term("kerberos"), Term("conf", prefix=True))
        want = [(cid, -s) for cid, s in store.fts_search(fts.match_any(terms), 30, BM25_WEIGHTS)]
        assert store.lexical(terms, 30, BM25_WEIGHTS) == want
        for t in terms:
            assert store.doc_freq(t, 10 ** 6) == store.fts_doc_count(fts.expression(t), 10 ** 6) > 0
            assert store.doc_freq(t, 2) == 2
    finally:
        store.close()


def test_the_example_vault_and_real_queries(vault, cfg_for, monkeypatch):
    cfg = cfg_for(vault)
    reindex(cfg)
    store = open_store(cfg, readonly=True)
    try:
        texts = ["how do I configure the server", "what is the dragonfly handshake", "notes about meetings and projects",
                 "link embed heading block", "python install package", "数据库 查询", "résumé café naïve"]
        queries = [build_fts_query(q, store).terms for q in texts]
        _check(store, [q for q in queries if q], monkeypatch)
    finally:
        store.close()


def test_a_full_token_cache_starts_again(tmp_path, cfg_for, monkeypatch):
    """Past TOKEN_CACHE query strings the cache empties and still tokenises every phrase asked
    (it once kept only the new ones: KeyError on xquad-zh's many CJK bigrams)."""
    cfg = cfg_for(write_notes(tmp_path / "v", _generated(6)))
    reindex(cfg)
    store = open_store(cfg, readonly=True)
    try:
        monkeypatch.setattr(bm25, "TOKEN_CACHE", 3)
        top = bm25.Bm25(store.conn, cache=True)
        top._setup()
        assert top.tokens(["files", "kerberos"]) == [("file",), ("kerbero",)]
        assert top.tokens(["files", "listing", "数 据"]) == [("file",), ("list",), ("数", "据")]
        monkeypatch.setattr(bm25, "SQL_MATCHES", 0)
        terms = (Term("file"), Term("kerberos"), Term("数 据"), Term("quorum"))
        want = [(cid, -s) for cid, s in store.fts_search(fts.match_any(terms), 30, BM25_WEIGHTS)]
        assert top.top(terms, 30, BM25_WEIGHTS) == want
    finally:
        store.close()


def test_an_unprovable_query_falls_back_to_sql_and_a_tiny_budget_still_answers(tmp_path, cfg_for, monkeypatch):
    cfg = cfg_for(write_notes(tmp_path / "v", _generated(5)))
    reindex(cfg)
    store = open_store(cfg, readonly=True)
    try:
        terms = (Term("file"), Term("list"), Term("directory"))
        top = bm25.Bm25(store.conn, cache=True)
        monkeypatch.setattr(bm25, "SQL_MATCHES", 0)
        monkeypatch.setattr(bm25, "READ_BUDGET", 1)
        assert top.top(terms, 30, BM25_WEIGHTS) is None  # over budget: the caller asks bm25()
        want = [(cid, -s) for cid, s in store.fts_search(fts.match_any(terms), 30, BM25_WEIGHTS)]
        assert store.lexical(terms, 30, BM25_WEIGHTS) == want
        assert top.top((), 30, BM25_WEIGHTS) == [] and top.top(terms, 0, BM25_WEIGHTS) == []
        assert top.top((Term("nosuchwordanywhere"),), 30, BM25_WEIGHTS) == []
    finally:
        store.close()

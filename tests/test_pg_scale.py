"""benchmarks/pg_scale.py: the PostgreSQL / SQLite side-by-side figures count the capped lexical
path right, compare it with a truly exact answer, and time hooks down the paths they claim."""
from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from conftest import load_script, lorem_notes, write_notes
from pg_fixtures import pg_server, pg_url  # noqa: F401  (fixtures)
from vaultrag.config import load_config
from vaultrag.indexer import reindex
from vaultrag.retrieve.channels import BM25_WEIGHTS, build_fts_query
from vaultrag.store import open_store
from vaultrag.store.postgres import lexical


def _module():
    return load_script("benchmarks/pg_scale.py")


def test_scale_spec_and_overlap():
    m = _module()
    assert m.parse_scale("x10=/a/b.sqlite,coll") == ("x10", Path("/a/b.sqlite"), "coll")
    for bad in ("x10", "x10=/a/b.sqlite", "=/a,b", "x1=,c", "x1=/a,"):
        with pytest.raises(argparse.ArgumentTypeError):
            m.parse_scale(bad)
    assert m.overlap([1, 2, 3], [3, 4], k=10) == 0.5
    assert m.overlap([1, 2], [], k=10) == 1.0
    assert m.overlap(list(range(20)), list(range(10, 30)), k=10) == 0.0  # only the first k of each count


@pytest.fixture
def built(tmp_path, pg_url):
    """60 notes ('common' in all, 'quokka' in 15) in both stores, the bundled model."""
    notes = lorem_notes()
    vault = write_notes(tmp_path / "v", notes)
    db = tmp_path / "i.sqlite"
    reindex(load_config(vault=str(vault), db=str(db), model="bundled"), full=True)
    reindex(load_config(vault=str(vault), store=pg_url, collection="v", model="bundled"), full=True)
    return vault, db, pg_url


def test_capped_queries_are_counted_and_compared_with_the_exact_ranking(built, monkeypatch):
    m = _module()
    vault, db, url = built
    queries = ["common quokka", "lorem common", "quokka", "zygomorphic"]
    under = m.measure_scale("t", db, "v", url, vault, queries, rounds=1)
    assert under["lexical_capped_queries"] == 0  # 60 notes: under the default cap, every answer exact
    assert under["lexical_top10_overlap_pg_vs_fts5_mean"] == 1.0
    assert under["sqlite_chunks"] == under["postgres_chunks"] == 60
    assert under["samples_per_store"] == len(queries)
    assert 0 < under["hnsw_recall_at_10"] <= 1 and 0 < under["sqlite_int8_recall_vs_exact_at_10"] <= 1

    monkeypatch.setattr(lexical, "SCAN_CAP", 8)  # 'common' (60 chunks) now past the cap; 'quokka' (15) too
    cfg = load_config(vault=str(vault), store=url, collection="v", model="bundled")
    with open_store(cfg) as st:
        terms = build_fts_query("common quokka", st).terms
        capped = st.lexical(terms, 30, BM25_WEIGHTS)
        assert st.lexical_exact is False
        exact = m.exact_lexical(st, terms, 30, BM25_WEIGHTS)
        assert st.lexical_exact is True and lexical.SCAN_CAP == 8  # the cap is put back
        assert len(capped) <= 16  # at most 2 x SCAN_CAP candidates
    with open_store(load_config(vault=str(vault), db=str(db), model="bundled")) as sq, open_store(cfg) as st:
        want = [sq.chunks_by_id([c])[c].path for c, _ in sq.lexical(terms, 30, BM25_WEIGHTS)]
        assert [st.chunks_by_id([c])[c].path for c, _ in exact] == want  # FTS5's own top 30
    over = m.measure_scale("t", db, "v", url, vault, queries, rounds=1)
    assert over["lexical_capped_queries"] == 3  # all but 'zygomorphic' (no match)
    assert 0 < over["lexical_capped_top10_overlap_min"] <= over["lexical_capped_top10_overlap_with_exact"] <= 1
    assert over["capped_examples"] == [q for q in queries if q != "zygomorphic"]


def test_hook_ways_take_the_paths_they_are_named_for(built, tmp_path):
    m = _module()
    vault, db, url = built
    out = m.hook_latency(db, "v", url, vault, ["quokka common lorem"], 1, tmp_path / "h")
    assert out["runs"] == 1 and out["floor"]["with_output"] == 0
    assert "no `vaultrag serve` answered" in out["log_tail"]["postgres"][0]  # default deadline: declined
    assert out["postgres"]["with_output"] == 0
    assert not any("no `vaultrag serve` answered" in line for line in out["log_tail"]["postgres_in_process"])
    assert out["postgres_in_process"]["with_output"] == out["sqlite"]["with_output"]
    # CPU is the child's own (a hook process costs at least the floor's, and never more than its wall
    # plus a little for the 2-core scheduler); the budget is each way's own deadline
    for way in ("floor", "sqlite", "postgres", "postgres_in_process"):
        assert 0 < out[way]["cpu_p50_ms"] <= out[way]["p50_ms"] * 2 + 50
    assert out["floor"]["within_budget"] is None and out["floor"]["budget_ms"] is None
    assert out["postgres_in_process"]["budget_ms"] > out["sqlite"]["budget_ms"] == out["postgres"]["budget_ms"]
    assert out["postgres"]["within_budget"] == 1  # declining costs far less than the deadline


def test_build_starts_its_own_server_builds_once_and_stops_it(tmp_path, pg_server, monkeypatch, capsys):
    """--build DIR: from a fresh clone, no URL and no index given (the pg_server fixture only tells
    whether a server can start here; the script starts its own in DIR)."""
    import json

    m = _module()
    vault = write_notes(tmp_path / "v", {f"pages/common/n{i}.md": f"# tool{i}\n\n> Frobnicate widgets {i}.\n\n- run `tool{i}`\n"
                                         for i in range(12)})
    build = tmp_path / "b"
    started = []
    real = m.build_x1

    def spy(v, b):
        server, url, scales = real(v, b)
        started.append(server)
        return server, url, scales

    monkeypatch.setattr(m, "build_x1", spy)
    assert m.main(["--build", str(build), "--vault", str(vault), "--queries", "20", "--rounds", "1",
                   "--hook-runs", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["x1"]["sqlite_chunks"] == out["x1"]["postgres_chunks"] == 12
    assert out["hook"]["scale"] == "x1" and out["hook"]["runs"] == 1
    assert (build / "x1.sqlite").exists()
    assert started and not (build / "pgdata" / "postmaster.pid").exists()  # the server was stopped at the end
    mtime = (build / "x1.sqlite").stat().st_mtime_ns
    assert m.main(["--build", str(build), "--vault", str(vault), "--queries", "20", "--rounds", "1"]) == 0
    assert (build / "x1.sqlite").stat().st_mtime_ns == mtime  # the second run measured, did not rebuild
    assert json.loads(capsys.readouterr().out)["x1"]["postgres_chunks"] == 12

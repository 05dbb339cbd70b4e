"""Worker processes for reindex (index_pool): the same index with 1 and N workers, small batches in
process, incremental runs, spawn, and no process left behind when the writer is killed."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from vaultrag import index_pool
from vaultrag.indexer import reindex
from vaultrag.store.sqlite.connection import connect

from conftest import shared_path, write_notes

REPO = Path(__file__).resolve().parent.parent


def _cfg(vault: Path, db: Path):
    from vaultrag.config import load_config

    return load_config(vault=str(vault), db=str(db), model="bundled")


@pytest.fixture
def real_vault(tmp_path) -> Path:
    """obsidian-help (English and German pages: real Markdown with links, embeds, tags), plus notes
    that take the other roads: a secret, a binary file, invalid UTF-8, an empty note."""
    src = shared_path("eval", "vaults", "obsidian-help")
    dest = tmp_path / "vault"
    for lang in ("en", "de"):
        shutil.copytree(src / lang, dest / lang)
    write_notes(dest, {"ops/keys.md": "# Keys\n\nprod: AKIAIOSFODNN7EXAMPLF and token ghp_" + "a1B2" * 9 + "\n",
                       "empty.md": ""})
    (dest / "blob.md").write_bytes(b"\x00\x01binary")
    (dest / "latin1.md").write_bytes("# Caf\xe9\n\nna\xefve text\n".encode("latin-1"))
    return dest


def _tables(db: Path) -> dict[str, list]:
    """Every stored row of every table (the vector table's shadow tables included), meta aside; the
    FTS5 index as its (term, chunk, column, offset) instances."""
    con = connect(db, readonly=True)
    try:
        out = {}
        for name, sql in con.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name"):
            if name == "meta" or (sql or "").upper().startswith("CREATE VIRTUAL"):
                continue
            if name in ("chunks_fts_data", "chunks_fts_idx"):  # their segments follow the commits: compared
                continue  # below as what they index, every term's every position
            out[name] = sorted(map(repr, con.execute(f'SELECT * FROM "{name}"')))
        con.execute("CREATE VIRTUAL TABLE temp.fts_pos USING fts5vocab(main, chunks_fts, instance)")
        out["fts5 instances"] = [tuple(r) for r in con.execute("SELECT * FROM temp.fts_pos ORDER BY 1, 2, 3, 4")]
        assert out["fts5 instances"], "an FTS index to compare"
        return out
    finally:
        con.close()


def _small_pool(monkeypatch, min_files: int = 1, task_files: int = 5):
    # a thread another test left running makes the pool start by spawn (index_pool.start_method):
    # the same floor for both methods, so these tests pool either way
    monkeypatch.setattr(index_pool, "POOL_MIN_FILES", min_files)
    monkeypatch.setattr(index_pool, "POOL_MIN_FILES_SPAWN", min_files)
    monkeypatch.setattr(index_pool, "TASK_FILES", task_files)


def test_one_and_two_workers_build_the_same_index(real_vault, cfg_for, tmp_path, monkeypatch):
    _small_pool(monkeypatch)
    one = reindex(_cfg(real_vault, tmp_path / "one.sqlite"), full=True, workers=1)
    two = reindex(_cfg(real_vault, tmp_path / "two.sqlite"), full=True, workers=2)
    assert one.workers == 0 and two.workers == 2
    assert one.added == two.added > 100 and one.chunks_total == two.chunks_total
    assert two.embedding.embedded == one.embedding.embedded > 0
    assert sorted(one.skipped) == sorted(two.skipped) and sorted(one.warnings) == sorted(two.warnings)
    assert one.secrets == two.secrets and one.secrets
    a, b = _tables(tmp_path / "one.sqlite"), _tables(tmp_path / "two.sqlite")
    assert a.keys() == b.keys() and any(k.startswith("chunks_vec") for k in a)
    for name in a:
        assert a[name] == b[name], name


def test_incremental_run_with_workers_matches_in_process(real_vault, cfg_for, tmp_path, monkeypatch):
    _small_pool(monkeypatch, task_files=3)
    dbs = {w: tmp_path / f"inc{w}.sqlite" for w in (1, 2)}
    for w, db in dbs.items():
        reindex(_cfg(real_vault, db), workers=1)
    notes = [p for p in sorted(real_vault.rglob("*.md")) if p.name not in ("blob.md", "latin1.md")][:60]
    for i, p in enumerate(notes):
        if i % 3 == 0:  # edited
            p.write_text(p.read_text(encoding="utf-8") + f"\n\nAppended line {i} about pelicans.\n", encoding="utf-8")
        else:  # touched only: same bytes, new mtime
            os.utime(p, ns=(time.time_ns(), time.time_ns() + i * 1000))
    reports = {w: reindex(_cfg(real_vault, db), workers=w) for w, db in dbs.items()}
    assert reports[2].workers == 2 and reports[1].workers == 0
    assert reports[1].updated == reports[2].updated == len(notes[::3])
    assert reports[1].touched == reports[2].touched > 0
    assert reports[1].embedding.reused == reports[2].embedding.reused > 0  # unchanged sections keep vectors
    assert _tables(dbs[1]) == _tables(dbs[2])


def test_small_batch_runs_in_process(vault, cfg_for, monkeypatch):
    def no_pool(*_a, **_k):
        raise AssertionError("a pool was started for a small batch")

    monkeypatch.setattr(index_pool, "_pooled", no_pool)
    rep = reindex(cfg_for(vault, model="bundled"), full=True, workers=2)
    assert 0 < rep.added < index_pool.POOL_MIN_FILES and rep.workers == 0 and rep.embedding.embedded > 0


def test_worker_count_and_start_method():
    assert index_pool.resolve_workers(3) == 3
    assert 1 <= index_pool.resolve_workers(0) == index_pool.default_workers() <= index_pool.DEFAULT_WORKERS_CAP
    with pytest.raises(ValueError, match="one per core"):
        index_pool.resolve_workers(-1)
    assert index_pool.start_method(threads=2) == "spawn"
    assert index_pool.pool_size(10_000, 1, "fork") == 0
    assert index_pool.pool_size(index_pool.POOL_MIN_FILES - 1, 4, "fork") == 0
    assert index_pool.pool_size(index_pool.POOL_MIN_FILES, 4, "fork") == 4
    assert index_pool.pool_size(index_pool.POOL_MIN_FILES, 4, "spawn") == 0


def test_config_and_cli_carry_workers(vault, tmp_path):
    from vaultrag.config import load_config
    from vaultrag.errors import ConfigError

    conf = tmp_path / "c.yaml"
    conf.write_text("index:\n  workers: 3\n")
    assert load_config(str(conf), vault=str(vault)).workers == 3
    conf.write_text("index:\n  workers: -2\n")
    with pytest.raises(ConfigError, match="workers"):
        load_config(str(conf), vault=str(vault))
    from vaultrag.cli import build_parser

    assert build_parser().parse_args(["reindex", "--workers", "2"]).workers == 2


def test_spawned_workers_build_the_same_index(real_vault, cfg_for, tmp_path, monkeypatch):
    _small_pool(monkeypatch, task_files=40)
    monkeypatch.setattr(index_pool, "POOL_MIN_FILES_SPAWN", 1)
    monkeypatch.setattr(index_pool, "start_method", lambda threads=None: "spawn")
    one = reindex(_cfg(real_vault, tmp_path / "one.sqlite"), full=True, workers=1)
    two = reindex(_cfg(real_vault, tmp_path / "sp.sqlite"), full=True, workers=2)
    assert two.workers == 2 and one.added == two.added
    assert _tables(tmp_path / "one.sqlite") == _tables(tmp_path / "sp.sqlite")


KILLED_CHILD = textwrap.dedent("""
    import os, signal, sys
    from vaultrag import index_pool
    from vaultrag.config import load_config
    from vaultrag.indexer import reindex
    index_pool.POOL_MIN_FILES, index_pool.TASK_FILES = 1, 2
    cfg = load_config(vault=sys.argv[1], db=sys.argv[2], model="bundled")
    def kill(done, total, path):
        if done >= 130:  # the second group's first commit: one group written, workers busy
            os.kill(os.getpid(), signal.SIGKILL)
    reindex(cfg, full=True, workers=2, progress=kill)
""")


def _processes_with(marker: str) -> list[int]:
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if marker.encode() in (d / "cmdline").read_bytes():
                    pids.append(int(d.name))
            except OSError:
                pass
    return pids


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc to find the workers")
def test_killed_writer_keeps_the_old_index_and_leaves_no_worker(real_vault, cfg_for, tmp_path):
    db = tmp_path / "k.sqlite"
    cfg = _cfg(real_vault, db)
    before = reindex(cfg, workers=1)
    old = _tables(db)
    marker = f"pool-kill-{os.getpid()}-{time.time_ns()}"
    env = dict(os.environ, PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1")
    p = subprocess.run([sys.executable, "-c", KILLED_CHILD, str(real_vault), str(db), marker],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == -signal.SIGKILL, p.stderr
    deadline = time.monotonic() + 10 * index_pool.PARENT_CHECK_S + 5
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_with(marker) == []
    assert _tables(db) == old  # the killed --full never replaced the index
    again = reindex(cfg, full=True, workers=2)
    assert again.added == before.added and not again.interrupted
    digest = hashlib.sha256(repr(_tables(db)).encode()).hexdigest()
    assert digest == hashlib.sha256(repr(old).encode()).hexdigest()


UNGUARDED_SCRIPT = textwrap.dedent("""
    # no `if __name__ == "__main__"` guard: a spawned worker must not run this again
    import json, sys
    from vaultrag import index_pool
    from vaultrag.config import load_config
    from vaultrag.indexer import reindex
    index_pool.POOL_MIN_FILES_SPAWN, index_pool.TASK_FILES = 1, 50
    index_pool.start_method = lambda threads=None: "spawn"
    rep = reindex(load_config(vault=sys.argv[1], db=sys.argv[2], model="bundled"), full=True, workers=2)
    print(json.dumps({"workers": rep.workers, "added": rep.added}))
""")


def test_spawn_from_a_script_without_main_guard(real_vault, tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text(UNGUARDED_SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1")
    p = subprocess.run([sys.executable, str(script), str(real_vault), str(tmp_path / "u.sqlite")],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["workers"] == 2 and out["added"] > 100
    assert p.stdout.count('"workers"') == 1  # the script ran once, not again in each worker


def test_workers_send_packed_vectors_without_embed_inputs(vault, monkeypatch):
    """A worker's task packs what it embeds as the store would (SQLite: int8 blobs, the same bytes
    as packing the whole batch in the writer) and drops the embed inputs; the writer then stores
    those blobs without embedding anything."""
    from vaultrag.embedder import load_embedder
    from vaultrag.index_vectors import embed_batch
    from vaultrag.indexer import Report, build_file, read_note, token_counter
    from vaultrag.store.sqlite.store import SqliteStore, pack_vectors

    cfg = _cfg(vault, vault.parent / "w.sqlite")
    emb, count = load_embedder("bundled"), token_counter()[1]
    rels = sorted(str(p.relative_to(vault)) for p in vault.rglob("*.md"))[:6]
    jobs = [index_pool.Job(rel, rel, os.stat(vault / rel)) for rel in rels]
    monkeypatch.setattr(index_pool, "_STATE", dict(root=vault, cfg=cfg, count_tokens=count, embedder=emb,
                                                   forms=None, pack=pack_vectors))
    done, hashes, blobs = index_pool._task(jobs)
    assert all(p.fw is not None and p.inputs == () for p in done)
    inputs: dict[str, str] = {}
    for rel, job in zip(rels, jobs):
        raw, text, _ = read_note(vault, rel, cfg.max_file_bytes)
        fw, ins, _s, _w = build_file(rel, job.st, raw, text, cfg, count)
        inputs.update((ch.embed_hash, i) for ch, i in zip(fw.chunks, ins))
    assert hashes == list(inputs) and len(hashes) >= 6
    assert blobs == pack_vectors(emb.encode(list(inputs.values()), batch_size=cfg.embed_batch_size), cfg.vector_type)

    class NoEncode:
        def encode(self, *_a, **_k):
            raise AssertionError("the writer embedded what a worker had")

    store = SqliteStore(vault.parent / "w.sqlite")
    with store.transaction():
        store.reset_vectors(emb.dim, cfg.vector_type)
    report = Report()
    got = embed_batch(store, NoEncode(), [list(p.inputs) for p in done], [p.fw for p in done], cfg, report,
                      computed=dict(zip(hashes, blobs)), packed=True)
    by_hash = dict(zip(hashes, blobs))
    assert got == [[by_hash[ch.embed_hash] for ch in p.fw.chunks] for p in done]
    assert report.embedding.embedded == len(hashes)
    store.close()

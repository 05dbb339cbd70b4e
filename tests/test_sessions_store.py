"""Issue 17 on the Store seam: chunk origins on both backends (SQLite and PostgreSQL), and the
whole sessions path (index, search with scope, citations, incremental append) through each."""
from __future__ import annotations

import json

from pg_fixtures import pg_server, pg_url  # noqa: F401  (fixtures)
from session_corpus import new_transcript, planted_sessions
from test_store_contract import make_cfg  # noqa: F401  (fixture: a Config on each backend)
from vaultrag.indexer import reindex
from vaultrag.retrieve import search
from vaultrag.store import ChunkRow, FileWrite, backend_for, open_store


def _fw(path: str, n: int) -> FileWrite:
    rows = tuple(ChunkRow(section_index=i, chunk_index=0, heading_path="", context="", text=f"chunk {i} words",
                          search_text=None, line_start=i + 1, line_end=i + 1, content_hash=f"{i:016x}",
                          embed_hash=f"{i:016x}", tokens=3, block_ids="") for i in range(n))
    return FileWrite(path=path, mtime_ns=1, size=10, hash="00" * 32, title="t", note_type=None, stem_key=path,
                     chunks=rows, links=(), keys=())


def test_origins_roundtrip_and_go_with_their_document(vault, make_cfg):
    cfg = make_cfg(vault)
    reindex(cfg)
    path = "session://p/s.jsonl@0"
    with backend_for(cfg).open() as s:
        with s.transaction():
            s.write_file(_fw(path, 3), None)
            s.put_origins(path, "sessions", [json.dumps({"message_uuid": f"u{i}"}) for i in range(3)])
        ids = [c.id for c in s.chunks_of_files([s.files()[path].id])]
        got = s.origins(ids + [ids[0]])
        assert [json.loads(got[i][1])["message_uuid"] for i in ids] == ["u0", "u1", "u2"]
        assert {got[i][0] for i in ids} == {"sessions"}
        vault_ids = [c.id for c in s.chunks_of_files([r.id for p, r in s.files().items() if p != path])]
        assert s.origins(vault_ids) == {}
        with s.transaction():
            s.write_file(_fw(path, 1), None)  # rewritten: the old chunks' origins are gone
        assert s.origins(ids) == {}
        with s.transaction():
            s.put_origins(path, "sessions", ["{}"])
            s.delete_file(path)
        assert s.origins([c.id for c in s.chunks_of_files([r.id for r in s.files().values()])]) == {}


def test_sessions_search_on_each_backend(vault, make_cfg, tmp_path):
    info = planted_sessions(tmp_path / "projects")
    cfg = make_cfg(vault, sessions=str(tmp_path / "projects"))
    report = reindex(cfg)
    assert report.sessions["sessions_indexed"] == 3
    session, uuid, role = info["found"]["snickerbolt"]
    ans = search("snickerbolt", cfg, scope="sessions")
    assert ans.status == "ok"
    top = ans.hits[0]
    assert (top.origin["session_id"], top.origin["message_uuid"], top.origin["role"]) == (session, uuid, role)
    assert top.citation == "fresh" and top.scope == "sessions"
    t = new_transcript(8)
    t.user("Appended: the tarnwhistle flag stays off")
    with open(info["paths"][0], "a", encoding="utf-8") as fh:
        fh.write("\n".join(t.lines) + "\n")
    again = reindex(cfg)
    assert again.sessions["segments_written"] == 1
    assert search("tarnwhistle", cfg, scope="sessions").status == "ok"
    assert search("tarnwhistle", cfg, scope="vault").status == "no_evidence"
    with open_store(cfg, readonly=True) as s:
        assert sum(p.startswith("session://") for p in s.files()) == 4  # 3 transcripts, one with 2 segments

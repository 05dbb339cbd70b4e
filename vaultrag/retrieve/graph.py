"""One-hop wikilink expansion: the notes a top hit links to often hold the rest of the answer."""
from __future__ import annotations

from ..store import Store, StoredChunk
from ..textutil import meta_key
from .types import CHANNELS, Candidate

FOLLOWED_KINDS = ("link", "embed")  # asset embeds (images, PDFs) have no text to add


def _resolve(store: Store, chunks_of: dict[int, list[StoredChunk]], file_id: int, anchor: str | None) -> StoredChunk | None:
    """[[Note#Heading]] -> first chunk under that heading; [[Note#^id]] -> the chunk holding the
    block; [[Note]] -> the note's lead chunk."""
    chunks = chunks_of.get(file_id) or []
    if not chunks:
        return None
    if anchor:
        if anchor.startswith("^"):
            for ch in chunks:
                if anchor in ch.block_ids.split():
                    return ch
        else:
            want = meta_key(anchor.split("#")[-1])
            for ch in chunks:
                parts = ch.heading_path.split(" > ") if ch.heading_path else []
                if any(meta_key(p) == want for p in parts):
                    return ch
    return chunks[0]


def expand(store: Store, direct: list[Candidate], chunks: dict[int, StoredChunk], *, seeds: int,
           fanout: int) -> list[Candidate]:
    """Candidates reached by following the outgoing links of the top `seeds` distinct notes,
    at most `fanout` per seed note; links inside the matched chunk are followed first. Chunks
    already among the direct hits are not repeated. Deterministic: links in file order."""
    seed_notes: list[tuple[int, Candidate]] = []
    seen_files: set[int] = set()
    for cand in direct:
        ch = chunks.get(cand.chunk_id)
        if ch is None or ch.file_id in seen_files:
            continue
        seen_files.add(ch.file_id)
        seed_notes.append((ch.file_id, cand))
        if len(seed_notes) >= seeds:
            break
    if not seed_notes:
        return []
    links = [ln for ln in store.links_from([fid for fid, _ in seed_notes]) if ln.kind in FOLLOWED_KINDS]
    targets = store.files_by_stem(sorted({ln.target_key for ln in links}))
    target_files = sorted({fid for rows in targets.values() for fid, _ in rows[:1]})
    chunks_of: dict[int, list[StoredChunk]] = {}
    for ch in store.chunks_of_files(target_files):
        chunks_of.setdefault(ch.file_id, []).append(ch)
    taken = {c.chunk_id for c in direct}
    out: list[Candidate] = []
    for fid, cand in seed_notes:
        seed_chunk = chunks[cand.chunk_id]
        own = [ln for ln in links if ln.file_id == fid]
        own.sort(key=lambda ln: (ln.chunk_id != cand.chunk_id, ln.line))
        added = 0
        for ln in own:
            if added >= fanout:
                break
            rows = targets.get(ln.target_key)
            if not rows or rows[0][0] == fid:
                continue  # unresolved link, or a link to the note itself
            target = _resolve(store, chunks_of, rows[0][0], ln.anchor)
            if target is None or target.id in taken:
                continue
            taken.add(target.id)
            chunks[target.id] = target
            added += 1
            out.append(Candidate(
                chunk_id=target.id, score=0.0, ranks={c: None for c in CHANNELS}, raw={c: None for c in CHANNELS},
                via="graph", graph_provenance={"seed_path": seed_chunk.path, "seed_heading": seed_chunk.heading_path,
                                               "link": ln.text or (ln.anchor and f"{ln.target_key}#{ln.anchor}") or ln.target_key,
                                               "line": ln.line}))
    return out

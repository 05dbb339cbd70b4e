"""Bulk writes: a transaction's notes sent with binary COPY, one COPY per table, when it commits.

A note written row by row costs a round trip for its file row and a pipeline of INSERTs whose
vectors travel as text ('[0.0123,...]': formatted in Python, parsed again by the server). Here the
store buffers the notes written inside one transaction (the indexer writes a group of 128) and,
when the transaction is about to commit, allocates every id of the group in one query and sends
files, chunks, links and keys as four binary COPYs: the tsvector and the halfvec go in their
binary wire forms (`tsvector_recv`, `halfvec_recv`), built here, so the server parses neither.

Binary COPY carries no type per field: each field's bytes are read by the column's own receive
function, so a value given to psycopg as `bytes` (dumped as raw bytea) arrives as the column type.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Sequence

from ..base import FileWrite

# tsvector positions carry the weight in their top two bits (A=3 .. D=0), the position in 14.
_WEIGHT_BITS = {"A": 3 << 14, "B": 2 << 14, "C": 1 << 14, "D": 0}
_U16 = struct.Struct(">H")
MAX_POSITIONS = 256  # PostgreSQL's MAXNUMPOS: the text input keeps a lexeme's first 256, recv refuses more

FILE_COLS = ("id", "gen", "path", "mtime_ns", "size", "hash", "title", "note_type", "stem_key", "lang")
FILE_TYPES = ("int8", "int8", "text", "int8", "int8", "bytea", "text", "text", "text", "text")
CHUNK_COLS = ("id", "gen", "file_id", "section_index", "chunk_index", "heading_path", "context", "text",
              "line_start", "line_end", "content_hash", "embed_hash", "tokens", "block_ids", "ntok", "tsv",
              "embedding")
# tsv and embedding as `bytea`: psycopg writes the bytes as they are, tsvector_recv/halfvec_recv read them.
CHUNK_TYPES = ("int8", "int8", "int8", "int4", "int4", "text", "text", "text", "int4", "int4", "bytea", "bytea",
               "int4", "text", "int4", "bytea", "bytea")
LINK_COLS = ("file_id", "chunk_id", "target", "target_key", "anchor", "kind", "text", "line")
LINK_TYPES = ("int8", "int8", "text", "text", "text", "text", "text", "int4")
KEY_COLS = ("gen", "file_id", "key", "kind", "chunk_id")
KEY_TYPES = ("int8", "int8", "text", "text", "int8")
ALLOCATE_IDS = """SELECT ARRAY(SELECT nextval(pg_get_serial_sequence('files', 'id')) FROM generate_series(1, %s)),
ARRAY(SELECT nextval(pg_get_serial_sequence('chunks', 'id')) FROM generate_series(1, %s))"""


@dataclass(frozen=True)
class Pending:
    """One note buffered for the next COPY: what write_file was given, its analysed chunks."""
    fw: FileWrite
    vectors: Sequence[bytes | None] | None
    tsvectors: tuple[bytes, ...]
    ntoks: tuple[int, ...]


def tsvector_binary(positions: dict[str, list[tuple[int, str]]]) -> bytes:
    """A tsvector in tsvector_recv's form: entry count, then per lexeme its UTF-8 bytes, a NUL, the
    number of positions and each position with its weight. As the text input makes it: positions
    sorted and unique (a clamped position that repeats keeps its highest weight) and at most
    MAX_POSITIONS of them, the first ones."""
    parts = [struct.pack(">i", len(positions))]
    for lexeme, occ in positions.items():
        best: dict[int, int] = {}
        for pos, weight in occ:
            bits = _WEIGHT_BITS[weight]
            if best.get(pos, -1) < bits:
                best[pos] = bits
        kept = sorted(best)[:MAX_POSITIONS]
        parts.append(lexeme.encode("utf-8") + b"\0")
        parts.append(_U16.pack(len(kept)))
        parts.append(b"".join(_U16.pack(p | best[p]) for p in kept))
    return b"".join(parts)


def halfvec_binary(matrix) -> list[bytes | None]:
    """Each row as halfvec_recv reads it (int16 dimension, int16 unused, big-endian float16s);
    None for an all-zero row (no vector)."""
    import numpy as np

    m = np.asarray(matrix, dtype=np.float32)
    if m.ndim != 2:
        m = m.reshape(len(m), -1)
    head = struct.pack(">hh", m.shape[1], 0)
    body = m.astype(">f2")
    nonzero = np.any(m != 0, axis=1)
    return [head + body[i].tobytes() if nonzero[i] else None for i in range(len(m))]


def halfvec_text(packed: bytes) -> str:
    """A binary halfvec back as pgvector's text input (for the statements that bind a parameter)."""
    import numpy as np

    dim = struct.unpack(">h", packed[:2])[0]
    values = np.frombuffer(packed[4:4 + 2 * dim], dtype=">f2").astype(np.float32)
    return "[" + ",".join("%.5g" % x for x in values.tolist()) + "]"


def copy_rows(cur, table: str, cols: Sequence[str], types: Sequence[str], rows) -> None:
    if not rows:
        return
    with cur.copy(f"COPY {table} ({', '.join(cols)}) FROM STDIN (FORMAT BINARY)") as cp:
        cp.set_types(list(types))
        for row in rows:
            cp.write_row(row)


def flush(conn, gen: int, pending: list[Pending]) -> list[int]:
    """Write the buffered notes (inside the caller's transaction); returns their new file ids."""
    nchunks = sum(len(p.fw.chunks) for p in pending)
    file_ids, chunk_ids = conn.execute(ALLOCATE_IDS, (len(pending), nchunks)).fetchone()
    files, chunks, links, keys = [], [], [], []
    next_chunk = iter(chunk_ids)
    for p, file_id in zip(pending, file_ids):
        fw = p.fw
        files.append((file_id, gen, fw.path, fw.mtime_ns, fw.size, bytes.fromhex(fw.hash), fw.title, fw.note_type,
                      fw.stem_key, fw.lang))
        ids = [next(next_chunk) for _ in fw.chunks]
        for pos, ch in enumerate(fw.chunks):
            vec = p.vectors[pos] if p.vectors is not None else None
            chunks.append((ids[pos], gen, file_id, ch.section_index, ch.chunk_index, ch.heading_path, ch.context,
                           ch.text, ch.line_start, ch.line_end, bytes.fromhex(ch.content_hash),
                           bytes.fromhex(ch.embed_hash), ch.tokens, ch.block_ids, p.ntoks[pos], p.tsvectors[pos],
                           _as_binary(vec)))
        links.extend((file_id, ids[ln.chunk_pos] if ln.chunk_pos is not None else None, ln.target, ln.target_key,
                      ln.anchor, ln.kind, ln.text, ln.line) for ln in fw.links)
        # keys has a primary key and COPY has no ON CONFLICT: one row per (key, kind, chunk) here
        keys.extend(dict.fromkeys((gen, file_id, key, kind, ids[pos] if pos is not None else 0)
                                  for key, kind, pos in fw.keys))
    with conn.cursor() as cur:
        copy_rows(cur, "files", FILE_COLS, FILE_TYPES, files)
        copy_rows(cur, "chunks", CHUNK_COLS, CHUNK_TYPES, chunks)
        copy_rows(cur, "links", LINK_COLS, LINK_TYPES, links)
        copy_rows(cur, "keys", KEY_COLS, KEY_TYPES, keys)
    return list(file_ids)


def _as_binary(vec) -> bytes | None:
    """A packed vector: bytes from pack_vectors; text from an older caller or a reused row."""
    if vec is None or isinstance(vec, (bytes, bytearray, memoryview)):
        return bytes(vec) if vec is not None else None
    values = [float(x) for x in str(vec).strip("[]").split(",") if x.strip()]
    return halfvec_binary([values])[0] if values else None

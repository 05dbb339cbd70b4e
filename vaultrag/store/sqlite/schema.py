"""Schema as ordered migrations, plus the SQL the store runs, as named constants you can print.

FTS5 design: a *contentless* table (`content=''`) holding the search form of each chunk
(`textutil.fts_text`: CJK characters split into single tokens). The chunk text is stored once, in
`chunks`; FTS5 keeps only its inverted index. Contentless tables need the original values to
delete a row, and the store always passes them (recomputed from `chunks`), in the same
transaction as the chunk delete: no trigger, no silent desync. `tests/test_store.py` proves the
FTS vocabulary equals a fresh rebuild after adds, edits, deletes and renames.
"""
from __future__ import annotations

from ..base import FILES_SNAPSHOT_META
from .vectors import padded_dim

# Version 2 (issue 3, database size): hashes stored as bytes, long chunk text deflate-compressed,
# `keys` clustered by file without a rowid, no `files.indexed_at`; int8 vectors rotated and ranked
# by L1 (store/vectors.py). A version-1 index is not migrated but rebuilt from the vault on the next
# reindex (`Store` deletes it and says so): the index is a disposable cache, and converting it would
# need Python for every row (deflate; SQLite 3.40 has no unhex()) and a re-embed for the new vectors
# anyway. Versions from BASE_VERSION on are migrated in place by appending to MIGRATIONS.
# Version 3 (issue 20): the text analysis changed (FTS_TOKENIZE keeps combining marks inside
# words; textutil.fts_text folds and splits spaceless scripts), so a version-2 index is rebuilt
# from the vault (writers) or refused with "rebuild it" (readers), like a version-1 one: its terms
# would no longer meet the queries'.
# Version 4: issue 17's `chunk_origins` (the scope and origin of chunks that do not come from a vault
# file) joined the base schema; it had been a 2 -> 3 migration on a branch that never shipped with
# issue 20's analysis, so every index older than 4 is rebuilt.
# Version 5 (issue 18): triggers on `files` drop the vault snapshot (store/base.py FILES_SNAPSHOT_META)
# on any write, which lets a reindex with nothing changed skip reading the files table; an index
# without them would trust a stale snapshot, so every index older than 5 is rebuilt. Version 5 also
# holds issue 20's `files.lang` (the stemmer a note's words were indexed with; the FTS delete needs it).
# Version 6 (issue 20, third round): a note with a language is indexed as its words plus the stems
# that do not begin them (notelang.note_index_form), not as stems alone; the FTS delete recomputes
# a row's terms, which for a version-5 row would no longer be the ones stored, so it is rebuilt.
# Version 7 (issue 20, fifth round): Arabic words are stemmed before alef with hamza or madda is
# folded (textutil._ALEF_FOLD), so a version-6 row's Arabic stems are not the ones recomputed: rebuilt.
BASE_VERSION = 7

# Tokenizer: porter stemming over unicode61 with diacritics folded. Porter only changes
# English-looking suffixes; other scripts pass through unchanged (measured in BENCHMARKS.md).
# Categories: unicode61's default "L* N* Co" makes combining marks separators, which cut Thai,
# Devanagari and vocalised Arabic words apart at every vowel sign ("हिन्दी" -> "ह", "न", "द");
# with M* they stay inside their words (issue 20; SQLite 3.25+).
FTS_TOKENIZE = "porter unicode61 remove_diacritics 2 categories 'L* N* Co M*'"
FTS_TOKENIZE_SQL = "'" + FTS_TOKENIZE.replace("'", "''") + "'"  # as an SQL string literal

# Chunk text longer than this many UTF-8 bytes is stored raw-deflated (a BLOB) when that is smaller;
# shorter text stays TEXT. tldr pages: 18.3 MB of chunk text -> 9.7 MB; a hit is inflated in ~2 us.
# A BLOB's first byte names its deflate dictionary: 0 none, n the row of `text_dicts` (issue 18).
COMPRESS_MIN_BYTES = 64
# Level 6 stores the same bytes as 9 on tldr chunks (6.80 vs 6.79 MB with a dictionary) and costs less.
COMPRESS_LEVEL = 6
# Issue 18: chunks of a few hundred bytes deflate poorly alone (no history to refer back to). Once an
# index holds TEXT_DICT_MIN_CHUNKS chunks, its first optimize() takes TEXT_DICT_SAMPLE of them spread
# over the whole index (by a hash of their id, so no one folder dominates), keeps the last
# TEXT_DICT_BYTES of their text (deflate's window: 32 KB) as a preset dictionary and re-deflates every
# chunk with it. tldr: chunk text 9.70 -> 6.79 MB; the dictionary of the first 2,000 chunks in scan
# order (one folder) gave only 8.76. Inflating with a dictionary costs what it did without (~20 us).
# The dictionary holds stored (scrubbed) chunk text only; it stays until the next `--full`.
TEXT_DICT_MIN_CHUNKS = 2000
TEXT_DICT_SAMPLE = 400
TEXT_DICT_BYTES = 32 * 1024
TEXT_DICT_BATCH = 2000  # chunks re-deflated per transaction (each chunk readable in either form)

BASE: tuple[str, ...] = (
    """CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
    """CREATE TABLE files (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,          -- vault-relative, POSIX separators
        mtime_ns INTEGER NOT NULL,
        size INTEGER NOT NULL,
        hash BLOB NOT NULL,                 -- sha256 of the raw bytes, all 32: live citations compare it
        title TEXT NOT NULL,
        note_type TEXT,
        stem_key TEXT NOT NULL,             -- casefolded file stem, resolves [[links]]
        lang TEXT                           -- Snowball stemmer of its Latin/Cyrillic words (notelang.py), NULL: none
    )""",
    """CREATE INDEX files_stem ON files(stem_key)""",
    # Issue 18: any write to `files` drops the vault snapshot in its own transaction (FILES_SNAPSHOT_META
    # in store/base.py), so a snapshot still present proves the files table is as the run that wrote it left it.
    *(f"""CREATE TRIGGER files_snapshot_{op.lower()} AFTER {op} ON files
        BEGIN DELETE FROM meta WHERE key = '{FILES_SNAPSHOT_META}'; END""" for op in ("INSERT", "UPDATE", "DELETE")),
    """CREATE TABLE chunks (
        id INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: a stale vector can't attach to a new chunk
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        section_index INTEGER NOT NULL,
        chunk_index INTEGER NOT NULL,
        heading_path TEXT NOT NULL,         -- headings joined with ' > ', '' for the lead
        context TEXT NOT NULL,              -- 'title | type | tags' (the FTS delete needs it back)
        text TEXT NOT NULL,                 -- TEXT, or a BLOB: dictionary id byte + raw deflate of the UTF-8
        search_text TEXT,                   -- NULL when equal to text
        line_start INTEGER NOT NULL,
        line_end INTEGER NOT NULL,
        content_hash BLOB NOT NULL,         -- 8 bytes: chunker's fingerprint of the text (citations)
        embed_hash BLOB NOT NULL,           -- 8 bytes of sha256 of the embedded input: reuse vectors
        tokens INTEGER NOT NULL,
        block_ids TEXT NOT NULL DEFAULT ''  -- space-separated '^id's defined in this chunk
    )""",
    """CREATE INDEX chunks_file ON chunks(file_id, section_index, chunk_index)""",
    """CREATE INDEX chunks_embed ON chunks(embed_hash)""",
    f"""CREATE VIRTUAL TABLE chunks_fts USING fts5(
        text, heading, context, content='', tokenize={FTS_TOKENIZE_SQL})""",
    """CREATE TABLE links (
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        chunk_id INTEGER REFERENCES chunks(id) ON DELETE CASCADE,
        target TEXT NOT NULL,               -- as written
        target_key TEXT NOT NULL,           -- casefolded stem, matches files.stem_key
        anchor TEXT,                        -- heading text or '^blockid'
        kind TEXT NOT NULL,                 -- link | embed | asset
        text TEXT,
        line INTEGER NOT NULL
    )""",
    """CREATE INDEX links_file ON links(file_id)""",
    """CREATE INDEX links_target ON links(target_key)""",
    # Clustered by file (deletes and the FK cascade read one range) with a covering index by key:
    # two b-trees instead of a table plus two indexes. One row per (file, key, chunk) with its kinds
    # as a bit set (KEY_KINDS): a note's title and file name are usually the same key (issue 18:
    # 115k rows -> 77k on tldr, 5.7 MB -> 3.0 MB).
    """CREATE TABLE keys (                  -- metadata channel: exact/near-exact names
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        key TEXT NOT NULL,                  -- normalised (textutil.meta_key)
        chunk_id INTEGER NOT NULL,          -- 0 for a key of the whole note; goes with its file
        kinds INTEGER NOT NULL,             -- bit i set: KEY_KINDS[i] (title, alias, file, tag, heading)
        PRIMARY KEY (file_id, key, chunk_id)
    ) WITHOUT ROWID""",
    """CREATE INDEX keys_key ON keys(key)""",
    # Issue 18: preset deflate dictionaries of chunk text (COMPRESS_MIN_BYTES), append only.
    """CREATE TABLE text_dicts (id INTEGER PRIMARY KEY, dict BLOB NOT NULL)""",
    # Issue 17: the scope and origin of chunks that do not come from a vault file (a transcript
    # message: session id, message uuid, role, timestamp), as JSON; gone with the chunk.
    """CREATE TABLE chunk_origins (
        chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
        scope TEXT NOT NULL,
        origin TEXT NOT NULL
    )""",
)

# Migrations from BASE_VERSION on: MIGRATIONS[i] brings version BASE_VERSION + i to BASE_VERSION + i + 1.
MIGRATIONS: tuple[tuple[str, ...], ...] = ()
SCHEMA_VERSION = BASE_VERSION + len(MIGRATIONS)

VEC_TABLE = "chunks_vec"


def vec_table_sql(dim: int, vector_type: str) -> str:
    """int8: rotated vectors zero-padded to a power of two, ranked by L1 (store/vectors.py); float32:
    the vectors as embedded, exact cosine KNN."""
    if vector_type == "int8":
        return f"CREATE VIRTUAL TABLE {VEC_TABLE} USING vec0(embedding int8[{padded_dim(dim)}] distance_metric=L1)"
    return f"CREATE VIRTUAL TABLE {VEC_TABLE} USING vec0(embedding float[{int(dim)}] distance_metric=cosine)"


# int8: L1 candidates, re-ranked by exact cosine of the same stored vectors (one query, one table).
VEC_SEARCH_INT8 = (f"SELECT rowid, vec_distance_cosine(embedding, vec_int8(:v)) FROM {VEC_TABLE} "
                   f"WHERE embedding MATCH vec_int8(:v) AND k = :k")
VEC_SEARCH_F32 = f"SELECT rowid, distance FROM {VEC_TABLE} WHERE embedding MATCH vec_f32(:v) AND k = :k"


INSERT_FILE = """INSERT INTO files (path, mtime_ns, size, hash, title, note_type, stem_key, lang)
VALUES (:path, :mtime_ns, :size, :hash, :title, :note_type, :stem_key, :lang)"""
INSERT_CHUNK = """INSERT INTO chunks (file_id, section_index, chunk_index, heading_path, context, text,
search_text, line_start, line_end, content_hash, embed_hash, tokens, block_ids)
VALUES (:file_id, :section_index, :chunk_index, :heading_path, :context, :text, :search_text,
:line_start, :line_end, :content_hash, :embed_hash, :tokens, :block_ids)"""
# (rowid, text, heading, context): the forms store.fts_row makes, for the insert and for the delete
INSERT_FTS = "INSERT INTO chunks_fts (rowid, text, heading, context) VALUES (?, ?, ?, ?)"  # executemany
DELETE_FTS = "INSERT INTO chunks_fts (chunks_fts, rowid, text, heading, context) VALUES ('delete', ?, ?, ?, ?)"
INSERT_LINK = """INSERT INTO links (file_id, chunk_id, target, target_key, anchor, kind, text, line)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)"""  # executemany: write_file inserts a file's links in one call
# The kinds of metadata key, in bit order of `keys.kinds` (append only: the bits are stored).
KEY_KINDS = ("title", "alias", "file", "tag", "heading")
KEY_KIND_BIT = {kind: 1 << i for i, kind in enumerate(KEY_KINDS)}
INSERT_KEY = ("INSERT INTO keys (file_id, key, chunk_id, kinds) VALUES (?, ?, ?, ?) "
              "ON CONFLICT (file_id, key, chunk_id) DO UPDATE SET kinds = kinds | excluded.kinds")  # executemany
FILE_CHUNKS = """SELECT id, text, search_text, heading_path, context FROM chunks WHERE file_id = :file_id"""
# The tables with pages of their own (virtual tables keep theirs in shadow tables, listed here too):
# what Store.check walks. Names are SQLite's own identifiers, quoted by check().
REAL_TABLES = "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name"

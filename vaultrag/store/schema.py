"""Schema as ordered migrations, plus the SQL the store runs, as named constants you can print.

FTS5 design: a *contentless* table (`content=''`) holding the search form of each chunk
(`textutil.fts_text`: CJK characters split into single tokens). The chunk text is stored once, in
`chunks`; FTS5 keeps only its inverted index. Contentless tables need the original values to
delete a row, and the store always passes them (recomputed from `chunks`), in the same
transaction as the chunk delete: no trigger, no silent desync. `tests/test_store.py` proves the
FTS vocabulary equals a fresh rebuild after adds, edits, deletes and renames.
"""
from __future__ import annotations

SCHEMA_VERSION = 1

# Tokenizer: porter stemming over unicode61 with diacritics folded. Porter only changes
# English-looking suffixes; other scripts pass through unchanged (measured in BENCHMARKS.md).
FTS_TOKENIZE = "porter unicode61 remove_diacritics 2"

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 1: initial schema
    (
        """CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
        """CREATE TABLE files (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,          -- vault-relative, POSIX separators
            mtime_ns INTEGER NOT NULL,
            size INTEGER NOT NULL,
            hash TEXT NOT NULL,                 -- sha256 of the raw bytes
            title TEXT NOT NULL,
            note_type TEXT,
            stem_key TEXT NOT NULL,             -- casefolded file stem, resolves [[links]]
            indexed_at REAL NOT NULL
        )""",
        """CREATE INDEX files_stem ON files(stem_key)""",
        """CREATE TABLE chunks (
            id INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: a stale vector can't attach to a new chunk
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            section_index INTEGER NOT NULL,
            chunk_index INTEGER NOT NULL,
            heading_path TEXT NOT NULL,         -- headings joined with ' > ', '' for the lead
            context TEXT NOT NULL,              -- 'title | type | tags'
            text TEXT NOT NULL,
            search_text TEXT,                   -- NULL when equal to text
            line_start INTEGER NOT NULL,
            line_end INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            embed_hash TEXT NOT NULL,           -- hash of the embedded input: reuse vectors on rename/move
            tokens INTEGER NOT NULL,
            block_ids TEXT NOT NULL DEFAULT ''  -- space-separated '^id's defined in this chunk
        )""",
        """CREATE INDEX chunks_file ON chunks(file_id, section_index, chunk_index)""",
        """CREATE INDEX chunks_embed ON chunks(embed_hash)""",
        f"""CREATE VIRTUAL TABLE chunks_fts USING fts5(
            text, heading, context, content='', tokenize='{FTS_TOKENIZE}')""",
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
        """CREATE TABLE keys (                  -- metadata channel: exact/near-exact names
            key TEXT NOT NULL,                  -- normalised (textutil.meta_key)
            kind TEXT NOT NULL,                 -- title | alias | file | tag | heading
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            chunk_id INTEGER REFERENCES chunks(id) ON DELETE CASCADE
        )""",
        """CREATE INDEX keys_key ON keys(key)""",
        """CREATE INDEX keys_file ON keys(file_id)""",
    ),
)

VEC_TABLE = "chunks_vec"


def vec_table_sql(dim: int, vector_type: str) -> str:
    element = "int8" if vector_type == "int8" else "float"
    return f"CREATE VIRTUAL TABLE {VEC_TABLE} USING vec0(embedding {element}[{int(dim)}] distance_metric=cosine)"


INSERT_FILE = """INSERT INTO files (path, mtime_ns, size, hash, title, note_type, stem_key, indexed_at)
VALUES (:path, :mtime_ns, :size, :hash, :title, :note_type, :stem_key, :indexed_at)"""
INSERT_CHUNK = """INSERT INTO chunks (file_id, section_index, chunk_index, heading_path, context, text,
search_text, line_start, line_end, content_hash, embed_hash, tokens, block_ids)
VALUES (:file_id, :section_index, :chunk_index, :heading_path, :context, :text, :search_text,
:line_start, :line_end, :content_hash, :embed_hash, :tokens, :block_ids)"""
INSERT_FTS = "INSERT INTO chunks_fts (rowid, text, heading, context) VALUES (:id, :text, :heading, :context)"
DELETE_FTS = ("INSERT INTO chunks_fts (chunks_fts, rowid, text, heading, context) "
              "VALUES ('delete', :id, :text, :heading, :context)")
INSERT_LINK = """INSERT INTO links (file_id, chunk_id, target, target_key, anchor, kind, text, line)
VALUES (:file_id, :chunk_id, :target, :target_key, :anchor, :kind, :text, :line)"""
INSERT_KEY = "INSERT INTO keys (key, kind, file_id, chunk_id) VALUES (:key, :kind, :file_id, :chunk_id)"
FILE_CHUNKS = """SELECT id, text, search_text, heading_path, context FROM chunks WHERE file_id = :file_id"""

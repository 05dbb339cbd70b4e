"""PostgreSQL schema as ordered migrations, plus the SQL the store runs, as named constants.

Layout: one database holds many collections (vaults, repos). A collection's index is a
*generation*: every row carries its generation id, and `collections.live` names the generation
readers use. A full rebuild writes a new generation beside the live one and switches `live` in one
transaction (readers never see a half-built or empty index), then deletes the old one. Chunk ids
are one sequence for the whole database, so an id names one chunk of one generation.

Per chunk, one row: its text, a tsvector of vaultrag's own terms (analyzer.py; GIN) and a pgvector
`halfvec` (HNSW, cosine, one partial index per generation: its dimension is the generation's
model's, and the index only holds that generation, so a KNN never filters another collection's
neighbours out of its candidate list).
"""
from __future__ import annotations

# Bump by appending to MIGRATIONS; version 1 is BASE.
BASE: tuple[str, ...] = (
    "CREATE EXTENSION IF NOT EXISTS vector",
    """CREATE TABLE IF NOT EXISTS vaultrag_schema (version integer NOT NULL)""",
    """CREATE TABLE collections (
        id serial PRIMARY KEY,
        name text NOT NULL UNIQUE,
        live bigint                        -- generation readers use (NULL: never built)
    )""",
    """CREATE TABLE generations (
        id bigserial PRIMARY KEY,
        collection_id integer NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        chunks bigint NOT NULL DEFAULT 0,  -- BM25 N and total tokens, kept in step with every write
        tokens bigint NOT NULL DEFAULT 0
    )""",
    """CREATE TABLE meta (
        gen bigint NOT NULL REFERENCES generations(id) ON DELETE CASCADE,
        key text NOT NULL,
        value text NOT NULL,
        PRIMARY KEY (gen, key)
    )""",
    """CREATE TABLE files (
        id bigserial PRIMARY KEY,
        gen bigint NOT NULL REFERENCES generations(id) ON DELETE CASCADE,
        path text NOT NULL,                -- vault-relative, POSIX separators
        mtime_ns bigint NOT NULL,
        size bigint NOT NULL,
        hash bytea NOT NULL,               -- sha256 of the raw bytes (live citations compare it)
        title text NOT NULL,
        note_type text,
        stem_key text NOT NULL,            -- casefolded file stem, resolves [[links]]
        UNIQUE (gen, path)
    )""",
    "CREATE INDEX files_stem ON files (gen, stem_key)",
    """CREATE TABLE chunks (
        id bigserial PRIMARY KEY,
        gen bigint NOT NULL,
        file_id bigint NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        section_index integer NOT NULL,
        chunk_index integer NOT NULL,
        heading_path text NOT NULL,
        context text NOT NULL,
        text text NOT NULL,                -- PostgreSQL compresses long values itself (TOAST)
        line_start integer NOT NULL,
        line_end integer NOT NULL,
        content_hash bytea NOT NULL,
        embed_hash bytea NOT NULL,
        tokens integer NOT NULL,           -- cl100k tokens of text (the answer budget)
        block_ids text NOT NULL DEFAULT '',
        ntok integer NOT NULL,             -- lexical tokens in all columns (BM25 document length)
        tsv tsvector NOT NULL,
        embedding halfvec                  -- NULL: no vector (lexical-only index, all-zero vector)
    )""",
    "CREATE INDEX chunks_file ON chunks (file_id, section_index, chunk_index)",
    "CREATE INDEX chunks_embed ON chunks (gen, embed_hash)",
    "CREATE INDEX chunks_tsv ON chunks USING gin (tsv)",
    "CREATE INDEX chunks_gen ON chunks (gen)",
    """CREATE TABLE links (
        id bigserial PRIMARY KEY,          -- file order of links on one line
        file_id bigint NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        chunk_id bigint REFERENCES chunks(id) ON DELETE CASCADE,
        target text NOT NULL,
        target_key text NOT NULL,
        anchor text,
        kind text NOT NULL,
        text text,
        line integer NOT NULL
    )""",
    "CREATE INDEX links_file ON links (file_id)",
    """CREATE TABLE keys (
        gen bigint NOT NULL,
        file_id bigint NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        key text NOT NULL,
        kind text NOT NULL,
        chunk_id bigint NOT NULL,          -- 0 for a key of the whole note
        PRIMARY KEY (file_id, key, kind, chunk_id)
    )""",
    "CREATE INDEX keys_key ON keys (gen, key)",
)
# The vocabulary: per generation, each lexeme and how many chunks hold it (BM25's document
# frequencies and prefix expansion without a GIN count; store/postgres/lexical.py). Kept in step
# with every write; a rebuild counts it once after its bulk load (LEXEMES_RECOUNT).
LEXEMES_TABLE = """CREATE TABLE lexemes (
    gen bigint NOT NULL REFERENCES generations(id) ON DELETE CASCADE,
    lexeme text COLLATE "C" NOT NULL,  -- byte order: a prefix's lexemes are one index range
    df integer NOT NULL,
    PRIMARY KEY (gen, lexeme)
)"""
LEXEMES_RECOUNT = """INSERT INTO lexemes (gen, lexeme, df)
SELECT c.gen, u.lexeme, count(*) FROM chunks c CROSS JOIN LATERAL unnest(c.tsv) AS u(lexeme, positions, weights)
WHERE c.gen = ANY(%(gens)s) GROUP BY c.gen, u.lexeme"""
# A group of files' chunks added (+1), or one file's about to be removed (-1).
LEXEMES_ADD = """INSERT INTO lexemes (gen, lexeme, df)
SELECT %(gen)s, u.lexeme, count(*) FROM chunks c CROSS JOIN LATERAL unnest(c.tsv) AS u(lexeme, positions, weights)
WHERE c.file_id = ANY(%(file_ids)s) GROUP BY u.lexeme
ON CONFLICT (gen, lexeme) DO UPDATE SET df = lexemes.df + excluded.df"""
LEXEMES_REMOVE = """UPDATE lexemes l SET df = l.df - s.n FROM (
    SELECT u.lexeme, count(*) AS n FROM chunks c CROSS JOIN LATERAL unnest(c.tsv) AS u(lexeme, positions, weights)
    WHERE c.file_id = ANY(%(file_ids)s) GROUP BY u.lexeme) s
WHERE l.gen = %(gen)s AND l.lexeme = s.lexeme RETURNING l.lexeme, l.df"""

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 1 -> 2 (issue 17): the scope and origin (JSON) of chunks that do not come from a vault file
    # (transcript messages); chunk ids are one sequence for the database, so no generation column.
    ("""CREATE TABLE IF NOT EXISTS chunk_origins (
        chunk_id bigint PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
        scope text NOT NULL,
        origin text NOT NULL
    )""",),
    (LEXEMES_TABLE,  # 2 -> 3: the vocabulary table, counted from the tsvectors already stored
     LEXEMES_RECOUNT.replace("WHERE c.gen = ANY(%(gens)s) ", "")),
    # 3 -> 4 (issue 20, second round): the Snowball stemmer a note's Latin/Cyrillic words were
    # analysed with (notelang.py; NULL: none), as SQLite's files.lang; the vault's note languages
    # (the query's stem alternatives) are counted from it.
    ("ALTER TABLE files ADD COLUMN IF NOT EXISTS lang text",),
)
SCHEMA_VERSION = 1 + len(MIGRATIONS)
# Serialises schema creation and migration between processes (pg_advisory_xact_lock key).
SCHEMA_LOCK_KEY = 0x7661756c  # "vaul"

# Vector storage: half precision, cosine. 256-d potion vectors: 520 bytes a row instead of 1 KB
# for `vector`, recall measured in BENCHMARKS.md (issue 15).
VECTOR_TYPE = "halfvec"
HNSW_OPS = "halfvec_cosine_ops"
# HNSW build parameters (pgvector defaults) and the query-time candidate list: ef_search must be
# at least the k asked for (30 at most here); 100 keeps recall@30 near exact (BENCHMARKS.md).
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 64
HNSW_EF_SEARCH = 100


def hnsw_index_name(gen: int) -> str:
    return f"chunks_hnsw_g{int(gen)}"


def hnsw_index_sql(gen: int, dim: int) -> str:
    """The generation's vector index: over its rows only, at its model's dimension."""
    return (f"CREATE INDEX IF NOT EXISTS {hnsw_index_name(gen)} ON chunks USING hnsw "
            f"((embedding::{VECTOR_TYPE}({int(dim)})) {HNSW_OPS}) WITH (m = {HNSW_M}, "
            f"ef_construction = {HNSW_EF_CONSTRUCTION}) WHERE gen = {int(gen)}")


def knn_sql(gen: int, dim: int) -> str:
    """Nearest chunks of one generation. The generation and dimension are written into the SQL
    (integers from our own tables) so the planner can match the partial HNSW index."""
    expr = f"(embedding::{VECTOR_TYPE}({int(dim)}))"
    return (f"SELECT id, {expr} <=> %(v)s::{VECTOR_TYPE}({int(dim)}) AS d FROM chunks "
            f"WHERE gen = {int(gen)} AND embedding IS NOT NULL ORDER BY {expr} <=> %(v)s::{VECTOR_TYPE}({int(dim)}) "
            f"LIMIT %(k)s")

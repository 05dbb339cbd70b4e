-- table chunk_origins
CREATE TABLE chunk_origins ( chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE, scope TEXT NOT NULL, origin TEXT NOT NULL );
-- table chunks
CREATE TABLE chunks ( id INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused: a stale vector can't attach to a new chunk file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE, section_index INTEGER NOT NULL, chunk_index INTEGER NOT NULL, heading_path TEXT NOT NULL, -- headings joined with ' > ', '' for the lead context TEXT NOT NULL, -- 'title | type | tags' (the FTS delete needs it back) text TEXT NOT NULL, -- TEXT, or a BLOB: dictionary id byte + raw deflate of the UTF-8 search_text TEXT, -- NULL when equal to text line_start INTEGER NOT NULL, line_end INTEGER NOT NULL, content_hash BLOB NOT NULL, -- 8 bytes: chunker's fingerprint of the text (citations) embed_hash BLOB NOT NULL, -- 8 bytes of sha256 of the embedded input: reuse vectors tokens INTEGER NOT NULL, block_ids TEXT NOT NULL DEFAULT '' -- space-separated '^id's defined in this chunk );
-- index chunks_embed
CREATE INDEX chunks_embed ON chunks(embed_hash);
-- index chunks_file
CREATE INDEX chunks_file ON chunks(file_id, section_index, chunk_index);
-- table chunks_fts
CREATE VIRTUAL TABLE chunks_fts USING fts5( text, heading, context, content='', tokenize='porter unicode61 remove_diacritics 2 categories ''L* N* Co M*''');
-- table files
CREATE TABLE files ( id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, -- vault-relative, POSIX separators mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, hash BLOB NOT NULL, -- sha256 of the raw bytes, all 32: live citations compare it title TEXT NOT NULL, note_type TEXT, stem_key TEXT NOT NULL, -- casefolded file stem, resolves [[links]] lang TEXT -- Snowball stemmer of its Latin/Cyrillic words (notelang.py), NULL: none );
-- trigger files_snapshot_delete
CREATE TRIGGER files_snapshot_delete AFTER DELETE ON files BEGIN DELETE FROM meta WHERE key = 'files_snapshot'; END;
-- trigger files_snapshot_insert
CREATE TRIGGER files_snapshot_insert AFTER INSERT ON files BEGIN DELETE FROM meta WHERE key = 'files_snapshot'; END;
-- trigger files_snapshot_update
CREATE TRIGGER files_snapshot_update AFTER UPDATE ON files BEGIN DELETE FROM meta WHERE key = 'files_snapshot'; END;
-- index files_stem
CREATE INDEX files_stem ON files(stem_key);
-- table keys
CREATE TABLE keys ( -- metadata channel: exact/near-exact names file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE, key TEXT NOT NULL, -- normalised (textutil.meta_key) chunk_id INTEGER NOT NULL, -- 0 for a key of the whole note; goes with its file kinds INTEGER NOT NULL, -- bit i set: KEY_KINDS[i] (title, alias, file, tag, heading) PRIMARY KEY (file_id, key, chunk_id) ) WITHOUT ROWID;
-- index keys_key
CREATE INDEX keys_key ON keys(key);
-- table links
CREATE TABLE links ( file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE, chunk_id INTEGER REFERENCES chunks(id) ON DELETE CASCADE, target TEXT NOT NULL, -- as written target_key TEXT NOT NULL, -- casefolded stem, matches files.stem_key anchor TEXT, -- heading text or '^blockid' kind TEXT NOT NULL, -- link | embed | asset text TEXT, line INTEGER NOT NULL );
-- index links_file
CREATE INDEX links_file ON links(file_id);
-- index links_target
CREATE INDEX links_target ON links(target_key);
-- table meta
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- table text_dicts
CREATE TABLE text_dicts (id INTEGER PRIMARY KEY, dict BLOB NOT NULL);

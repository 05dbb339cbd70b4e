"""Translations of one note count once in an answer, the copy in the prompt's language kept
(trial9: tldr's pages/mpd.md, pages.es/mpd.md and pages.ko/mpd.md filled one block)."""
from __future__ import annotations

import pytest

from conftest import write_notes
from vaultrag.indexer import reindex
from vaultrag.retrieve import search
from vaultrag.retrieve.copies import copy_key

MPD = {
    "pages/common/mpd.md": "# mpd\n\n> Music Player Daemon.\n\n- Start MPD but don't read from the configuration file:\n\n"
                           "`mpd --no-config`\n\n- Stop the running daemon:\n\n`mpd --kill`\n",
    "pages.es/common/mpd.md": "# mpd\n\n> Demonio del reproductor de música.\n\n- Inicia MPD pero no lee el archivo de "
                              "configuración:\n\n`mpd --no-config`\n\n- Detiene el demonio:\n\n`mpd --kill`\n",
    "pages.ko/common/mpd.md": "# mpd\n\n> 음악 플레이어 데몬.\n\n- 설정 파일을 읽지 않고 MPD 시작:\n\n`mpd --no-config`\n\n"
                              "- 실행 중인 데몬 중지:\n\n`mpd --kill`\n",
    "pages/common/mpc.md": "# mpc\n\n> Music Player Client: control the MPD daemon.\n\n- Start playing:\n\n`mpc play`\n",
    "projects/alpha/notes.md": "# Alpha notes\n\nThe daemon of project alpha reads its configuration file at start.\n",
    "projects/beta/notes.md": "# Beta notes\n\nThe daemon of project beta reads its configuration file at start.\n",
}


@pytest.mark.parametrize("path,key", [
    ("pages.es/common/mpd.md", ("pages", "common", "mpd.md")),
    ("pages/common/mpd.md", ("pages", "common", "mpd.md")),
    ("de/Obsidian Sync/Sync.md", ("", "Obsidian Sync", "sync.md")),
    ("docs-pt_BR/guide.md", ("docs", "guide.md")),
    ("zh-Hans/guide.md", ("", "guide.md")),
    ("projects/alpha/notes.md", ("projects", "alpha", "notes.md")),
    ("pages/common/mpd.es.md", ("pages", "common", "mpd.es.md")),
])
def test_copy_key(path, key):
    assert copy_key(path) == key


@pytest.fixture
def cfg(tmp_path, cfg_for):
    c = cfg_for(write_notes(tmp_path / "v", MPD))
    reindex(c)
    return c


@pytest.mark.parametrize("query,kept", [
    ("mpd: Start MPD but don't read from the configuration file", "pages/common/mpd.md"),
    ("mpd inicia pero no lee el archivo de configuración", "pages.es/common/mpd.md"),
    ("MPD 설정 파일을 읽지 않고 시작", "pages.ko/common/mpd.md"),
])
def test_one_copy_of_a_translated_note_in_the_prompts_language(cfg, query, kept):
    paths = [h.path for h in search(query, cfg, gate=False, k=6, max_tokens=0).hits]
    copies = [p for p in paths if p.endswith("/mpd.md")]
    assert copies == [kept], paths


def test_notes_of_one_name_in_other_folders_are_not_copies(cfg):
    paths = [h.path for h in search("which daemon reads its configuration file at start", cfg, gate=False, k=6,
                                    max_tokens=0).hits]
    assert {"projects/alpha/notes.md", "projects/beta/notes.md"} <= set(paths), paths

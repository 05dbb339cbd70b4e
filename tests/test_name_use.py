"""A note named with one short word (tldr-pages: tar, ss, find) is found when the prompt uses that
word as a name, and only then (trial9: "how do I use tar to extract a .tar.gz?" missed tar.md)."""
from __future__ import annotations

import pytest

from conftest import write_notes
from vaultrag.indexer import reindex
from vaultrag.retrieve import search
from vaultrag.retrieve.name_use import name_uses


@pytest.mark.parametrize("prompt,names", [
    ("how do I use tar to extract a .tar.gz?", {"tar"}),
    ("ss options", {"ss"}),
    ("what does the ss command show?", {"ss"}),
    ("list open ports with ss", {"ss"}),
    ("find files larger than 100 MB with find", {"find"}),
    ("how do I run `rsync -a src dst` over ssh", {"rsync"}),
    ("why does tar -xzf archive.tgz fail", {"tar"}),
    ("how do I make a filesystem with mkfs.bcachefs?", {"mkfs bcachefs"}),
    ("man chmod says what about sticky bits", {"chmod"}),
    ("如何用 ss 列出打开的端口？", {"ss"}),
    ("Wie entpacke ich ein tar.gz-Archiv mit tar?", {"tar"}),
    ("Welche Optionen hat der Befehl ss?", {"ss"}),
    ("¿Cómo uso find para buscar archivos grandes?", {"find"}),
    ("ss 命令显示什么", {"ss"}),
    ("如何在 Obsidian 中创建 Canvas", set()),
    # prose: the same words used as words
    ("find files larger than 100 MB", set()),
    ("make the tests run faster", set()),
    ("extract a tar.gz archive into a specific directory", set()),
    ("add a --limit flag to the CLI", set()),
    ("corrige el test que falla en el módulo de fechas", set()),
    # a coding instruction names tools it does not ask about
    ("sqlite-utils convert --help, refs #686", set()),
    ("serve --watch preloads the model before its reindex", set()),
    ("Run cog with --diff to show errors", set()),
    ("run `rsync -a src dst` over ssh", set()),
    # ... but a question inside an instruction asks about the tools of its own sentence only
    ("Fix the flaky test in serve.py. How do I use tar to extract a .tar.gz?", {"tar"}),
    ("I refactored `cli.py`.\nWhat does the ss command show?", {"ss"}),
    ("How do I use tar to extract it? Then run `rsync -a src dst` in ci.", {"tar"}),
    ("Bump the version to 1.2.3 and run `rsync -a src dst`. Thanks!", set()),
    ("", set()),
])
def test_words_used_as_names(prompt, names):
    assert name_uses(prompt) == names


NOTES = {
    "tar.md": "# tar\n\n> Archiving utility.\n\n- Create an archive from files:\n\n`tar cf target.tar file1 file2`\n",
    "find.md": "# find\n\n> Find files or directories under a directory tree, recursively.\n\n"
               "- Find files by extension:\n\n`find root_path -name '*.ext'`\n",
    "atool.md": "# atool\n\n> Manage archives of various formats.\n\n- Extract a tar.gz archive:\n\n"
                "`atool --extract archive.tar.gz`\n\n- Extract a .tar.gz or .tgz archive into a directory:\n\n"
                "`atool --extract-to dir archive.tar.gz`\n",
    "fd.md": "# fd\n\n> An alternative to find.\n\n- Find files larger than a size:\n\n`fd --size +100m`\n",
    **{f"misc{i}.md": f"# misc{i}\n\n> Tool number {i} for tasks.\n\n- Show files:\n\n`misc{i} --show`\n"
       for i in range(30)},
}


@pytest.fixture
def tools(tmp_path, cfg_for):
    cfg = cfg_for(write_notes(tmp_path / "tools", NOTES))
    reindex(cfg)
    return cfg


def test_a_one_word_name_used_as_a_name_leads_the_answer(tools):
    ans = search("how do I use tar to extract a .tar.gz?", tools)
    assert ans.status == "ok"
    assert ans.hits[0].path == "tar.md", [h.path for h in ans.hits]
    assert ans.evidence["command"] is True


def test_a_one_word_name_used_as_a_word_does_not(tools):
    ans = search("find files larger than 100 MB", tools, gate=False)
    assert ans.evidence["command"] is False
    assert ans.hits[0].path == "fd.md", [h.path for h in ans.hits]
    # the same word as a name
    named = search("find files larger than 100 MB with find", tools)
    assert named.hits[0].path == "find.md" and named.evidence["command"] is True


def test_the_command_route_opens_only_where_it_was_measured_rare():
    from vaultrag.retrieve.inject import Calibration

    old = Calibration({"code": 2.5, "topic": 1.5}, 100, 221, 1.2, {"code": {"named": 0.0, "title": 0.0}})
    assert old.route_open("code", "named") and not old.route_open("code", "command")
    new = Calibration({"code": 2.5, "topic": 1.5}, 100, 221, 1.2,
                      {"code": {"command": 0.05}, "topic": {"command": 0.0}})
    assert new.route_open("topic", "command") and not new.route_open("code", "command")

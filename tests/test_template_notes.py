"""Template notes (Obsidian's core templates "{{title}}", Templater "<% tp.file.title %>"): a title or
alias that is a template field names no note, so the note is titled by its next heading or its file
name. Real parser; a real index for the search side."""
from __future__ import annotations

import pytest

from conftest import write_notes
from vaultrag.indexer import reindex
from vaultrag.markdown import parse
from vaultrag.retrieve import search


@pytest.mark.parametrize("text, title", [
    ('---\ntitle: "{{title}}"\n---\n# {{title}}\n\nAgenda, attendees, decisions.\n', "Meeting template"),
    ("---\ntitle: <% tp.file.title %>\n---\n\nBody.\n", "Meeting template"),
    ("# {{date:YYYY-MM-DD}} standup\n\n## Yesterday\n", "Meeting template"),
    ("---\ntitle: '{{title}}'\n---\n# Weekly review\n\nWhat went well.\n", "Weekly review"),  # a real heading next
    ("---\ntitle: Budget {2026}\n---\nBody.\n", "Budget {2026}"),  # braces that are no template field
    ("# Jinja {{ x }} in a note about templating\n", "Meeting template"),
])
def test_a_template_field_is_no_title(text, title):
    assert parse(text, "Templates/Meeting template.md").title == title


def test_template_field_aliases_are_dropped_and_others_kept():
    doc = parse('---\naliases: ["{{title}}", "standup notes", "<% tp.date.now() %>"]\n---\nBody.\n', "T.md")
    assert doc.aliases == ("standup notes",)


def test_a_template_is_found_by_its_file_name_and_no_title_field_reaches_the_index(tmp_path, cfg_for):
    cfg = cfg_for(write_notes(tmp_path / "v", {
        "Templates/Meeting template.md": '---\ntitle: "{{title}}"\naliases: ["{{title}}"]\n---\n# {{title}}\n\n'
                                         "## Attendees\n\n## Decisions\n\nRecord each decision with its owner.\n",
        "Projects/Kiln.md": "# Kiln firing log\n\nCone 6 glaze firing took nine hours; the decisions were recorded.\n",
    }))
    reindex(cfg)
    ans = search("meeting template", cfg)
    assert ans.status == "ok" and ans.hits[0].path == "Templates/Meeting template.md"
    assert ans.hits[0].title == "Meeting template"
    assert all("{{" not in h.title for h in search("title decisions", cfg).hits)


def test_an_index_built_before_the_parse_changed_is_reread_on_the_next_reindex(tmp_path, cfg_for, monkeypatch):
    from vaultrag import chunker

    cfg = cfg_for(write_notes(tmp_path / "v", {"Templates/Daily.md": "# {{date}}\n\nMood, tasks, notes.\n"}))
    reindex(cfg)
    same = reindex(cfg)
    assert same.unchanged == 1 and same.updated == 0 and not same.full
    monkeypatch.setattr(chunker, "CHUNKER_VERSION", chunker.CHUNKER_VERSION + 1)
    report = reindex(cfg)  # nothing changed on disk, but the parse did: every note is read again
    assert report.unchanged == 0 and (report.updated == 1 or report.full), report

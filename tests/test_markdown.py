"""Unit tests for vaultrag.markdown: every parsing feature, and bad input that must never raise."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultrag.markdown import CodeFence, Heading, Link, link_key, parse, split_lines


def md(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# -- lines ---------------------------------------------------------------------------------------
def test_crlf_cr_and_bom_are_normalised():
    doc = parse("\ufeff---\r\ntitle: T\r\n---\r\n# H\rbody\r\n", "a.md")
    assert doc.lines == ("---", "title: T", "---", "# H", "body")
    assert doc.title == "T" and doc.body_start == 4
    assert doc.headings == (Heading(1, "H", 4),)


def test_split_lines_only_on_newline_and_trailing_newline_adds_no_line():
    assert split_lines("a\x0bb\u2028c\x1cd\n") == ("a\x0bb\u2028c\x1cd",)
    assert split_lines("a\n\n") == ("a", "")
    assert split_lines("") == ()
    assert split_lines("\n") == ("",)


def test_empty_text():
    doc = parse("", "notes/Empty.md")
    assert doc.lines == () and doc.title == "Empty" and doc.body_start == 1
    assert doc.frontmatter == {} and doc.tags == () and doc.warnings == ()


# -- frontmatter ---------------------------------------------------------------------------------
def test_frontmatter_fields():
    doc = parse(md("""
        ---
        title: Real Title
        aliases: [First, 2024, [Nested], null, true]
        tags: [a, "#b", 2024, [c/d]]
        type: howto
        created: 2024-01-02
        ---
        # Heading One
        """), "x/file.md")
    assert doc.title == "Real Title"
    assert doc.aliases == ("First", "2024", "Nested")
    assert doc.tags == ("a", "b", "c/d")  # all-digit '2024' is not a tag (Obsidian)
    assert doc.note_type == "howto"
    assert doc.frontmatter["created"] == "2024-01-02"  # dates made JSON-safe
    json.dumps(doc.frontmatter)
    assert doc.body_start == 8 and doc.warnings == ()


def test_tags_and_aliases_as_strings():
    doc = parse("---\ntags: one, two three\naliases: Smith, John\nalias_ignored: x\n---\n", "a.md")
    assert doc.tags == ("one", "two", "three")
    assert doc.aliases == ("Smith, John",)  # one alias, not split


def test_legacy_singular_keys_and_type_fallbacks():
    doc = parse("---\ntag: solo\nalias: Other\nkind: meeting\n---\nx\n", "a.md")
    assert doc.tags == ("solo",) and doc.aliases == ("Other",) and doc.note_type == "meeting"
    assert parse("---\ncategory: [ref]\n---\n", "a.md").note_type == "ref"
    assert parse("---\ntype: {a: 1}\n---\n", "a.md").note_type is None


def test_malformed_yaml_is_kept_as_body_with_warning():
    doc = parse("---\ntitle: [unclosed\n---\n# Head\n", "n.md")
    assert doc.frontmatter == {} and doc.body_start == 1
    assert any(w.startswith("malformed frontmatter: ") for w in doc.warnings)
    assert "\n" not in doc.warnings[0]
    assert doc.title == "Head"


def test_frontmatter_not_a_mapping_is_body_text():
    doc = parse("---\nJust a paragraph between rules.\n---\nMore\n", "n.md")
    assert doc.frontmatter == {} and doc.body_start == 1
    assert "not a mapping" in doc.warnings[0]
    doc = parse("---\n- a\n- b\n---\n", "n.md")
    assert doc.frontmatter == {} and doc.body_start == 1


def test_frontmatter_with_tab_indentation_is_recovered():
    doc = parse("---\nreview:\n\tthreshold: 3\ntags: [x]\n---\nbody\n", "n.md")
    assert doc.frontmatter == {"review": {"threshold": 3}, "tags": ["x"]}
    assert doc.body_start == 6 and doc.tags == ("x",)
    assert any("tabs" in w for w in doc.warnings)


def test_unclosed_frontmatter():
    doc = parse("---\ntitle: x\nno end here\n", "n.md")
    assert doc.frontmatter == {} and doc.body_start == 1 and doc.title == "n"
    assert any("unclosed frontmatter" in w for w in doc.warnings)


def test_only_frontmatter_and_empty_frontmatter():
    doc = parse("---\ntitle: Only\n---\n", "n.md")
    assert doc.body_start == 4 and doc.title == "Only" and len(doc.lines) == 3
    doc = parse("---\n---\nbody", "n.md")
    assert doc.frontmatter == {} and doc.body_start == 3 and doc.warnings == ()


def test_frontmatter_only_when_dashes_on_line_one():
    doc = parse("\n---\ntitle: x\n---\n", "n.md")
    assert doc.frontmatter == {} and doc.body_start == 1 and doc.warnings == ()


def test_frontmatter_billion_laughs_and_recursion_are_bounded():
    lol = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
    doc = parse("---\n" + lol + "---\n", "n.md")
    assert isinstance(doc.frontmatter, dict)
    json.dumps(doc.frontmatter)
    doc = parse("---\nloop: &l [*l]\n---\n", "n.md")
    json.dumps(doc.frontmatter)


def test_frontmatter_odd_scalars_are_json_safe():
    doc = parse("---\n1: one\n2024-01-01: d\nn: .nan\nb: !!binary aGk=\ns: !!set {a, b}\n---\n", "n.md")
    json.dumps(doc.frontmatter, allow_nan=False)
    assert doc.frontmatter["1"] == "one" and doc.frontmatter["2024-01-01"] == "d"
    assert doc.frontmatter["s"] == ["a", "b"]


def test_unsafe_yaml_tag_is_malformed_not_executed():
    doc = parse("---\nx: !!python/object/apply:os.system ['echo hi']\n---\n", "n.md")
    assert doc.frontmatter == {} and doc.warnings


# -- title ---------------------------------------------------------------------------------------
def test_title_precedence():
    assert parse("---\ntitle: FM\n---\n# H1\n", "f.md").title == "FM"
    assert parse("## H2\n# First H1\n# Second\n", "f.md").title == "First H1"
    assert parse("```\n# not a heading\n```\n", "dir/File Name.md").title == "File Name"
    assert parse("---\ntitle: ''\n---\ntext", "dir/f.markdown").title == "f"
    assert parse("---\ntitle: 2024\n---\n", "f.md").title == "2024"


# -- headings and fences ---------------------------------------------------------------------------
def test_headings_with_lines_levels_and_closing_hashes():
    doc = parse("# One #\ntext\n   ### Three ###\n####### seven\n#nospace\n    # indented code?\n##\n", "a.md")
    assert doc.headings == (Heading(1, "One", 1), Heading(3, "Three", 3), Heading(2, "", 7))


def test_fences_backtick_and_tilde_hide_headings_links_tags():
    doc = parse(md("""
        ```python
        # comment
        [[Hidden]] #hidden
        ~~~
        ```
        ~~~~ yaml
        ```
        # still code
        ~~~~
        # Real
        """), "a.md")
    assert doc.headings == (Heading(1, "Real", 10),)
    assert doc.links == () and doc.tags == ()
    assert doc.fences == (CodeFence(1, 5, "python", True), CodeFence(6, 9, "yaml", True))
    assert doc.fences[1].lang == "yaml"


def test_inline_backticks_with_backtick_info_are_not_a_fence():
    doc = parse("```inline``` code\n# Heading\n", "a.md")
    assert doc.fences == () and doc.headings == (Heading(1, "Heading", 2),)


def test_unclosed_fence_runs_to_end_with_warning():
    doc = parse("text\n```\n# not heading\n[[X]]\n", "a.md")
    assert doc.fences == (CodeFence(2, 4, "", False),)
    assert doc.headings == () and doc.links == ()
    assert any("unclosed code fence" in w for w in doc.warnings)


def test_fence_in_callout_and_list():
    doc = parse("> ```\n> # not heading\n> ```\n- item\n  ```\n  #nottag\n  ```\n", "a.md")
    assert len(doc.fences) == 2 and doc.headings == () and doc.tags == ()


# -- links ---------------------------------------------------------------------------------------
def test_wikilink_forms():
    doc = parse(md("""
        See [[Note]], [[Note#Heading]], [[Note#^abc-1]], [[Note|Shown]] and [[dir/Deep.md#H|S]].
        ![[Embedded]] ![[image.png|200]] ![[doc.pdf#page=2]] [[file.canvas]] ![[v1.2 notes]]
        | table | [[T\\|alias]] |
        [[#Local heading]] [[A#B#C]] [[]] [[ | x]]
        """), "folder/Self.md")
    got = [(ln.target, ln.anchor, ln.kind, ln.text, ln.line) for ln in doc.links]
    assert got == [
        ("Note", None, "link", None, 1), ("Note", "Heading", "link", None, 1),
        ("Note", "^abc-1", "link", None, 1), ("Note", None, "link", "Shown", 1),
        ("dir/Deep.md", "H", "link", "S", 1),
        ("Embedded", None, "embed", None, 2), ("image.png", None, "asset", "200", 2),
        ("doc.pdf", "page=2", "asset", None, 2), ("file.canvas", None, "asset", None, 2),
        ("v1.2 notes", None, "embed", None, 2),
        ("T", None, "link", "alias", 3),
        ("Self", "Local heading", "link", None, 4), ("A", "C", "link", None, 4),
    ]


def test_markdown_links_only_to_md():
    doc = parse(md("""
        [Guide](docs/My%20Guide.md#Set%20up) [web](https://x.org/a.md) [img](pic.png)
        [angle](<Other Note.md>) ![emb](Inc.md "title") [here](#local) [mail](mailto:a@b.md)
        """), "a.md")
    got = [(ln.target, ln.anchor, ln.kind, ln.text) for ln in doc.links]
    assert got == [("docs/My Guide.md", "Set up", "link", "Guide"), ("Other Note.md", None, "link", "angle"),
                   ("Inc.md", None, "embed", "emb")]


def test_links_in_inline_code_are_ignored():
    doc = parse("Use `[[NotALink]]` and ``a ` [[No]] `` but [[Yes]] `unclosed [[Also]]\n", "a.md")
    assert [ln.target for ln in doc.links] == ["Yes", "Also"]


def test_link_key():
    assert link_key("Folder/My Note.md") == "my note"
    assert link_key("MY NOTE") == "my note"
    assert link_key("a\\b\\C.MD") == "c"
    assert link_key("Cafe\u0301") == link_key("Caf\u00e9")  # NFD file names (macOS) match NFC links
    assert link_key("image.png") == "image.png"


# -- tags ----------------------------------------------------------------------------------------
def test_inline_tags_rules():
    doc = parse(md("""
        #start and #nested/deep/tag, #Start again #with-dash_under #日本語 #тег
        not: a#b, http://x.org/#frag, [l](#anchor), `#code`, #123, #fff #A1B2C3 #1234abcd #beef #12ab
        #y2024 #trailing/ #x. (#paren) ##double
        # Heading #inheading
        """), "a.md")
    assert doc.tags == ("start", "nested/deep/tag", "with-dash_under", "日本語", "тег", "beef", "y2024",
                        "trailing", "x", "inheading")


def test_frontmatter_tags_come_first_and_dedupe_casefolded():
    doc = parse("---\ntags: [Project]\n---\n#project #other\n", "a.md")
    assert doc.tags == ("Project", "other")


# -- block ids -----------------------------------------------------------------------------------
def test_block_ids():
    doc = parse("Para one ^abc123\n- item ^list-1\n^solo\nno^inword\n`code ^x`\n```\nx ^infence\n```\n",
                "a.md")
    assert doc.block_ids == (("^abc123", 1), ("^list-1", 2), ("^solo", 3))


# -- bad and unusual input -------------------------------------------------------------------------
def test_huge_line_and_nul_and_mixed_scripts():
    huge = "word " * 200_000 + "[" * 100_000 + "](" * 50_000 + "`" * 1000
    doc = parse(huge + "\n#tag\x00 中文。Русский #тег [[Ссылка]]\n", "a.md")
    assert len(doc.lines) == 2
    assert doc.tags == ("tag", "тег") and doc.links[0].target == "Ссылка"
    doc = parse("---\ntitle: a\x00b\n---\n", "a.md")  # YAML rejects NUL: kept as body, warning
    assert doc.body_start == 1 and doc.warnings


def test_lone_surrogates_do_not_raise():
    doc = parse("---\ntitle: \ud800\n---\n# \udfff [[\ud800]] #\ud800x\n", "a.md")
    assert doc.lines


def test_deeply_nested_yaml_does_not_raise():
    doc = parse("---\na: " + "[" * 5000 + "\n---\n", "a.md")
    assert doc.frontmatter == {} and doc.warnings


def test_parse_does_not_import_yaml_at_module_import():
    code = "import sys, vaultrag.markdown; assert 'yaml' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec=None), max_size=300),
       st.lists(st.sampled_from(["---", "```", "~~~", "# H", "[[A|b]]", "#t", "title: x", "\r\n", "\t-", "^id",
                                 "`", "![[p.png]]", "[a](b.md)", "", " "]), max_size=20))
def test_parse_never_raises(noise, parts):
    text = "\n".join(parts) + noise
    doc = parse(text, "p.md")
    assert 1 <= doc.body_start <= len(doc.lines) + 1
    for h in doc.headings:
        assert doc.lines[h.line - 1].lstrip(" ").startswith("#")
    for ln in doc.links:
        assert isinstance(ln, Link) and 1 <= ln.line <= len(doc.lines)
    assert all(1 <= f.start <= f.end <= len(doc.lines) for f in doc.fences)
    assert parse(text, "p.md") == doc

"""A new user's first notes: a vault of two notes answers the questions they answer, and the
words a question spends on asking the vault ("what do my notes say about ...") weigh nothing.
Real index, real bundled model."""
from __future__ import annotations

import pytest

from conftest import write_notes
from vaultrag.indexer import reindex
from vaultrag.retrieve import search
from vaultrag.retrieve.framing import topic
from vaultrag.retrieve.inject import hook_answer
from vaultrag.retrieve.pipeline import GATE_IDF_MIN_CHUNKS, _gate_idf, _idf

NOTES = {
    "Router.md": """
        # Home network

        The FritzBox 7590 router is in the hallway cupboard, next to the fibre modem.
        Admin page: http://fritz.box, login with the admin account.

        ## Wi-Fi
        Two networks: "home" on 5 GHz and "iot" on 2.4 GHz for the smart plugs.
        """,
    "Deploy.md": """
        # Deploying the blog

        Build with `hugo --minify`, then rsync the public/ folder to the VPS.
        The VPS runs Caddy; the config is in /etc/caddy/Caddyfile.
        """,
}


@pytest.fixture
def first_notes(tmp_path, cfg_for):
    cfg = cfg_for(write_notes(tmp_path / "v", NOTES))
    reindex(cfg)
    return cfg


@pytest.mark.parametrize("question, note", [
    ("where is the FritzBox router kept?", "Router.md"),  # "kept": a word the two notes lack
    ("what do my notes say about the router", "Router.md"),
    ("what did I write down about hugo?", "Deploy.md"),
    ("according to my notes, where is the Caddyfile?", "Deploy.md"),
])
def test_two_notes_answer_what_they_hold_and_the_hook_injects_it(first_notes, question, note):
    ans = search(question, first_notes)
    assert ans.status == "ok", ans.evidence
    assert ans.hits[0].path == note
    hooked = hook_answer(question, first_notes)
    assert hooked.status == "ok" and hooked.hits[0].path == note, hooked.evidence.get("inject")


@pytest.mark.parametrize("question", [
    "what is the capital of france",
    "how do I configure the router firewall",  # one word of three: still not evidence
    "what do my notes say about kubernetes autoscaling",
    "add a --limit flag to the search command",
])
def test_two_notes_still_refuse_what_they_do_not_hold(first_notes, question):
    assert search(question, first_notes).status == "no_evidence"
    assert hook_answer(question, first_notes).status == "no_evidence"


def test_absent_words_weigh_as_in_the_smallest_calibrated_vault():
    m = GATE_IDF_MIN_CHUNKS
    for n in (m, m + 1, 5000, 400_000):  # vaults the gate was calibrated on: unchanged to the bit
        assert _gate_idf(0, n) == _idf(0, n) and _gate_idf(3, n) == _idf(3, n)
    ratio = _idf(0, m) / _idf(1, m)
    for n in (2, 3, 10, 100, m - 1):
        assert _gate_idf(1, n) == _idf(1, n)
        assert _gate_idf(0, n) == pytest.approx(_idf(1, n) * ratio)
        assert _gate_idf(0, n) < _idf(0, n)  # BM25's own smoothing weighs them higher there


@pytest.mark.parametrize("query, expected", [
    ("what do my notes say about the router", "the router"),
    ("What does the vault have on Rust lifetimes?", "Rust lifetimes?"),
    ("what did I write down about kerberos", "kerberos"),
    ("do I have any notes on tmux", "tmux"),
    ("search my vault for fritzbox", "fritzbox"),
    ("my notes on Rust lifetimes", "Rust lifetimes"),
    ("Was steht in meinen Notizen über Docker?", "Docker?"),
])
def test_topic_drops_the_words_that_ask_the_vault(query, expected):
    assert topic(query) == expected


@pytest.mark.parametrize("query", [
    "what do my notes say?",  # nothing left: the question stays whole
    "release notes for 2.0",
    "how do I sync notes across devices",
    "where are my notes stored",
    "in my notes app, how do I pin a note",
    "write a function that saves my files",
    "note that the test fails",
])
def test_topic_leaves_questions_about_notes_alone(query):
    assert topic(query) == query

"""Unsolicited injection: per-vault calibration stored at reindex, the stricter decision hooks
use, and prompt kinds. Real index, real model; the obsidian-help case needs ../shared."""
from __future__ import annotations

import json
import random

import pytest

from conftest import shared_path
from vaultrag.indexer import reindex
from vaultrag.retrieve import search
from vaultrag.retrieve import inject
from vaultrag.retrieve.inject import (META_KEY, MIN_SCORE, Calibration, decide, hook_answer, needs_recalibration,
                                      prompt_kind, quantile)
from vaultrag.retrieve.null_prompts import all_prompts
from vaultrag.frozen import replace
from vaultrag.store import Store


@pytest.mark.parametrize("text,kind", [
    ("fix the failing test", "code"), ("Loosen requirement versions", "topic"),
    ("Bump version to 2.1.0", "code"), ("rename `load_cfg` in utils/config.py", "code"),
    ("Closes #842: crash on empty input", "code"), ("add a --verbose flag", "code"),
    ("how long are daily snapshots kept?", "topic"), ("Learn how to create a base", "topic"),
    ("what is the dragonfly handshake", "topic"), ("refactor the parser", "code"),
])
def test_prompt_kind(text, kind):
    assert prompt_kind(text) == kind


def test_quantile_matches_a_sorted_reference():
    rng = random.Random(3)
    for _ in range(200):
        xs = [rng.random() * 10 for _ in range(rng.randint(1, 40))]
        q = rng.random()
        s = sorted(xs)
        pos = q * (len(s) - 1)
        lo = int(pos)
        ref = s[lo] if lo == len(s) - 1 else s[lo] + (s[lo + 1] - s[lo]) * (pos - lo)
        assert abs(quantile(xs, q) - ref) < 1e-9
    assert quantile([], 0.9) == 0.0


def test_null_prompts_are_many_and_varied():
    ps = all_prompts()
    assert len(ps) >= 200 and len(set(ps)) == len(ps)
    kinds = {prompt_kind(p) for p in ps}
    assert kinds == {"code", "topic"}
    assert any(not p.isascii() for p in ps), "several languages"


def test_reindex_stores_a_calibration_and_keeps_it_while_the_vault_is_stable(vault, cfg_for):
    cfg = cfg_for(vault)
    reindex(cfg)
    with Store(cfg.db_path(), readonly=True) as s:
        cal = Calibration.from_json(s.get_meta(META_KEY))
        assert cal is not None and cal.chunks == s.chunk_count() and cal.prompts == len(all_prompts())
        assert set(cal.thresholds) == {"code", "topic"} and all(v >= 0 for v in cal.thresholds.values())
        assert not needs_recalibration(s)
        first = s.get_meta(META_KEY)
    (vault / "Extra.md").write_text("# Extra\n\nOne more paragraph about glacier hiking.\n")
    reindex(cfg)
    with Store(cfg.db_path(), readonly=True) as s:
        assert s.get_meta(META_KEY) == first, "a small change keeps the calibration"
    for i in range(6):  # the vault grows by more than RECALIBRATE_SHARE
        (vault / f"Grow {i}.md").write_text(f"# Grow {i}\n\nParagraph {i} about mountain huts and routes.\n\n"
                                            f"## More\n\nSecond section {i} about maps.\n")
    reindex(cfg)
    with Store(cfg.db_path(), readonly=True) as s:
        again = Calibration.from_json(s.get_meta(META_KEY))
        assert again.chunks == s.chunk_count() and again.chunks > cal.chunks


def test_decide_needs_more_than_the_gate(vault, cfg_for):
    cfg = cfg_for(vault)
    reindex(cfg)
    ans = search("snapshot retention", cfg)
    assert ans.status == "ok" and ans.evidence["passed"]
    low = Calibration({"code": 0.1, "topic": 0.1}, 15, 1, 0.0)
    high = Calibration({"code": 99.0, "topic": 99.0}, 15, 1, 0.0)
    assert decide(ans, "snapshot retention", low).inject
    d = decide(ans, "snapshot retention", high)
    assert not d.inject and d.reason == "weak_for_kind" and d.kind == "topic" and d.threshold == 99.0
    named = search("Backup plan", cfg)
    assert decide(named, "Backup plan", high).reason == "named"
    weak = search("quantum chromodynamics of gluon plasma", cfg)
    assert decide(weak, "quantum chromodynamics of gluon plasma", low).reason == "gate"
    assert decide(ans, "snapshot retention", None).threshold == MIN_SCORE
    quiet = decide(ans, "snapshot retention", Calibration({"code": 0.0, "topic": 0.0}, 15, 1, 0.0))
    assert quiet.inject and quiet.reason in ("specific", "gate_suffices")


def test_hook_answer_says_why_it_declined(vault, cfg_for):
    cfg = cfg_for(vault)
    reindex(cfg)
    with Store(cfg.db_path()) as s, s.transaction():
        s.set_meta(META_KEY, Calibration({"code": 99.0, "topic": 99.0}, s.chunk_count(), 1, 0.0).to_json())
    ans = hook_answer("snapshot retention", cfg)
    assert ans.status == "no_evidence" and ans.reason == "not_injected" and not ans.hits
    assert ans.evidence["inject"]["reason"] == "weak_for_kind"
    assert hook_answer("Backup plan", cfg).status == "ok"


def test_calibration_json_roundtrip_and_bad_values():
    cal = Calibration({"code": 2.5, "topic": 1.5}, 100, 221, 1.2,
                      {"code": {"named": 0.0, "title": 0.05}, "topic": {"named": 0.01, "title": 0.0}})
    assert Calibration.from_json(cal.to_json()) == cal
    assert cal.route_open("code", "named") and not cal.route_open("code", "title") and cal.route_open("topic", "title")
    for raw in (None, "", "{", "[]", json.dumps({"version": 99}), json.dumps({"version": 1, "thresholds": 3})):
        assert Calibration.from_json(raw) is None


def test_coding_prompts_do_not_pull_in_help_pages(tmp_path):
    """On a real vault (the Obsidian help, ~1.1k chunks): coding-session prompts get no block,
    questions the vault answers do."""
    from vaultrag.config import load_config

    vault = shared_path("eval", "vaults", "obsidian-help", "en")
    cfg = load_config(vault=str(vault), db=str(tmp_path / "obs.sqlite"))
    reindex(cfg)
    off = ["fix the failing test", "Loosen requirement versions", "recipe for sourdough bread",
           "what is my home wifi password", "Show the recent commit history in a graph"]
    for p in off:
        assert hook_answer(p, cfg).status == "no_evidence", p
    on = {"how do I create a canvas": "Plugins/Canvas.md", "Obsidian Sync": "Obsidian Sync/Introduction to Obsidian Sync.md"}
    for p, note in on.items():
        ans = hook_answer(p, cfg)
        assert ans.status == "ok", (p, ans.evidence)
        assert note in [h.path for h in ans.hits][:3], (p, [h.path for h in ans.hits])
    assert inject.NULL_QUANTILE < 1.0


def test_a_hyphenated_word_counts_as_one_word_of_evidence(tmp_path):
    """Typed 'Wi-Fi' is searched as 'wi' and 'fi', each in one help chunk only: counted apart they
    were ln N of evidence twice (retrieve/proximity.one_word_each)."""
    from vaultrag.config import load_config

    vault = shared_path("eval", "vaults", "obsidian-help", "en")
    cfg = load_config(vault=str(vault), db=str(tmp_path / "obs.sqlite"))
    reindex(cfg)
    assert hook_answer("what is my home Wi-Fi password", cfg).status == "no_evidence"


@pytest.mark.parametrize("prompt,parts", [
    ("how do I restore the nightly backup? And where do the ops alerts go?",
     ["how do I restore the nightly backup?", "And where do the ops alerts go?"]),
    ("how long are daily snapshots kept? Which tokenizer does FTS5 use for Chinese text? thanks",
     ["how long are daily snapshots kept?", "Which tokenizer does FTS5 use for Chinese text? thanks"]),
    ("Can you sort the results by date? And paginate them?", []),   # a follow-up leans on its neighbour
    ("Is it fast? How do I restore the nightly backup from the bucket?", []),
    ("如何恢复备份？警报发到哪里？", ["如何恢复备份？", "警报发到哪里？"]),
    ("how long are daily snapshots kept?", []),
    ("Fix the test. Why does it fail?", []),
    ("Why? How?", []),
    ("", []),
])
def test_questions_of_a_prompt(prompt, parts):
    assert inject.questions(prompt) == parts


def test_a_prompt_of_several_questions_is_decided_question_by_question(vault, cfg_for):
    """The whole prompt's evidence is too weak for its kind (a threshold never met here); decided
    question by question, the one about the notes is injected, the coding one is not."""
    cfg = cfg_for(vault)
    reindex(cfg)
    cal = Calibration({"code": 99.0, "topic": 99.0}, 15, 1, 0.0, split={"code": [0.1, 0.1], "topic": [0.1, 0.1]})
    with Store(cfg.db_path()) as s, s.transaction():
        s.set_meta(META_KEY, replace(cal, chunks=s.chunk_count()).to_json())
    prompt = "fix the typo in the readme? how long are daily snapshots kept?"
    whole = decide(search(prompt, cfg), prompt, cal)
    assert whole.kind == "code" and whole.reason == "weak_for_kind"
    ans = hook_answer(prompt, cfg, max_tokens=400)
    assert ans.status == "ok" and ans.query == prompt
    assert "Projects/Backup plan.md" in [h.path for h in ans.hits]
    d = ans.evidence["inject"]
    assert d["inject"] and d["reason"] == "questions" and d["whole_reason"] == "weak_for_kind"
    assert [q["inject"] for q in d["questions"]] == [False, True]
    assert all(q["kind"] == "code" for q in d["questions"])  # the whole prompt's kind
    assert sum(h.tokens for h in ans.hits) <= 400
    alone = hook_answer("can you fix the typo in README.md? and run the linter on the tests?", cfg)
    assert alone.status == "no_evidence"
    # a prompt the gate refused as a whole is not split
    refused = hook_answer("quantum chromodynamics of gluon plasma? and the weather on mars tomorrow?", cfg)
    assert refused.status == "no_evidence" and "questions" not in refused.evidence["inject"]
    # a calibration stored before `split`: no question-by-question decisions, and remeasured
    with Store(cfg.db_path()) as s, s.transaction():
        s.set_meta(META_KEY, replace(cal, chunks=s.chunk_count(), split=None).to_json())
        assert needs_recalibration(s)
    assert hook_answer(prompt, cfg).status == "no_evidence"


def test_question_thresholds_are_stricter_and_stored(vault, cfg_for):
    cfg = cfg_for(vault)
    reindex(cfg)
    with Store(cfg.db_path()) as s:
        cal = Calibration.from_json(s.get_meta(META_KEY))
        assert not needs_recalibration(s)
    assert cal.split and set(cal.split) == set(cal.thresholds)
    for kind, (two, three) in cal.split.items():
        assert cal.thresholds[kind] <= two <= three
        assert cal.threshold(kind, 2) == two and cal.threshold(kind, 5) == three and cal.threshold(kind) == cal.thresholds[kind]
    assert Calibration.from_json(cal.to_json()) == cal
    bad = json.loads(cal.to_json())
    bad["split"] = {"code": [1.0]}
    assert Calibration.from_json(json.dumps(bad)).split is None


def test_a_full_rebuild_measures_its_calibration_beside_the_optimize_as_it_would_after(tmp_path, cfg_for, monkeypatch):
    """The indexer measures the calibration on a second connection while the closing optimize
    (FTS merge, deflate, VACUUM) runs: what it stores is what a calibration of the finished index
    gives."""
    import shutil

    from vaultrag.store.sqlite.store import SqliteStore

    vault = tmp_path / "vault"
    shutil.copytree(shared_path("eval", "vaults", "obsidian-help", "en"), vault)
    cfg = cfg_for(vault)
    readers = []
    real = SqliteStore.open_reader
    monkeypatch.setattr(SqliteStore, "open_reader", lambda self: readers.append(self.path) or real(self))
    reindex(cfg, full=True)
    assert len(readers) == 1 and ".rebuild-" in readers[0].name, "measured on the shadow copy being built"
    with Store(cfg.db_path(), readonly=True) as s:
        stored, again = json.loads(s.get_meta(META_KEY)), json.loads(inject.calibrate(cfg, s).to_json())
    for d in (stored, again):
        d.pop("seconds")
    assert stored == again and stored["chunks"] > 100 and max(stored["thresholds"].values()) > 0

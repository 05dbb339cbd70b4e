"""A past session's question ranks after the reply that answered it (trial finding: "what did we
decide for the queue" cited the question "Should we pick ... for the queue?" first)."""
from __future__ import annotations

import pytest

from conftest import write_notes
from session_corpus import new_transcript
from vaultrag.config import load_config
from vaultrag.indexer import reindex
from vaultrag.retrieve import search
from vaultrag.retrieve.replies import asks, replies_first
from vaultrag.retrieve.types import Candidate


@pytest.fixture
def sessions_cfg(tmp_path):
    vault = write_notes(tmp_path / "vault", {"a.md": "# Groceries\n\nApples and bread.\n"})
    t = new_transcript(7)
    t.user("For the billing events queue we need a broker. Should we pick Kafka or RabbitMQ for the billing events queue?")
    t.assistant(text="Let me compare the two.")
    t.assistant(text="Decision: Kafka, because it keeps ordering per key. RabbitMQ stays out for now.")
    t.user("Now let's use Redis for the session cache of the billing service.")  # states, does not ask
    t.assistant(text="Done: Redis is wired in.")
    t.write(tmp_path / "projects" / "-home-dev-proj")
    cfg = load_config(vault=str(vault), db=str(tmp_path / "idx.sqlite"), sessions=str(tmp_path / "projects"))
    reindex(cfg)
    return cfg


def test_the_reply_comes_before_the_question(sessions_cfg):
    ans = search("should we pick kafka or rabbitmq for the billing events queue", sessions_cfg, k=5, gate=False,
                 scope="sessions")
    texts = [h.text for h in ans.hits]
    decision = next(i for i, x in enumerate(texts) if x.startswith("Decision: Kafka"))
    question = next(i for i, x in enumerate(texts) if x.startswith("For the billing events queue"))
    assert decision < question, texts


def _cand(cid):
    return Candidate(cid, 1.0 / cid, {}, {})


class _Chunk:
    def __init__(self, text):
        self.text = text


QUERY = "which broker did we pick"


def test_only_an_asking_message_yields_its_place():
    chunks = {1: _Chunk("Should we use Kafka?"), 2: _Chunk("Let's use Redis."), 3: _Chunk("The broker: Kafka."),
              4: _Chunk("Redis is wired in."), 5: _Chunk("A note")}
    origins = {1: {"role": "user", "session_id": "s", "timestamp": "2026-01-01T00:00:01"},
               3: {"role": "assistant", "session_id": "s", "timestamp": "2026-01-01T00:00:02"},
               2: {"role": "user", "session_id": "s", "timestamp": "2026-01-01T00:00:03"},
               4: {"role": "assistant", "session_id": "s", "timestamp": "2026-01-01T00:00:04"}}
    ranked = [_cand(1), _cand(2), _cand(5), _cand(3), _cand(4)]
    assert [c.chunk_id for c in replies_first(ranked, chunks, origins, QUERY)] == [3, 1, 2, 5, 4]
    # another session's assistant message is no reply, nor one after the person spoke again
    other = {**origins, 3: {**origins[3], "session_id": "t"}}
    assert [c.chunk_id for c in replies_first(ranked, chunks, other, QUERY)] == [1, 2, 5, 3, 4]
    # a reply that shares no word of the query (found through the question in its context) stays
    assert [c.chunk_id for c in replies_first(ranked, chunks, origins, "which cluster")] == [1, 2, 5, 3, 4]
    assert asks("any idea?") and asks("How did we fix it") and asks("The tests fail. Is there a fix")
    assert not asks("Let's use Redis.") and not asks("The test fails in CI. It is the one named test_x.")

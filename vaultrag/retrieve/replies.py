"""A past session's question ranks after the reply that answered it.

"what did we decide for the queue?" shares its words with the question asked in that session
("Should we pick Kafka or RabbitMQ for the queue?") at least as much as with the answer
("Decision: we go with Kafka ..."), so the question often ranked first: a block that opens with
a question answers nothing (trial finding). When a person's message that asks is among the
candidates and an assistant message of the same session that follows it (before the person's next
message of that session among the candidates) ranks below it, that reply moves up to just before
the question, if it shares a word of the query in its own text (a reply found only through the
question quoted in its context column, "Let me check the config first.", answers nothing either);
nothing else moves, and both stay. A message that states something ("let's use
Redis") is not a question and keeps its place. Standard library only (hook path)."""
from __future__ import annotations

from ..sessions import is_session_path
from ..textutil import is_stopword, words
from .name_use import QUESTION_WORDS, sentences

PREFIX = 5  # letters two forms of a word share ("billing" / "billed" do not; "events" / "event" do)


def asks(text: str) -> bool:
    """Whether a message asks: a question mark, or a sentence whose first word asks ("how do I",
    "is there"; "It is the one named test_x" states)."""
    return "?" in text or "？" in text or any(
        s.split() and s.split()[0].lower().strip(".,;:!\"'(") in QUESTION_WORDS for s in sentences(text))


def _keys(text: str) -> set[str]:
    return {w[:PREFIX] for w in words(text) if not is_stopword(w)}


def replies_first(direct: list, chunks: dict, origins: dict, query: str) -> list:
    """`direct` (ranked candidates) with each asking user message's reply moved up to just before
    it; `origins`: chunk id -> session origin (role, session_id, timestamp) of the session chunks."""
    if sum(1 for c in direct if c.chunk_id in origins) < 2:
        return direct
    wanted = _keys(query)
    order = list(direct)

    def when(cid: int) -> tuple:
        return (origins[cid].get("timestamp") or "", cid)

    for cand in list(order):
        o = origins.get(cand.chunk_id)
        if not o or o.get("role") != "user" or not asks(chunks[cand.chunk_id].text):
            continue
        sid, start = o.get("session_id"), when(cand.chunk_id)
        later = [c for c in order if c.chunk_id in origins and origins[c.chunk_id].get("session_id") == sid
                 and when(c.chunk_id) > start]
        # the next message among the candidates; the person's own next message: nothing answered it
        reply = min(later, key=lambda c: when(c.chunk_id), default=None)
        if (reply is None or origins[reply.chunk_id].get("role") != "assistant"
                or not wanted & _keys(chunks[reply.chunk_id].text)):
            continue
        q_at, r_at = order.index(cand), order.index(reply)
        if r_at > q_at:
            order.pop(r_at)
            order.insert(q_at, reply)
    return order


def session_ids(direct: list, chunks: dict) -> list[int]:
    """The chunk ids of `direct` that are past sessions' messages."""
    return [c.chunk_id for c in direct if is_session_path(chunks[c.chunk_id].path)]

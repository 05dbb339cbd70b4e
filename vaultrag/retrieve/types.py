"""The values that flow through retrieval. Frozen, JSON-ready through `to_dict()`."""
from __future__ import annotations

from ..frozen import asdict, field, frozen

CHANNELS = ("meta", "bm25", "vec")


@frozen
class ChannelStatus:
    ran: bool
    hits: int = 0
    reason: str | None = None  # why it did not run, or a note (e.g. pruned terms)


@frozen
class Candidate:
    """One chunk found by one or more channels, before citations are checked."""
    chunk_id: int
    score: float  # fused RRF score
    ranks: dict[str, int | None]
    raw: dict[str, float | None]
    via: str = "direct"  # direct | graph
    graph_provenance: dict | None = None
    pinned: bool = False  # exact name match: wins outright


@frozen
class Hit:
    path: str
    title: str
    heading_path: str
    text: str
    line_start: int
    line_end: int
    citation: str  # fresh | source_changed | stored (the index's copy: file not checked safely, or no vault folder here; see retrieve/citations.py)
    score: float
    ranks: dict[str, int | None]
    raw: dict[str, float | None]
    via: str
    graph_provenance: dict | None
    tokens: int
    chunk_id: int
    content_hash: str
    # Issue 17: what the hit belongs to (vault | sessions | a `scopes:` rule's name) and where it
    # came from: {"kind": "file", path, heading_path, title} or {"kind": "session", session_id,
    # message_uuid, role, timestamp, project} (None: a file, built from the fields above).
    scope: str = "vault"
    origin: dict | None = None

    def public(self) -> dict:
        d = asdict(self)
        for private in ("tokens", "chunk_id", "content_hash"):
            d.pop(private)
        if d["origin"] is None:
            d["origin"] = {"kind": "file", "path": self.path, "heading_path": self.heading_path, "title": self.title}
        return d


@frozen
class Answer:
    status: str  # ok | no_evidence
    reason: str | None  # no_hits | below_threshold | unresolvable (with no_evidence)
    query: str
    channels: dict[str, ChannelStatus]
    stale_files: int
    hits: tuple[Hit, ...]
    evidence: dict = field(default_factory=dict)  # the signals the gate looked at
    timings_ms: dict = field(default_factory=dict)

    def to_dict(self, *, timings: bool = False) -> dict:
        d = {"status": self.status, "reason": self.reason, "query": self.query,
             "channels": {k: asdict(v) for k, v in self.channels.items()},
             "stale_files": self.stale_files, "evidence": self.evidence,
             "hits": [h.public() for h in self.hits]}
        if timings:
            d["timings_ms"] = self.timings_ms
        return d

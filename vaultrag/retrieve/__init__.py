"""Retrieval: one query in, a small cited answer out. See pipeline.search()."""
from __future__ import annotations

from .pipeline import search
from .types import Answer, ChannelStatus, Hit

__all__ = ["search", "Answer", "Hit", "ChannelStatus"]

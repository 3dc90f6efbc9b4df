"""Gemini Interactions v1: streamed-turn parser, snapshots and continuation builders.

Pinned contract: API version ``v1`` (never the ``v1beta`` union), revision
``2026-07-21``, SDK type baseline google-genai 2.12.1, typed-sse-projection (each
event is the JSON object of one SSE ``data`` field, discriminated by ``event_type``).
The contract is data in ``_tables.py``; the parsers are in ``_stream.py``, the turn
types in ``_turn.py``, the request builders in ``continuation.py``. This module only
re-exports; see ``docs/gemini_interactions.md``.
"""

from ._stream import GeminiInteractionsStream, parse_events, parse_interaction, resume_stream
from ._tables import REVISION, REVISIONS, RevisionTables
from ._turn import (
    GeminiFunctionCall,
    GeminiInteractionSnapshot,
    GeminiInteractionsTurn,
    GeminiResumePoint,
)
from .continuation import (
    build_gemini_interactions_continuation,
    build_gemini_interactions_stateless_continuation,
)

__all__ = [
    "REVISION",
    "REVISIONS",
    "RevisionTables",
    "GeminiFunctionCall",
    "GeminiInteractionsTurn",
    "GeminiInteractionSnapshot",
    "GeminiInteractionsStream",
    "GeminiResumePoint",
    "parse_events",
    "parse_interaction",
    "resume_stream",
    "build_gemini_interactions_continuation",
    "build_gemini_interactions_stateless_continuation",
]

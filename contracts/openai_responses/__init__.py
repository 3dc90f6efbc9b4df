"""OpenAI Responses contract: parse one streamed Response, build its continuation.

Re-exports only. The tables (the contract as data) are in ``_tables``, the value
types in ``_turn``, the incremental parser in ``_stream`` and the request builders in
``continuation``; see docs/openai_responses.md.
"""

from ._stream import OpenAIResponsesStream, parse_events
from ._tables import REVISION, REVISIONS, EventSpec, ItemSpec, PartEventSpec, RevisionTables
from ._turn import OpenAIResponsesCall, OpenAIResponsesTurn, PendingFunctionCall
from .continuation import (
    build_openai_responses_continuation,
    build_openai_responses_stateless_continuation,
)

__all__ = [
    "REVISION",
    "REVISIONS",
    "RevisionTables",
    "EventSpec",
    "ItemSpec",
    "PartEventSpec",
    "OpenAIResponsesCall",
    "PendingFunctionCall",
    "OpenAIResponsesTurn",
    "OpenAIResponsesStream",
    "parse_events",
    "build_openai_responses_continuation",
    "build_openai_responses_stateless_continuation",
]

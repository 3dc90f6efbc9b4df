"""Anthropic Messages streaming contract (wire-SSE envelope projection): re-exports.

``_tables`` holds the revisions as data, ``_stream`` the incremental parser,
``_turn`` the parsed turn and its digest check, ``continuation`` the request
builder. See docs/anthropic_messages.md.
"""

from ._stream import AnthropicMessagesStream, parse_events
from ._tables import INVALID_JSON_KEY, REVISION, REVISIONS, BlockSpec, DeltaSpec, RevisionTables
from ._turn import AnthropicMessagesTurn, AnthropicRecoveryCall, AnthropicToolUse
from .continuation import (
    FORCED_RECOVERY_PREFIX,
    AnthropicSentSchema,
    build_anthropic_messages_continuation,
)

__all__ = [
    "REVISION",
    "REVISIONS",
    "RevisionTables",
    "BlockSpec",
    "DeltaSpec",
    "INVALID_JSON_KEY",
    "FORCED_RECOVERY_PREFIX",
    "AnthropicSentSchema",
    "AnthropicToolUse",
    "AnthropicRecoveryCall",
    "AnthropicMessagesTurn",
    "AnthropicMessagesStream",
    "parse_events",
    "build_anthropic_messages_continuation",
]

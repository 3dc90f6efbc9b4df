"""pcfuzz contracts: strict, incremental, sans-IO parsers for streamed LLM tool calling.

Standard library only. Every rejection is a :class:`contracts.errors.ContractError`.
"""

from ._stream import StreamLimits
from .errors import (
    ContinuationError,
    ContractError,
    FixtureError,
    LimitExceeded,
    ProtocolViolation,
    ProviderError,
    ResultBindingError,
    SnapshotMutated,
    SourceURLError,
    StreamTruncated,
    StrictJSONError,
    UnsupportedProviderState,
)
from .results import ModelVisibleToolResult, bind_results

__all__ = [
    "ContinuationError",
    "ContractError",
    "FixtureError",
    "LimitExceeded",
    "ModelVisibleToolResult",
    "ProtocolViolation",
    "ProviderError",
    "ResultBindingError",
    "SnapshotMutated",
    "SourceURLError",
    "StreamLimits",
    "StreamTruncated",
    "StrictJSONError",
    "UnsupportedProviderState",
    "bind_results",
]

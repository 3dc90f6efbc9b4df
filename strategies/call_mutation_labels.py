"""The conformance kit's labels of the mutations of one function call, the same in
every contract: its identity (a call id shared, missing or empty, a name missing or
empty) and its arguments (missing, conflicting between two carriers, not an object,
non-finite numbers, duplicate keys, what strict JSON refuses, not JSON at all).

Each contract's strategies module spreads the entries its mutators apply into its own
``MUTATION_LABELS`` (``(label, family)``: ``safety`` means releasing any call is a
violation), so a label is written once for the four contracts.
"""

from __future__ import annotations

from typing import Final

__all__ = ["CALL_MUTATION_LABELS", "call_mutation_labels"]

CALL_MUTATION_LABELS: Final[dict[str, tuple[str, str]]] = {
    "shared_call_id": ("safety", "id_confusion"),
    "missing_call_id": ("safety", "identity"),
    "empty_call_id": ("safety", "identity"),
    "missing_name": ("safety", "identity"),
    "empty_name": ("safety", "identity"),
    "missing_arguments": ("safety", "arguments"),
    "conflicting_arguments": ("safety", "arguments"),
    "non_object_arguments": ("safety", "arguments"),
    "non_finite_arguments": ("safety", "arguments"),
    "duplicate_key_arguments": ("safety", "arguments"),
    "non_strict_arguments": ("safety", "arguments"),
    "invalid_json_arguments": ("safety", "arguments"),
}


def call_mutation_labels(*, without: frozenset[str] = frozenset()) -> dict[str, tuple[str, str]]:
    """The entries of :data:`CALL_MUTATION_LABELS` but ``without`` (the mutations a
    contract has no carrier for, or labels under another name)."""
    unknown = without - CALL_MUTATION_LABELS.keys()
    if unknown:
        raise ValueError(f"not call mutations: {sorted(unknown)}")
    return {name: label for name, label in CALL_MUTATION_LABELS.items() if name not in without}

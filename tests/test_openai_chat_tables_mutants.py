"""Chat rules from surviving mutants: ``response_modes`` must be distinct
strings, non-empty, and ``think_tags`` two distinct non-empty strings (each guard,
turned off, let an inconsistent table through ``check_tables``), and a final message's
tool call must be of a known type (``validate_message``)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pcfuzz.contracts.openai_chat import REVISIONS
from pcfuzz.contracts.openai_chat._tables import check_tables


@pytest.mark.parametrize("revision", sorted(REVISIONS))
@pytest.mark.parametrize(
    "change",
    [
        # the fidelity mode stays a non-default mode: only the distinct-strings rule fails
        lambda t: {"response_modes": (*t.response_modes, 3)},
        lambda t: {"response_modes": (*t.response_modes, t.fidelity_mode)},
        lambda t: {"think_tags": ("", "</think>")},
        lambda t: {"think_tags": ("<think>", "<think>")},
        lambda t: {"think_tags": (1, "</think>")},
        lambda t: {"think_tags": ("<think>", None)},
    ],
    ids=["mode-not-a-string", "fidelity-mode-twice", "empty-opening-tag", "same-tags",
         "opening-not-a-string", "closing-not-a-string"],
)
def test_an_inconsistent_mode_or_tag_table_fails_the_check(revision: str, change: Any) -> None:
    tables = REVISIONS[revision]
    check_tables(tables, revision)  # the shipped table passes
    changed = change(tables)
    rule = "response_modes" if "response_modes" in changed else "think_tags"
    with pytest.raises(RuntimeError, match=f"{rule} must be"):
        check_tables(dataclasses.replace(tables, **changed), revision)


@pytest.mark.parametrize("tool_type", ["custom", "Function", "", "function "])
def test_a_final_message_tool_call_of_another_type_is_rejected(tool_type: str) -> None:
    # validate_message's tool_type rule (guard turned off, any type passed)
    from pcfuzz.contracts.errors import ProtocolViolation
    from pcfuzz.contracts.openai_chat import validate_message

    call = {"id": "call-1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    validate_message(message)
    bad = {**message, "tool_calls": [{**call, "type": tool_type}]}
    with pytest.raises(ProtocolViolation, match="type must be one of") as info:
        validate_message(bad)
    assert info.value.where == "message.tool_calls[0].type"

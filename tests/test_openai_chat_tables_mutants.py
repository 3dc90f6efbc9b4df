"""Chat table self-checks from surviving mutants: ``response_modes`` must be distinct
strings, non-empty, and ``think_tags`` two distinct non-empty strings (each guard,
turned off, let an inconsistent table through ``check_tables``)."""

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

"""The tool names a generated call carries.

Every per-contract strategy draws a client call's name through :func:`tool_names`,
with its own default (the names this project's property tests want: identifier-like
for three contracts, arbitrary Unicode for Chat Completions). A caller that needs
other names (the conformance kit: the names an agent framework has registered, or
plain identifiers) wraps its strategy in :func:`with_tool_names`: while one example
of that strategy is drawn, every name drawn through :func:`tool_names` comes from the
given strategy instead. The choice lives in a context variable set only for the
duration of that draw, so strategies drawn elsewhere keep their defaults.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TypeVar

from hypothesis import strategies as st

__all__ = ["IDENTIFIER_PATTERN", "MAX_TOOL_NAME_LENGTH", "identifiers", "tool_names",
           "with_tool_names"]

T = TypeVar("T")

#: A tool name as most agent frameworks register one (a Python identifier, ASCII).
IDENTIFIER_PATTERN = r"[A-Za-z_][A-Za-z0-9_]*"
#: The longest tool name accepted (the function-name limit of the OpenAI APIs).
MAX_TOOL_NAME_LENGTH = 64
#: Identifiers of at most 32 characters: the kit's names when none are given.
identifiers: st.SearchStrategy[str] = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,31}",
                                                    fullmatch=True)

_CHOSEN: ContextVar[st.SearchStrategy[str] | None] = ContextVar("pcfuzz_tool_names",
                                                                default=None)


@st.composite
def _name(draw: st.DrawFn, default: st.SearchStrategy[str]) -> str:
    chosen = _CHOSEN.get()
    return draw(default if chosen is None else chosen)


def tool_names(default: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """A client call's name: drawn from ``default``, or from the names a surrounding
    :func:`with_tool_names` chose."""
    return _name(default)


@st.composite
def _scoped(draw: st.DrawFn, inner: st.SearchStrategy[T],
            names: st.SearchStrategy[str]) -> T:
    token = _CHOSEN.set(names)
    try:
        return draw(inner)
    finally:
        _CHOSEN.reset(token)


def with_tool_names(inner: st.SearchStrategy[T],
                    names: st.SearchStrategy[str] | None) -> st.SearchStrategy[T]:
    """``inner``, with every call name drawn from ``names`` (``None``: the defaults)."""
    if names is None:
        return inner
    return _scoped(inner, names)

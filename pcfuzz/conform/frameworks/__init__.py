"""Conformance adapters of real frameworks' stream handling (the ``frameworks`` extra:
``pip install 'pcfuzz[frameworks]'``).

Each adapter takes the raw SSE bytes of one turn (``pcfuzz conform --input sse``),
serves them to the framework through its real HTTP client with an in-process
transport (a fake key, a base URL that never resolves: nothing leaves the process),
consumes the stream the way the framework documents for tool calls, and returns the
calls that would be executed (Pydantic AI: the calls its agent did execute).

=================  ==========================================  =======================
framework          module                                      contracts
=================  ==========================================  =======================
LiteLLM            ``pcfuzz.conform.frameworks.with_litellm``  ``openai_chat``,
                                                               ``openai_responses``,
                                                               ``anthropic_messages``
LangChain          ``...frameworks.with_langchain``            the same three
Pydantic AI        ``...frameworks.with_pydantic_ai``          the same three
=================  ==========================================  =======================

None of them has a Gemini Interactions adapter (see each module). This package
imports without the frameworks; calling an adapter without them raises
:class:`pcfuzz.errors.UsageError` naming the extra. The findings of the kit against
each are in ``docs/frameworks.md``.

``pcfuzz conform --contract anthropic-messages --input sse
--adapter pcfuzz.conform.frameworks.with_langchain:anthropic_messages``
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pcfuzz.conform.frameworks import with_langchain, with_litellm, with_pydantic_ai
from pcfuzz.conform.frameworks.common import INSTALL_HINT, missing

__all__ = ["FRAMEWORKS", "INSTALL_HINT", "MODULES", "adapter", "available", "spec"]

#: framework -> (its adapter module, contract -> adapter).
FRAMEWORKS: dict[str, tuple[str, dict[str, Callable[[bytes], list[dict[str, Any]]]]]] = {
    "litellm": (with_litellm.__name__, with_litellm.ADAPTERS),
    "langchain": (with_langchain.__name__, with_langchain.ADAPTERS),
    "pydantic-ai": (with_pydantic_ai.__name__, with_pydantic_ai.ADAPTERS),
}
#: framework -> the modules its adapters import.
MODULES = {
    "litellm": ("litellm", "httpx", "httpx2", "openai"),
    "langchain": ("langchain_core", "langchain_openai", "langchain_anthropic", "httpx2"),
    "pydantic-ai": ("pydantic_ai", "openai", "anthropic", "httpx2"),
}


def available(framework: str) -> bool:
    """Whether every module ``framework``'s adapters need is installed."""
    return not missing(*MODULES[framework])


def adapter(framework: str, contract: str) -> Callable[[bytes], list[dict[str, Any]]]:
    return FRAMEWORKS[framework][1][contract]


def spec(framework: str, contract: str) -> str:
    """The ``--adapter`` argument of one adapter (``module:function``)."""
    module, table = FRAMEWORKS[framework]
    return f"{module}:{table[contract].__name__}"

"""LangChain's stream handling as conformance adapters (raw SSE bytes: ``--input sse``).

Each adapter streams a chat model the way LangChain documents streaming tool
calls: ``model.bind_tools(tools).stream(prompt)``, the ``AIMessageChunk``\\ s added
up (``+``), calls = the sum's ``tool_calls`` (the parsed calls LangChain hands to a
tool executor; ``invalid_tool_calls`` are not executed, nor is a call whose name is no
bound tool: ``ToolNode`` answers it with an error message). The tools bound are
``common.TOOL_NAMES``, the same for every stream (the kit's ``--tool-names``), each
with a schema that accepts any object. LangChain documents no
caller-side terminal check, so none is applied. The official SDK client underneath
gets an in-process transport that answers with the scenario's bytes, a fake key and
a ``base_url`` on a name that never resolves:

=======================  ===========================================================
``openai_chat``          ``langchain_openai.ChatOpenAI(http_client=<in-process>)``
``openai_responses``     the same with ``use_responses_api=True``
``anthropic_messages``   ``langchain_anthropic.ChatAnthropic``; it takes no HTTP
                         client argument, so its ``anthropic.Anthropic`` client
                         (the cached ``_client`` property) is set to one built with
                         the in-process transport before the first call
=======================  ===========================================================

Gemini Interactions: ``langchain-google-genai`` speaks ``generateContent``, not the
Interactions API, so there is no adapter.
"""

from __future__ import annotations

from typing import Any

from pcfuzz.conform.frameworks.common import (
    BASE_URL,
    FAKE_KEY,
    FINAL_TURNS,
    TOOL_NAMES,
    Replies,
    quiet,
    registered,
    require,
)

__all__ = ["ADAPTERS", "anthropic_messages", "openai_chat", "openai_responses", "version"]

FRAMEWORK = "LangChain"


def version() -> str:
    from importlib.metadata import version as dist_version

    return (f"langchain-core {dist_version('langchain-core')}, langchain-openai "
            f"{dist_version('langchain-openai')}, langchain-anthropic "
            f"{dist_version('langchain-anthropic')}")


_TOOLS = [{"type": "function", "function": {
    "name": name, "description": "pcfuzz",
    "parameters": {"type": "object", "properties": {}, "additionalProperties": True}}}
    for name in TOOL_NAMES]


def _gathered_calls(model: Any) -> list[dict[str, Any]]:
    gathered = None
    for chunk in model.bind_tools(_TOOLS).stream("pcfuzz"):
        gathered = chunk if gathered is None else gathered + chunk
    if gathered is None:
        return []
    # A call naming no bound tool is not executed: LangChain's tool executor
    # (``ToolNode``) answers it with an error message instead.
    return registered([
        {"call_id": call.get("id"), "name": call.get("name"), "arguments": call.get("args")}
        for call in gathered.tool_calls])


def _http(data: bytes, contract: str) -> Any:
    import httpx2

    return httpx2.Client(transport=httpx2.MockTransport(
        Replies(data, FINAL_TURNS[contract], httpx2.Response)))


def _openai(data: bytes, contract: str, responses: bool) -> list[dict[str, Any]]:
    require(FRAMEWORK, "langchain_openai", "langchain_core", "httpx2")
    from langchain_openai import ChatOpenAI

    with _http(data, contract) as http:
        options: dict[str, Any] = {"model": "gpt-4o", "api_key": FAKE_KEY, "base_url": BASE_URL,
                                   "http_client": http, "max_retries": 0,
                                   "use_responses_api": responses}
        model = ChatOpenAI(**options)
        return _gathered_calls(model)


@quiet
def openai_chat(data: bytes) -> list[dict[str, Any]]:
    return _openai(data, "openai-chat", responses=False)


@quiet
def openai_responses(data: bytes) -> list[dict[str, Any]]:
    return _openai(data, "openai-responses", responses=True)


@quiet
def anthropic_messages(data: bytes) -> list[dict[str, Any]]:
    require(FRAMEWORK, "langchain_anthropic", "langchain_core", "anthropic", "httpx2")
    import anthropic
    from langchain_anthropic import ChatAnthropic

    base = BASE_URL.removesuffix("/v1")
    with _http(data, "anthropic-messages") as http:
        options: dict[str, Any] = {"model": "claude-sonnet-4-5", "api_key": FAKE_KEY,
                                   "base_url": base, "max_retries": 0}
        model = ChatAnthropic(**options)
        # no http_client argument: the SDK client it would build is replaced
        model.__dict__["_client"] = anthropic.Anthropic(
            api_key=FAKE_KEY, base_url=base, http_client=http, max_retries=0)
        return _gathered_calls(model)


#: contract -> adapter.
ADAPTERS = {
    "openai-chat": openai_chat,
    "openai-responses": openai_responses,
    "anthropic-messages": anthropic_messages,
}

"""LiteLLM's stream handling as conformance adapters (raw SSE bytes: ``--input sse``).

Each adapter makes the call a LiteLLM user makes, with a fake key and ``api_base``
on a name that never resolves; the HTTP client LiteLLM would use gets an
in-process transport that answers with the scenario's bytes. What LiteLLM does
with them is its real streaming path:

=======================  ===========================================================
``openai_chat``          ``litellm.completion(model="openai/gpt-4o", stream=True,
                         client=openai.OpenAI(http_client=<in-process>))``; chunks
                         collected and rebuilt with ``litellm.stream_chunk_builder``
``anthropic_messages``   ``litellm.completion(model="anthropic/claude-sonnet-4-5",
                         stream=True, client=HTTPHandler(<in-process httpx client>))``:
                         LiteLLM's own Anthropic decoder, converted to OpenAI chunks,
                         rebuilt the same way
``openai_responses``     ``litellm.responses(model="openai/gpt-4o", stream=True,
                         client=HTTPHandler(<in-process httpx client>))``; the
                         events iterated, calls = the ``function_call`` items of the
                         ``response.completed`` event's response
=======================  ===========================================================

The caller-side gate: LiteLLM returns OpenAI formats, so the adapters apply the
gate OpenAI documents for them: Chat calls are executed only when the rebuilt
choice's ``finish_reason`` is ``"tool_calls"``; Responses calls only from a
``response.completed`` event. Arguments are decoded with ``json.loads`` (a string
that does not decode, or decodes to no object: the caller crashes, nothing runs). The gate stays in the
adapters, not in the kit's ``--gate``: it reads LiteLLM's *output* (the rebuilt
``finish_reason``, which LiteLLM writes itself, for Anthropic from its own
conversion), while ``--gate finish_reason`` reads the *stream's* field and the
Anthropic adapter's stream has none (``--gate stop_reason`` would credit the
caller with a check on Anthropic's field, which an OpenAI-format caller never sees).

Tools: the adapters declare :data:`~pcfuzz.conform.frameworks.common.TOOL_NAMES`
(``tools=`` on every request, each with a schema that accepts any object), and the
caller dispatches by name: a call naming no declared tool is not executed
(:func:`~pcfuzz.conform.frameworks.common.registered`), as LangChain's and Pydantic
AI's executors refuse it.

Gemini Interactions: ``litellm.interactions.create(stream=True)`` passes the events
through one by one and assembles no call (the ``interaction.completed`` event
carries no steps); the call assembly would be the caller's own, so no adapter here.

LiteLLM fetches a model price list from the network when imported unless told
otherwise: the adapters set ``LITELLM_LOCAL_MODEL_COST_MAP=True`` and
``LITELLM_OFFLINE_MODE=true`` before importing it, and quiet its ``LiteLLM`` logger
(it logs a traceback for every chunk it cannot convert).
"""

from __future__ import annotations

import logging
import os
from typing import Any

from pcfuzz.conform.frameworks.common import (
    BASE_URL,
    FAKE_KEY,
    FINAL_TURNS,
    TOOL_NAMES,
    Replies,
    arguments_of,
    quiet,
    registered,
    require,
)

__all__ = ["ADAPTERS", "anthropic_messages", "openai_chat", "openai_responses", "version"]

FRAMEWORK = "LiteLLM"
_PROMPT = [{"role": "user", "content": "pcfuzz"}]


def _litellm() -> Any:
    require(FRAMEWORK, "litellm", "httpx", "openai")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    import litellm

    # LiteLLM logs every chunk it cannot convert, with a traceback, to stderr: the
    # outcome is what counts, the kit's report says what happened.
    logging.getLogger("LiteLLM").setLevel(logging.CRITICAL)
    litellm.suppress_debug_info = True
    litellm.telemetry = False
    return litellm


def version() -> str:
    from importlib.metadata import version as dist_version

    return dist_version("litellm")


_ANY_OBJECT = {"type": "object", "additionalProperties": True}
_CHAT_TOOLS = [{"type": "function", "function": {"name": name, "parameters": _ANY_OBJECT}}
               for name in TOOL_NAMES]
_RESPONSES_TOOLS = [{"type": "function", "name": name, "parameters": _ANY_OBJECT}
                    for name in TOOL_NAMES]


def _httpx_handler(data: bytes, contract: str) -> Any:
    import httpx
    from litellm.llms.custom_httpx.http_handler import HTTPHandler

    replies = Replies(data, FINAL_TURNS[contract], httpx.Response)
    return HTTPHandler(client=httpx.Client(transport=httpx.MockTransport(replies)))


def _chat_calls(litellm: Any, chunks: list[Any]) -> list[dict[str, Any]]:
    """The rebuilt response's calls, behind the Chat gate (``finish_reason``)."""
    built = litellm.stream_chunk_builder(chunks, messages=_PROMPT)
    if built is None or not built.choices:
        return []
    choice = built.choices[0]
    if choice.finish_reason != "tool_calls":
        return []
    return registered([
        {"call_id": call.id, "name": call.function.name,
         "arguments": arguments_of(call.function.arguments)}
        for call in choice.message.tool_calls or []
    ])


@quiet
def openai_chat(data: bytes) -> list[dict[str, Any]]:
    litellm = _litellm()
    import httpx2
    import openai

    replies = Replies(data, FINAL_TURNS["openai-chat"], httpx2.Response)
    with httpx2.Client(transport=httpx2.MockTransport(replies)) as http:
        client = openai.OpenAI(api_key=FAKE_KEY, base_url=BASE_URL, http_client=http,
                               max_retries=0)
        stream = litellm.completion(
            model="openai/gpt-4o", messages=_PROMPT, tools=_CHAT_TOOLS,
            stream=True, client=client, api_key=FAKE_KEY, api_base=BASE_URL, num_retries=0)
        chunks = list(stream)
    return _chat_calls(litellm, chunks)


@quiet
def anthropic_messages(data: bytes) -> list[dict[str, Any]]:
    litellm = _litellm()
    handler = _httpx_handler(data, "anthropic-messages")
    try:
        stream = litellm.completion(
            model="anthropic/claude-sonnet-4-5", messages=_PROMPT,
            tools=_CHAT_TOOLS, stream=True, client=handler, api_key=FAKE_KEY,
            api_base=BASE_URL.removesuffix("/v1"), num_retries=0)
        chunks = list(stream)
    finally:
        handler.client.close()
    return _chat_calls(litellm, chunks)


@quiet
def openai_responses(data: bytes) -> list[dict[str, Any]]:
    litellm = _litellm()
    handler = _httpx_handler(data, "openai-responses")
    try:
        stream = litellm.responses(
            model="openai/gpt-4o", input="pcfuzz", tools=_RESPONSES_TOOLS, stream=True,
            client=handler, api_key=FAKE_KEY, api_base=BASE_URL, num_retries=0)
        completed = None
        for event in stream:
            if getattr(event, "type", None) == "response.completed":
                completed = event
    finally:
        handler.client.close()
    if completed is None:
        raise RuntimeError("the stream ended without response.completed")
    return registered([
        {"call_id": item.call_id, "name": item.name, "arguments": arguments_of(item.arguments)}
        for item in completed.response.output
        if getattr(item, "type", None) == "function_call"
    ])


#: contract -> adapter.
ADAPTERS = {
    "openai-chat": openai_chat,
    "anthropic-messages": anthropic_messages,
    "openai-responses": openai_responses,
}

"""Pydantic AI's stream handling as conformance adapters (raw SSE bytes: ``--input sse``).

Pydantic AI runs the tools itself: an ``Agent`` streams the model's response,
executes the tool calls it decides are complete, sends their results back and
streams again. Each adapter runs such an agent with ``run_stream_events`` (the
documented way to stream a run with its tool calls) and returns what the tool
functions were actually called with: the calls Pydantic AI executed.

* Tools: ``common.TOOL_NAMES``, the same for every stream (the kit's
  ``--tool-names``), registered with ``Tool.from_schema`` and a schema that allows
  any object, so that no schema decides the outcome. Each records
  ``(ctx.tool_call_id, name, kwargs)`` and returns ``"ok"``. A call naming another
  tool is not run: the agent answers it with a retry prompt (the in-process server
  then ends the run with its "done" turn).
* The model: the official SDK client with an in-process transport that answers the
  first request with the scenario's bytes and every later one with a turn that
  only says "done" (``common.FINAL_TURNS``), a fake key and a ``base_url`` on a
  name that never resolves:

  =======================  =========================================================
  ``openai_chat``          ``OpenAIChatModel`` (``openai.AsyncOpenAI``)
  ``openai_responses``     ``OpenAIResponsesModel`` (``openai.AsyncOpenAI``)
  ``anthropic_messages``   ``AnthropicModel`` (``anthropic.AsyncAnthropic``)
  =======================  =========================================================

* Outcome: the executed calls, even when the run raises afterwards (what ran, ran);
  a run that raises before any tool ran is a rejection.

Pydantic AI has no caller-side gate to apply: execution is the framework's. Gemini
Interactions: its ``GoogleModel`` speaks ``generateContent``, not Interactions, so
there is no adapter.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pcfuzz.conform.frameworks.common import (
    BASE_URL,
    FAKE_KEY,
    FINAL_TURNS,
    TOOL_NAMES,
    Replies,
    quiet,
    require,
)

__all__ = ["ADAPTERS", "anthropic_messages", "openai_chat", "openai_responses", "version"]

FRAMEWORK = "Pydantic AI"
_ANY_OBJECT = {"type": "object", "additionalProperties": True}


def version() -> str:
    from importlib.metadata import version as dist_version

    return f"pydantic-ai-slim {dist_version('pydantic-ai-slim')}"


def _recording_tools(executed: list[dict[str, Any]]) -> list[Any]:
    from pydantic_ai import RunContext, Tool

    def tool(name: str) -> Any:
        def run(ctx: RunContext[None], **arguments: Any) -> str:
            executed.append({"call_id": ctx.tool_call_id, "name": name,
                             "arguments": dict(arguments)})
            return "ok"

        return Tool.from_schema(run, name=name, description="pcfuzz",
                                json_schema=_ANY_OBJECT, takes_ctx=True)

    return [tool(name) for name in TOOL_NAMES]


async def _run(model: Any, executed: list[dict[str, Any]]) -> None:
    from pydantic_ai import Agent

    agent = Agent(model, tools=_recording_tools(executed))
    async with agent.run_stream_events("pcfuzz") as events:
        async for _event in events:
            pass


def _execute(make_model: Any, data: bytes, contract: str) -> list[dict[str, Any]]:
    """Run the agent on ``data``; the calls its tools received."""
    import httpx2

    executed: list[dict[str, Any]] = []
    replies = Replies(data, FINAL_TURNS[contract], httpx2.Response)

    async def main() -> None:
        async with httpx2.AsyncClient(transport=httpx2.MockTransport(replies)) as http:
            await _run(make_model(http), executed)

    try:
        asyncio.run(main())
    except Exception:
        if not executed:
            raise
    return executed


@quiet
def openai_chat(data: bytes) -> list[dict[str, Any]]:
    require(FRAMEWORK, "pydantic_ai", "openai", "httpx2")
    import openai
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    def model(http: Any) -> Any:
        client = openai.AsyncOpenAI(api_key=FAKE_KEY, base_url=BASE_URL, http_client=http,
                                    max_retries=0)
        return OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=client))

    return _execute(model, data, "openai-chat")


@quiet
def openai_responses(data: bytes) -> list[dict[str, Any]]:
    require(FRAMEWORK, "pydantic_ai", "openai", "httpx2")
    import openai
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    def model(http: Any) -> Any:
        client = openai.AsyncOpenAI(api_key=FAKE_KEY, base_url=BASE_URL, http_client=http,
                                    max_retries=0)
        return OpenAIResponsesModel("gpt-4o", provider=OpenAIProvider(openai_client=client))

    return _execute(model, data, "openai-responses")


@quiet
def anthropic_messages(data: bytes) -> list[dict[str, Any]]:
    require(FRAMEWORK, "pydantic_ai", "anthropic", "httpx2")
    import anthropic
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    def model(http: Any) -> Any:
        client = anthropic.AsyncAnthropic(api_key=FAKE_KEY, base_url=BASE_URL.removesuffix("/v1"),
                                          http_client=http, max_retries=0)
        return AnthropicModel("claude-sonnet-4-5",
                              provider=AnthropicProvider(anthropic_client=client))

    return _execute(model, data, "anthropic-messages")


#: contract -> adapter.
ADAPTERS = {
    "openai-chat": openai_chat,
    "openai-responses": openai_responses,
    "anthropic-messages": anthropic_messages,
}

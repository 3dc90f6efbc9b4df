"""What the framework adapters share: the usage error when a framework is missing,
the tool names every adapter registers (the kit's ``--tool-names``), the follow-up
turn an agent loop asks for after running tools, and the in-process HTTP handler
that answers every request from bytes.

No framework is imported here: ``pcfuzz.conform.frameworks`` imports without them.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import warnings
from collections.abc import Callable
from typing import Any

from pcfuzz.errors import UsageError

__all__ = [
    "BASE_URL",
    "FAKE_KEY",
    "FINAL_TURNS",
    "INSTALL_HINT",
    "TOOL_NAMES",
    "Replies",
    "arguments_of",
    "missing",
    "quiet",
    "registered",
    "require",
]

INSTALL_HINT = "pip install 'pcfuzz[frameworks]'"
#: Where the framework believes it sends its requests: a reserved name that never
#: resolves (RFC 2606). Nothing leaves the process: every client gets an in-process
#: transport that answers from the scenario's bytes.
BASE_URL = "http://pcfuzz.invalid/v1"
FAKE_KEY = "sk-pcfuzz-offline"
#: The tools every adapter registers (binds, declares), the same for every stream:
#: run the kit with ``--tool-names lookup_order,lookup_customer`` so that every
#: generated call names one of them and no adapter needs a first pass over the
#: stream to learn its names. The golden wire turns call ``lookup_order`` (and
#: Gemini's also ``lookup_customer``). A call naming any other tool never runs: the
#: framework answers it with an error (LangChain's ``ToolNode``, Pydantic AI's
#: retry prompt) and so does a LiteLLM caller's dispatch (see :func:`registered`).
TOOL_NAMES = ("lookup_order", "lookup_customer")


def missing(*distributions: str) -> list[str]:
    """The importable module names among ``distributions`` that are not installed."""
    return [name for name in distributions if importlib.util.find_spec(name) is None]


def require(framework: str, *modules: str) -> None:
    """Raise :class:`UsageError` naming the extra when a module of ``framework`` is absent."""
    absent = missing(*modules)
    if absent:
        raise UsageError(f"the {framework} adapters need {', '.join(absent)}: {INSTALL_HINT}")


def quiet(adapter: Callable[[bytes], list[dict[str, Any]]],
          ) -> Callable[[bytes], list[dict[str, Any]]]:
    """Silence the frameworks' own warnings (deprecations, serializer notes): what
    counts is the calls they return or run."""

    @functools.wraps(adapter)
    def run(data: bytes) -> list[dict[str, Any]]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return adapter(data)

    return run


def registered(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The calls that name a registered tool (:data:`TOOL_NAMES`): what a caller that
    dispatches by name executes; a call naming any other tool is answered with an
    error instead, as LangChain's ``ToolNode`` does."""
    return [call for call in calls if call.get("name") in TOOL_NAMES]


def arguments_of(text: Any) -> dict[str, Any]:
    """A call's argument string as a caller decodes it (``json.loads``), a dict as is.
    Arguments that are not an object (``[]``, ``1``, ``null``) raise ``ValueError``:
    the caller's ``tool(**arguments)`` would fail there, so nothing runs."""
    value = json.loads(text) if isinstance(text, str) else text
    if not isinstance(value, dict):
        raise ValueError(f"tool arguments are JSON {type(value).__name__}, not an object")
    return value


def _chat_chunk(delta: dict[str, Any], finish: str | None) -> str:
    chunk = {"id": "pcfuzz-final", "object": "chat.completion.chunk", "created": 0,
             "model": "pcfuzz-model",
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return "data: " + json.dumps(chunk) + "\n\n"


def _event(name: str | None, data: dict[str, Any]) -> str:
    head = f"event: {name}\n" if name else ""
    return head + "data: " + json.dumps(data) + "\n\n"


_RESPONSE = {"id": "pcfuzz-final", "object": "response", "created_at": 0, "model": "pcfuzz-model",
             "status": "in_progress", "output": [], "error": None, "incomplete_details": None,
             "parallel_tool_calls": True, "tool_choice": "auto", "tools": []}
_MESSAGE = {"id": "pcfuzz-final-msg", "type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "done", "annotations": []}]}

#: contract -> a complete turn that answers with the text "done" and asks for no
#: call: what the in-process server sends an agent loop (Pydantic AI) for every
#: request after the first, so that the loop ends after running what it ran.
FINAL_TURNS: dict[str, bytes] = {
    "openai-chat": (
        _chat_chunk({"role": "assistant", "content": "done"}, None)
        + _chat_chunk({}, "stop") + "data: [DONE]\n\n").encode(),
    "openai-responses": (
        _event("response.created", {"type": "response.created", "sequence_number": 0,
                                    "response": _RESPONSE})
        + _event("response.output_item.added", {
            "type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
            "item": {**_MESSAGE, "status": "in_progress", "content": []}})
        + _event("response.content_part.added", {
            "type": "response.content_part.added", "sequence_number": 2,
            "item_id": _MESSAGE["id"], "output_index": 0, "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []}})
        + _event("response.output_text.delta", {
            "type": "response.output_text.delta", "sequence_number": 3,
            "item_id": _MESSAGE["id"], "output_index": 0, "content_index": 0, "delta": "done",
            "logprobs": []})
        + _event("response.output_text.done", {
            "type": "response.output_text.done", "sequence_number": 4,
            "item_id": _MESSAGE["id"], "output_index": 0, "content_index": 0, "text": "done",
            "logprobs": []})
        + _event("response.content_part.done", {
            "type": "response.content_part.done", "sequence_number": 5,
            "item_id": _MESSAGE["id"], "output_index": 0, "content_index": 0,
            "part": _MESSAGE["content"][0]})
        + _event("response.output_item.done", {
            "type": "response.output_item.done", "sequence_number": 6, "output_index": 0,
            "item": _MESSAGE})
        + _event("response.completed", {
            "type": "response.completed", "sequence_number": 7,
            "response": {**_RESPONSE, "status": "completed", "output": [_MESSAGE],
                         "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}})
    ).encode(),
    "anthropic-messages": (
        _event("message_start", {"type": "message_start", "message": {
            "id": "pcfuzz-final", "type": "message", "role": "assistant", "content": [],
            "model": "pcfuzz-model", "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1}}})
        + _event("content_block_start", {"type": "content_block_start", "index": 0,
                                         "content_block": {"type": "text", "text": ""}})
        + _event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                         "delta": {"type": "text_delta", "text": "done"}})
        + _event("content_block_stop", {"type": "content_block_stop", "index": 0})
        + _event("message_delta", {"type": "message_delta",
                                   "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                   "usage": {"output_tokens": 1}})
        + _event("message_stop", {"type": "message_stop"})
    ).encode(),
}


class Replies:
    """The in-process server: the first request gets the scenario's bytes, every
    later one ``then`` (a turn without calls), each as a ``200 text/event-stream``
    response built by ``response(status, headers, body)`` (the framework's own
    HTTP library's response class). ``requests`` counts what was asked."""

    def __init__(self, first: bytes, then: bytes, response: Callable[..., Any]) -> None:
        self.bodies = [first]
        self.then = then
        self.response = response
        self.requests = 0

    def __call__(self, request: Any) -> Any:
        self.requests += 1
        body = self.bodies.pop(0) if self.bodies else self.then
        return self.response(200, headers={"content-type": "text/event-stream"}, content=body)

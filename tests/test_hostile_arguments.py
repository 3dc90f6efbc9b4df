"""Hostile arguments for every public entry point: only ``ContractError`` may escape.

ARCHITECTURE: "For ANY input and ANY argument value, a public function either returns
or raises a ``ContractError``", and "a stream that raised anything at all is
poisoned". Each entry point below has a *baseline* call that succeeds (checked by
``test_every_baseline_call_succeeds``, so a hostile value replaces one argument of a
call that would otherwise reach every check). The properties then replace one
argument, or one value nested anywhere inside one argument, with a hostile value:
wrong types, subclasses whose methods raise or lie, huge integers, deep nesting,
NaN, endless and failing iterables.

The hostile values are written here, independently of ``contracts/``.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from _revisions import each_revision
from hypothesis import event, given, note
from hypothesis import strategies as st

from pcfuzz.contracts import bind_results
from pcfuzz.contracts._stream import StreamLimits
from pcfuzz.contracts.errors import ContractError
from pcfuzz.contracts.fixtures import load_fixture
from pcfuzz.contracts.results import ModelVisibleToolResult
from pcfuzz.contracts.strict_json import JSONLimits

ROOT = Path(__file__).resolve().parent.parent


# ----------------------------------------------------------------- hostile values


class Boom(Exception):
    """What a hostile object raises: anything but a ContractError."""


def _boom(*_: object, **__: object) -> Any:
    raise Boom("hostile method called")


class EvilStr(str):
    __eq__ = _boom
    __hash__ = _boom
    __len__ = _boom
    __iter__ = _boom
    __str__ = _boom
    __repr__ = _boom
    __getitem__ = _boom
    encode = _boom
    casefold = _boom
    startswith = _boom


class LyingStr(str):
    """Claims to be something else when asked politely."""

    def __str__(self) -> str:
        return "function_call"

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = str.__hash__


class EvilDict(dict):  # type: ignore[type-arg]
    items = _boom
    keys = _boom
    values = _boom
    get = _boom
    __iter__ = _boom
    __len__ = _boom
    __getitem__ = _boom
    __contains__ = _boom
    __eq__ = _boom
    __hash__ = None  # type: ignore[assignment]


class EvilList(list):  # type: ignore[type-arg]
    __iter__ = _boom
    __len__ = _boom
    __getitem__ = _boom
    __eq__ = _boom
    __hash__ = None  # type: ignore[assignment]


class EvilInt(int):
    __index__ = _boom
    __int__ = _boom
    __eq__ = _boom
    __hash__ = _boom
    __lt__ = _boom
    __gt__ = _boom
    __le__ = _boom
    __ge__ = _boom
    __repr__ = _boom
    __str__ = _boom
    __format__ = _boom
    bit_length = _boom


class EvilFloat(float):
    __eq__ = _boom
    __hash__ = _boom
    __repr__ = _boom
    __float__ = _boom


class Opaque:
    """An object whose every protocol raises."""

    __iter__ = _boom
    __len__ = _boom
    __getitem__ = _boom
    __eq__ = _boom
    __hash__ = _boom
    __repr__ = _boom
    __str__ = _boom
    __fspath__ = _boom
    __index__ = _boom
    __bool__ = _boom


def _impostor(cls: type | None) -> Any:
    """An object whose ``__class__`` claims ``cls`` (``isinstance`` believes it) and
    every protocol of which raises: truth value, comparison, hashing, iteration,
    length, index, conversion, formatting, any attribute it does not have. With
    ``cls=None`` the ``__class__`` lookup itself raises (so does ``isinstance``)."""

    claimed = property(_boom) if cls is None else property(lambda self: cls)

    class Impostor:
        __class__ = claimed  # type: ignore[assignment]
        __iter__ = _boom
        __len__ = _boom
        __getitem__ = _boom
        __contains__ = _boom
        __eq__ = _boom
        __ne__ = _boom
        __lt__ = _boom
        __le__ = _boom
        __gt__ = _boom
        __ge__ = _boom
        __hash__ = _boom
        __bool__ = _boom
        __index__ = _boom
        __int__ = _boom
        __float__ = _boom
        __str__ = _boom
        __repr__ = _boom
        __format__ = _boom
        __fspath__ = _boom
        __getattr__ = _boom

    return Impostor()


def _caller_classes() -> list[type]:
    """The project's classes a caller hands in (limits, results, records, events)."""
    from pcfuzz.contracts.anthropic_messages import AnthropicSentSchema
    from pcfuzz.contracts.gemini_interactions import GeminiResumePoint
    from pcfuzz.contracts.openai_chat import CacheDeployment
    from pcfuzz.contracts.sse import SSEEvent

    return [ModelVisibleToolResult, StreamLimits, JSONLimits, AnthropicSentSchema,
            GeminiResumePoint, CacheDeployment, SSEEvent]


#: Impostors of every builtin type a contract branches on, of the caller classes,
#: and one whose ``__class__`` raises: (label, factory).
IMPOSTORS: list[tuple[str, Callable[[], Any]]] = [
    (f"impostor-{cls.__name__}", lambda cls=cls: _impostor(cls))
    for cls in (bool, str, int, float, dict, list, tuple, bytes, bytearray, set, frozenset,
                type(None), Path, *_caller_classes())
] + [("impostor-raising-class", lambda: _impostor(None))]


def _raising_iterator() -> Iterator[Any]:
    yield {"type": "x"}
    raise Boom("iterator failed half-way")


def _deep_list(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


def _deep_dict(depth: int) -> Any:
    value: Any = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def _shared_explosion(levels: int) -> Any:
    value: Any = ["x"]
    for _ in range(levels):
        value = [value, value]
    return value


# (label, factory): a factory so each example gets a fresh value (iterators are
# consumed; deep structures are cheap enough to rebuild).
HOSTILE: list[tuple[str, Callable[[], Any]]] = [
    ("none", lambda: None),
    ("true", lambda: True),
    ("zero", lambda: 0),
    ("negative", lambda: -1),
    ("int64-overflow", lambda: 2**64),
    ("huge-int", lambda: 10**5000),
    ("nan", lambda: math.nan),
    ("inf", lambda: -math.inf),
    ("float", lambda: 1.5),
    ("empty-str", lambda: ""),
    ("long-str", lambda: "x" * 2_000_000),
    ("lone-surrogate", lambda: "\ud800"),
    ("nul", lambda: "\x00"),
    ("bytes", lambda: b"{}"),
    ("bytearray", lambda: bytearray(b"[]")),
    ("tuple", lambda: ("a", "b")),
    ("set", lambda: {"a"}),
    ("empty-list", lambda: []),
    ("empty-dict", lambda: {}),
    ("object", lambda: object()),
    ("opaque", Opaque),
    ("evil-str", lambda: EvilStr("function_call")),
    ("lying-str", lambda: LyingStr("x")),
    ("evil-dict", lambda: EvilDict({"type": "function_call"})),
    ("evil-list", lambda: EvilList([{"type": "x"}])),
    ("evil-int", lambda: EvilInt(3)),
    ("evil-float", lambda: EvilFloat(0.5)),
    *IMPOSTORS,
    ("deep-list", lambda: _deep_list(100_000)),
    ("deep-dict", lambda: _deep_dict(100_000)),
    ("shared-explosion", lambda: _shared_explosion(60)),
    ("endless-count", lambda: itertools.count()),
    ("endless-repeat", lambda: itertools.repeat({"type": "ping"})),
    ("raising-iterator", _raising_iterator),
    ("non-str-keys", lambda: {1: "a", None: "b"}),
    ("json-limits", JSONLimits),
    ("stream-limits", StreamLimits),
]

hostile_values = st.sampled_from(HOSTILE)


# --------------------------------------------------------------- baseline calls


@dataclass
class Baseline:
    """A call that succeeds; hostile values replace one of its arguments."""

    function: Callable[..., Any]
    args: list[Any] = field(default_factory=list)
    kwargs: dict[str, Any] = field(default_factory=dict)

    def call(self) -> Any:
        return self.function(*self.args, **self.kwargs)


def _fixture_events(name: str) -> list[Any]:
    return copy.deepcopy(list(load_fixture(ROOT / "fixtures" / f"{name}.json").events))


def _responses() -> dict[str, Callable[[], Baseline]]:
    from pcfuzz.contracts import openai_responses as oai
    from pcfuzz.strategies.openai_responses import strict_tool

    tools = [strict_tool("lookup_order", {"order_ref": {"type": "string"},
                                          "include_items": {"type": "boolean"}})]

    def turn() -> Any:
        return oai.parse_events(_fixture_events("openai_responses"))

    def results(t: Any) -> list[ModelVisibleToolResult]:
        return [ModelVisibleToolResult(c.call_id, "ok") for c in t.calls]

    def stateful() -> Baseline:
        t = turn()
        return Baseline(oai.build_openai_responses_continuation, [t, results(t)], {
            "model": "fixture-model", "previous_response_was_stored": True, "store": False,
            "instructions": "Controlled instructions", "tools": tools,
            "request_controls": {"tool_choice": "auto", "max_output_tokens": 512}})

    def stateless() -> Baseline:
        t = turn()
        return Baseline(oai.build_openai_responses_stateless_continuation, [t, results(t)], {
            "model": "fixture-model",
            "prior_input_items": [{"type": "message", "role": "user", "content": "hi"}],
            "instructions": "Controlled instructions", "tools": tools,
            "request_controls": {"tool_choice": "auto"}})

    return {
        "openai_responses.parse_events": lambda: Baseline(
            oai.parse_events, [_fixture_events("openai_responses")], {"limits": StreamLimits()}),
        "openai_responses.build_openai_responses_continuation": stateful,
        "openai_responses.build_openai_responses_stateless_continuation": stateless,
    }


def _anthropic() -> dict[str, Callable[[], Baseline]]:
    from pcfuzz.contracts import anthropic_messages as am

    tools = [{"name": "lookup_order", "description": "Look up an order",
              "input_schema": {"type": "object", "properties": {"order_ref": {"type": "string"}},
                               "required": ["order_ref"]}}]

    def build() -> Baseline:
        t = am.parse_events(_fixture_events("anthropic_messages"))
        return Baseline(am.build_anthropic_messages_continuation,
                        [t, [ModelVisibleToolResult(c.call_id, "ok") for c in t.calls]], {
                            "history": [{"role": "user", "content": "Where are orders A and B?"}],
                            "model": "fixture-model", "max_tokens": 512, "tools": tools,
                            "request_controls": {"temperature": 0.5},
                            "sent_schemas": [am.AnthropicSentSchema.of(
                                "lookup_order", original, tools[0]["input_schema"])]})

    original = {"type": "object", "properties": {"order_ref": {"type": "string",
                                                               "minLength": 3}},
                "required": ["order_ref"]}

    return {
        "anthropic_messages.parse_events": lambda: Baseline(
            am.parse_events, [_fixture_events("anthropic_messages")], {"limits": StreamLimits()}),
        "anthropic_messages.build_anthropic_messages_continuation": build,
        "anthropic_messages.AnthropicSentSchema.of": lambda: Baseline(
            am.AnthropicSentSchema.of, ["lookup_order", original, tools[0]["input_schema"]]),
    }


def _gemini() -> dict[str, Callable[[], Baseline]]:
    from pcfuzz.contracts import gemini_interactions as gi

    tools = [{"type": "function", "name": "lookup_order", "parameters": {"type": "object"}},
             {"type": "function", "name": "lookup_customer", "parameters": {"type": "object"}}]

    def turn_and_results() -> tuple[Any, list[ModelVisibleToolResult]]:
        t = gi.parse_events(_fixture_events("gemini_interactions"))
        return t, [ModelVisibleToolResult(c.call_id, "ok") for c in t.calls]

    def stateful() -> Baseline:
        t, r = turn_and_results()
        return Baseline(gi.build_gemini_interactions_continuation, [t, r], {
            "model": "fixture-model", "tools": tools, "system_instruction": "Be brief.",
            "generation_config": {"temperature": 0.0}, "previous_interaction_was_stored": True,
            "store": False, "request_controls": {"background": False}})

    def snapshot() -> dict[str, Any]:
        return {"id": "interaction-7f3a", "status": "requires_action", "steps": [
            {"type": "user_input", "content": [{"type": "text", "text": "Where is A-100?"}]},
            {"type": "thought", "signature": "c2ln",
             "summary": [{"type": "text", "text": "two lookups"}]},
            {"type": "function_call", "id": "call-alpha", "name": "lookup_order",
             "arguments": {"order_ref": "A-100"}},
            {"type": "function_call", "id": "call-beta", "name": "lookup_customer",
             "arguments": {"customer_ref": "C-7"}}]}

    def stateless() -> Baseline:
        t = gi.parse_interaction(snapshot(), origin="get")
        r = [ModelVisibleToolResult(c.call_id, "ok") for c in t.calls]
        return Baseline(gi.build_gemini_interactions_stateless_continuation, [t, r], {
            "model": "fixture-model", "tools": tools, "system_instruction": "Be brief.",
            "generation_config": None, "request_controls": {"background": False}})

    return {
        "gemini_interactions.parse_events": lambda: Baseline(
            gi.parse_events, [_fixture_events("gemini_interactions")], {"limits": StreamLimits()}),
        "gemini_interactions.parse_interaction": lambda: Baseline(
            gi.parse_interaction, [snapshot()], {"origin": "get", "limits": StreamLimits()}),
        "gemini_interactions.build_gemini_interactions_continuation": stateful,
        "gemini_interactions.build_gemini_interactions_stateless_continuation": stateless,
        "gemini_interactions.resume_stream": lambda: Baseline(
            gi.resume_stream, [_fixture_events("gemini_interactions")[:7],
                               gi.GeminiResumePoint("interaction-7f3a", "ev-0007")],
            {"limits": StreamLimits()}),
        "gemini_interactions.GeminiResumePoint": lambda: Baseline(
            gi.GeminiResumePoint, ["interaction-7f3a", "ev-0007"]),
    }


def _chat() -> dict[str, Callable[[], Baseline]]:
    from pcfuzz.contracts import openai_chat as oc
    from pcfuzz.contracts import openai_chat_cache as cache

    def frames() -> list[Any]:
        return list(oc.frames_from_fixture_events(_fixture_events("openai_chat")))

    def completion() -> Any:
        return oc.parse_events(frames()).completion

    def message() -> dict[str, Any]:
        return {"role": "assistant", "content": None,
                "tool_calls": [{"id": "c", "type": "function",
                                "function": {"name": "f", "arguments": '{"a": 1}'}}]}

    def body() -> dict[str, Any]:
        return {"id": "chatcmpl-1", "object": "chat.completion", "usage": {"total_tokens": 2},
                "choices": [{"message": message(), "index": 0, "finish_reason": "tool_calls"}]}

    return {
        "openai_chat.parse_events": lambda: Baseline(
            oc.parse_events, [frames()], {"limits": StreamLimits()}),
        "openai_chat.parse_completion": lambda: Baseline(oc.parse_completion, [body()]),
        "openai_chat.validate_message": lambda: Baseline(oc.validate_message, [message()]),
        "openai_chat.has_product": lambda: Baseline(oc.has_product, [message()]),
        "openai_chat.frames_from_fixture_events": lambda: Baseline(
            oc.frames_from_fixture_events, [_fixture_events("openai_chat")]),
        "openai_chat_cache.try_decode": lambda: Baseline(
            cache.try_decode, [cache.encode(completion())]),
        "openai_chat_cache.cache_key_object": lambda: Baseline(
            cache.cache_key_object, [{"model": "m", "messages": []}],
            {"deployment": oc.CacheDeployment("ns", "salt"), "response_mode": "openai"}),
        "openai_chat.check_request": lambda: Baseline(
            oc.check_request, [{"model": "m", "messages": [], "stream": True, "n": 1}],
            {"response_mode": "openai"}),
        "openai_chat.project_text": lambda: Baseline(
            oc.project_text, ["<think>plan</think>  the answer "]),
        "openai_chat.CacheDeployment": lambda: Baseline(
            oc.CacheDeployment, ["ns", "salt"], {"tenant_prefix": "t:", "epoch": 3}),
        "openai_chat_cache.encode": lambda: Baseline(cache.encode, [completion()]),
        "openai_chat_cache.decode": lambda: Baseline(cache.decode, [cache.encode(completion())]),
        "openai_chat_cache.cache_key": lambda: Baseline(
            cache.cache_key, [{"model": "m", "messages": [{"role": "user", "content": "hi"}]}],
            {"deployment": oc.CacheDeployment("ns", "salt", "tenant:", 1)}),
    }


def _shared() -> dict[str, Callable[[], Baseline]]:
    from pcfuzz.contracts import digest, sse, strict_json, wire
    from pcfuzz.contracts.fixtures import load_fixture_bytes
    from pcfuzz.contracts.provenance import validate_source_url

    fixture_bytes = (ROOT / "fixtures" / "openai_responses.json").read_bytes()
    wire_bytes = {
        name: load_fixture(ROOT / "fixtures" / "wire" / f"{name}.sse.json").sse
        for name in ("openai_responses", "anthropic_messages", "gemini_interactions",
                     "openai_chat")}

    def decoder_feed() -> Baseline:
        return Baseline(sse.SSEDecoder().feed, [wire_bytes["openai_chat"]])

    return {
        "sse.decode_sse": lambda: Baseline(sse.decode_sse, [wire_bytes["anthropic_messages"]]),
        "sse.SSEDecoder": lambda: Baseline(
            sse.SSEDecoder, [], {"max_line_bytes": 4096, "max_event_bytes": 65536}),
        "sse.SSEDecoder.feed": decoder_feed,
        "wire.parse_sse": lambda: Baseline(
            wire.parse_sse, ["gemini-interactions", wire_bytes["gemini_interactions"]],
            {"revision": None}),
        "wire.parse_sse_chunks": lambda: Baseline(
            wire.parse_sse_chunks, ["openai-chat", [wire_bytes["openai_chat"][:100],
                                                   wire_bytes["openai_chat"][100:]]]),
        "wire.parse_openai_responses_sse": lambda: Baseline(
            wire.parse_openai_responses_sse, [wire_bytes["openai_responses"]]),
        "wire.parse_anthropic_messages_sse": lambda: Baseline(
            wire.parse_anthropic_messages_sse, [wire_bytes["anthropic_messages"]]),
        "wire.parse_gemini_interactions_sse": lambda: Baseline(
            wire.parse_gemini_interactions_sse, [wire_bytes["gemini_interactions"]]),
        "wire.parse_openai_chat_sse": lambda: Baseline(
            wire.parse_openai_chat_sse, [wire_bytes["openai_chat"]]),
        "wire.sse_to_events": lambda: Baseline(
            lambda contract, events: list(wire.sse_to_events(contract, events)),
            ["anthropic-messages", sse.decode_sse(wire_bytes["anthropic_messages"])]),
        "strict_json.JSONLimits": lambda: Baseline(JSONLimits, [], {"max_depth": 64}),
        "_stream.StreamLimits": lambda: Baseline(StreamLimits, [], {"max_events": 10}),
        "digest.canonical_bytes": lambda: Baseline(digest.canonical_bytes, [[1, {"a": None}]]),
        "digest.check_digest": lambda: Baseline(
            digest.check_digest, [{"a": 1}, digest.canonical_digest({"a": 1})], {"what": "x"}),
        "digest.check_plain": lambda: Baseline(digest.check_plain, [[1, {"a": None}]]),
        "digest.verified_snapshot": lambda: Baseline(
            digest.verified_snapshot,
            [lambda: {"a": [1]}, digest.canonical_digest({"a": [1]})],
            {"what": "x", "size": len(digest.canonical_bytes({"a": [1]})), "exact": True}),
        "strict_json.loads": lambda: Baseline(
            strict_json.loads, [b'{"a": [1, 2.5, "x", null]}'], {"limits": JSONLimits()}),
        "provenance.validate_source_url": lambda: Baseline(
            validate_source_url,
            ["https://platform.openai.com/docs/guides/function-calling"],
            {"provider": "openai", "allow_local_source_urls": False}),
        "fixtures.load_fixture": lambda: Baseline(
            load_fixture, [ROOT / "fixtures" / "openai_responses.json"],
            {"allow_local_source_urls": False}),
        "fixtures.load_fixture_bytes": lambda: Baseline(
            load_fixture_bytes, [fixture_bytes],
            {"allow_local_source_urls": False, "origin": "openai_responses.json"}),
        "results.bind_results": lambda: Baseline(
            bind_results, [["a", "b"], [ModelVisibleToolResult("b", "1"),
                                        ModelVisibleToolResult("a", "2")]]),
        "results.ModelVisibleToolResult": lambda: Baseline(
            ModelVisibleToolResult, ["call-1", "output"], {"is_error": False}),
        "digest.canonical_digest": lambda: Baseline(digest.canonical_digest, [{"a": [1, "b"]}]),
    }


def _streams() -> dict[str, Callable[[], Baseline]]:
    """The stream constructors with every keyword they take (feeding them is driven
    by the stream properties below)."""
    import importlib

    out: dict[str, Callable[[], Baseline]] = {}
    for module_name, class_name, _ in STREAMS.values():
        cls = getattr(importlib.import_module(module_name), class_name)
        kwargs: dict[str, Any] = {"limits": StreamLimits()}
        if class_name == "AnthropicMessagesStream":
            kwargs["eager_input_streaming"] = ["lookup_order"]
        out[f"{module_name.rsplit('.', 1)[1]}.{class_name}"] = (
            lambda cls=cls, kwargs=kwargs: Baseline(cls, [], dict(kwargs)))
    return out


# Stream classes: (module, class, fixture name, events-to-input)
STREAMS: dict[str, tuple[str, str, str]] = {
    "openai-responses": ("pcfuzz.contracts.openai_responses", "OpenAIResponsesStream", "openai_responses"),
    "anthropic-messages": (
        "pcfuzz.contracts.anthropic_messages", "AnthropicMessagesStream", "anthropic_messages"),
    "gemini-interactions": (
        "pcfuzz.contracts.gemini_interactions", "GeminiInteractionsStream", "gemini_interactions"),
    "openai-chat": ("pcfuzz.contracts.openai_chat", "ChatCompletionStream", "openai_chat"),
}

ENTRY_POINTS: dict[str, Callable[[], Baseline]] = {
    **_shared(), **_responses(), **_anthropic(), **_gemini(), **_chat(), **_streams(),
}


def _stream_input(contract: str) -> list[Any]:
    import importlib

    module = importlib.import_module(STREAMS[contract][0])
    events = _fixture_events(STREAMS[contract][2])
    if contract == "openai-chat":
        return list(module.frames_from_fixture_events(events))
    return events


def _new_stream(contract: str, **kwargs: Any) -> Any:
    import importlib

    module = importlib.import_module(STREAMS[contract][0])
    return getattr(module, STREAMS[contract][1])(**kwargs)


# ------------------------------------------------------------------------ helpers


def _at_revision(baseline: Baseline, revision: str) -> Baseline:
    """The baseline call at ``revision``, where the callable takes a ``revision`` keyword
    (parsers, streams, snapshots: the fixtures parse under every revision) and the
    baseline does not set one itself."""
    import inspect

    try:
        parameters = inspect.signature(baseline.function).parameters
    except (TypeError, ValueError):
        return baseline
    if "revision" in parameters and "revision" not in baseline.kwargs:
        baseline.kwargs["revision"] = revision
        event("called at a revision")
    return baseline


def _slots(baseline: Baseline) -> list[tuple[str, Any]]:
    """Every argument position of a baseline call: ("arg", i) or ("kw", name)."""
    return [("arg", i) for i in range(len(baseline.args))] + [
        ("kw", k) for k in baseline.kwargs]


def _paths(value: Any, limit: int = 400) -> list[tuple[Any, ...]]:
    """Paths (key sequences) to every container member inside ``value``, breadth first."""
    out: list[tuple[Any, ...]] = []
    queue: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while queue and len(out) < limit:
        path, node = queue.pop(0)
        if type(node) is dict:
            for k, v in node.items():
                out.append((*path, k))
                queue.append(((*path, k), v))
        elif type(node) is list:
            for i, v in enumerate(node):
                out.append((*path, i))
                queue.append(((*path, i), v))
    return out


def _replace_at(value: Any, path: tuple[Any, ...], new: Any) -> None:
    node = value
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = new


def _expect_contract_outcome(call: Callable[[], Any]) -> str:
    """Run ``call``: returning or raising ContractError is fine; anything else fails."""
    try:
        call()
    except ContractError as exc:
        return f"rejected: {type(exc).__name__}"
    except Exception as exc:  # noqa: BLE001 - the property under test
        pytest.fail(f"{type(exc).__name__} escaped: {exc!r}"[:2000])
    return "accepted"


# -------------------------------------------------------------------------- tests


PUBLIC_MODULES = ("strict_json", "provenance", "fixtures", "results", "digest", "sse", "wire",
                  "openai_responses", "anthropic_messages", "gemini_interactions",
                  "openai_chat", "openai_chat_cache")
# Classes a caller constructs with its own values. (Streams are driven by the stream
# properties below; turns, calls, tables and specs are values the library builds.)
CALLER_CLASSES = ("strict_json.JSONLimits", "_stream.StreamLimits", "openai_chat.CacheDeployment",
                  "results.ModelVisibleToolResult", "sse.SSEDecoder",
                  "gemini_interactions.GeminiResumePoint",
                  "openai_responses.OpenAIResponsesStream",
                  "anthropic_messages.AnthropicMessagesStream",
                  "gemini_interactions.GeminiInteractionsStream",
                  "openai_chat.ChatCompletionStream")


def test_every_public_callable_has_a_baseline() -> None:
    """Every public function, and every public class a caller constructs with its own
    values (limits, results, the SSE decoder), is driven by the properties below."""
    import importlib
    import inspect

    missing = []
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(f"pcfuzz.contracts.{module_name}")
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isfunction(value):
                if f"{module_name}.{name}" in ENTRY_POINTS or any(
                        ENTRY_POINTS[k]().function is value for k in ENTRY_POINTS
                        if k.endswith(f".{name}")):
                    continue
                missing.append(f"{module_name}.{name}")
    for qualified in CALLER_CLASSES:
        if qualified not in ENTRY_POINTS:
            missing.append(qualified)
    assert not missing, f"public callables without a hostile-argument baseline: {missing}"


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_every_baseline_call_succeeds(name: str) -> None:
    ENTRY_POINTS[name]().call()


def _every_slot(baseline: Baseline) -> list[tuple[str, Any]]:
    """The baseline's argument slots plus every keyword parameter of the callable the
    baseline leaves at its default (given its default value), so no argument of an
    entry point is left out of the sweep below."""
    import inspect

    try:
        parameters = inspect.signature(baseline.function).parameters
    except (TypeError, ValueError):
        parameters = {}  # type: ignore[assignment]
    for name, parameter in parameters.items():
        if (parameter.kind is inspect.Parameter.KEYWORD_ONLY and name not in baseline.kwargs
                and parameter.default is not inspect.Parameter.empty):
            baseline.kwargs[name] = parameter.default
    return _slots(baseline)


def _first_members(value: Any) -> list[tuple[Any, ...]]:
    """Paths to the first member of a list/tuple argument (a tuple is made a list) or
    to the first value of a dict argument: where a collection of caller objects is read."""
    if type(value) in (list, tuple) and value:
        return [(0,)]
    if type(value) is dict and value:
        return [(next(iter(value)),)]
    return []


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_every_impostor_in_every_argument_raises_only_contract_errors(name: str) -> None:
    """Deterministic sweep: each impostor (``__class__`` claiming a builtin or a caller
    class, or raising; every protocol raising) in every argument slot of the entry
    point, keyword defaults included, and as the first member of every collection
    argument. ``isinstance`` believes an impostor; a type decided by it lets the
    impostor's methods run (a ``RuntimeError`` from ``__bool__``, a ``TypeError`` from a
    base-class descriptor)."""
    escaped: list[str] = []
    for slot in _every_slot(ENTRY_POINTS[name]()):
        for label, factory in IMPOSTORS:
            baseline = ENTRY_POINTS[name]()
            _every_slot(baseline)
            _set_slot(baseline, slot, factory())
            escaped += _escape(baseline, f"{slot} := {label}")
        probe = ENTRY_POINTS[name]()
        _every_slot(probe)
        for path in _first_members(_get_slot(probe, slot)):
            for label, factory in IMPOSTORS:
                baseline = ENTRY_POINTS[name]()
                _every_slot(baseline)
                target = _get_slot(baseline, slot)
                target = list(target) if type(target) is tuple else copy.copy(target)
                _set_slot(baseline, slot, target)
                _replace_at(target, path, factory())
                escaped += _escape(baseline, f"{slot}{list(path)} := {label}")
    assert not escaped, f"{name}: non-ContractError escaped:\n" + "\n".join(escaped)


def _get_slot(baseline: Baseline, slot: tuple[str, Any]) -> Any:
    return baseline.args[slot[1]] if slot[0] == "arg" else baseline.kwargs[slot[1]]


def _set_slot(baseline: Baseline, slot: tuple[str, Any], value: Any) -> None:
    if slot[0] == "arg":
        baseline.args[slot[1]] = value
    else:
        baseline.kwargs[slot[1]] = value


def _escape(baseline: Baseline, what: str) -> list[str]:
    """``[]`` if the call returns or raises a ContractError, else what escaped."""
    try:
        baseline.call()
    except ContractError:
        pass
    except Exception as exc:  # noqa: BLE001 - the property under test
        return [f"  {what}: {type(exc).__name__}: {str(exc)[:200]}"]
    return []


@each_revision
@given(name=st.sampled_from(sorted(ENTRY_POINTS)), data=st.data(), hostile=hostile_values)
def test_a_hostile_argument_raises_only_contract_errors(
    revision: str, name: str, data: st.DataObject, hostile: tuple[str, Callable[[], Any]]
) -> None:
    baseline = _at_revision(ENTRY_POINTS[name](), revision)
    slot = data.draw(st.sampled_from(_slots(baseline)), label="argument")
    label, factory = hostile
    if slot[0] == "arg":
        baseline.args[slot[1]] = factory()
    else:
        baseline.kwargs[slot[1]] = factory()
    event(f"{label} as {slot[0]}")
    outcome = _expect_contract_outcome(baseline.call)
    event(outcome)


@each_revision
@given(name=st.sampled_from(sorted(ENTRY_POINTS)), data=st.data(), hostile=hostile_values)
def test_a_hostile_value_nested_inside_an_argument_raises_only_contract_errors(
    revision: str, name: str, data: st.DataObject, hostile: tuple[str, Callable[[], Any]]
) -> None:
    baseline = _at_revision(ENTRY_POINTS[name](), revision)
    candidates = [(slot, path) for slot in _slots(baseline)
                  for path in _paths(baseline.args[slot[1]] if slot[0] == "arg"
                                     else baseline.kwargs[slot[1]])]
    if not candidates:
        event("no nested value")
        return
    slot, path = data.draw(st.sampled_from(candidates), label="where")
    label, factory = hostile
    # A private copy: baselines may share constants, which must stay intact.
    target = copy.deepcopy(baseline.args[slot[1]] if slot[0] == "arg"
                           else baseline.kwargs[slot[1]])
    if slot[0] == "arg":
        baseline.args[slot[1]] = target
    else:
        baseline.kwargs[slot[1]] = target
    _replace_at(target, path, factory())
    note(f"{name}: {slot} at {path!r} := {label}")
    event(f"nested {label}")
    event(_expect_contract_outcome(baseline.call))


@each_revision
@given(contract=st.sampled_from(sorted(STREAMS)), data=st.data(), hostile=hostile_values)
def test_a_hostile_stream_constructor_argument_raises_only_contract_errors(
    revision: str, contract: str, data: st.DataObject, hostile: tuple[str, Callable[[], Any]]
) -> None:
    # hostile limits at a shipped revision, or a hostile revision itself
    keyword = data.draw(st.sampled_from(["revision", "limits"]), label="keyword")
    label, factory = hostile
    event(f"{keyword}={label}")
    kwargs = {"revision": revision, keyword: factory()}
    event(_expect_contract_outcome(lambda: _new_stream(contract, **kwargs)))


@each_revision
@given(contract=st.sampled_from(sorted(STREAMS)), data=st.data(), hostile=hostile_values)
def test_a_stream_that_raised_anything_is_dead(
    revision: str, contract: str, data: st.DataObject, hostile: tuple[str, Callable[[], Any]]
) -> None:
    events = _stream_input(contract)
    cut = data.draw(st.integers(0, len(events) - 1), label="cut")
    stream = _new_stream(contract, revision=revision)
    for event_ in events[:cut]:
        stream.feed(event_)
    label, factory = hostile
    bad = copy.deepcopy(events[cut])
    paths = _paths(bad)
    if paths and data.draw(st.booleans(), label="nested"):
        path = data.draw(st.sampled_from(paths), label="path")
        _replace_at(bad, path, factory())
        event(f"nested {label}")
    else:
        bad = factory()
        event(f"whole event {label}")
    try:
        stream.feed(bad)
    except ContractError:
        event("rejected")
    except Exception as exc:  # noqa: BLE001 - the property under test
        pytest.fail(f"{type(exc).__name__} escaped from feed: {exc!r}"[:2000])
    else:
        event("accepted")
        return
    assert stream.poisoned
    # Dead: the rest of a valid stream cannot revive it, and close fails too.
    for event_ in events[cut:]:
        with pytest.raises(ContractError):
            stream.feed(event_)
    with pytest.raises(ContractError):
        stream.close()


@each_revision
@pytest.mark.parametrize("contract", sorted(STREAMS))
def test_a_stream_poisoned_by_a_non_contract_exception_stays_dead(contract: str,
                                                                 revision: str) -> None:
    events = _stream_input(contract)
    stream = _new_stream(contract, revision=revision)
    stream.feed(events[0])
    # A Python-level interrupt inside feed (here: an event whose .get raises) must
    # poison the stream like a rejection, whatever escaped.
    try:
        stream.feed(EvilDict(events[1]))
    except BaseException:  # noqa: BLE001 - any outcome but a live stream is fine
        pass
    else:
        pytest.skip("the stream read the subclass through dict's own methods")
    assert stream.poisoned
    with pytest.raises(ContractError):
        stream.feed(events[1])
    with pytest.raises(ContractError):
        stream.close()


@each_revision
@pytest.mark.parametrize("contract", sorted(STREAMS))
def test_parse_events_reads_an_endless_iterable_boundedly(contract: str, revision: str) -> None:
    import importlib

    module = importlib.import_module(STREAMS[contract][0])
    events = _stream_input(contract)
    endless = itertools.chain(events[:1], itertools.repeat(events[1]))
    with pytest.raises(ContractError):
        module.parse_events(endless, limits=StreamLimits(max_events=50), revision=revision)


class _ClaimsContractError(Exception):
    """An exception a caller's object may raise inside ``feed``, claiming to be a
    ContractError through a ``__class__`` property (isinstance believes it)."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # type: ignore[override]
        from pcfuzz.contracts.errors import ProtocolViolation

        return ProtocolViolation


def test_a_poisoning_exception_that_claims_to_be_a_contract_error_is_not_believed() -> None:
    # The poison decides by the exception's real type: before, isinstance() believed
    # the claim and the re-raise (its .message, its constructor) escaped as
    # AttributeError/TypeError from every later feed and close.
    from pcfuzz.contracts._stream import Poison

    poison = Poison()
    poison.poison(_ClaimsContractError("from a caller's object"))
    with pytest.raises(ContractError, match="not a contract rejection"):
        poison.check()

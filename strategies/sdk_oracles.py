"""The official SDKs as oracles: strict validation and accumulation of our events.

Used by the tests marked ``oracle`` (``tests/test_oracles_*.py``); needs the
``oracles`` extra (``openai``, ``anthropic``, ``google-genai``). Nothing in
``contracts/`` imports this module or any SDK. Every SDK import happens inside a
function, so importing this module never fails; :func:`missing` says which SDK is
absent.

Three services:

* **validation** (:func:`validate`): one event, as the generators render it, through
  the SDK's own pydantic type for that event, *strictly*: an event type the SDK
  union does not know, an open union's unknown-variant fallback (google-genai's
  ``Unknown*`` classes), an open enum's ``UnrecognizedStr``, and a field the SDK
  type does not declare are each reported as a :class:`Finding` (the SDK itself
  would accept all four silently);
* **accumulation** (:func:`accumulate`): the same events through the SDK's own
  stream accumulator (Chat ``ChatCompletionStreamState``, Responses
  ``ResponseStreamState``, Anthropic ``accumulate_event``), reduced to
  :class:`SDKCall` values comparable with our parser's calls; google-genai ships no
  accumulator for Interactions;
* **the client path** (:func:`via_client`): SSE bytes served by an in-process
  ``MockTransport`` to the SDK client itself (no network), reduced the same way.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import json
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

__all__ = [
    "CONTRACT_SDK",
    "SDK_MODULES",
    "Finding",
    "SDKCall",
    "Accumulated",
    "missing",
    "sdk_version",
    "audit",
    "validate",
    "accumulate",
    "via_client",
    "union_members",
    "variants",
    "literal_values",
]

#: Distribution name -> importable module of each SDK.
SDK_MODULES: dict[str, str] = {
    "openai": "openai",
    "anthropic": "anthropic",
    "google-genai": "google.genai",
}
#: Contract (command-line name) -> the SDK distribution that is its oracle.
CONTRACT_SDK: dict[str, str] = {
    "openai-responses": "openai",
    "openai-chat": "openai",
    "anthropic-messages": "anthropic",
    "gemini-interactions": "google-genai",
}


def missing(distribution: str) -> str | None:
    """Why ``distribution`` cannot be used as an oracle, or ``None`` when it can."""
    try:
        importlib.import_module(SDK_MODULES[distribution])
    except ImportError as exc:
        return (f"{distribution} is not installed (install the `oracles` extra: "
                f"pip install 'pcfuzz[oracles]'): {exc}")
    return None


def sdk_version(distribution: str) -> str | None:
    """The installed version of ``distribution``, or ``None``."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


@dataclass(frozen=True)
class Finding:
    """One way an event departs from the SDK's own type.

    ``kind``: ``no_type`` (the SDK union has no variant for the discriminator),
    ``invalid`` (the variant's validation failed), ``unknown_variant`` (an open
    union fell back to its unknown class), ``unrecognized_enum`` (an open enum kept
    a string it does not list), ``extra_field`` (a field the SDK type does not
    declare). ``where``: a path such as ``event 3.item.status``. ``detail``: the
    type name and field, or the validation error.
    """

    kind: str
    where: str
    detail: str


@dataclass(frozen=True)
class SDKCall:
    """A client function call as an SDK reports it: ids, name, arguments.

    ``arguments`` is the parsed JSON value when the arguments text parses, else the
    raw text (the Anthropic accumulator already holds a parsed, possibly partial,
    object).
    """

    call_id: str | None
    name: str | None
    arguments: Any


@dataclass(frozen=True)
class Accumulated:
    """What an SDK accumulator ends with: its calls, and whether it saw the terminal."""

    calls: tuple[SDKCall, ...]
    terminal: bool


# ------------------------------------------------------------------------- audit


def _is_unrecognized(value: object) -> bool:
    return type(value).__name__ == "UnrecognizedStr" and isinstance(value, str)


def audit(value: Any, where: str) -> list[Finding]:
    """Walk a validated SDK value (iteratively) and report fallbacks and extra fields."""
    from pydantic import BaseModel

    findings: list[Finding] = []
    todo: list[tuple[Any, str]] = [(value, where)]
    while todo:
        node, path = todo.pop()
        if isinstance(node, BaseModel):
            name = type(node).__name__
            if getattr(node, "is_unknown", False) is True:
                findings.append(Finding("unknown_variant", path, f"{name} (raw {_short(node)})"))
                continue
            for key in sorted(node.model_extra or {}):
                findings.append(Finding("extra_field", f"{path}.{key}", f"{name}.{key}"))
            for key in type(node).model_fields:
                child = getattr(node, key, None)
                if _is_unrecognized(child):
                    findings.append(Finding("unrecognized_enum", f"{path}.{key}",
                                            f"{name}.{key} = {str(child)!r}"))
                else:
                    todo.append((child, f"{path}.{key}"))
        elif isinstance(node, (list, tuple)):
            for i, child in enumerate(node):
                if _is_unrecognized(child):
                    findings.append(Finding("unrecognized_enum", f"{path}[{i}]", repr(str(child))))
                else:
                    todo.append((child, f"{path}[{i}]"))
        elif isinstance(node, dict):
            # plain JSON (arguments objects, free-form payloads): nothing to audit
            continue
    return findings


def _short(node: Any) -> str:
    text = repr(getattr(node, "raw", node))
    return text if len(text) <= 60 else text[:57] + "..."


# ------------------------------------------------------------------ union members


def union_members(union: Any) -> list[type]:
    """The pydantic model classes of a (possibly ``Annotated``) union type alias."""
    from typing import Annotated, Union, get_args, get_origin  # noqa: UP035

    from pydantic import BaseModel

    out: list[type] = []
    todo = [union]
    while todo:
        tp = todo.pop(0)
        origin = get_origin(tp)
        value = getattr(tp, "__value__", None)  # typing_extensions.TypeAliasType
        if value is not None and origin is None:
            todo.append(value)
        elif origin is Annotated:
            todo.append(get_args(tp)[0])
        elif origin is Union or type(tp).__name__ == "UnionType":
            todo.extend(get_args(tp))
        elif isinstance(tp, type) and issubclass(tp, BaseModel):
            out.append(tp)
    return out


def literal_values(model: type, field: str) -> tuple[str, ...]:
    """The ``Literal`` strings a model field admits (open enums: their listed values)."""
    from typing import Literal, Union, get_args, get_origin  # noqa: UP035

    info = model.model_fields.get(field)  # type: ignore[attr-defined]
    if info is None:
        return ()
    out: list[str] = []
    todo = [info.annotation]
    while todo:
        tp = todo.pop()
        origin = get_origin(tp)
        if origin is Literal:
            out.extend(v for v in get_args(tp) if isinstance(v, str))
        elif origin is Union or type(tp).__name__ == "UnionType":
            todo.extend(get_args(tp))
        elif getattr(tp, "__value__", None) is not None:
            todo.append(tp.__value__)
        elif get_origin(tp) is not None and get_origin(tp).__name__ == "Annotated":
            todo.append(get_args(tp)[0])
    return tuple(dict.fromkeys(out))


def variants(union: Any, key: str) -> dict[str, type]:
    table: dict[str, type] = {}
    for cls in union_members(union):
        for value in literal_values(cls, key):
            if value != "UNKNOWN":
                table.setdefault(value, cls)
    return table


# -------------------------------------------------------------------- validation


def _openai_responses_types() -> dict[str, type]:
    from openai.types.responses import ResponseStreamEvent

    return variants(ResponseStreamEvent, "type")


def _anthropic_types() -> dict[str, type]:
    from anthropic.types import RawMessageStreamEvent

    return variants(RawMessageStreamEvent, "type")


def _check(cls: type, payload: Any, where: str) -> list[Finding]:
    from pydantic import ValidationError

    try:
        model = cls.model_validate(payload)  # type: ignore[attr-defined]
    except ValidationError as exc:
        errors = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                           for e in exc.errors()[:5])
        return [Finding("invalid", where, f"{cls.__name__}: {errors}")]
    return audit(model, where)


def validate(contract: str, event: Any, where: str) -> list[Finding]:
    """Validate one event (as ``parse_events`` of ``contract`` takes it) strictly
    against the SDK type for it; the findings (empty: it conforms)."""
    if contract == "openai-responses":
        cls = _openai_responses_types().get(event.get("type"))
        if cls is None:
            return [Finding("no_type", where, f"type {event.get('type')!r}")]
        return _check(cls, event, where)
    if contract == "openai-chat":
        from openai.types.chat import ChatCompletionChunk

        if event == "[DONE]" or event == {"data": "[DONE]"}:
            return []  # the SSE sentinel: the client's SSE loop consumes it
        return _check(ChatCompletionChunk, event, where)
    if contract == "anthropic-messages":
        data = event["data"]
        cls = _anthropic_types().get(data.get("type"))
        if cls is None:
            return [Finding("no_type", where, f"type {data.get('type')!r}")]
        return _check(cls, data, where)
    if contract == "gemini-interactions":
        from google.genai.interactions import InteractionSSEEvent
        from pydantic import TypeAdapter, ValidationError

        try:
            # No ALLOW_UNKNOWN_UNION_VARIANTS context: a known discriminator whose
            # payload does not validate raises instead of falling back.
            model = TypeAdapter(InteractionSSEEvent).validate_python(event)
        except ValidationError as exc:
            errors = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                               for e in exc.errors()[:5])
            return [Finding("invalid", where, errors)]
        return audit(model, where)
    raise ValueError(f"unknown contract {contract!r}")


def conformance(contract: str, events: Iterable[Any]) -> list[Finding]:
    """Every finding of every event of a stream (``event N`` is its position)."""
    findings: list[Finding] = []
    for n, event in enumerate(events):
        findings.extend(validate(contract, event, f"event {n}"))
    return findings


# ------------------------------------------------------------------ accumulation


def _arguments(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _responses_calls(output: Iterable[Any]) -> tuple[SDKCall, ...]:
    return tuple(SDKCall(item.call_id, item.name, _arguments(item.arguments))
                 for item in output if getattr(item, "type", None) == "function_call")


def accumulate(contract: str, events: list[Any]) -> Accumulated:
    """Feed ``events`` to the SDK's own accumulator; its calls at the end.

    Events are built the way the SDK clients build them from JSON
    (``construct_type``), so validation never interferes with accumulation. The
    calls are taken from the final object when the terminal was seen, else from the
    accumulator's running snapshot (what a caller reading it would get)."""
    if contract == "openai-responses":
        return _accumulate_responses(events)
    if contract == "openai-chat":
        return _accumulate_chat(events)
    if contract == "anthropic-messages":
        return _accumulate_anthropic(events)
    raise ValueError(f"{contract}: the SDK ships no stream accumulator")


def _accumulate_responses(events: list[Any]) -> Accumulated:
    from openai._models import construct_type
    from openai.lib.streaming.responses._responses import ResponseStreamState
    from openai.types.responses import ResponseStreamEvent

    class _Capture(ResponseStreamState[Any]):
        snapshot: Any = None

        def accumulate_event(self, event: Any) -> Any:
            self.snapshot = super().accumulate_event(event)
            return self.snapshot

    state = _Capture(input_tools=[], text_format=_omit_openai())
    for event in events:
        state.handle_event(cast(ResponseStreamEvent,
                                construct_type(type_=ResponseStreamEvent, value=event)))
    final = state._completed_response
    if final is not None:
        return Accumulated(_responses_calls(final.output), True)
    output = getattr(state.snapshot, "output", None) or []
    return Accumulated(_responses_calls(output), False)


def _omit_openai() -> Any:
    from openai import omit

    return omit


def _accumulate_chat(frames: list[Any]) -> Accumulated:
    from openai._models import construct_type
    from openai.lib.streaming.chat._completions import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    state = ChatCompletionStreamState()
    done = False
    for frame in frames:
        if frame == "[DONE]" or frame == {"data": "[DONE]"}:
            done = True
            continue
        state.handle_chunk(cast(ChatCompletionChunk,
                                construct_type(type_=ChatCompletionChunk, value=frame)))
    if not any(isinstance(frame, dict) for frame in frames):
        return Accumulated((), done)  # no chunk: the SDK has no snapshot at all
    snapshot = state.current_completion_snapshot
    calls: list[SDKCall] = []
    for choice in snapshot.choices:
        for call in choice.message.tool_calls or []:
            function = call.function
            calls.append(SDKCall(getattr(call, "id", None), getattr(function, "name", None),
                                 _arguments(getattr(function, "arguments", None))))
    return Accumulated(tuple(calls), done)


@contextlib.contextmanager
def _opaque_content_quiet() -> Iterator[None]:
    # The generator draws opaque server-tool result `content` as arbitrary JSON (a
    # named difference); the SDK's to_dict() of such a block warns while copying it.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Pydantic serializer warnings")
        yield


def _accumulate_anthropic(envelopes: list[Any]) -> Accumulated:
    with _opaque_content_quiet():
        return _accumulate_anthropic_loud(envelopes)


def _accumulate_anthropic_loud(envelopes: list[Any]) -> Accumulated:
    from anthropic.lib.streaming._messages import accumulate_event

    snapshot: Any = None
    json_bufs: dict[int, bytes] = {}
    stopped = False
    for envelope in envelopes:
        data = envelope["data"]
        if data.get("type") == "ping":
            continue  # the client's SSE loop drops pings before accumulation
        if data.get("type") == "message_stop":
            stopped = True
        snapshot = accumulate_event(event=data, current_snapshot=snapshot, json_bufs=json_bufs)
    calls = tuple(SDKCall(block.id, block.name, block.input)
                  for block in (snapshot.content if snapshot is not None else [])
                  if block.type == "tool_use")
    return Accumulated(calls, stopped)


# ------------------------------------------------------------------ client path


def _mock_client(body: bytes) -> Any:
    import httpx2

    def handler(request: Any) -> Any:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                               content=body)

    return httpx2.Client(transport=httpx2.MockTransport(handler))


def via_client(contract: str, body: bytes) -> Accumulated:
    """Run ``body`` (SSE bytes) through the SDK client, its HTTP transport an
    in-process mock; the calls the client's own stream helper ends with (Gemini:
    the ``function_call`` steps of the events the client yields, with arguments
    joined from ``arguments_delta`` fragments when ``step.start`` had none)."""
    runners: Mapping[str, Callable[[bytes], Accumulated]] = {
        "openai-responses": _client_responses,
        "openai-chat": _client_chat,
        "anthropic-messages": _client_anthropic,
        "gemini-interactions": _client_gemini,
    }
    return runners[contract](body)


def _openai_client(body: bytes) -> Any:
    from openai import OpenAI

    return OpenAI(api_key="offline", base_url="http://oracle.invalid/v1",
                  http_client=_mock_client(body), max_retries=0)


def _client_responses(body: bytes) -> Accumulated:
    client = _openai_client(body)
    with client.responses.stream(model="fixture-model", input="offline") as stream:
        for _ in stream:
            pass
        final = stream.get_final_response()
    return Accumulated(_responses_calls(final.output), True)


def _client_chat(body: bytes) -> Accumulated:
    client = _openai_client(body)
    with client.chat.completions.stream(model="fixture-model", messages=[
            {"role": "user", "content": "offline"}]) as stream:
        for _ in stream:
            pass
        final = stream.get_final_completion()
    calls = [SDKCall(c.id, c.function.name, _arguments(c.function.arguments))
             for choice in final.choices for c in (choice.message.tool_calls or [])]
    return Accumulated(tuple(calls), True)


def _client_anthropic(body: bytes) -> Accumulated:
    with _opaque_content_quiet():
        return _client_anthropic_loud(body)


def _client_anthropic_loud(body: bytes) -> Accumulated:
    from anthropic import Anthropic

    client = Anthropic(api_key="offline", base_url="http://oracle.invalid",
                       http_client=_mock_client(body), max_retries=0)
    with client.messages.stream(model="fixture-model", max_tokens=16, messages=[
            {"role": "user", "content": "offline"}]) as stream:
        for _ in stream:
            pass
        final = stream.get_final_message()
    calls = tuple(SDKCall(b.id, b.name, b.input) for b in final.content if b.type == "tool_use")
    return Accumulated(calls, True)


def _client_gemini(body: bytes) -> Accumulated:
    from google import genai

    options: Any = {"base_url": "http://oracle.invalid", "api_version": "v1",
                    "httpx_client": _mock_client(body)}
    client = genai.Client(api_key="offline", http_options=options)
    stream = client.interactions.create(model="fixture-model", input="offline", stream=True)
    starts: dict[int, Any] = {}
    fragments: dict[int, list[str]] = {}
    order: list[int] = []
    terminal = False
    event: Any  # the SDK's event union: read by attribute, whatever the variant
    for event in stream:
        kind = getattr(event, "event_type", None)
        if kind == "step.start" and getattr(event.step, "type", None) == "function_call":
            starts[event.index] = event.step
            order.append(event.index)
        elif kind == "step.delta" and event.index in starts:
            text = getattr(event.delta, "arguments", None)
            if isinstance(text, str):
                fragments.setdefault(event.index, []).append(text)
        elif kind == "interaction.completed":
            terminal = True
    calls = []
    for index in order:
        step = starts[index]
        if index in fragments:
            arguments = _arguments("".join(fragments[index]))
        else:
            arguments = step.arguments
        calls.append(SDKCall(step.id, step.name, arguments))
    return Accumulated(tuple(calls), terminal)


# ------------------------------------------------------------ named differences


@dataclass(frozen=True)
class Difference:
    """A known, deliberate difference between our generated events and the SDK types.

    ``applies(event, finding)`` says whether ``finding`` (on ``event``) is this
    difference; a conformance finding no difference explains is a generator bug.
    ``revisions``: the contract revisions whose events have it (``None``: every one).
    """

    contract: str
    name: str
    why: str
    applies: Callable[[Any, Finding], bool]
    revisions: tuple[str, ...] | None = None


def _chat_envelope(event: Any, finding: Finding) -> bool:
    if finding.kind != "invalid":
        return False
    parts = finding.detail.split(": ", 1)[1].split("; ")
    return all(p.split(":", 1)[0] in {"id", "created", "model", "object"} for p in parts)


def _event_type(contract: str, event: Any) -> Any:
    if contract == "anthropic-messages":
        return event.get("data", {}).get("type")
    if contract == "gemini-interactions":
        return event.get("event_type")
    return event.get("type") if isinstance(event, dict) else None


def _gemini_step_type(event: Any, starts: dict[int, str] | None = None) -> Any:
    step = event.get("step")
    if isinstance(step, dict):
        return step.get("type")
    delta = event.get("delta")
    return delta.get("type") if isinstance(delta, dict) else None


_GEMINI_HOSTED = ("code_execution_", "url_context_", "google_search_", "file_search_",
                  "google_maps_")

DIFFERENCES: tuple[Difference, ...] = (
    Difference(
        "openai-responses", "arguments-done-name",
        "2026-07-21 pins `name` on response.function_call_arguments.done; the current "
        "openai types no longer declare it (drift: a current stream may omit it)",
        lambda e, f: f.kind == "extra_field" and f.detail
        == "ResponseFunctionCallArgumentsDoneEvent.name"),
    Difference(
        "openai-chat", "chunk-envelope",
        "the Chat contract reads only choices/id/usage/error: the generator omits or nulls "
        "`id`, `created`, `model`, `object` (compatible servers do); the SDK type requires them",
        _chat_envelope),
    Difference(
        "openai-chat", "reasoning-content",
        "`reasoning_content` is the compatible-server reasoning channel the Chat design "
        "pins; the openai types do not declare it (kept as an extra field)",
        lambda e, f: f.kind == "extra_field" and f.detail == "ChoiceDelta.reasoning_content"),
    Difference(
        "anthropic-messages", "ping",
        "`ping` has no type in the SDK's RawMessageStreamEvent union: the client's SSE "
        "loop drops it before validation or accumulation",
        lambda e, f: f.kind == "no_type" and _event_type("anthropic-messages", e) == "ping"),
    Difference(
        "anthropic-messages", "opaque-server-result-content",
        "server-tool result `content` is opaque to the contract (kept verbatim, never "
        "read); the generator draws it as arbitrary JSON, the SDK types each result's shape",
        lambda e, f: f.kind == "invalid"
        and _event_type("anthropic-messages", e) == "content_block_start"
        and str(e["data"].get("content_block", {}).get("type", "")).endswith("_tool_result")),
    Difference(
        "gemini-interactions", "opaque-hosted-steps",
        "hosted (Google-run) steps are opaque to the contract (never executed, replay "
        "fails closed): at 2026-07-21 (google-genai 2.12.1, not the installed SDK) the "
        "generator renders only their discriminator and id, and a made-up `payload` "
        "delta; the SDK types require `arguments`/`result` (2026-12-01 renders them)",
        lambda e, f: _event_type("gemini-interactions", e) in ("step.start", "step.delta")
        and str(_gemini_step_type(e)).startswith(_GEMINI_HOSTED)
        and f.kind in ("invalid", "extra_field"),
        revisions=("2026-07-21",)),
    Difference(
        "gemini-interactions", "arguments-delta-without-arguments",
        "2026-07-21 accepts an `arguments_delta` without `arguments` (pinned from "
        "google-genai 2.12.1, where it was optional); google-genai 3.x requires it",
        lambda e, f: f.kind == "invalid" and _event_type("gemini-interactions", e)
        == "step.delta" and _gemini_step_type(e) == "arguments_delta"
        and "delta.arguments: Field required" in f.detail),
    Difference(
        "gemini-interactions", "function-call-start-without-arguments",
        "2026-07-21 accepts a function_call `step.start` without `arguments` (they stream "
        "in arguments_delta events); google-genai 3.x types require `arguments` there",
        lambda e, f: f.kind == "invalid" and _event_type("gemini-interactions", e)
        == "step.start" and _gemini_step_type(e) == "function_call"
        and f.detail == "step.arguments: Field required"),
)


def explain(contract: str, event: Any, finding: Finding,
            revision: str | None = None) -> Difference | None:
    """The named difference that explains ``finding`` on an event of ``revision``, or
    ``None`` (a generator bug). A difference limited to some revisions explains nothing
    when ``revision`` is not one of them (or not given)."""
    for difference in DIFFERENCES:
        if difference.contract != contract:
            continue
        if difference.revisions is not None and revision not in difference.revisions:
            continue
        if difference.applies(event, finding):
            return difference
    return None

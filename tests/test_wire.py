"""contracts.wire: raw SSE bytes of one turn -> the contract's Turn.

Per contract: the golden fixture and every valid generated stream, rendered to SSE
bytes (``strategies.sse.render_events``) and re-chunked anywhere, give the same Turn
as ``parse_events`` on the event dicts; no proper prefix of a rendered stream yields
executable calls; the SSE/JSON layer disagreements are ``ProtocolViolation``s that
name the SSE event and its byte offset.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts import anthropic_messages, gemini_interactions, openai_chat, openai_responses
from pcfuzz.contracts.errors import (
    ContractError,
    InvalidArgument,
    ProtocolViolation,
    StreamTruncated,
    StrictJSONError,
)
from pcfuzz.contracts.fixtures import load_fixture
from pcfuzz.contracts.wire import (
    CONTRACTS,
    parse_anthropic_messages_sse,
    parse_gemini_interactions_sse,
    parse_openai_chat_sse,
    parse_openai_responses_sse,
    parse_sse,
    parse_sse_chunks,
)
from pcfuzz.strategies import anthropic_messages as anthropic_st
from pcfuzz.strategies import gemini_interactions as gemini_st
from pcfuzz.strategies import openai_chat as chat_st
from pcfuzz.strategies import openai_responses as responses_st
from pcfuzz.strategies.sse import chunkings, render_events, split_at

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PARSERS: dict[str, Any] = {
    "openai-responses": openai_responses.parse_events,
    "anthropic-messages": anthropic_messages.parse_events,
    "gemini-interactions": gemini_interactions.parse_events,
    "openai-chat": openai_chat.parse_events,
}
SINGLE = {
    "openai-responses": parse_openai_responses_sse,
    "anthropic-messages": parse_anthropic_messages_sse,
    "gemini-interactions": parse_gemini_interactions_sse,
    "openai-chat": parse_openai_chat_sse,
}


def fixture_events(contract: str) -> list[Any]:
    events = load_fixture(FIXTURES / f"{contract.replace('-', '_')}.json").events
    if contract == "openai-chat":
        return openai_chat.frames_from_fixture_events(events)
    return list(events)


def calls(turn: Any) -> list[tuple[str, str, Any]]:
    return [(c.call_id, c.name, c.arguments) for c in turn.calls]


def assert_same_turn(a: Any, b: Any) -> None:
    assert type(a) is type(b)
    assert a.digest == b.digest
    assert calls(a) == calls(b)


def end_of_last_field_line(raw: bytes) -> int:
    """Offset just past the last data line's content: any prefix up to here is cut
    before the terminal event was dispatched."""
    return len(raw.rstrip(b"\r\n"))


# ------------------------------------------------------------------ examples


def test_contract_names() -> None:
    assert CONTRACTS == ("openai-responses", "anthropic-messages", "gemini-interactions",
                         "openai-chat")


@pytest.mark.parametrize("contract", CONTRACTS)
def test_rendered_fixture_gives_the_same_turn_as_parse_events(contract: str) -> None:
    events = fixture_events(contract)
    expected = PARSERS[contract](events)
    assert expected.calls
    for seed in range(8):
        raw = render_events(contract, events, random.Random(seed))
        assert_same_turn(parse_sse(contract, raw), expected)
        assert_same_turn(SINGLE[contract](raw), expected)
        assert_same_turn(parse_sse_chunks(contract, [raw[i : i + 7] for i in range(0, len(raw), 7)]),
                         expected)


@pytest.mark.parametrize("contract", CONTRACTS)
def test_prefixes_of_a_rendered_fixture_never_yield_calls(contract: str) -> None:
    raw = render_events(contract, fixture_events(contract), random.Random(1))
    end = end_of_last_field_line(raw)
    # Every line boundary (where a naive reader would see whole events) and a stride.
    cuts = {i + 1 for i, b in enumerate(raw[:end]) if b in b"\r\n"} | set(range(0, end, 97))
    for cut in sorted(c for c in cuts if c <= end):
        with pytest.raises(ContractError):
            parse_sse(contract, raw[:cut])


def test_truncated_capture_is_stream_truncated() -> None:
    raw = render_events("openai-chat", fixture_events("openai-chat"), random.Random(0))
    with pytest.raises(StreamTruncated):
        parse_sse("openai-chat", raw[: len(raw) // 2])


def test_responses_event_name_must_equal_data_type() -> None:
    events = fixture_events("openai-responses")
    raw = render_events("openai-responses", events, random.Random(3)).replace(
        b"event: response.created", b"event: response.in_progress", 1
    )
    with pytest.raises(ProtocolViolation) as info:
        parse_sse("openai-responses", raw)
    assert "SSE event 0 at byte" in (info.value.where or "")


def test_responses_event_without_event_line_is_rejected() -> None:
    raw = b"data: " + json.dumps(fixture_events("openai-responses")[0]).encode() + b"\n\n"
    with pytest.raises(ProtocolViolation, match="'message' != data.type"):
        parse_sse("openai-responses", raw)


def test_anthropic_event_name_must_equal_data_type() -> None:
    raw = b'event: ping\ndata: {"type": "message_stop"}\n\n'
    with pytest.raises(ProtocolViolation) as info:
        parse_sse("anthropic-messages", raw)
    assert "SSE event 0 at byte 0" in (info.value.where or "")


def _gemini_raw(first_id: str) -> bytes:
    events = fixture_events("gemini-interactions")
    lines = []
    for n, ev in enumerate(events):
        lines.append(f"id: {first_id if n == 0 else ev['event_id']}")
        lines.append("data: " + json.dumps(ev))
        lines.append("")
    return ("\n".join(lines) + "\n").encode()


def test_gemini_id_line_must_agree_with_event_id() -> None:
    events = fixture_events("gemini-interactions")
    expected = gemini_interactions.parse_events(events)
    assert_same_turn(parse_sse("gemini-interactions", _gemini_raw(events[0]["event_id"])),
                     expected)
    with pytest.raises(ProtocolViolation, match="SSE id 'other' != data.event_id") as info:
        parse_sse("gemini-interactions", _gemini_raw("other"))
    assert info.value.where == "SSE event 0 at byte 0"


def test_gemini_inherited_id_that_disagrees_is_rejected() -> None:
    # WHATWG: an event without an id line carries the last id in force; if the event
    # has its own, different event_id, the resume cursor would point elsewhere.
    events = fixture_events("gemini-interactions")[:2]
    raw = (f"id: {events[0]['event_id']}\ndata: {json.dumps(events[0])}\n\n"
           f"data: {json.dumps(events[1])}\n\n").encode()
    with pytest.raises(ProtocolViolation, match="SSE id"):
        parse_sse("gemini-interactions", raw)


# A function call whose arguments arrive as '{"amount": 1' + '0}': a replayed digit
# fragment that is applied twice releases amount 110 instead of 10.
_SPLIT_DIGIT = [
    {"event_type": "interaction.created",
     "interaction": {"id": "interaction-1", "status": "in_progress"}},
    {"event_type": "step.start", "index": 0,
     "step": {"type": "function_call", "id": "call-1", "name": "pay", "arguments": {}}},
    {"event_type": "step.delta", "index": 0,
     "delta": {"type": "arguments_delta", "arguments": '{"amount": 1'}},
    {"event_type": "step.delta", "index": 0,
     "delta": {"type": "arguments_delta", "arguments": "0}"}},
    {"event_type": "step.stop", "index": 0},
    {"event_type": "interaction.completed",
     "interaction": {"id": "interaction-1", "status": "requires_action"}},
]


def _gemini_sse(blocks: list[tuple[str | None, dict[str, Any]]]) -> bytes:
    out = []
    for ident, ev in blocks:
        if ident is not None:
            out.append(f"id: {ident}\n")
        out.append(f"data: {json.dumps(ev)}\n\n")
    return "".join(out).encode()


def _split_digit_stream(replay: dict[str, Any] | None = None) -> bytes:
    """The stream above with ``id: e<n>`` lines and no ``data.event_id``; ``e3`` (the
    first digit fragment) is sent again after ``e4``, as ``replay`` if given."""
    blocks: list[tuple[str | None, dict[str, Any]]] = [
        (f"e{n + 1}", ev) for n, ev in enumerate(_SPLIT_DIGIT)]
    blocks.insert(4, ("e3", replay if replay is not None else _SPLIT_DIGIT[2]))
    return _gemini_sse(blocks)


def test_gemini_sse_id_without_event_id_is_the_replay_key() -> None:
    # The same SSE id and the same content: an idempotent redelivery, applied once.
    turn = parse_sse("gemini-interactions", _split_digit_stream())
    assert [c.arguments for c in turn.calls] == [{"amount": 10}]
    expected = parse_sse("gemini-interactions", _gemini_sse(
        [(f"e{n + 1}", ev) for n, ev in enumerate(_SPLIT_DIGIT)]))
    assert_same_turn(turn, expected)


def test_gemini_sse_id_without_event_id_replayed_with_other_content_is_a_conflict() -> None:
    other = json.loads(json.dumps(_SPLIT_DIGIT[2]))
    other["delta"]["arguments"] = '{"amount": 9'
    with pytest.raises(ProtocolViolation, match="replayed with a different payload") as info:
        parse_sse("gemini-interactions", _split_digit_stream(other))
    assert "SSE event 4 at byte" in (info.value.where or "")


def test_gemini_inherited_sse_id_is_the_event_id_of_an_event_without_one() -> None:
    # WHATWG: an event without an id line is dispatched under the last id in force,
    # which a reconnecting client sends as Last-Event-ID; two different events under
    # one id cannot be told apart from a replay, so the second one is a conflict.
    blocks: list[tuple[str | None, dict[str, Any]]] = [
        (f"e{n + 1}", ev) for n, ev in enumerate(_SPLIT_DIGIT)]
    blocks[3] = (None, _SPLIT_DIGIT[3])
    with pytest.raises(ProtocolViolation, match="'e3' replayed with a different payload"):
        parse_sse("gemini-interactions", _gemini_sse(blocks))


def test_gemini_sse_id_disagreeing_with_event_id_is_a_conflict_even_on_a_replay() -> None:
    blocks: list[tuple[str | None, dict[str, Any]]] = [
        (f"e{n + 1}", {**ev, "event_id": f"e{n + 1}"}) for n, ev in enumerate(_SPLIT_DIGIT)]
    assert parse_sse("gemini-interactions", _gemini_sse(blocks)).calls
    blocks.insert(4, ("e4", blocks[2][1]))  # e3's event re-sent under id e4
    with pytest.raises(ProtocolViolation, match="SSE id 'e4' != data.event_id 'e3'"):
        parse_sse("gemini-interactions", _gemini_sse(blocks))


def test_gemini_without_any_sse_id_events_without_event_id_stay_independent() -> None:
    # No id in force (never set, or reset by an empty id line): nothing to key a
    # replay on, as before; the stream's own rule applies to data.event_id only.
    blocks: list[tuple[str | None, dict[str, Any]]] = [(None, ev) for ev in _SPLIT_DIGIT]
    assert [c.arguments for c in parse_sse("gemini-interactions", _gemini_sse(blocks)).calls] == [
        {"amount": 10}]
    blocks = [("", ev) for ev in _SPLIT_DIGIT]
    assert [c.arguments for c in parse_sse("gemini-interactions", _gemini_sse(blocks)).calls] == [
        {"amount": 10}]


def test_gemini_event_name_when_present_must_equal_event_type() -> None:
    ev = fixture_events("gemini-interactions")[0]
    raw = f"event: step.start\ndata: {json.dumps(ev)}\n\n".encode()
    with pytest.raises(ProtocolViolation, match="data.event_type"):
        parse_sse("gemini-interactions", raw)


def test_chat_done_sentinel_and_no_event_names() -> None:
    events = fixture_events("openai-chat")
    raw = render_events("openai-chat", events, random.Random(2)).removeprefix(b"\xef\xbb\xbf")
    assert raw.rstrip(b"\r\n").endswith(b"data: [DONE]")
    with pytest.raises(ProtocolViolation, match="no SSE event names"):
        parse_sse("openai-chat", b"event: chunk\n" + raw)
    # "[DONE]" is a sentinel only as the whole data; as JSON it is a list.
    with pytest.raises(ContractError):
        parse_sse("openai-chat", raw.replace(b"data: [DONE]", b'data: ["DONE"]'))



@pytest.mark.parametrize("payload", [b'"[DONE]"', b'"[DONE]" ', b'["DONE"]', b'"DONE"', b"null",
                                     b"[]", b"3"])
def test_chat_terminal_sentinel_is_only_the_literal_done_line(payload: bytes) -> None:
    # docs/sse.md: only the literal ``data: [DONE]`` is the sentinel. The JSON string
    # "[DONE]" decodes to the very str the parser takes as its sentinel, so the wire
    # adapter must reject every JSON payload that is not a chunk object itself.
    events = fixture_events("openai-chat")
    raw = render_events("openai-chat", events, random.Random(2)).removeprefix(b"\xef\xbb\xbf")
    assert raw.count(b"data: [DONE]") == 1
    with pytest.raises(ProtocolViolation, match="JSON object") as info:
        parse_sse("openai-chat", raw.replace(b"data: [DONE]", b"data: " + payload))
    assert re.fullmatch(r"SSE event \d+ at byte \d+", info.value.where or "")

def test_json_errors_in_data_name_the_sse_event() -> None:
    raw = b'event: ping\ndata: {"type": "ping", "type": "ping"}\n\n'
    with pytest.raises(StrictJSONError) as info:
        parse_sse("anthropic-messages", raw)
    assert "data of SSE event 0 at byte 0" in (info.value.where or "")


def test_parser_errors_name_the_sse_event_and_byte_offset() -> None:
    raw = b": hi\n\nevent: message_stop\ndata: {\"type\": \"message_stop\"}\n\n"
    with pytest.raises(ProtocolViolation) as info:
        parse_sse("anthropic-messages", raw)
    assert "SSE event 0 at byte 6" in (info.value.where or "")


def test_sse_layer_errors_keep_their_byte_offset() -> None:
    with pytest.raises(ProtocolViolation) as info:
        parse_sse("openai-chat", b"data: {}\n\ndata: \xff\n\n")
    assert info.value.where == "byte 16"



class _RaisingStr(str):
    def _boom(self, *_: object) -> Any:
        raise RuntimeError("hostile str method")

    __eq__ = __ne__ = __hash__ = __len__ = __getitem__ = __str__ = __format__ = _boom  # type: ignore[assignment]


class _RaisingInt(int):
    def _boom(self, *_: object) -> Any:
        raise RuntimeError("hostile int method")

    __index__ = __str__ = __repr__ = __format__ = __eq__ = __lt__ = __ge__ = _boom  # type: ignore[assignment]


_GOOD_SSE: dict[str, Any] = {"event": "message_stop", "data": '{"type": "message_stop"}',
                             "id": None, "retry": None, "byte_offset": 0, "index": 0}
_BAD_SSE_FIELDS: list[tuple[str, Any]] = [
    ("event", None), ("event", b"message_stop"), ("event", _RaisingStr("message_stop")),
    ("data", None), ("data", b"{}"), ("data", 3), ("data", _RaisingStr("{}")),
    ("id", 3), ("id", b"x"), ("id", _RaisingStr("x")),
    ("retry", True), ("retry", -1), ("retry", "5"), ("retry", 10**5000), ("retry", _RaisingInt(5)),
    ("byte_offset", None), ("byte_offset", -1), ("byte_offset", True), ("byte_offset", 1.5),
    ("byte_offset", 10**5000), ("byte_offset", _RaisingInt(0)),
    ("index", None), ("index", -1), ("index", False), ("index", 10**5000), ("index", 2**63),
    ("index", _RaisingInt(0)),
]


@pytest.mark.parametrize(("field", "value"), _BAD_SSE_FIELDS,
                         ids=[f"{f}-{type(v).__name__}-{i}" for i, (f, v) in enumerate(_BAD_SSE_FIELDS)])
@pytest.mark.parametrize("built", ["constructor", "setattr"])
def test_sse_to_events_checks_every_field_of_a_caller_built_sse_event(
    field: str, value: Any, built: str
) -> None:
    # A caller-built SSEEvent is a caller value: each field of exact type and sane
    # range (str; str or None; int >= 0, not bool, within 2**62), read once, checked
    # before use. Before, TypeError/RuntimeError/ValueError (an int of 5,000 digits
    # formatted into a location) escaped. A frozen dataclass can be changed with
    # object.__setattr__, so the check is on read, not only at construction.
    from pcfuzz.contracts.sse import SSEEvent
    from pcfuzz.contracts.wire import sse_to_events

    if built == "constructor":
        sse = SSEEvent(**{**_GOOD_SSE, field: value})
    else:
        sse = SSEEvent(**_GOOD_SSE)
        object.__setattr__(sse, field, value)
    with pytest.raises(ProtocolViolation) as info:
        list(sse_to_events("anthropic-messages", [SSEEvent(**_GOOD_SSE), sse]))
    assert info.value.where == f"argument events[1].{field}"


def test_sse_to_events_accepts_every_field_at_its_bounds() -> None:
    from pcfuzz.contracts.sse import SSEEvent
    from pcfuzz.contracts.wire import sse_to_events

    sse = SSEEvent(**{**_GOOD_SSE, "id": "", "retry": 10**18 - 1, "byte_offset": 2**62,
                      "index": 2**62})
    assert list(sse_to_events("anthropic-messages", [sse])) == [
        {"event": "message_stop", "data": {"type": "message_stop"}}]

@pytest.mark.parametrize("contract", [None, 3, "openai", "OPENAI-CHAT", b"openai-chat"])
def test_unknown_contract_is_a_contract_error(contract: object) -> None:
    with pytest.raises(ContractError) as info:
        parse_sse(contract, b"")  # type: ignore[arg-type]
    assert info.value.where == "argument contract"


@given(st.one_of(st.none(), st.integers(), st.text(), st.lists(st.integers()),
                 st.just(memoryview(b"data: x\n\n")), st.just(object())),
       st.sampled_from(CONTRACTS))
def test_only_contract_error_escapes_for_any_data_argument(value: object, contract: str) -> None:
    event(type(value).__name__)
    with pytest.raises(ContractError):
        parse_sse(contract, value)  # type: ignore[arg-type]
    with pytest.raises(ContractError):
        parse_sse_chunks(contract, value)  # type: ignore[arg-type]


@pytest.mark.parametrize("contract", CONTRACTS)
def test_bad_revision_is_a_contract_error(contract: str) -> None:
    raw = render_events(contract, fixture_events(contract), random.Random(0))
    for revision in ("1999-01-01", 5):
        with pytest.raises(InvalidArgument, match="revision") as caught:
            parse_sse(contract, raw, revision=revision)  # type: ignore[arg-type]
        assert caught.value.disposition == "rejected"


def test_readme_raw_sse_example_runs_and_prints_what_it_says(
    capsys: pytest.CaptureFixture[str],
) -> None:
    readme = (FIXTURES.parent / "README.md").read_text(encoding="utf-8")
    block = re.search(r"### Raw SSE bytes.*?```python\n(.*?)```", readme, re.S)
    assert block is not None
    exec(compile(block.group(1), "README.md", "exec"), {})  # noqa: S102
    printed = capsys.readouterr().out.splitlines()
    claimed = [line.split("# ", 1)[1] for line in block.group(1).splitlines()
               if "print(" in line]
    assert printed == claimed


# ------------------------------------------------------------------ properties


def _events_for(contract: str, draw: Any) -> list[Any]:
    if contract == "openai-responses":
        return list(draw(responses_st.valid_streams())[1])
    if contract == "anthropic-messages":
        return list(draw(anthropic_st.valid_streams())[1])
    if contract == "gemini-interactions":
        return list(draw(gemini_st.rendered_streams()).events)
    return list(draw(chat_st.rendered_streams()).frames)


@pytest.mark.parametrize("contract", CONTRACTS)
@given(data=st.data())
def test_rendered_valid_stream_rechunked_gives_the_same_turn(
    contract: str, data: st.DataObject
) -> None:
    events = _events_for(contract, data.draw)
    raw = render_events(contract, events, data.draw(st.randoms(use_true_random=False)))
    expected = PARSERS[contract](events)
    cuts = data.draw(chunkings(raw))
    event(f"calls: {min(len(expected.calls), 2)}")
    event(f"pieces: {min(len(cuts) + 1, 4)}")
    assert_same_turn(parse_sse_chunks(contract, split_at(raw, cuts)), expected)


@pytest.mark.parametrize("contract", CONTRACTS)
@given(data=st.data())
def test_no_proper_prefix_of_a_rendered_stream_yields_calls(
    contract: str, data: st.DataObject
) -> None:
    events = _events_for(contract, data.draw)
    raw = render_events(contract, events, data.draw(st.randoms(use_true_random=False)))
    end = end_of_last_field_line(raw)
    cut = data.draw(st.integers(0, end) | st.sampled_from(
        [i + 1 for i, b in enumerate(raw[:end]) if b in b"\r\n"] or [0]))
    event("cut at a line boundary" if cut and raw[cut - 1] in b"\r\n" else "cut inside a line")
    with pytest.raises(ContractError) as info:
        parse_sse(contract, raw[:cut])
    event(type(info.value).__name__)

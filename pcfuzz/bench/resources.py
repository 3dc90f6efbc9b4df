"""``pcfuzz bench`` resources case: the resource bounds of the contracts under hostile
input shapes, measured in the bench's own process. Rows (group ``resources``):

* **SSE decoder memory**: the tracemalloc peak while ``SSEDecoder.feed`` decodes an
  input, minus the events it returns (the caller's), per input byte, for a typical
  capture, all CRLF blank lines, one huge data line, many tiny events and a few more
  shapes. The figure is that multiple of the input; the rate column the peak in KiB.
  Goal ``<= 2.0``: the decoder holds at most twice what it holds of the input, plus
  a constant. Deterministic (one round): the tests assert these rows.
* **SSE throughput of hostile shapes**: CPU time per byte of LF blank lines, CRLF
  blank lines and keep-alive comment lines, as a multiple of a typical capture's time
  per byte, decoded in the same rounds; and the extra time per byte of 40 blank lines
  after every event (against the same events without them). Goal ``<= 1.0``: no
  shape costs more per byte than the common capture.
* **Rejection against acceptance of the same prefix**, for every limit a big input
  can hit (``JSONLimits``, the SSE decoder's line and event bounds,
  ``StreamLimits``): the CPU time to reject an input that crosses the limit early in
  a much bigger input, as a multiple of the CPU time to accept the input cut right
  before the crossing (completed where it must be to parse). A limit must stop the
  work where it is crossed. Goals in :data:`GOALS`; the rate column is the CPU time
  of one rejection.

Like the rest of the bench, every timed figure is the median of per-round ratios
(thread CPU time, the candidate and its baseline back to back in every round, their
order alternating; calls repeated within a round when one is too short to time) and
min-max is their spread; timing rows are never asserted in tests. ``--quick`` uses
smaller inputs (a fifth to a tenth of the default limits, where the fixed extras of a
rejection weigh more) and 3 rounds instead of 5.
"""

from __future__ import annotations

import gc
import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

from pcfuzz.bench.records import Options, Record, verdict
from pcfuzz.contracts import ContractError, StreamLimits, gemini_interactions, strict_json
from pcfuzz.contracts.sse import SSEDecoder
from pcfuzz.contracts.strict_json import JSONLimits

__all__ = ["GOALS", "MEMORY_GOAL", "THROUGHPUT_GOAL", "resources_cases"]

GROUP = "resources"
#: Peak decoder memory per input byte.
MEMORY_GOAL = 2.0
#: A hostile shape's CPU time per byte, as a multiple of a typical capture's.
THROUGHPUT_GOAL = 1.0
#: Rejection as a multiple of accepting the same prefix, and why:
#: - ``loads``: rejecting runs the iterative parser's own steps around the crossing
#:   point (a run of at most 256 flat items is discarded and redone item by item), one
#:   failed window of at most 64 KiB may have been scanned in vain, and the error is
#:   located (line, column and byte offset over the prefix): a bounded extra on top
#:   of the prefix, so 1.5 rather than 1.0.
#: - streams and the SSE decoder reject incrementally, at the event or line that
#:   crosses the bound: 1.25 leaves room for the noise of one process on a shared
#:   machine, not for extra work.
GOALS: dict[str, float] = {"loads": 1.5, "stream": 1.25, "sse": 1.25}

Call = Callable[[], object]


# ----------------------------------------------------------------------- timing


def _cpu(call: Call, calls: int) -> float:
    """Thread CPU seconds per call of ``calls`` calls; a ContractError is an outcome."""
    start = time.thread_time()
    for _ in range(calls):
        try:
            call()
        except ContractError:
            pass
    return (time.thread_time() - start) / calls


def _calls_for(call: Call, seconds: float) -> int:
    """Calls that take about ``seconds`` (at least one, at most 10,000)."""
    one = _cpu(call, 1)
    return max(1, min(10_000, round(seconds / max(one, 1e-7))))


def _interleaved(calls: Sequence[Call], opts: Options) -> list[list[float]]:
    """Per-round CPU seconds per call of each of ``calls``, run back to back in every
    round (the order alternating)."""
    seconds = 0.002 if opts.quick else 0.01
    repeats = [_calls_for(call, seconds) for call in calls]
    times: list[list[float]] = [[] for _ in calls]
    for n in range(_rounds(opts)):
        order = range(len(calls)) if n % 2 == 0 else range(len(calls) - 1, -1, -1)
        for i in order:
            times[i].append(_cpu(calls[i], repeats[i]))
    return times


def _rounds(opts: Options) -> int:
    return opts.rounds or (3 if opts.quick else 5)


def _record(case: str, candidate: str, baseline: str, ratios: list[float], rate: float,
            rate_unit: str, goal: float, note: str = "") -> Record:
    ratio = statistics.median(ratios)
    return Record(
        case=case, group=GROUP, candidate=candidate, baseline=baseline,
        ratio=round(ratio, 3), ratio_min=round(min(ratios), 3), ratio_max=round(max(ratios), 3),
        rate=round(rate, 1), rate_unit=rate_unit, goal=goal, better="lower",
        met=verdict(ratio, goal, "lower"), rounds=len(ratios), note=note,
    )


def _rejects(call: Call) -> bool:
    try:
        call()
    except ContractError:
        return True
    return False


def _limit_record(case: str, reject: Call, accept: Call, goal: float, opts: Options) -> Record:
    if not _rejects(reject) or _rejects(accept):
        raise RuntimeError(f"{case}: the rejected input must be rejected, the prefix accepted")
    rejected, accepted = _interleaved([reject, accept], opts)
    ratios = [r / max(a, 1e-9) for r, a in zip(rejected, accepted, strict=True)]
    return _record(case, "rejecting the input", "accepting the prefix before the crossing",
                   ratios, statistics.median(rejected) * 1e6, "us CPU to reject", goal)


# ----------------------------------------------------------- SSE decoder memory

_TYPICAL_EVENT = (b'id: ev-1\nevent: response.output_text.delta\ndata: {"type": '
                  b'"response.output_text.delta", "delta": "' + b"hello world " * 5
                  + b'", "sequence_number": 1}\n\n')


def _sse_shapes(size: int) -> dict[str, list[bytes]]:
    typical = _TYPICAL_EVENT * (size // len(_TYPICAL_EVENT))
    line = b"data: " + b"x" * (size - 8)
    return {
        "typical capture": [typical],
        "typical capture, CRLF": [typical.replace(b"\n", b"\r\n")],
        "all CRLF blank lines": [b"\r\n" * (size // 2)],
        "all comment lines": [b": keep-alive\n" * (size // 13)],
        "one huge data line": [line + b"\n\n"],
        "many tiny events": [b"data:\n\n" * (size // 7)],
        "one event of many data lines": [b"data:x\n" * (size // 7) + b"\n"],
        "one line in 16-byte feeds": [line[i : i + 16] for i in range(0, len(line), 16)]
        + [b"\n\n"],
    }


def decoder_memory(pieces: list[bytes]) -> int:
    """Bytes: the tracemalloc peak while the pieces are fed, minus the events returned."""
    decoder = SSEDecoder()
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        events: list[Any] = []
        for piece in pieces:
            events += decoder.feed(piece)
        held, peak = tracemalloc.get_traced_memory()
        del events
        returned = held - tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return peak - base - returned


def _memory_records(opts: Options) -> list[Record]:
    # (At least twice the 64 KiB block a long incomplete line is decoded in: the
    # constant of "twice what it holds, plus a constant".)
    size = 128 * 1024 if opts.quick else 256 * 1024
    records = []
    for shape, pieces in _sse_shapes(size).items():
        total = sum(map(len, pieces))
        peak = decoder_memory(pieces)
        figure = round(peak / total, 3)
        records.append(Record(
            case=f"SSE decoder memory: {shape}", group=GROUP,
            candidate="tracemalloc peak during SSEDecoder.feed, minus the events returned",
            baseline="input bytes", ratio=figure, ratio_min=figure, ratio_max=figure,
            rate=round(peak / 1024, 1), rate_unit="KiB peak", goal=MEMORY_GOAL,
            better="lower", met=verdict(figure, MEMORY_GOAL, "lower"), rounds=1,
            note=f"{total:,} B in {len(pieces):,} feed(s); deterministic",
        ))
    return records


# ------------------------------------------------------- SSE hostile throughput


def _decode(data: bytes, **limits: int) -> Call:
    def run() -> object:
        decoder = SSEDecoder(**limits)
        decoder.feed(data)
        return decoder.close()

    return run


def _throughput_records(opts: Options) -> list[Record]:
    size = 128 * 1024 if opts.quick else 1024 * 1024
    typical = _TYPICAL_EVENT * (size // len(_TYPICAL_EVENT))
    shapes = {
        "LF blank lines": b"\n" * size,
        "CRLF blank lines": b"\r\n" * (size // 2),
        "keep-alive comment lines": b": keep-alive\r\n" * (size // 14),
    }
    records = []
    for shape, data in shapes.items():
        hostile, common = _interleaved([_decode(data), _decode(typical)], opts)
        ratios = [(h / len(data)) / (c / len(typical))
                  for h, c in zip(hostile, common, strict=True)]
        records.append(_record(
            f"SSE decoding, {shape}, per byte vs a typical capture",
            f"SSEDecoder, {len(data):,} B of {shape}",
            f"SSEDecoder, a typical capture of {len(typical):,} B", ratios,
            len(data) / statistics.median(hostile) / 1e6, "MB/s", THROUGHPUT_GOAL))
    # Blank lines among events: what they add per byte, against the same capture
    # without them (more events per byte cost more per byte whatever the decoder).
    event = b'id: e\nevent: x\ndata: {"a": 1}\n\n'
    count = size // (len(event) + 40)
    bare, padded = event * count, (event + b"\n" * 40) * count
    with_blank, without, common = _interleaved(
        [_decode(padded), _decode(bare), _decode(typical)], opts)
    extra = len(padded) - len(bare)
    ratios = [max(0.0, ((w - b) / extra) / (c / len(typical)))
              for w, b, c in zip(with_blank, without, common, strict=True)]
    records.append(_record(
        "SSE decoding, 40 blank lines after each event, their extra time per byte vs a "
        "typical capture", f"SSEDecoder, {len(padded):,} B with the blank lines",
        "the same events without them; a typical capture", ratios,
        len(padded) / statistics.median(with_blank) / 1e6, "MB/s", THROUGHPUT_GOAL))
    return records


# --------------------------------------------------- JSON limits: reject vs prefix


def _loads(doc: str, limits: JSONLimits) -> Call:
    data = doc.encode()
    return lambda: strict_json.loads(data, limits=limits)


def _json_records(opts: Options) -> list[Record]:
    quick = opts.quick
    goal = GOALS["loads"]
    scale = 5  # the rejected input is this many times the limit (rest: what follows)
    items = 10_000 if quick else 100_000  # the default
    values = 100_000 if quick else 400_000
    string = 256 * 1024 if quick else 4 * 1024 * 1024  # the default
    cases: list[tuple[str, str, str, JSONLimits]] = []

    lim = JSONLimits(max_container_items=items)
    cases.append((
        f"max_container_items ({items:,}): an array of zeros",
        "[" + ",".join(["0"] * (items * scale)) + "]",
        "[" + ",".join(["0"] * items) + "]", lim))
    cases.append((
        f"max_container_items ({items:,}): an object of members",
        "{" + ",".join(f'"k{i}":0' for i in range(items * 2)) + "}",
        "{" + ",".join(f'"k{i}":0' for i in range(items)) + "}", lim))
    cases.append((
        f"max_container_items ({items:,}): an array of empty arrays",
        "[" + ",".join(["[]"] * (items * scale)) + "]",
        "[" + ",".join(["[]"] * items) + "]", lim))
    cases.append((
        f"max_container_items ({items:,}): an array of small objects",
        "[" + ",".join(['{"a":1,"b":[2,3]}'] * (items * 2)) + "]",
        "[" + ",".join(['{"a":1,"b":[2,3]}'] * items) + "]", lim))
    lim = JSONLimits(max_values=values, max_container_items=values)
    per = values // 2  # [0] is two values
    cases.append((
        f"max_values ({values:,}): an array of one-item arrays",
        "[" + ",".join(["[0]"] * (per * 2)) + "]",
        "[" + ",".join(["[0]"] * (per - 1)) + "]", lim))
    depth = JSONLimits().max_depth
    filler = ",".join(['{"a":[1,2,3]}'] * (1_000 if quick else 10_000))
    cases.append((
        f"max_depth ({depth}): a deep value after {'1,000' if quick else '10,000'} small "
        "objects, more after it",
        "[" + filler + "," + "[" * depth + "0" + "]" * depth + "," + filler + "]",
        "[" + filler + "," + "[" * (depth - 1) + "0" + "]" * (depth - 1) + "]",
        JSONLimits()))
    lim = JSONLimits(max_string_chars=string)
    cases.append((
        f"max_string_chars ({string:,}): one long string, more after it",
        '["' + "x" * (string + 1) + '",' + ",".join(['"y"'] * 50_000) + "]",
        '["' + "x" * string + '"]', lim))
    number = JSONLimits().max_number_chars
    cases.append((
        f"max_number_chars ({number:,}): a long literal after {'1,000' if quick else '10,000'} "
        "small objects",
        "[" + filler + "," + "1" * (number + 1) + "," + filler + "]",
        "[" + filler + "," + "1" * number + "]", JSONLimits()))
    records = []
    for name, bad, good, lim in cases:
        opts.progress(f"resources: loads, {name}")
        records.append(_limit_record(f"loads, {name}", _loads(bad, lim), _loads(good, lim),
                                     goal, opts))
    # max_bytes: decided before anything is read; the ratio is to accepting "0".
    big = b"[" + b"0," * ((1 if quick else 8) * 1024 * 1024) + b"0]"
    tight = JSONLimits(max_bytes=1024 * 1024)
    records.append(_limit_record(
        f"loads, max_bytes (1 MiB): a {2 if quick else 16} MiB document, vs accepting '0'",
        lambda: strict_json.loads(big, limits=tight),
        lambda: strict_json.loads(b"0", limits=tight), goal, opts))
    return records


# ------------------------------------------------- SSE and stream limits: reject vs prefix


def _sse_limit_records(opts: Options) -> list[Record]:
    goal = GOALS["sse"]
    limit = 128 * 1024 if opts.quick else 1024 * 1024
    line_bad = b"data: " + b"x" * (limit * 4) + b"\n\n"
    line_good = b"data: " + b"x" * (limit - 6) + b"\n\n"
    event_bad = b"data: x\n" * (limit // 2) + b"\n"
    event_good = b"data: x\n" * (limit // 7 - 1) + b"\n"
    return [
        _limit_record(f"SSE max_line_bytes ({limit:,}): one line 4x the bound",
                      _decode(line_bad, max_line_bytes=limit),
                      _decode(line_good, max_line_bytes=limit), goal, opts),
        _limit_record(f"SSE max_event_bytes ({limit:,}): one event of data lines 4x the bound",
                      _decode(event_bad, max_event_bytes=limit),
                      _decode(event_good, max_event_bytes=limit), goal, opts),
    ]


def _gemini_events(calls: int, fragments: int, fragment: str, updates: int) -> list[Any]:
    events: list[Any] = [{"event_type": "interaction.created",
                          "interaction": {"id": "interaction-1", "status": "in_progress"}}]
    for c in range(calls):
        events.append({"event_type": "step.start", "index": c, "step": {
            "type": "function_call", "id": f"call-{c}", "name": "f", "arguments": {}}})
        events.append({"event_type": "step.delta", "index": c, "delta": {
            "type": "arguments_delta", "arguments": '{"a": "'}})
        events.extend({"event_type": "step.delta", "index": c, "delta": {
            "type": "arguments_delta", "arguments": fragment}} for _ in range(fragments))
        events.append({"event_type": "step.delta", "index": c, "delta": {
            "type": "arguments_delta", "arguments": '"}'}})
        events.append({"event_type": "step.stop", "index": c})
    events.extend({"event_type": "interaction.status_update", "interaction_id": "interaction-1",
                   "status": "in_progress"} for _ in range(updates))
    events.append({"event_type": "interaction.completed",
                   "interaction": {"id": "interaction-1", "status": "requires_action"}})
    for n, event in enumerate(events):
        event["event_id"] = f"e{n}"
    return events


def _stream_records(opts: Options) -> list[Record]:
    goal = GOALS["stream"]
    scale = 1 if opts.quick else 2
    frag = "x" * 100

    def parse(events: list[Any], limits: StreamLimits) -> Call:
        return lambda: gemini_interactions.parse_events(events, limits=limits)

    n_events = 5_000 * scale
    lim = StreamLimits(max_events=n_events)
    records = [_limit_record(
        f"Gemini parse_events, StreamLimits.max_events ({n_events:,})",
        parse(_gemini_events(1, n_events * 4, "x", 0), lim),
        parse(_gemini_events(1, n_events - 6, "x", 0), lim), goal, opts)]
    per_call = 100_000 * scale
    lim = StreamLimits(max_fragment_bytes=per_call)
    records.append(_limit_record(
        f"Gemini parse_events, StreamLimits.max_fragment_bytes ({per_call:,})",
        parse(_gemini_events(1, per_call * 4 // 100, frag, 0), lim),
        parse(_gemini_events(1, per_call // 100 - 1, frag, 0), lim), goal, opts))
    total = 300_000 * scale
    lim = StreamLimits(max_total_fragment_bytes=total, max_fragment_bytes=total)
    records.append(_limit_record(
        f"Gemini parse_events, StreamLimits.max_total_fragment_bytes ({total:,})",
        parse(_gemini_events(12, total // 300, frag, 0), lim),
        parse(_gemini_events(3, total // 300 - 1, frag, 0), lim), goal, opts))
    steps = 500 * scale
    lim = StreamLimits(max_items=steps)
    records.append(_limit_record(
        f"Gemini parse_events, StreamLimits.max_items ({steps:,} steps)",
        parse(_gemini_events(steps * 4, 1, "x", 0), lim),
        parse(_gemini_events(steps, 1, "x", 0), lim), goal, opts))
    return records


# ----------------------------------------------------------------------- entry


def resources_cases(opts: Options) -> list[Record]:
    """Every row of the module docstring, measured in this process."""
    opts.progress("resources: SSE decoder memory")
    records = _memory_records(opts)
    opts.progress("resources: SSE throughput of hostile shapes")
    records += _throughput_records(opts)
    records += _json_records(opts)
    opts.progress("resources: SSE and stream limits")
    records += _sse_limit_records(opts)
    records += _stream_records(opts)
    return records

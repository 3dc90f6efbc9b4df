"""A capture file fed to an old provider fuzz target goes to the wire path.

The old targets (``fuzz/fuzz_<contract>.py``) take a mode from their first byte; a
capture (``event: ...``, ``data: ...``) used to be read as structure-aware bytes of
whatever mode its first letter selected. Now an input that looks like raw SSE goes,
whole, through the body of ``fuzz_wire_<contract>`` (``fuzz.harness.wire_target.route_sse``),
and single-input mode says so on stderr (``note_sse_inputs``). Chat's raw mode was
always SSE and now decodes with ``contracts.sse``; it is not rerouted.
"""

from __future__ import annotations

import io
import random
from pathlib import Path
from typing import Any

import pytest
from _fuzz import load_fuzz_target
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts import openai_chat
from pcfuzz.contracts.fixtures import load_fixture
from pcfuzz.fuzz.harness import wire_target
from pcfuzz.fuzz.harness.wire_target import looks_like_sse, note_sse_inputs
from pcfuzz.strategies.sse import render_events

ROOT = Path(__file__).resolve().parent.parent
BOM = b"\xef\xbb\xbf"
ROUTED = ("openai-responses", "anthropic-messages", "gemini-interactions")


def _name(contract: str) -> str:
    return contract.replace("-", "_")


def _capture(contract: str) -> bytes:
    return load_fixture(ROOT / "fixtures" / "wire" / f"{_name(contract)}.sse.json").sse


def _events(contract: str) -> list[Any]:
    events = load_fixture(ROOT / "fixtures" / f"{_name(contract)}.json").events
    if contract == "openai-chat":
        return openai_chat.frames_from_fixture_events(events)
    return list(events)


class _Recorder:
    def __init__(self) -> None:
        self.inputs: list[bytes] = []

    def __call__(self, data: bytes) -> None:
        self.inputs.append(data)


@pytest.mark.parametrize("contract", ROUTED)
def test_capture_fed_to_an_old_target_goes_whole_to_the_wire_path(
    contract: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = load_fuzz_target(f"fuzz_{_name(contract)}")
    recorder = _Recorder()
    monkeypatch.setitem(wire_target._ROUTED, contract, recorder)
    capture = _capture(contract)
    target.TestOneInput(capture)
    # Whole: no first byte taken as a mode byte.
    assert recorder.inputs == [capture]


@pytest.mark.parametrize("contract", ROUTED)
def test_capture_through_an_old_target_runs_the_wire_oracles(contract: str) -> None:
    target = load_fuzz_target(f"fuzz_{_name(contract)}")
    capture = _capture(contract)
    target.TestOneInput(capture)  # the real wire body: accepted, oracles hold
    target.TestOneInput(capture[: len(capture) // 2])  # cut: rejected, no crash


@pytest.mark.parametrize("contract", ROUTED)
def test_structure_aware_seeds_are_not_rerouted(
    contract: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = load_fuzz_target(f"fuzz_{_name(contract)}")
    recorder = _Recorder()
    monkeypatch.setitem(wire_target._ROUTED, contract, recorder)
    seeds = sorted((ROOT / "fuzz" / "corpus" / f"fuzz_{_name(contract)}").iterdir())
    for path in seeds:
        target.TestOneInput(path.read_bytes())
    assert recorder.inputs == []


@pytest.mark.parametrize("head", [b"event: x\n", b"data: {}\n", b"id: 1\n", b"retry: 5\n",
                                  b": keep-alive\n", b"\xef\xbb\xbfdata: x\n", b"data:x"])
def test_sse_field_and_comment_lines_look_like_sse(head: bytes) -> None:
    assert looks_like_sse(head)


@pytest.mark.parametrize("head", [b"", b"\x00event: x", b"\x01data:", b" data: x",
                                  b"Data: x", b"{\"type\": 1}", b"\ndata: x", b"events: x"])
def test_mode_bytes_and_json_lines_do_not_look_like_sse(head: bytes) -> None:
    assert not looks_like_sse(head)


def test_single_input_mode_names_a_capture_and_not_a_seed(tmp_path: Path) -> None:
    capture = tmp_path / "capture.sse"
    capture.write_bytes(_capture("anthropic-messages"))
    seed = tmp_path / "seed"
    seed.write_bytes(b"\x01" + b"\x00" * 40)
    out = io.StringIO()
    lines = note_sse_inputs(["fuzz_x.py", "-runs=1", str(capture), str(seed),
                             str(tmp_path)], "anthropic-messages", out)
    assert len(lines) == 1 and str(capture) in lines[0]
    assert "fuzz_wire_anthropic_messages" in out.getvalue()


@given(contract=st.sampled_from(sorted(wire_target._TERMINAL)), seed=st.integers(0, 2**32))
def test_every_rendered_stream_looks_like_sse(contract: str, seed: int) -> None:
    raw = render_events(contract, _events(contract), random.Random(seed))
    event(f"starts with {raw.removeprefix(BOM).split(b':', 1)[0][:8]!r}")
    event(f"bom={raw.startswith(BOM)}")
    assert looks_like_sse(raw)

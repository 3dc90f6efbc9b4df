#!/usr/bin/env python3
"""Atheris target: raw ``data:`` lines into the Chat Completions aggregator.

The input bytes are split into lines; every ``data:`` line's payload (one optional
leading space removed) is either ``[DONE]`` or strict JSON parsed with
``contracts.strict_json.loads``, and is fed to a fresh ``ChatCompletionStream``.
Other lines are ignored. Only a ``ContractError`` may escape the contracts; when a
turn is produced, the target also checks the terminal gate and the cache codec
round trip, and raises ``RuntimeError`` (a crash) if either is broken.
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    from contracts import strict_json
    from contracts.errors import ContractError
    from contracts.openai_chat import ChatCompletionStream, ChatCompletionTurn
    from contracts.openai_chat_cache import decode, encode

_PREFIX = b"data:"


def run_lines(data: bytes) -> ChatCompletionTurn | None:
    """Feed every ``data:`` payload of ``data``; return the turn, or ``None`` on
    a rejection. Raises anything that is not a ``ContractError``."""
    stream = ChatCompletionStream()
    try:
        for line in data.splitlines():
            if not line.startswith(_PREFIX):
                continue
            payload = line[len(_PREFIX):]
            if payload.startswith(b" "):
                payload = payload[1:]
            frame = "[DONE]" if payload == b"[DONE]" else strict_json.loads(payload)
            stream.feed(frame)
        turn = stream.close()
    except ContractError:
        return None
    _check_turn(turn)
    return turn


def _check_turn(turn: ChatCompletionTurn) -> None:
    if turn.calls and turn.finish_reason != "tool_calls":
        raise RuntimeError("calls released without finish_reason == 'tool_calls'")
    tools = turn.message.get("tool_calls") or []
    if turn.calls and len(turn.calls) != len(tools):
        raise RuntimeError("a turn released only part of its calls")
    if tools and len(turn.calls) + len(turn.recovery_calls) != len(tools):
        raise RuntimeError("a tool call is neither executable nor a recovery call")
    turn.verify()
    snapshot = turn.snapshot
    try:
        blob = encode(snapshot)
    except ContractError:
        # Only text that is not UTF-8 encodable may be refused; strict JSON input
        # cannot produce it, so any refusal here is a bug.
        raise RuntimeError("a parsed snapshot could not be encoded") from None
    if decode(blob) != snapshot:
        raise RuntimeError("cache round trip changed the snapshot")


def TestOneInput(data: bytes) -> None:  # noqa: N802 - libFuzzer entry point name
    run_lines(data)


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()

"""Adapters that misbehave, for the kit's containment tests (tests/test_conform_containment.py).

Each is a module-level function, so the kit's worker process imports it by name
(``_hostile_adapters:exits``). "On an error" means: on a Chat stream that carries an
error frame (the ``terminal`` family makes them); elsewhere each returns what this
project's parser releases, so the misbehaviour is the only finding.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from pcfuzz.conform.adapters import openai_chat as correct


def _has_error(frames: list[Any]) -> bool:
    return any(isinstance(f, dict) and "error" in f for f in frames)


class AdapterAbort(BaseException):
    """Not an Exception: what no adapter may raise."""


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no message for you")


class HostileList(list):  # type: ignore[type-arg]
    def __iter__(self) -> Any:
        raise RuntimeError("__iter__ raised")

    def __repr__(self) -> str:
        raise RuntimeError("__repr__ raised")


class HostileObject:
    def __repr__(self) -> str:
        raise RuntimeError("__repr__ raised")

    def __iter__(self) -> Any:
        raise RuntimeError("__iter__ raised")


class Parser:
    """A class passed as the adapter: calling it makes an instance."""

    def __init__(self, frames: list[Any]) -> None:
        self.frames = frames


def exits(frames: list[Any]) -> Any:
    sys.exit(0)


def exits_on_error(frames: list[Any]) -> Any:
    if _has_error(frames):
        sys.exit(0)
    return correct(frames)


def interrupts_on_error(frames: list[Any]) -> Any:
    if _has_error(frames):
        raise KeyboardInterrupt
    return correct(frames)


def aborts_on_error(frames: list[Any]) -> Any:
    if _has_error(frames):
        raise AdapterAbort("stop")
    return correct(frames)


def unprintable_on_error(frames: list[Any]) -> Any:
    if _has_error(frames):
        raise Unprintable
    return correct(frames)


def unprintable(frames: list[Any]) -> Any:
    raise Unprintable


def hangs(frames: list[Any]) -> Any:
    while True:
        time.sleep(0.01)


def hangs_on_error(frames: list[Any]) -> Any:
    if _has_error(frames):
        while True:
            pass
    return correct(frames)


def dies_on_error(frames: list[Any]) -> Any:
    if _has_error(frames):
        os._exit(7)
    return correct(frames)


def prints(frames: list[Any]) -> Any:
    print("adapter: reading", len(frames), "frames")
    sys.stderr.write("adapter: a warning\n")
    os.write(1, b"adapter: straight to fd 1\n")
    if _has_error(frames):  # and a bug, so that a finding shows the output
        return [{"call_id": "x", "name": "leak", "arguments": {}}]
    return correct(frames)


def hostile_list(frames: list[Any]) -> Any:
    return HostileList(correct(frames))


def hostile_object(frames: list[Any]) -> Any:
    return HostileObject()


def returns_a_dict(frames: list[Any]) -> Any:
    return {"calls": []}


def deep_arguments(frames: list[Any]) -> Any:
    value: dict[str, Any] = {}
    node = value
    for _ in range(100_000):
        node["a"] = {}
        node = node["a"]
    return [{"call_id": "c", "name": "f", "arguments": value}]

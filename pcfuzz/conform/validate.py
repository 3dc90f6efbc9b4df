"""The adapter is checked once before any scenario runs: on the contract's golden
stream (the pinned fixture, a valid turn with two calls) it must return a list of
calls. If it cannot (it returns something else, raises, exits, hangs, dies, or it
is a class whose call makes an instance) nothing the kit would report means
anything, so the run stops with a :class:`~pcfuzz.errors.UsageError` (exit 2) that
says what was expected and what came back.
"""

from __future__ import annotations

import json
from typing import Any

from pcfuzz.conform.sandbox import Outcome, Sandbox
from pcfuzz.conform.search import TimeUp
from pcfuzz.errors import UsageError

__all__ = ["golden_payload", "validate_adapter"]


def golden_payload(contract: str, input: str, form: str = "plain"
                   ) -> tuple[Any, list[dict[str, Any]]]:
    """The contract's golden stream as the adapter takes it (events or SSE bytes; for
    the release form, the list of events or of each event's SSE frame) and the calls
    it releases."""
    from pcfuzz._data import fixtures_dir
    from pcfuzz.conform.adapters import ADAPTERS
    from pcfuzz.contracts import openai_chat
    from pcfuzz.contracts.fixtures import load_fixture
    from pcfuzz.contracts.registry import entry
    from pcfuzz.strategies.sse import render_api_events

    fixture = load_fixture(fixtures_dir() / f"{entry(contract).package}.json")
    events: list[Any] = list(fixture.events)
    if contract == "openai-chat":
        events = list(openai_chat.frames_from_fixture_events(events))
    calls = ADAPTERS[contract](events)
    if form == "release":
        if input == "sse":
            return [render_api_events(contract, [event]) for event in events], calls
        return events, calls
    if input == "sse":
        return render_api_events(contract, events), calls
    return events, calls


def _check_release_form(outcome: Outcome, what: str, name: str,
                        calls: list[dict[str, Any]], printed: str) -> None:
    """The release form on the golden stream: it must run it (what it releases is the
    kit's question), release only calls, and not look like a plain adapter (a list
    returned, nothing released). A form is declared, never guessed: this says so."""
    bad = next((r for r in outcome.releases if "error" in r), None)
    if bad is not None:
        raise UsageError(f"{what} and passed release() something that is not a call: "
                         f"{bad['error']}. release() takes one call at a time: "
                         f"{json.dumps(calls[0], ensure_ascii=False)[:200]}{printed}")
    if outcome.kind == "raised" and not outcome.releases:
        hint = ""
        if outcome.type == "TypeError" and "argument" in outcome.message:
            hint = ("; the release form (--adapter-form release) calls adapter(stream, "
                    "release, continuation): an adapter of the plain form takes only the "
                    "events and returns the calls")
        at = f" at {outcome.where}" if outcome.where else ""
        raise UsageError(f"{what} and raised {outcome.type}: {outcome.message}{at}. A parser "
                         f"under test must accept a valid turn and release its calls"
                         f"{hint}{printed}")
    if outcome.kind == "returned" and not outcome.releases and outcome.returned in (
            "list", "tuple"):
        raise UsageError(f"{what}, released nothing and returned a {outcome.returned}: "
                         f"{name} looks like an adapter of the plain form, which returns "
                         f"the calls. In the release form the calls are what release() "
                         f"receives; drop --adapter-form release for a plain adapter"
                         f"{printed}")


def _expected(calls: list[dict[str, Any]]) -> str:
    return (f"a list of calls, here {len(calls)}: "
            + json.dumps(calls, ensure_ascii=False)[:400])


def validate_adapter(sandbox: Sandbox, contract: str, input: str, name: str,
                     limit_s: float | None = None) -> Outcome:
    """Call the adapter on the golden stream; raise :class:`UsageError` unless it
    returned a list of calls (right or wrong: which calls is the kit's question)."""
    release = sandbox.form == "release"
    payload, calls = golden_payload(contract, input, sandbox.form)
    outcome = sandbox.call(payload, limit_s)
    given = "the raw SSE bytes" if input == "sse" else "the list of decoded events"
    if release:
        given = ("an iterator of the SSE frames, one per event" if input == "sse"
                 else "an iterator of the decoded events")
        given += ", a release callback and a continuation callback"
    what = (f"the adapter {name} was given {contract}'s golden stream ({given} of a valid "
            f"turn with {len(calls)} calls)")
    printed = (f"; it printed: {outcome.output.strip()[:300]}" if outcome.output.strip()
               else "")
    if release:
        _check_release_form(outcome, what, name, calls, printed)
        if outcome.kind == "raised":
            return outcome  # released, then raised: what ran is the scenarios' question
    if outcome.kind == "returned":
        return outcome
    if outcome.kind == "malformed":
        hint = ""
        if sandbox.is_class or outcome.instance_of_adapter:
            hint = (f"; {name} is a class, so calling it made an instance: pass a function, "
                    "or a method of an object (module:object.method)")
        raise UsageError(f"{what} and returned {outcome.type}: {outcome.message}. Expected "
                         f"{_expected(calls)}{hint}{printed}")
    if outcome.kind == "raised":
        at = f" at {outcome.where}" if outcome.where else ""
        if outcome.type == "TypeError" and "argument" in outcome.message and not release:
            printed = (f"; the plain form (the default) calls adapter(events); an adapter "
                       f"that takes (stream, release, continuation) is the release form: "
                       f"--adapter-form release{printed}")
        other = "--input events" if input == "sse" else "--input sse"
        raise UsageError(f"{what} and raised {outcome.type}: {outcome.message}{at}. A parser "
                         f"under test must accept a valid turn and return "
                         f"{_expected(calls)} (if it reads the other form, use {other})"
                         f"{printed}")
    if outcome.kind == "cut":
        raise TimeUp(f"the budget ran out before the adapter had answered on the golden "
                     f"stream ({outcome.seconds:.1f}s): give a larger --budget")
    raise UsageError(f"{what} and {outcome.describe()}: an adapter that cannot run a valid "
                     f"turn cannot be tested{printed}")

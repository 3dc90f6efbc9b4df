"""The search of one scenario family: hypothesis batches under a deadline, every
distinct root cause kept, each shrunk as far as the time allows.

Hypothesis has no time limit on shrinking (it stops after 500 shrinks or five
minutes), so the kit bounds it itself: the test function checks the deadline before
every example and raises :class:`TimeUp`, a ``BaseException`` hypothesis lets
through, which ends the run wherever it is, generation or shrinking. The kit keeps
its own record of the smallest failing example of each root cause, so a run cut
short still reports what it found, shrunk as far as it got.

Root causes (:func:`pcfuzz.conform.explain.explain`'s ``key``) are told apart by
raising a distinct exception class per key: hypothesis then shrinks each one on its
own (``report_multiple_bugs``). A key already reported (by an earlier batch, an
earlier family, a replayed regression) is not raised again: the example passes, is
counted under the finding's "also found by", and the search goes on for new ones.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pcfuzz.conform.explain import Explanation, describe_event, explain, shape
from pcfuzz.conform.gate import gate_passes
from pcfuzz.conform.options import FamilyPlan
from pcfuzz.conform.report import Gated
from pcfuzz.conform.sandbox import Outcome, Sandbox
from pcfuzz.database import keyed

__all__ = ["Hit", "Search", "Stopped", "TimeUp", "check_stop", "clear_stop", "how_it_ended",
           "payload_for", "release_judgement", "request_stop", "sse_bytes", "verdict",
           "warm_up"]

#: A family stops calling an adapter that hung this many times (each costs the
#: adapter timeout; the finding is made at the first).
MAX_TIMEOUTS = 2
#: Distinct messages of one line of the parser kept as distinct root causes; more are
#: one cause (a line that puts a value the shape cannot take out in its message would
#: otherwise make one finding per example).
MAX_SHAPES_PER_SITE = 2


def _selection(plan: FamilyPlan | None, tool_names: Any, realism: str = "sdk",
               ) -> dict[str, Any]:
    """The keyword arguments of ``scenarios()`` for one family's plan, names and
    realism level."""
    out: dict[str, Any] = {"tool_names": tool_names, "realism": realism}
    if plan is not None:
        out.update(valid=plan.valid, mutations=plan.mutations)
    return out


def warm_up(contract: str, family: str, strict: bool, plan: FamilyPlan | None = None,
            tool_names: Any = None, realism: str = "sdk") -> float:
    """Draw one example of ``family`` without calling the adapter; returns the seconds
    it took.

    The first draw in a directory builds hypothesis' caches on disk (the constants of
    every local module: pcfuzz itself from a checkout, the project around the
    adapter; unicode tables): 7.6 s on a loaded 2-core machine, 0.1 s once built.
    Done before the families share the time, that cost is the run's once and takes
    no family's examples."""
    from hypothesis import HealthCheck, Phase, given, settings

    from pcfuzz.strategies.conformance import scenarios

    began = time.monotonic()

    @settings(max_examples=1, database=None, deadline=None, phases=(Phase.generate,),
              suppress_health_check=list(HealthCheck))
    @given(scenarios(contract, family, strict=strict,
                     **_selection(plan, tool_names, realism)))
    def draw(scenario: Any) -> None:
        pass

    draw()
    return time.monotonic() - began


class Stopped(KeyboardInterrupt):
    """A signal stopped the run (``pcfuzz conform`` turns SIGTERM into this): like
    Ctrl-C, the run ends and reports what it found. ``args[0]``: the signal's name."""


#: The stop a signal asked for (its name), until the run has ended. A signal handler
#: runs between any two bytecodes of the main thread, inside a garbage-collector or
#: weakref callback too, and CPython drops what such a callback raises ("Exception
#: ignored in ..."): a SIGTERM whose exception was dropped there let a run go on to
#: the end of its budget (2 of 31 signals sent while a finding was shrunk, on a
#: loaded machine). The request is kept here as well, and every example and batch
#: raises it again.
_STOP: list[str] = []


def request_stop(why: str) -> None:
    """Record that a signal asked the run to stop (``why``: its name)."""
    if not _STOP:
        _STOP.append(why)


def clear_stop() -> None:
    """Forget a stop request (a new run starts, or the run has ended)."""
    _STOP.clear()


def check_stop() -> None:
    """Raise :class:`Stopped` if a signal asked the run to stop."""
    if _STOP:
        raise Stopped(_STOP[0])


class TimeUp(BaseException):
    """The family's (or the run's) time is up: raised inside hypothesis to end it,
    shrinking included (a ``BaseException``: hypothesis does not catch it)."""


class AdapterRejected(Exception):
    """The adapter raised: what the oracle sees as "the parser rejected the stream"."""


def sse_bytes(contract: str, events: list[Any]) -> bytes:
    """The stream as its API frames it on the wire (LF, one ``data:`` line per event)."""
    from pcfuzz.strategies.sse import render_api_events

    return render_api_events(contract, events)


def payload_for(scenario: Any, input: str, form: str = "plain") -> Any:
    """What the adapter is given: the events, or the SSE bytes (``input="sse"``). The
    release form takes them as a list of items the worker hands out one at a time:
    the events, or each event's own SSE frame (their concatenation is the stream's
    bytes), so a release is attributed to an event either way."""
    if form == "release":
        if input == "sse":
            return [sse_bytes(scenario.contract, [event]) for event in scenario.events]
        return list(scenario.events)
    if input == "sse":
        return sse_bytes(scenario.contract, scenario.events)
    return scenario.events


def verdict(scenario: Any, outcome: Outcome, strict: bool) -> str | None:
    """The violated invariant, or ``None``: the turn model's oracle
    (:func:`pcfuzz.strategies.conformance.check`), plus what only a contained call
    can do (escape, hang, die)."""
    from pcfuzz.strategies.conformance import check

    if outcome.kind == "escaped":
        return (f"an adapter rejects a stream by raising an Exception, but it raised "
                f"{outcome.type}")
    if outcome.kind == "timeout":
        return f"an adapter must return or raise, but it did not within {outcome.seconds:g}s"
    if outcome.kind == "died":
        return f"an adapter must not end its process, but it did ({outcome.message})"
    if scenario.expectation(strict) is None:
        return None
    if outcome.kind == "malformed":
        return f"the adapter must return a list of calls: {outcome.message}"
    if outcome.kind == "raised":
        return check(scenario, AdapterRejected(outcome.message), strict=strict)
    return check(scenario, outcome.calls, strict=strict)


def _as_plain(outcome: Outcome) -> Outcome:
    """A release-form outcome as the plain form's: what ran is what was released."""
    if outcome.releases:
        return Outcome("returned", calls=outcome.released, output=outcome.output,
                       seconds=outcome.seconds)
    if outcome.kind == "returned":
        return Outcome("returned", calls=[], output=outcome.output, seconds=outcome.seconds)
    return outcome


_EARLY_FIX = ("release a call only once the stream's terminal event has arrived (and the "
              "turn has been checked whole), never when the call's own block, item or "
              "step completes")
_FOLLOWUP = {
    "duplicate_result": ("a follow-up request carries exactly one result per released "
                         "call: never two for one call",
                         "send each released call's result once, in the one request that "
                         "follows the turn"),
    "missing_result": ("a follow-up request carries exactly one result per released call: "
                       "none may be missing",
                       "send a result for every call that ran (an error result for a "
                       "call that failed), bound by its id"),
    "unknown_result": ("a follow-up request carries results only for calls released in "
                       "the turn, bound by their ids",
                       "bind each result to the id of a call that was released; never "
                       "invent, renumber or reuse an id"),
}


def release_judgement(scenario: Any, outcome: Outcome, strict: bool
                      ) -> tuple[str, Explanation] | None:
    """The release form's verdict: ``(problem, explanation)`` or ``None``.

    In order: something passed to ``release()`` that is not a call; a call released
    before the terminal event had been delivered (safety, in any scenario, whatever
    the adapter did afterwards); then the ordinary check of what ran (the released
    calls, whether the adapter then returned, raised or hung); then the adapter's
    hang, death or escape; then its follow-up request, if it handed one over."""
    from pcfuzz.conform import followup, timing

    contract = scenario.contract
    bad = next((r for r in outcome.releases if "error" in r), None)
    if bad is not None:
        return f"release() takes one call {{call_id, name, arguments}}: {bad['error']}", Explanation(
            f"malformed-release:{shape(bad['error'])}",
            "release() takes one call: a dict with exactly call_id (str), name (str) and "
            "arguments (dict)", "", [],
            "call release() once per call, with the call's id, name and parsed arguments")
    early = timing.early_release(contract, scenario.events, outcome.releases)
    if early is not None:
        at = (f"event {early.at}, {describe_event(contract, scenario.events, early.at)}"
              if early.at >= 0 else "the start of the stream")
        return early.text(), Explanation(
            "released-early", "a call is released only after the terminal event has been "
            "delivered", f"{at}: {early.text()}", [], _EARLY_FIX, label="safety",
            expected=f"every call released after event {early.terminal} "
                     f"({early.terminal_name}) had been delivered")
    plain = _as_plain(outcome)
    problem: str | None = verdict(scenario, plain, strict)
    if problem is None and outcome.kind in ("escaped", "timeout", "died"):
        problem = verdict(scenario, outcome, strict)  # released fine, then hung or died
        plain = outcome
    if problem is not None:
        return problem, explain(scenario, plain, problem, strict=strict)
    if not outcome.continuations:
        return None
    bad = next((c for c in outcome.continuations if "error" in c), None)
    if bad is not None:
        return f"continuation() takes the request as JSON data: {bad['error']}", Explanation(
            f"malformed-continuation:{shape(bad['error'])}",
            "continuation() takes the follow-up request as JSON data (dicts, lists, str, "
            "int, float, bool, None)", "", [],
            "hand over the request body your integration would send, as plain JSON data")
    ids = [c["call_id"] for c in outcome.released]
    if len(outcome.continuations) > 1:
        found: followup.Binding | None = followup.Binding(
            "duplicate_result", f"{len(outcome.continuations)} follow-up requests for one "
            "turn: every released call's result would be sent more than once")
    else:
        named = frozenset(c["call_id"] for c in scenario.calls
                          if isinstance(c.get("call_id"), str))
        found = followup.check_request(contract, ids, outcome.continuations[0]["request"],
                                       named)
    if found is None:
        return None
    rule, fix = _FOLLOWUP[found.check]
    return f"{found.check}: {found.text}", Explanation(
        f"continuation:{found.check}", rule, "", [found.text], fix, label=found.check,
        expected=f"one result for each released call ({len(ids)}), bound by its id")


@dataclass
class Hit:
    """One failing example and why it fails."""

    scenario: Any
    outcome: Outcome
    problem: str
    explanation: Explanation
    note: str = ""

    @property
    def size(self) -> tuple[int, int]:
        return len(self.scenario.events), len(json.dumps(self.scenario.events))


_CLASSES: dict[str, type[AssertionError]] = {}


def _violation(key: str) -> type[AssertionError]:
    """One exception class per root cause: hypothesis shrinks each on its own."""
    found = _CLASSES.get(key)
    if found is None:
        found = _CLASSES[key] = type(f"Violation{len(_CLASSES)}", (AssertionError,), {})
    return found


@dataclass
class Search:
    """What the families of one run share: the adapter, the root causes found so far
    (``known``) and where else each was seen (``also``)."""

    sandbox: Sandbox
    contract: str
    input: str = "events"
    strict: bool = False
    known: dict[str, Hit] = field(default_factory=dict)
    also: dict[str, dict[str, int]] = field(default_factory=dict)
    #: per parser line, the message shapes kept apart so far
    shapes: dict[str, list[str]] = field(default_factory=dict)
    say: Callable[[str], None] = lambda _message: None
    clock: Callable[[], float] = time.monotonic
    #: a hypothesis example database (``pcfuzz.database.open_database``), or None:
    #: failing examples are saved to it and replayed first (hypothesis' reuse phase)
    database: Any = None
    #: per family, what it searches (``--mutation``/``--exclude``); None: everything
    plan: dict[str, FamilyPlan] | None = None
    #: the names generated calls carry (``scenarios(tool_names=...)``)
    tool_names: Any = None
    #: the integration's own gate after the adapter returns (:mod:`.gate`)
    gate: str = "none"
    #: how realistic the generated streams are (``scenarios(realism=...)``)
    realism: str = "sdk"
    #: examples the gate stopped, one record per root cause
    gated: dict[str, Gated] = field(default_factory=dict)

    def evaluate(self, scenario: Any, deadline: float | None) -> Hit | None:
        """Run one scenario; ``None`` when the adapter did what the scenario asks.
        Raises :class:`TimeUp` when the call was cut by the deadline."""
        limit = None if deadline is None else deadline - self.clock()
        if limit is not None and limit <= 0:
            raise TimeUp
        outcome = self.sandbox.call(payload_for(scenario, self.input, self.sandbox.form),
                                    limit)
        if outcome.kind in ("cut", "refused"):
            raise TimeUp
        if outcome.form == "release":
            judged = release_judgement(scenario, outcome, self.strict)
            if judged is None:
                return None
            judged[1].key = self.canonical(judged[1].key)
            return Hit(scenario, outcome, judged[0], judged[1])
        problem = verdict(scenario, outcome, self.strict)
        if problem is None:
            return None
        explained = explain(scenario, outcome, problem, strict=self.strict)
        explained.key = self.canonical(explained.key)
        if (outcome.kind == "returned" and outcome.calls
                and not gate_passes(self.contract, self.gate, scenario.events)):
            self._stopped(scenario, explained)  # the integration would not run them
            return None
        return Hit(scenario, outcome, problem, explained)

    def _stopped(self, scenario: Any, explained: Explanation) -> None:
        """Count an example the declared gate stops; keep the smallest stream of each
        root cause."""
        record = self.gated.get(explained.key)
        if record is None:
            self.gated[explained.key] = Gated(scenario.family, scenario.mutation,
                                              explained.rule or explained.key, 1,
                                              list(scenario.events))
            return
        record.examples += 1
        if len(scenario.events) < len(record.events):
            record.family, record.mutation = scenario.family, scenario.mutation
            record.events = list(scenario.events)

    def selection_key(self, family: str) -> str:
        """What the database key adds for a filtered family or chosen names (an
        example saved by one selection means another stream in another)."""
        plan = None if self.plan is None else self.plan.get(family)
        parts = []
        if plan is not None and (plan.mutations is not None or not plan.valid):
            parts.append(f"valid={int(plan.valid)}:" + ",".join(plan.mutations or ()))
        if self.tool_names is not None:
            parts.append("names=" + (self.tool_names if isinstance(self.tool_names, str)
                                     else ",".join(self.tool_names)))
        if self.realism != "sdk":  # the default level keeps the key it had
            parts.append(f"realism={self.realism}")
        if not parts:
            return ""
        return ":" + hashlib.sha256("|".join(parts).encode()).hexdigest()[:12]

    def selects(self, scenario: Any) -> bool:
        """Whether a saved scenario is in this run's ``--mutation``/``--exclude``
        selection. ``--family`` alone filters nothing here: without mutation filters
        every saved regression replays, as before."""
        if self.plan is None:
            return True
        plan = self.plan.get(scenario.family)
        if plan is None:
            return all(p.mutations is None for p in self.plan.values())
        return plan.selects(scenario.mutation)

    def canonical(self, key: str) -> str:
        """``key``, or its line's catch-all once that line has
        :data:`MAX_SHAPES_PER_SITE` other shapes."""
        parts = key.split(":", 3)
        if len(parts) < 4 or parts[0] != "released" or not parts[2]:
            return key
        line = ":".join(parts[:3])
        shapes = self.shapes.setdefault(line, [])
        if key in shapes:
            return key
        if len(shapes) < MAX_SHAPES_PER_SITE:
            shapes.append(key)
            return key
        return f"{line}:*"

    def seen_again(self, hit: Hit) -> None:
        where = f"[{hit.scenario.family}] {hit.scenario.mutation}"
        counts = self.also.setdefault(hit.explanation.key, {})
        counts[where] = counts.get(where, 0) + 1

    def family(self, family: str, *, deadline: float | None, max_examples: int | None,
               batch: int = 100, seed: int | None = None,
               tick: Callable[[int, bool], None] | None = None,
               on_found: Callable[[Hit], None] | None = None,
               label: str = "") -> tuple[int, list[Hit], str]:
        """Search ``family`` until ``deadline`` (``clock()`` reading) or
        ``max_examples`` examples: ``(examples, new hits, why it stopped early)``.
        ``on_found`` gets each new root cause once its batch is done (shrunk)."""
        examples = 0
        batches = 0
        found: list[Hit] = []
        stop = ""
        timeouts = [0]
        while True:
            check_stop()
            if deadline is not None and self.clock() >= deadline:
                break
            if max_examples is not None and examples >= max_examples:
                break
            size = batch if max_examples is None else min(batch, max_examples - examples)
            runs, hits, why = self._batch(family, size, deadline, seed, batches, tick,
                                          examples, timeouts, label)
            batches += 1
            examples += runs
            for hit in hits:
                self.known[hit.explanation.key] = hit
                found.append(hit)
                if on_found is not None:
                    on_found(hit)
            if why in ("time", "unsatisfiable") or runs == 0:
                break
            if why:
                stop = why
                break
        return examples, found, stop

    def _batch(self, family: str, size: int, deadline: float | None, seed: int | None,
               number: int, tick: Callable[[int, bool], None] | None, offset: int,
               timeouts: list[int], label: str) -> tuple[int, list[Hit], str]:
        from hypothesis import HealthCheck, Phase, Verbosity, assume, given, settings
        from hypothesis import seed as with_seed
        from hypothesis.errors import Unsatisfiable

        from pcfuzz.strategies.conformance import scenarios

        base = settings.default or settings.get_profile("default")
        if seed is None and base.derandomize and self.database is None:
            seed = 0  # derandomized (CI): still a different batch each time
        # (hypothesis' seed() turns the database off: with one, the batches are random)
        phases: tuple[Phase, ...] = (Phase.explicit, Phase.generate, Phase.shrink)
        database = None
        if self.database is not None:
            # family_test has the same source for every family, so the same hypothesis
            # key: the database is namespaced per search instead (see keyed()). Only a
            # family's first batch replays what is saved.
            phases = (Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink)
            database = keyed(self.database, f"pcfuzz-conform:{self.contract}:{family}:"
                             f"{'strict' if self.strict else 'safety'}:{self.input}"
                             f"{self.selection_key(family)}",
                             replay=number == 0)
        run_settings = settings(
            base, max_examples=max(1, size), derandomize=False, database=database,
            deadline=None, phases=phases,
            suppress_health_check=list(HealthCheck), report_multiple_bugs=True,
            verbosity=Verbosity.quiet, print_blob=False)
        state: dict[str, Any] = {"runs": 0}
        hits: dict[str, Hit] = {}
        why = ""

        plan = None if self.plan is None else self.plan.get(family)
        selection = _selection(plan, self.tool_names, self.realism)

        @run_settings
        @given(scenarios(self.contract, family, strict=self.strict, **selection))
        def family_test(scenario: Any) -> None:
            check_stop()
            if deadline is not None and self.clock() >= deadline:
                raise TimeUp
            if self.input == "sse":
                try:
                    sse_bytes(self.contract, scenario.events)
                except (UnicodeError, TypeError, KeyError, ValueError):
                    assume(False)  # not representable as UTF-8 SSE (lone surrogates)
            if timeouts[0] >= MAX_TIMEOUTS:
                raise TimeUp
            state["runs"] += 1
            hit = self.evaluate(scenario, deadline)
            if tick is not None:
                tick(offset + state["runs"], bool(hits))
            if hit is None:
                return
            key = hit.explanation.key
            if key in self.known:
                self.seen_again(hit)
                return
            if key not in hits:
                where = hit.explanation.unsafe_at or "; ".join(hit.explanation.diff)
                self.say(f"{label}: found: {hit.explanation.rule}"
                         + (f" [{where[:100]}]" if where else "")
                         + ("" if hit.outcome.kind == "timeout" else " (shrinking it)"))
            if key not in hits or hit.size < hits[key].size:
                hits[key] = hit
            if hit.outcome.kind == "timeout":
                timeouts[0] += 1  # not shrunk: every try could cost the timeout again
                return
            raise _violation(key)(hit.problem)

        test = family_test if seed is None else with_seed(seed + number)(family_test)
        try:
            test()
        except TimeUp:
            why = "time"
            if timeouts[0] >= MAX_TIMEOUTS:
                why = f"stopped after the adapter hung {timeouts[0]} times"
        except Unsatisfiable:
            why = "unsatisfiable"
        except KeyboardInterrupt:
            for hit in hits.values():
                hit.note = "interrupted while shrinking: may not be minimal"
            self._keep(hits)
            raise
        except BaseException as exc:  # noqa: BLE001 - hypothesis' end of a failing run
            ending = how_it_ended(exc)
            if ending is None:
                raise
            if ending == "interrupted":
                # a Ctrl-C or SIGTERM inside hypothesis' group of failures: stop the run
                for hit in hits.values():
                    hit.note = "interrupted while shrinking: may not be minimal"
                self._keep(hits)
                raise next(e for e in _leaves(exc) if isinstance(e, KeyboardInterrupt)) from exc
            if ending == "time":
                # hypothesis re-ran its distinct failures to report them together (one
                # exception group) and the time ran out during one: each failure found
                # is kept in hits and reported on its own
                why = "time"
            if ending == "flaky":
                for hit in hits.values():
                    hit.note = ("the adapter is not deterministic: the same stream gave "
                                "different outcomes")
        if why == "time":
            for hit in hits.values():
                if hit.outcome.kind != "timeout" and not hit.note:
                    hit.note = "shrinking stopped when the time was up: may not be minimal"
        return state["runs"], list(hits.values()), why

    def _keep(self, hits: dict[str, Hit]) -> None:
        for key, hit in hits.items():
            self.known.setdefault(key, hit)


def how_it_ended(exc: BaseException) -> str | None:
    """What a hypothesis run of a family that raised ``exc`` means: ``found`` (one
    violation, or hypothesis' group of several), ``flaky`` (its report that a
    violation did not recur), ``time`` (the group or report holds a :class:`TimeUp`
    besides violations: the time ran out while hypothesis re-ran a failure),
    ``interrupted`` (it holds a ``KeyboardInterrupt``), or ``None``: anything else, a
    bug that must propagate."""
    leaves = _leaves(exc)
    if any(isinstance(e, KeyboardInterrupt) for e in leaves):
        return "interrupted"
    if any(isinstance(e, TimeUp) for e in leaves):
        return "time" if all(isinstance(e, TimeUp) or _ours(e) for e in leaves) else None
    if not _ours(exc):
        return None
    return "flaky" if type(exc).__name__ in ("Flaky", "FlakyFailure", "FlakyReplay") else "found"


def _leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions of a (possibly nested) exception group, or ``[exc]``."""
    out: list[BaseException] = []
    todo = [exc]
    while todo:
        current = todo.pop()
        group = getattr(current, "exceptions", None)
        if isinstance(group, tuple) and group:
            todo.extend(e for e in group if isinstance(e, BaseException))
        else:
            out.append(current)
    return out


def _ours(exc: BaseException) -> bool:
    """A violation raised by the test function, hypothesis' group of several, or its
    flaky-failure report of them; anything else is a bug that must propagate."""
    if type(exc) in _CLASSES.values():
        return True
    group = getattr(exc, "exceptions", None)
    if isinstance(group, tuple):
        return all(_ours(e) for e in group)
    return type(exc).__name__ in ("Flaky", "FlakyFailure", "FlakyReplay")

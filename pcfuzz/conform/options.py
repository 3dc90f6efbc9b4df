"""The options that fit a conformance run to a real integration, checked up front:
the tool names its calls carry, how realistic its streams are, the mutations it runs
or skips, and the gate the integration applies after the adapter returns
(:mod:`pcfuzz.conform.gate`).

Every check raises :class:`~pcfuzz.errors.UsageError` (exit status 2) with a one-line
message; nothing here runs an adapter.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pcfuzz.errors import UsageError

__all__ = ["FamilyPlan", "check_realism", "check_tool_names", "plan_families"]

#: What ``--tool-names`` accepts (the same rule as the strategies' default names).
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_tool_names(names: Sequence[str] | str | None) -> tuple[str, ...] | str | None:
    """``names`` as a run takes them: ``None`` (identifiers drawn by the kit), the
    ``HOSTILE_NAMES`` marker (each strategies module's own names), or a tuple of
    distinct identifiers of at most ``MAX_TOOL_NAME_LENGTH`` characters."""
    from pcfuzz.strategies.conformance import HOSTILE_NAMES
    from pcfuzz.strategies.tool_names import MAX_TOOL_NAME_LENGTH

    if names is None or names == HOSTILE_NAMES:
        return names
    if isinstance(names, str) or not isinstance(names, (list, tuple)):
        raise UsageError(f"tool names must be a list of names, got {type(names).__name__}")
    if not names:
        raise UsageError("tool names: give at least one name")
    seen: set[str] = set()
    for name in names:
        if type(name) is not str or not _IDENTIFIER.fullmatch(name):
            raise UsageError(f"tool name {name!r} is not an identifier "
                             "([A-Za-z_][A-Za-z0-9_]*)")
        if len(name) > MAX_TOOL_NAME_LENGTH:
            raise UsageError(f"tool name {name[:20]!r}... is longer than "
                             f"{MAX_TOOL_NAME_LENGTH} characters")
        if name in seen:
            raise UsageError(f"tool name {name!r} is given twice")
        seen.add(name)
    return tuple(names)


def check_realism(realism: object) -> str:
    """``realism`` as a run takes it: one of the levels of
    :mod:`pcfuzz.strategies.realism` (``sdk``, ``wire``, ``hostile``)."""
    from pcfuzz.strategies.realism import LEVELS

    if type(realism) is not str or realism not in LEVELS:
        raise UsageError(f"realism {realism!r} is not a level; known: {', '.join(LEVELS)} "
                         "(sdk: what the providers send, the default; wire: anything the "
                         "SDK types accept; hostile: this project's adversarial shapes)")
    return realism


@dataclass(frozen=True)
class FamilyPlan:
    """What one family searches: its valid streams or not, and its mutations
    (``None``: all of them in this mode, as without filters)."""

    valid: bool = True
    mutations: tuple[str, ...] | None = None

    def selects(self, mutation: str) -> bool:
        """Whether a scenario of ``mutation`` (``none`` and ``calls_not_requested``
        are the valid streams') is in this plan."""
        if mutation in ("none", "calls_not_requested"):
            return self.valid
        return self.mutations is None or mutation in self.mutations


def _resolve(contract: str, given: str, table: dict[str, tuple[str, str]],
             strict: bool, option: str) -> str:
    """A ``--mutation``/``--exclude`` value (``family:mutation`` or ``mutation``) to
    the mutation's name."""
    # a mutation's own name may hold a colon (gemini's with_status:failures)
    family, name = ("", given) if given in table else given.partition(":")[::2]
    known = table.get(name)
    if known is None or (family and family != known[1]):
        valid = ", ".join(f"{fam}:{m}" for m, (_, fam) in sorted(
            table.items(), key=lambda kv: (kv[1][1], kv[0])))
        raise UsageError(f"{option} {given!r}: {contract} has no such mutation; known "
                         f"(family:mutation, or the mutation alone): {valid}")
    if known[0] == "strictness" and not strict:
        raise UsageError(f"{option} {given!r} is a strictness check: add --strict")
    return name


def plan_families(contract: str, *, strict: bool, families: list[str] | None,
                  mutations: Sequence[str] | None = None,
                  exclude: Sequence[str] | None = None) -> dict[str, FamilyPlan]:
    """The families a run searches, in run order, each with its :class:`FamilyPlan`.

    ``families``: as ``--family`` (``None``: every family of the mode); ``mutations``:
    only these (``--mutation``; the valid streams are then left out); ``exclude``:
    never these (``--exclude``). A family left with nothing to run is dropped; a
    selection that leaves nothing at all is a usage error, as is an unknown name."""
    from pcfuzz.strategies import conformance as kit

    table = kit.mutation_labels(contract)
    known = kit.families(contract, strict=True)
    chosen = list(families or kit.families(contract, strict=strict))
    for name in chosen:
        if name not in known:
            raise UsageError(f"{contract} has no family {name!r}; known: {', '.join(known)}")
        if not strict and name not in kit.families(contract, strict=False):
            raise UsageError(f"family {name!r} holds only strictness checks: add --strict")
    only = None if not mutations else {
        _resolve(contract, m, table, strict, "--mutation") for m in mutations}
    skip = {_resolve(contract, m, table, strict, "--exclude") for m in exclude or ()}
    if only is not None:
        outside = sorted(m for m in only if table[m][1] not in chosen)
        if outside:
            raise UsageError(f"--mutation {outside[0]} is in family {table[outside[0]][1]}, "
                             "which the chosen --family leaves out")
    if only is None and not skip:
        return {name: FamilyPlan() for name in chosen}
    plan: dict[str, FamilyPlan] = {}
    for name in chosen:
        held = kit.family_mutations(contract, name, strict=strict)
        kept = tuple(m for m in held if (only is None or m in only) and m not in skip)
        valid = only is None and name in kit.VALID_FAMILIES
        if kept or valid:
            plan[name] = FamilyPlan(valid=valid, mutations=kept)
    if not plan:
        raise UsageError("--mutation and --exclude leave no scenario to run")
    return plan

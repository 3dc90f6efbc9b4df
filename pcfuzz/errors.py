"""The tool's own error classes and exit statuses (not the contracts' errors).

Every ``pcfuzz`` subcommand ends with one of four exit statuses, decided in one
place (:func:`pcfuzz.cli.app.main`):

* :data:`EXIT_CLEAN` (0): the run did everything it planned and found nothing;
* :data:`EXIT_FINDING` (1): a finding (a violation, a crash, a rejected capture, a
  failing test);
* :data:`EXIT_USAGE` (2): a usage error (:class:`UsageError`: a bad argument, an
  unreadable or refused file, an adapter that cannot run, a missing extra);
* :data:`EXIT_INCOMPLETE` (3): the run did less than it planned (:class:`Incomplete`).

Anything else that escapes a subcommand is a bug of pcfuzz, never an outcome: it
ends with :data:`EXIT_BUG` (70, ``EX_SOFTWARE`` of ``sysexits.h``), one line on
standard error and the traceback in a file (see :mod:`pcfuzz.cli.app`).

Standard library only: fuzz targets, the engine and the CLI all import it.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "EXIT_BUG",
    "EXIT_CLEAN",
    "EXIT_FINDING",
    "EXIT_INCOMPLETE",
    "EXIT_USAGE",
    "EXIT_STATUSES",
    "HARNESS_MODULES",
    "Incomplete",
    "MissingExtra",
    "UsageError",
    "missing_extra",
]

EXIT_CLEAN: Final = 0
EXIT_FINDING: Final = 1
EXIT_USAGE: Final = 2
EXIT_INCOMPLETE: Final = 3
#: A bug of pcfuzz itself (an exception no subcommand anticipated).
EXIT_BUG: Final = 70
#: (status, meaning) for ``--help`` texts and the README.
EXIT_STATUSES: Final = (
    (EXIT_CLEAN, "clean: everything planned ran, nothing found"),
    (EXIT_FINDING, "a finding: violation, crash, rejected capture, failing test"),
    (EXIT_USAGE, "usage error: bad argument, unreadable or refused file, adapter "
                 "cannot run, missing extra"),
    (EXIT_INCOMPLETE, "incomplete: the run did less than it planned"),
    (EXIT_BUG, "a bug in pcfuzz itself (its traceback is written to a file)"),
)

#: The top-level modules of the ``harness`` extra (hypothesis, pytest, coverage,
#: atheris and what they need): a subcommand that imports one of them, in its own
#: process or in a fuzz target's, cannot run without the extra.
HARNESS_MODULES: Final = frozenset({
    "atheris", "coverage", "hypothesis", "hypothesis_jsonschema", "jsonschema", "pytest",
    "_pytest",
})


class UsageError(Exception):
    """The command cannot run as asked: exit status :data:`EXIT_USAGE`. The message
    says what was wrong and what was expected."""


class Incomplete(Exception):
    """The run did less than it planned: exit status :data:`EXIT_INCOMPLETE`."""


class MissingExtra(UsageError):
    """A module of an optional extra is not installed: the message names the install
    command."""

    def __init__(self, module: str, extra: str = "harness") -> None:
        super().__init__(f"needs the {extra} extra (module {module!r} is not installed): "
                         f"pip install 'pcfuzz[{extra}]'")
        self.module = module


def missing_extra(exc: BaseException) -> MissingExtra | None:
    """The :class:`MissingExtra` that ``exc`` (or an exception it was raised from)
    means, if it is a ``ModuleNotFoundError`` of a :data:`HARNESS_MODULES` module."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, MissingExtra):
            return cause
        if isinstance(cause, ModuleNotFoundError) and cause.name:
            top = cause.name.split(".")[0]
            if top in HARNESS_MODULES:
                return MissingExtra(top)
        cause = cause.__cause__ or cause.__context__
    return None

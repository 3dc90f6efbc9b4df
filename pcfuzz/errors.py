"""The tool's own error classes and exit statuses (not the contracts' errors).

Every ``pcfuzz`` subcommand ends with one of four exit statuses, decided in one
place (:func:`pcfuzz.cli.app.main`):

* :data:`EXIT_CLEAN` (0): the run did everything it planned and found nothing;
* :data:`EXIT_FINDING` (1): a finding (a violation, a crash, a rejected capture, a
  failing test);
* :data:`EXIT_USAGE` (2): a usage error (:class:`UsageError`: a bad argument, an
  unreadable or refused file, an adapter that cannot run);
* :data:`EXIT_INCOMPLETE` (3): the run did less than it planned (:class:`Incomplete`).

Standard library only: fuzz targets, the engine and the CLI all import it.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "EXIT_CLEAN",
    "EXIT_FINDING",
    "EXIT_INCOMPLETE",
    "EXIT_USAGE",
    "EXIT_STATUSES",
    "Incomplete",
    "UsageError",
]

EXIT_CLEAN: Final = 0
EXIT_FINDING: Final = 1
EXIT_USAGE: Final = 2
EXIT_INCOMPLETE: Final = 3
#: (status, meaning) for ``--help`` texts and the README.
EXIT_STATUSES: Final = (
    (EXIT_CLEAN, "clean: everything planned ran, nothing found"),
    (EXIT_FINDING, "a finding: violation, crash, rejected capture, failing test"),
    (EXIT_USAGE, "usage error: bad argument, unreadable or refused file, an adapter "
                 "that cannot run"),
    (EXIT_INCOMPLETE, "incomplete: the run did less than it planned"),
)


class UsageError(Exception):
    """The command cannot run as asked: exit status :data:`EXIT_USAGE`. The message
    says what was wrong and what was expected."""


class Incomplete(Exception):
    """The run did less than it planned: exit status :data:`EXIT_INCOMPLETE`."""

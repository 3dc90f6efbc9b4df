"""How realistic a generated stream is: three nested levels, ``hostile`` ⊇ ``wire`` ⊇ ``sdk``.

* ``hostile``: anything this project's own models generate (the shapes its property
  tests want: a Chat function name split over fragments, an id-only first tool-call
  fragment, arguments before the name, chunks without their envelope fields, opaque
  server-tool results drawn as arbitrary JSON, ...). The strategies modules' default.
* ``wire``: the same fragmentation freedom, but every event validates strictly
  against the official SDK's type for it (no field the type does not declare, no
  value it forbids, every required field present).
* ``sdk``: ``wire``, and only the fragmentations the providers produce (Chat: the
  first fragment of a call carries its index, id, type and whole name, later ones
  only argument pieces, indexes 0, 1, 2 ... in order; Responses: one item at a
  time, sequence numbers 0, 1, 2 ...; Anthropic: pings only after ``message_start``,
  server tool results of their tool's type; Gemini: one step at a time, step
  indexes 0, 1, 2 ...). The conformance kit's default.

Each strategies module takes ``realism=`` on its valid-stream and mutated-stream
generators; a mutation is drawn on top of a base stream of the chosen level, so only
the mutation itself is unrealistic. The levels are modelled here, from the SDK
types, never read from the parsers' tables.
"""

from __future__ import annotations

__all__ = ["DEFAULT", "LEVELS", "check_level", "is_wire"]

#: The levels, most realistic first.
LEVELS: tuple[str, ...] = ("sdk", "wire", "hostile")
#: The conformance kit's level when none is given.
DEFAULT = "sdk"


def check_level(level: str) -> str:
    """``level`` if it is one of :data:`LEVELS`; else ``ValueError``."""
    if level not in LEVELS:
        raise ValueError(f"realism must be one of {', '.join(LEVELS)}, got {level!r}")
    return level


def is_wire(level: str) -> bool:
    """Whether streams of ``level`` validate strictly against the SDK types
    (``wire`` and ``sdk``)."""
    return check_level(level) != "hostile"

"""Which runner of ``N`` does what: a deterministic split of the night's work.

Each fuzz target, property test and mutant belongs to one shard by a hash of its
name (a fuzzer name, a pytest node id, a mutant's file, line and operator), never by
its position: adding a target or a test moves nothing else to another shard. Shards
are numbered from 1, as on the command line (``--shard 2/3``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from pcfuzz.errors import UsageError

__all__ = ["Shard", "parse_shard", "shard_of"]


def shard_of(name: str, count: int) -> int:
    """The shard (1 to ``count``) that owns ``name``."""
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (1-based)."""

    index: int
    count: int

    def owns(self, name: str) -> bool:
        return shard_of(name, self.count) == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """``I/N`` with 1 <= I <= N; anything else is a :class:`UsageError`."""
    index, sep, count = text.partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        i = n = 0
    if not sep or n < 1 or not 1 <= i <= n or n > 1000:
        raise UsageError(f"--shard takes I/N with 1 <= I <= N <= 1000, got {text!r}")
    return Shard(i, n)

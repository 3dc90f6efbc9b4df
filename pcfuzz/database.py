"""The hypothesis example database every hypothesis run pcfuzz starts uses
(``--database URL``): hypothesis's own engines, not pcfuzz's.

* a path: a :class:`~hypothesis.database.DirectoryBasedExampleDatabase`;
* ``redis://host:port/db`` (or ``rediss://``): a
  :class:`~hypothesis.extra.redis.RedisExampleDatabase` shared by every runner that
  names the same server, multiplexed with a local directory database, so that what a
  run saved is kept on the runner's disk too; a server that goes away mid-run stops
  being used (the run carries on with the local database) and the run is told
  (:func:`lost`), so a night that lost its shared database is reported incomplete,
  never green. Needs the ``scale`` extra (``redis``);
* ``readonly``: wrapped in a :class:`~hypothesis.database.ReadOnlyDatabase` (pull
  request runs replay what the nights found without writing to it).

A run learns failing examples other runners saved: hypothesis replays every example
in the database for a test first (its ``reuse`` phase).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pcfuzz.errors import UsageError

__all__ = ["describe", "keyed", "lost", "open_database"]

#: The install command a missing redis client is answered with.
SCALE_EXTRA = "pip install 'pcfuzz[scale]'"


def _is_redis(url: str) -> bool:
    return url.startswith(("redis://", "rediss://", "unix://"))


def describe(url: str) -> str:
    """The URL as reports show it: no password."""
    if _is_redis(url) and "@" in url:
        scheme, _, rest = url.partition("://")
        return f"{scheme}://***@{rest.split('@', 1)[1]}"
    return url


def open_database(url: str, *, local: Path, readonly: bool = False,
                  lost_marker: Path | None = None) -> Any:
    """The database ``url`` names (see the module docstring). ``local``: the runner's
    own directory database (the database itself for a path URL). ``lost_marker``: a
    file written when a shared server stops answering. A bad URL or a missing client
    is a :class:`~pcfuzz.errors.UsageError`."""
    from hypothesis.database import (
        DirectoryBasedExampleDatabase,
        MultiplexedDatabase,
        ReadOnlyDatabase,
    )

    db: Any
    if _is_redis(url):
        try:
            import redis
            from hypothesis.extra.redis import RedisExampleDatabase
        except ImportError:
            raise UsageError(f"--database {describe(url)} needs the redis client: "
                             f"{SCALE_EXTRA}") from None
        try:
            client = redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=10)
        except ValueError as exc:
            raise UsageError(f"--database: not a redis URL: {describe(url)} ({exc})") from None
        shared = _guarded(RedisExampleDatabase(client), describe(url), lost_marker)
        db = MultiplexedDatabase(DirectoryBasedExampleDatabase(str(local)), shared)
    else:
        path = Path(url).expanduser()
        if path.exists() and not path.is_dir():
            raise UsageError(f"--database {url}: not a directory")
        db = DirectoryBasedExampleDatabase(str(path))
    return ReadOnlyDatabase(db) if readonly else db


def lost(marker: Path) -> str | None:
    """Why the shared database was lost during a run that wrote ``marker``, or None."""
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return str(data.get("reason")) if type(data) is dict else "lost (unreadable marker)"


_GUARDED: list[type] = []


def _guarded(inner: Any, name: str, marker: Path | None) -> Any:
    """``inner`` behind a guard (the class is made on first use: importing this module
    imports no hypothesis)."""
    if not _GUARDED:
        from hypothesis.database import ExampleDatabase

        class Guarded(ExampleDatabase):
            """A shared database that may go away: the first failure of the server is
            recorded in the marker file, and from then on the database is not used."""

            def __init__(self, inner: Any, name: str, marker: Path | None) -> None:
                super().__init__()
                self.inner, self.name, self.marker = inner, name, marker
                self.failed: str | None = None

            def __repr__(self) -> str:
                return f"Guarded({self.inner!r})"

            def _fail(self, exc: BaseException) -> None:
                if self.failed is None:
                    self.failed = (f"{self.name} stopped answering: {type(exc).__name__}: "
                                   f"{exc}")[:300]
                    if self.marker is not None:
                        self.marker.parent.mkdir(parents=True, exist_ok=True)
                        self.marker.write_text(json.dumps(
                            {"reason": self.failed, "at": time.time()}) + "\n",
                            encoding="utf-8")

            def save(self, key: bytes, value: bytes) -> None:
                if self.failed is None:
                    try:
                        self.inner.save(key, value)
                    except Exception as exc:  # noqa: BLE001 - any client error: server gone
                        self._fail(exc)

            def fetch(self, key: bytes) -> Iterable[bytes]:
                if self.failed is not None:
                    return []
                try:
                    return list(self.inner.fetch(key))
                except Exception as exc:  # noqa: BLE001
                    self._fail(exc)
                    return []

            def delete(self, key: bytes, value: bytes) -> None:
                if self.failed is None:
                    try:
                        self.inner.delete(key, value)
                    except Exception as exc:  # noqa: BLE001
                        self._fail(exc)

            def move(self, src: bytes, dest: bytes, value: bytes) -> None:
                if self.failed is None:
                    try:
                        self.inner.move(src, dest, value)
                    except Exception as exc:  # noqa: BLE001
                        self._fail(exc)

        _GUARDED.append(Guarded)
    return _GUARDED[0](inner, name, marker)


_KEYED: list[type] = []


def keyed(inner: Any, name: str, *, replay: bool = True) -> Any:
    """``inner`` seen by one test whose hypothesis key is not unique by itself: every
    key is prefixed with ``name``.

    Hypothesis keys a test's examples by a digest of its source
    (``hypothesis.internal.reflection.function_digest``); a test function made in a
    loop (the conformance kit's one per contract and family) has the same source every
    time. The ways to change that key are private (``_hypothesis_internal_add_digest``,
    the attribute hypothesis' own pytest plugin sets on parametrized tests), so the
    kit namespaces the database instead, through the public ``ExampleDatabase``
    interface only. ``replay=False``: fetch nothing (a later batch of a search whose
    first batch replayed the saved examples already), still save what it finds.
    Deletes are not passed on (moves are: shrinking downgrades a larger example): an
    example that passes here (its root cause already known to this run, say from a
    saved regression) must not be taken from the other runners sharing the database."""
    if not _KEYED:
        from hypothesis.database import ExampleDatabase

        class Keyed(ExampleDatabase):
            def __init__(self, inner: Any, name: str, replay: bool) -> None:
                super().__init__()
                self.inner, self.prefix, self.replay = inner, name.encode() + b":", replay

            def __repr__(self) -> str:
                return f"Keyed({self.inner!r}, {self.prefix!r})"

            def save(self, key: bytes, value: bytes) -> None:
                self.inner.save(self.prefix + key, value)

            def fetch(self, key: bytes) -> Iterable[bytes]:
                return list(self.inner.fetch(self.prefix + key)) if self.replay else []

            def delete(self, key: bytes, value: bytes) -> None:
                pass

            def move(self, src: bytes, dest: bytes, value: bytes) -> None:
                self.inner.move(self.prefix + src, self.prefix + dest, value)

        _KEYED.append(Keyed)
    return _KEYED[0](inner, name, replay)

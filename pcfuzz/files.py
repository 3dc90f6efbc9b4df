"""The one way the tool opens a file it is given or keeps: regular files only, bounded,
never blocking, every refusal a :class:`~pcfuzz.errors.UsageError` with a message.

Every subcommand that reads a file named on its command line (``check``, ``show``,
``promote``, ``triage``, ``replay`` and the rest) and every reader of a file the tool
keeps (regression sidecars, property-regression documents, conform regressions, the
nightly history) goes through here:

- the path is checked with ``stat`` first: a FIFO, a device, a socket (which could
  block ``open()`` or a read for ever), a directory, a symlink loop, a missing or
  unreadable file are refused with what was found, and nothing is opened;
- the file is then opened with ``O_NONBLOCK`` and checked again on the open
  descriptor (a path swapped for a FIFO between the two checks cannot block either);
- at most ``limit`` bytes are read: a larger file is refused, not read whole;
- JSON is parsed with a depth bound, ``NaN``/``Infinity`` refused, any decode
  failure a ``UsageError``.

:func:`shown` is how a path appears in a message: a name that is not valid UTF-8 is
printed with backslash escapes, never crashing a strict terminal.

Standard library and :mod:`pcfuzz.errors` only: every layer of the tool may use it.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

from pcfuzz.errors import UsageError

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "MAX_INPUT_BYTES",
    "MAX_JSON_DEPTH",
    "directory",
    "json_depth",
    "parse_json",
    "read_bytes",
    "read_json",
    "read_stdin",
    "read_text",
    "regular_file",
    "shown",
]

#: The largest input a subcommand reads (a capture, a corpus or crash input): a larger
#: file is refused, never read whole into memory.
MAX_INPUT_BYTES = 256 * 1024 * 1024
#: The largest JSON document the tool reads back (a property-regression document, a
#: sidecar, a conform regression): far above any it writes.
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
#: The deepest JSON document the tool reads back: strict JSON's own default bound
#: (512) on a value, plus the levels of the document around it.
MAX_JSON_DEPTH = 600
_READ_CHUNK = 1024 * 1024

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
_WHY = {
    errno.ENOENT: "no such file or directory",
    errno.ELOOP: "a symlink loop (too many levels of symbolic links)",
    errno.ENOTDIR: "a component of the path is not a directory",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENAMETOOLONG: "the name is too long",
}


def shown(path: str | os.PathLike[str]) -> str:
    """``path`` for a message: bytes that are not UTF-8 (kept by Python as lone
    surrogates) and control characters as backslash escapes."""
    text = os.fsencode(path).decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def _stat(path: str | os.PathLike[str], what: str) -> os.stat_result:
    try:
        return os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise UsageError(f"no such {what}: {shown(path)} (nothing there; resolved to "
                             f"{shown(os.path.realpath(path))})") from exc
        why = _WHY.get(exc.errno or 0, exc.strerror or type(exc).__name__)
        raise UsageError(f"cannot read {what} {shown(path)}: {why}") from exc
    except ValueError as exc:  # an embedded NUL byte
        raise UsageError(f"cannot read {what} {shown(path)}: {exc}") from exc


def _absolute(path: str | os.PathLike[str]) -> Path:
    # after a successful stat the path resolves: no loop is left to raise RuntimeError
    return Path(os.path.realpath(path))


def regular_file(path: str | os.PathLike[str], what: str = "file") -> Path:
    """``path``, absolute with symlinks resolved, once it is known to name a regular
    file; :class:`UsageError` saying what it is otherwise. Nothing is opened."""
    mode = _stat(path, what).st_mode
    if not stat.S_ISREG(mode):
        raise UsageError(f"{what} {shown(path)} is {_kind(mode)}, not a regular file "
                         "(pcfuzz reads only regular files)")
    return _absolute(path)


def directory(path: str | os.PathLike[str], what: str = "directory") -> Path:
    """``path``, absolute with symlinks resolved, once it is known to name a
    directory; :class:`UsageError` saying what it is otherwise."""
    mode = _stat(path, what).st_mode
    if not stat.S_ISDIR(mode):
        kind = "a file" if stat.S_ISREG(mode) else _kind(mode)
        raise UsageError(f"{what} {shown(path)} is {kind}, not a directory")
    return _absolute(path)


def read_bytes(path: str | os.PathLike[str], *, limit: int, what: str = "file") -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them."""
    regular_file(path, what)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        why = _WHY.get(exc.errno or 0, exc.strerror or type(exc).__name__)
        raise UsageError(f"cannot read {what} {shown(path)}: {why}") from exc
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UsageError(f"{what} {shown(path)} is {_kind(mode)}, not a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(_READ_CHUNK, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise UsageError(f"cannot read {what} {shown(path)}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    if size > limit:
        raise UsageError(f"{what} {shown(path)} is larger than {limit:,} bytes")
    return b"".join(chunks)


def read_stdin(*, limit: int) -> bytes:
    """Standard input, at most ``limit`` bytes; a terminal is refused (nothing would
    end the read)."""
    stream = sys.stdin
    if stream is None:
        raise UsageError("there is no standard input to read")
    try:
        if stream.isatty():
            raise UsageError("standard input is a terminal: pipe or redirect the input in")
        data = stream.buffer.read(limit + 1)
    except (OSError, ValueError, AttributeError) as exc:
        raise UsageError(f"cannot read standard input: {exc}") from exc
    if len(data) > limit:
        raise UsageError(f"standard input is larger than {limit:,} bytes")
    return data


def read_text(path: str | os.PathLike[str], *, limit: int, what: str = "file") -> str:
    """The UTF-8 text of the regular file ``path``."""
    data = read_bytes(path, limit=limit, what=what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{what} {shown(path)} is not UTF-8 text: {exc}") from exc


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def json_depth(value: Any, limit: int) -> int:
    """The nesting depth of a parsed JSON value (a scalar is 0), walked without
    recursion; stops counting past ``limit``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            depth += 1
            deepest = max(deepest, depth)
            if depth > limit:
                return deepest
            stack.extend((v, depth) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def parse_json(text: str, *, source: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """A JSON document; :class:`UsageError` naming ``source`` when it is not one, uses
    ``NaN``/``Infinity``, or nests deeper than ``max_depth``."""
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except RecursionError as exc:
        raise UsageError(f"{source} nests deeper than {max_depth} levels") from exc
    except ValueError as exc:
        raise UsageError(f"{source} is not a JSON document: {exc}") from exc
    if json_depth(value, max_depth) > max_depth:
        raise UsageError(f"{source} nests deeper than {max_depth} levels")
    return value


def read_json(path: str | os.PathLike[str], *, limit: int = MAX_DOCUMENT_BYTES,
              what: str = "file", max_depth: int = MAX_JSON_DEPTH) -> Any:
    """The JSON document in the regular file ``path`` (see :func:`parse_json`)."""
    text = read_text(path, limit=limit, what=what)
    return parse_json(text, source=f"{what} {shown(path)}", max_depth=max_depth)

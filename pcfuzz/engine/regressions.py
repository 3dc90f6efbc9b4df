"""The regression store: crash inputs promoted out of fuzzing, replayed by pytest forever.

Layout (``tests/regressions/README.md`` says the same for people)::

    tests/regressions/fuzz_<name>/<fingerprint>.<ext>        the (minimized) input
    tests/regressions/fuzz_<name>/<fingerprint>.meta.json    its sidecar

``<ext>`` is ``json`` when the input parses as JSON, ``txt`` when it is UTF-8 text,
else ``bin``. The sidecar (format ``pcfuzz-regression/1``) records target,
fingerprint, input file, sha256, date, exception, top frames, tool versions and
``expect``: ``"pass"`` (default: pytest fails while the input still crashes, so a
promoted crash is red until fixed) or ``"crash"`` (a known open bug: pytest marks it
``xfail(strict=True)``, and the fix turns the XPASS red until the sidecar is flipped
with ``pcfuzz replay --update``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import platform
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from pcfuzz import files
from pcfuzz.errors import UsageError

__all__ = [
    "FORMAT",
    "RegressionEntry",
    "entries",
    "input_files",
    "tool_versions",
    "write_entry",
]

FORMAT = "pcfuzz-regression/1"
SIDECAR_SUFFIX = ".meta.json"
#: The largest sidecar read back (one is a few hundred bytes).
SIDECAR_MAX_BYTES = 1024 * 1024


def _is_input(path: Path) -> bool:
    name = path.name
    return (
        path.is_file()
        and not name.startswith(".")
        and not name.endswith(SIDECAR_SUFFIX)
        and name.lower() not in {"readme.md", "readme"}
    )


def input_files(directory: Path) -> list[Path]:
    """Every input file in a corpus or regression directory (no sidecars, no READMEs)."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if _is_input(p))


@dataclass(frozen=True)
class RegressionEntry:
    """One regression input and its sidecar (``meta`` is empty if there is none, or
    if it cannot be read: then ``problem`` says why, and the entry is replayed as a
    hand-written input is, ``expect: pass``)."""

    path: Path
    meta: dict[str, Any]
    problem: str | None = None

    @property
    def sidecar(self) -> Path:
        return sidecar_path(self.path)

    @property
    def expect(self) -> str:
        """``"crash"`` for a known open bug, else ``"pass"``."""
        return "crash" if self.meta.get("expect") == "crash" else "pass"

    @property
    def fingerprint(self) -> str:
        value = self.meta.get("fingerprint")
        return value if isinstance(value, str) else self.path.stem


def sidecar_path(input_path: Path) -> Path:
    return input_path.with_name(input_path.stem + SIDECAR_SUFFIX)


def entries(directory: Path) -> list[RegressionEntry]:
    """The regression entries of one target directory. A sidecar that cannot be read
    (not JSON, not an object, too deep, not a regular file) never stops the others:
    its entry carries the ``problem`` and expects what an input without a sidecar
    expects, ``pass`` (a crash fails the run: failing closed)."""
    out = []
    for path in input_files(directory):
        sidecar = sidecar_path(path)
        meta: dict[str, Any] = {}
        problem = None
        if os.path.lexists(sidecar):
            try:
                loaded = files.read_json(sidecar, limit=SIDECAR_MAX_BYTES, what="sidecar")
            except UsageError as exc:
                problem = str(exc)
            else:
                if isinstance(loaded, dict):
                    meta = loaded
                else:
                    problem = f"sidecar {files.shown(sidecar)} is not a JSON object"
        out.append(RegressionEntry(path, meta, problem))
    return out


def known_fingerprints(directory: Path) -> set[str]:
    return {e.fingerprint for e in entries(directory)}


def extension_for(data: bytes) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "bin"
    try:
        json.loads(text)
    except ValueError:
        return "txt"
    return "json"


def tool_versions() -> dict[str, str]:
    """Versions that decide whether a stored input still means the same thing."""
    out = {"python": platform.python_version()}
    for dist in ("pcfuzz", "atheris", "hypothesis"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def write_entry(
    directory: Path,
    *,
    target: str,
    fingerprint: str,
    data: bytes,
    exception: str,
    message: str,
    frames: list[str],
    source: str,
    expect: str = "pass",
) -> RegressionEntry:
    """Write ``<fingerprint>.<ext>`` and its sidecar; an existing entry with the same
    fingerprint is replaced only if the new input is smaller."""
    directory.mkdir(parents=True, exist_ok=True)
    for old in entries(directory):
        if old.fingerprint == fingerprint:
            if old.path.stat().st_size <= len(data):
                return old
            old.path.unlink()
            old.sidecar.unlink(missing_ok=True)
    path = directory / f"{fingerprint}.{extension_for(data)}"
    path.write_bytes(data)
    meta = {
        "format": FORMAT,
        "target": target,
        "fingerprint": fingerprint,
        "input": path.name,
        "sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "exception": exception,
        "message": message,
        "frames": frames,
        "source": source,
        "expect": expect,
        "tools": tool_versions(),
    }
    sidecar_path(path).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return RegressionEntry(path, meta)


def mark_fixed(entry: RegressionEntry) -> None:
    """Flip a known-crash entry to ``expect: pass`` and record when it was fixed."""
    meta = dict(entry.meta)
    meta["expect"] = "pass"
    meta["fixed"] = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    entry.sidecar.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")

"""Fuzz target discovery, name resolution and the on-disk layout pcfuzz uses.

A target is a file ``<fuzz dir>/fuzz_<name>.py`` (OSS-Fuzz convention). Beside it:
``fuzz_<name>.dict`` (libFuzzer dictionary), ``fuzz_<name>.options`` (a ``[libfuzzer]``
section) and the seed corpus ``corpus/fuzz_<name>/`` (committed). Campaigns write only
to the working directory ``<work dir>/fuzz_<name>/``.

Defaults (each overridable by an option or a ``PCFUZZ_*`` variable, see
:meth:`Layout.from_options`): the targets shipped in ``pcfuzz.fuzz``; from a source
checkout (or with ``--fuzz-dir``) the working directory ``<fuzz dir>/.work`` and the
regression store ``<fuzz dir>/../tests/regressions``; from an installed wheel both go
to the current directory, ``./.pcfuzz/work`` and ``./pcfuzz-regressions``, never into
the installed package.
"""

from __future__ import annotations

import configparser
import hashlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from pcfuzz._data import checkout_root
from pcfuzz._data import fuzz_dir as shipped_fuzz_dir
from pcfuzz.errors import UsageError
from pcfuzz.files import MAX_INPUT_BYTES, read_bytes, shown
from pcfuzz.fuzz.harness import INSTRUMENT_CACHE_VARIABLE

__all__ = [
    "INSTALLED_REGRESSIONS_DIR",
    "INSTRUMENT_CACHE_VARIABLE",
    "INSTALLED_WORK_DIR",
    "Layout",
    "LayoutError",
    "Target",
    "TargetNotFound",
    "corpus_stats",
    "discover",
    "resolve",
    "subprocess_env",
]

#: Defaults applied when neither the command line nor the ``.options`` file sets them.
DEFAULT_TIMEOUT_S = 10
DEFAULT_RSS_LIMIT_MB = 2048

#: Defaults of an installed pcfuzz, relative to the current directory.
INSTALLED_WORK_DIR = Path(".pcfuzz") / "work"
INSTALLED_REGRESSIONS_DIR = Path("pcfuzz-regressions")


class TargetNotFound(UsageError):
    """No fuzz target matches the requested name."""


class LayoutError(UsageError):
    """A directory of the layout is missing or would be inside the installed package."""


@dataclass(frozen=True)
class Layout:
    """Where targets, working state and the regression store live.

    ``fuzz_dir`` holds the targets; ``regressions_dir`` the promoted crash inputs;
    ``work_dir`` the working corpora, artifacts, logs and last-run figures.
    """

    fuzz_dir: Path
    regressions_dir: Path
    work_dir: Path
    #: ``fuzz_dir`` is the read-only copy inside an installed pcfuzz (not a checkout).
    installed: bool = False

    @property
    def project_root(self) -> Path:
        """The directory whose relative paths name frames in crash fingerprints."""
        return self.fuzz_dir.parent

    @classmethod
    def from_options(
        cls,
        fuzz_dir: str | None = None,
        regressions_dir: str | None = None,
        work_dir: str | None = None,
    ) -> Layout:
        """Resolve the layout: explicit option, then ``PCFUZZ_*`` variable, then default.

        The default fuzz directory is the one shipped in ``pcfuzz.fuzz``. State lives
        beside the targets when they are in a source tree (a checkout, or a tree given
        with ``--fuzz-dir``): ``<fuzz dir>/.work`` and ``<fuzz dir>/../tests/regressions``.
        When they are the copy inside an installed pcfuzz, it goes to the current
        directory (:data:`INSTALLED_WORK_DIR`, :data:`INSTALLED_REGRESSIONS_DIR`); a
        directory inside the installed package is a :class:`LayoutError`.
        """
        shipped = shipped_fuzz_dir()
        fdir = _resolved(fuzz_dir or os.environ.get("PCFUZZ_FUZZ_DIR") or shipped, "fuzz")
        installed = fdir == shipped and checkout_root() is None
        if installed:
            default_work = Path.cwd() / INSTALLED_WORK_DIR
            default_regressions = Path.cwd() / INSTALLED_REGRESSIONS_DIR
        else:
            default_work = fdir / ".work"
            default_regressions = fdir.parent / "tests" / "regressions"
        rdir = _resolved(
            regressions_dir or os.environ.get("PCFUZZ_REGRESSIONS_DIR") or default_regressions,
            "regressions")
        wdir = _resolved(work_dir or os.environ.get("PCFUZZ_WORK_DIR") or default_work, "work")
        if installed:
            package = shipped.parent
            for what, path in (("work", wdir), ("regression", rdir)):
                if path.is_relative_to(package):
                    raise LayoutError(
                        f"the {what} directory {path} is inside the installed package "
                        f"{package}; run pcfuzz from another directory or pass "
                        f"--{'work-dir' if what == 'work' else 'regressions-dir'}"
                    )
        return cls(fuzz_dir=fdir, regressions_dir=rdir, work_dir=wdir, installed=installed)


def _resolved(path: str | Path, what: str) -> Path:
    """``path`` absolute; a symlink loop or an unusable name is a :class:`LayoutError`
    naming the option (``--<what>-dir``)."""
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError, ValueError) as exc:
        raise LayoutError(f"cannot use {shown(path)} as the {what} directory "
                          f"(--{what}-dir): {exc}") from exc


@dataclass(frozen=True)
class Target:
    """One fuzz target and the paths that belong to it."""

    fuzzer: str  # OSS-Fuzz name, file stem: ``fuzz_strict_json``
    path: Path
    layout: Layout

    @property
    def name(self) -> str:
        """Short command-line name: ``fuzz_strict_json`` -> ``strict-json``."""
        return self.fuzzer.removeprefix("fuzz_").replace("_", "-")

    @property
    def dict_path(self) -> Path | None:
        path = self.path.with_suffix(".dict")
        return path if path.is_file() else None

    @property
    def options_path(self) -> Path:
        return self.path.with_suffix(".options")

    @property
    def seed_corpus(self) -> Path:
        return self.layout.fuzz_dir / "corpus" / self.fuzzer

    @property
    def work(self) -> Path:
        return self.layout.work_dir / self.fuzzer

    @property
    def work_corpus(self) -> Path:
        return self.work / "corpus"

    @property
    def artifacts(self) -> Path:
        return self.work / "artifacts"

    @property
    def last_run_path(self) -> Path:
        return self.work / "last_run.json"

    @property
    def regressions(self) -> Path:
        return self.layout.regressions_dir / self.fuzzer

    def libfuzzer_options(self) -> dict[str, str]:
        """The ``[libfuzzer]`` section of the ``.options`` file (``dict`` made absolute)."""
        if not self.options_path.is_file():
            return {}
        parser = configparser.ConfigParser()
        parser.read(self.options_path, encoding="utf-8")
        if not parser.has_section("libfuzzer"):
            return {}
        out = {key: value.strip() for key, value in parser.items("libfuzzer")}
        if "dict" in out:
            out["dict"] = str((self.path.parent / out["dict"]).resolve())
        return out

    def flags(
        self, *, timeout: int | None = None, rss_limit_mb: int | None = None
    ) -> list[str]:
        """libFuzzer flags from the options file, with defaults and explicit overrides.

        Precedence: explicit argument, then the ``.options`` file, then the defaults
        (per-input timeout 10 s, RSS limit 2048 MB). The dictionary comes from the
        options file or, failing that, from ``fuzz_<name>.dict`` beside the target.
        """
        opts = self.libfuzzer_options()
        if "dict" not in opts and self.dict_path is not None:
            opts["dict"] = str(self.dict_path)
        opts.setdefault("timeout", str(DEFAULT_TIMEOUT_S))
        opts.setdefault("rss_limit_mb", str(DEFAULT_RSS_LIMIT_MB))
        if timeout is not None:
            opts["timeout"] = str(timeout)
        if rss_limit_mb is not None:
            opts["rss_limit_mb"] = str(rss_limit_mb)
        return [f"-{key}={value}" for key, value in sorted(opts.items())]

    def per_input_timeout(self) -> int:
        """The per-input timeout in seconds that :meth:`flags` passes by default."""
        raw = self.libfuzzer_options().get("timeout", str(DEFAULT_TIMEOUT_S))
        try:
            return max(1, int(raw))
        except ValueError:
            return DEFAULT_TIMEOUT_S

    def corpus_dirs(self) -> list[Path]:
        """Working corpus first (libFuzzer writes new inputs there), then the seeds."""
        dirs = [self.work_corpus]
        if self.seed_corpus.is_dir():
            dirs.append(self.seed_corpus)
        return dirs


def discover(layout: Layout) -> list[Target]:
    """Every ``fuzz_*.py`` in the fuzz directory, sorted by name."""
    if not layout.fuzz_dir.is_dir():
        raise LayoutError(
            f"fuzz directory {layout.fuzz_dir} does not exist (--fuzz-dir, PCFUZZ_FUZZ_DIR)"
        )
    return [
        Target(fuzzer=path.stem, path=path.resolve(), layout=layout)
        for path in sorted(layout.fuzz_dir.glob("fuzz_*.py"))
        if path.is_file()
    ]


def _key(name: str) -> str:
    stem = Path(name).name.removesuffix(".py")
    return stem.removeprefix("fuzz_").replace("-", "_").lower()


def resolve(layout: Layout, name: str) -> Target:
    """Find a target by short name (``strict-json`` or ``strict_json``), fuzzer name
    (``fuzz_strict_json``) or file path. Contract names (``openai-responses``) resolve
    to their provider targets. Raises :class:`TargetNotFound` listing what exists.
    """
    targets = discover(layout)
    wanted = _key(name)
    for target in targets:
        if _key(target.fuzzer) == wanted:
            return target
    known = ", ".join(t.name for t in targets) or "none"
    raise TargetNotFound(f"no fuzz target named {name!r}; known targets: {known}")


def corpus_stats(*dirs: Path) -> tuple[int, int]:
    """(files, bytes) over the given directories, counting identical contents once."""
    seen: set[str] = set()
    total = 0
    for directory in dirs:
        if not directory.is_dir():
            continue
        for path in directory.iterdir():
            if not path.is_file() or path.name.startswith("."):
                continue
            try:
                data = read_bytes(path, limit=MAX_INPUT_BYTES, what="corpus input")
            except UsageError:
                continue  # not a regular file after all, or too large: not an input
            digest = hashlib.sha1(data, usedforsecurity=False).hexdigest()
            if digest not in seen:
                seen.add(digest)
                total += len(data)
    return len(seen), total


def subprocess_env(layout: Layout, extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for target processes.

    libFuzzer's fork, merge and crash-minimize modes re-run the target through its
    shebang (``/usr/bin/env python3``), so this interpreter's directory goes first on
    ``PATH``; the project root goes on ``PYTHONPATH`` so a target run as a script
    imports the code under test (not for the installed targets: ``pcfuzz`` is
    importable, and its folders must not become top-level names); a fixed hash seed
    keeps coverage counts comparable between runs (corpus minimization compares them);
    the targets' instrumented modules are cached in ``instrumented/`` of the work
    directory (``fuzz/harness/instrument.py``) unless the caller's environment names
    another place.
    """
    env = dict(os.environ)
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join([bindir, env.get("PATH", "")])
    if not layout.installed:
        root = str(layout.project_root)
        env["PYTHONPATH"] = os.pathsep.join(p for p in [root, env.get("PYTHONPATH", "")] if p)
    env.setdefault("PYTHONHASHSEED", "0")
    env["PYTHONUNBUFFERED"] = "1"
    # Patched (instrumented) modules kept between starts, beside the corpora.
    env.setdefault(INSTRUMENT_CACHE_VARIABLE, str(layout.work_dir / "instrumented"))
    if extra:
        env.update(extra)
    return env

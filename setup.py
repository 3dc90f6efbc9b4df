"""Build hook (all metadata is in pyproject.toml): the fuzz targets stay executable.

setuptools copies modules without their mode bits, but libFuzzer's fork, merge and
minimize modes re-run a target by its own command line (``fuzz_<name>.py`` with its
``#!/usr/bin/env python3`` line), so an installed target must keep ``chmod +x``. pip
restores the executable bit of a file whose mode in the wheel has one.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyKeepTargetsExecutable(build_py):
    """``build_py`` that gives ``pcfuzz/fuzz/fuzz_*.py`` the mode bits of the source."""

    def run(self) -> None:
        super().run()
        source = Path(self.get_package_dir("pcfuzz.fuzz"))
        built = Path(self.build_lib, "pcfuzz", "fuzz")
        for target in sorted(source.glob("fuzz_*.py")):
            mode = target.stat().st_mode
            if mode & stat.S_IXUSR and (built / target.name).is_file():
                os.chmod(built / target.name, (built / target.name).stat().st_mode
                         | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


setup(cmdclass={"build_py": BuildPyKeepTargetsExecutable})

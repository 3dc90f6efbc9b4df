"""The ClusterFuzzLite build, run the way its image runs it, without a container.

``.clusterfuzzlite/build.sh`` runs in ClusterFuzzLite's ``base-builder-python`` image,
where ``$SRC``, ``$OUT`` and ``compile_python_fuzzer`` come from the image. Here it
runs with both directories in a temporary folder, a stand-in ``compile_python_fuzzer``
that records its calls, and a stand-in ``pip3`` that records the install it was asked
for (no container engine runs in the tests). What this proves and what only a container
run would is written in docs/fuzzing.md, "Scaling out".
"""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / ".clusterfuzzlite" / "build.sh"

RECORDER = """#!/usr/bin/env bash
# stand-in for the image's {name}: records its arguments, one call a line
printf '%s\\n' "$*" >> "{log}"
"""


def _run_build(tmp_path: Path) -> tuple[Path, list[str], list[str]]:
    src, out, bin_dir = tmp_path / "src", tmp_path / "out", tmp_path / "bin"
    for folder in (src, out, bin_dir):
        folder.mkdir()
    (src / "pcfuzz").symlink_to(ROOT, target_is_directory=True)
    logs = {}
    for name in ("compile_python_fuzzer", "pip3"):
        logs[name] = tmp_path / f"{name}.log"
        tool = bin_dir / name
        tool.write_text(RECORDER.format(name=name, log=logs[name]), encoding="utf-8")
        tool.chmod(0o755)
    shutil.copy2(BUILD, src / "build.sh")
    env = dict(os.environ, SRC=str(src), OUT=str(out),
               PATH=os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]))
    proc = subprocess.run(["bash", str(src / "build.sh")], cwd=src, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    calls = {name: log.read_text(encoding="utf-8").splitlines() if log.is_file() else []
             for name, log in logs.items()}
    return out, calls["compile_python_fuzzer"], calls["pip3"]


@pytest.mark.skipif(shutil.which("zip") is None, reason="build.sh packs seed corpora with zip "
                    "(the image installs it; install the Debian package zip)")
def test_build_sh_builds_every_target_with_its_seeds_dictionary_and_options(
        tmp_path: Path) -> None:
    out, compiled, installed = _run_build(tmp_path)
    targets = sorted(p.name for p in (ROOT / "fuzz").glob("fuzz_*.py"))
    assert len(targets) >= 12
    # every target, each once, by its path in the fuzz project
    assert sorted(line.split()[0] for line in compiled) == [f"fuzz/{t}" for t in targets]
    # the harness extra is what the targets import (hypothesis, atheris)
    assert installed == ['install .[harness]']
    for target in targets:
        name = target.removesuffix(".py")
        seeds = sorted(p.name for p in (ROOT / "fuzz" / "corpus" / name).iterdir()
                       if p.is_file())
        assert seeds, f"{name} has no seed corpus"
        with zipfile.ZipFile(out / f"{name}_seed_corpus.zip") as archive:
            assert sorted(archive.namelist()) == seeds, name
            for seed in seeds:
                assert archive.read(seed) == (ROOT / "fuzz" / "corpus" / name / seed).read_bytes()
        assert (out / f"{name}.dict").read_bytes() == (ROOT / "fuzz" / f"{name}.dict").read_bytes()
        options = (out / f"{name}.options").read_text(encoding="utf-8")
        assert options == (ROOT / "fuzz" / f"{name}.options").read_text(encoding="utf-8")
        # the options name their dictionary relative to $OUT, where it now is
        parser = configparser.ConfigParser()
        parser.read_string(options)
        if parser.has_option("libfuzzer", "dict"):
            assert (out / parser.get("libfuzzer", "dict")).is_file(), name


def test_build_sh_fails_loudly_when_the_image_tools_fail(tmp_path: Path) -> None:
    # bash -eu: a failing compile_python_fuzzer fails the build (ClusterFuzzLite then
    # reports a build failure instead of fuzzing a partial set of targets)
    src, out, bin_dir = tmp_path / "src", tmp_path / "out", tmp_path / "bin"
    for folder in (src, out, bin_dir):
        folder.mkdir()
    (src / "pcfuzz").symlink_to(ROOT, target_is_directory=True)
    for name, body in (("pip3", "exit 0"), ("compile_python_fuzzer", "exit 7")):
        tool = bin_dir / name
        tool.write_text(f"#!/usr/bin/env bash\n{body}\n", encoding="utf-8")
        tool.chmod(0o755)
    env = dict(os.environ, SRC=str(src), OUT=str(out),
               PATH=os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]))
    proc = subprocess.run(["bash", str(BUILD)], cwd=src, env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 7


def test_every_workflow_runs_the_four_modes_on_the_same_build() -> None:
    workflows = ROOT / ".github" / "workflows"
    text = {p.name: p.read_text(encoding="utf-8") for p in workflows.glob("cflite_*.yml")}
    modes = {mode for body in text.values() for mode in ("code-change", "batch", "prune",
                                                          "coverage")
             if f"mode: {mode}" in body}
    assert modes == {"code-change", "batch", "prune", "coverage"}
    for name, body in text.items():
        assert "google/clusterfuzzlite/actions/build_fuzzers@v1" in body, name
        assert "language: python" in body, name
    # a pull request that changes what the targets run is fuzzed
    pr = text["cflite_pr.yml"]
    for path in ("contracts/**", "strategies/**", "fuzz/**", ".clusterfuzzlite/**"):
        assert f'"{path}"' in pr, path

"""The kit flags a typical gateway's Chat accumulator for each rule it leaves out
(issue 22, item 1).

Before: a gateway accumulator passed ``pcfuzz conform`` yet executed calls with no
``call_id`` (``None``), with an empty name, two calls sharing one id, arguments with
``NaN``, arguments with a duplicate key (``{"x": 1, "x": 2}`` run as ``{"x": 2}``), and
honoured choice index 1: the kit's safety scenarios were a subset of the rules the
contract enforces. ``tests/_naive_chat.py`` holds the accumulator (every check) and six
variants, each without one check. The kit runs through its public surface, the
``pcfuzz conform`` command in a fresh process (seeded: the same streams on every run),
and must name the mutation; each variant is run on the mutations of the rule it leaves
out (``--mutation``), which is how a team checks one rule after fixing it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


def conform(adapter: str, tmp_path: Path, *families: str, examples: int = 100,
            mutations: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pcfuzz", "conform", "--contract", "openai-chat",
               "--adapter", f"_naive_chat:{adapter}", "--max-examples", str(examples),
               "--seed", "0",
               "--regressions", "none"]
    for family in families:
        command += ["--family", family]
    for mutation in mutations:
        command += ["--mutation", mutation]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(TESTS), *filter(None, [os.environ.get("PYTHONPATH")])]))
    env.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
    return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=env,
                          timeout=900)


def test_the_gateway_with_every_check_passes_the_default_checks(tmp_path: Path) -> None:
    run = conform("correct", tmp_path, examples=40)  # finds nothing: fewer examples suffice
    assert run.returncode == 0, run.stdout + run.stderr
    assert "no violations" in run.stdout
    for family in ("identity", "id_confusion", "arguments", "choice", "terminal"):
        assert f"  {family} " in run.stdout, run.stdout


@pytest.mark.parametrize(("adapter", "family", "mutations"), [
    ("missing_id", "identity", {"missing_call_id"}),
    ("empty_name", "identity", {"missing_name", "empty_name"}),
    ("shared_id", "id_confusion", {"shared_call_id"}),
    ("nan", "arguments", {"non_finite_arguments"}),
    ("duplicate_key", "arguments", {"duplicate_key_arguments"}),
    ("choice_index", "choice", {"choice_index"}),
])
def test_the_kit_flags_the_gateway_without_one_check(adapter: str, family: str,
                                                     mutations: set[str],
                                                     tmp_path: Path) -> None:
    # only the mutations of the rule left out (--mutation), 25 seeded examples each:
    # the search space of one rule, not of the whole family
    run = conform(adapter, tmp_path, family, examples=25,
                  mutations=tuple(f"{family}:{m}" for m in sorted(mutations)))
    assert run.returncode == 1, run.stdout + run.stderr
    # each finding: "VIOLATION n: <rule>" then "  found by:  [family] mutation (label)";
    # one root cause may be reached by several mutations ("also found by: ...")
    found = [line.split() for line in run.stdout.splitlines()
             if line.startswith("  found by:  [")]
    assert found, run.stdout
    assert all(words[2] == f"[{family}]" for words in found), found
    named = {words[3] for words in found} | {
        where.split()[1] for line in run.stdout.splitlines()
        if line.startswith("  also found by: ")
        for where in line[len("  also found by: "):].split(", ")}
    assert named & mutations, run.stdout
    assert any(words[4].startswith("(safety") for words in found), found

"""``pcfuzz show``: one input of every fuzz target decoded into what the target ran,
and the command's messages for paths that do not exist."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pcfuzz.cli import main
from pcfuzz.engine.regressions import input_files
from pcfuzz.engine.show import render, show_input

pytest.importorskip("atheris")

FUZZ = Path(__file__).resolve().parent.parent / "fuzz"
TARGETS = sorted(p.stem for p in FUZZ.glob("fuzz_*.py"))


def _seed(target: str) -> Path:
    return input_files(FUZZ / "corpus" / target)[0]


@pytest.mark.parametrize("target", TARGETS)
def test_show_renders_one_input_of_every_target(target: str) -> None:
    seed = _seed(target)
    calls, outcome = show_input(FUZZ / f"{target}.py", seed.read_bytes())
    assert outcome == "pass"
    assert calls, f"{target}: no call into the contracts recorded"
    text = render(calls, outcome)
    assert text.endswith("# target outcome: pass\n")
    if target.startswith("fuzz_wire_") or target == "fuzz_fixture":
        # the whole input is the stream / the document: shown as its text
        first = seed.read_bytes().decode("utf-8", "backslashreplace").splitlines()[0]
        assert first.strip() in text


def test_show_decodes_a_structure_aware_input_into_an_event_list() -> None:
    seed = next(p for p in input_files(FUZZ / "corpus" / "fuzz_openai_responses")
                if p.read_bytes()[:1] and p.read_bytes()[0] % 3 == 1)
    calls, _ = show_input(FUZZ / "fuzz_openai_responses.py", seed.read_bytes())
    (parse,) = [c for c in calls if c.name == "parse_events"]
    events = parse.args[0]
    assert events and all(isinstance(e, dict) and "type" in e for e in events)
    lines = render(calls, "pass").splitlines()
    start = lines.index("# parse_events: 1 call") + 1
    shown = [json.loads(line) for line in lines[start:start + len(events)]]
    assert shown == events  # JSON lines, one event each, as fed


def test_show_and_triage_accept_relative_paths_and_name_missing_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    crash_dir = tmp_path / "fuzz_strict_json"
    crash_dir.mkdir()
    (crash_dir / "crash-1").write_bytes(b'{"a": 1}')
    monkeypatch.chdir(tmp_path)
    assert main(["show", os.path.join("fuzz_strict_json", "crash-1")]) == 0
    assert '{"a": 1}' in capsys.readouterr().out
    assert main(["triage", "fuzz_strict_json", "--no-minimize"]) == 0
    assert "no longer crashes" in capsys.readouterr().out
    assert main(["triage", "no/such/dir"]) == 2
    err = capsys.readouterr().err
    assert "no such directory: no/such/dir (nothing there" in err and str(tmp_path) in err
    assert main(["triage", os.path.join("fuzz_strict_json", "crash-1")]) == 2
    assert "a file, not a directory" in capsys.readouterr().err
    assert main(["show", "no-such-file", "--target", "sse"]) == 2
    assert "no such input file" in capsys.readouterr().err

"""The README's claims that can be executed: its example runs and its commands exist."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

from pcfuzz.strategies.wire_fixtures import REVISIONS, golden_path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_opens_with_exactly_the_two_commands() -> None:
    first_block = re.search(r"```sh\n(.*?)```", README, re.S)
    assert first_block is not None
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines()]
    assert commands == ["python3 dev.py fuzz", "python3 dev.py test"]


def test_readme_python_example_runs_and_releases_the_fixture_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    block = re.search(r"```python\n(.*?)```", README, re.S)
    assert block is not None
    script = tmp_path / "readme_example.py"
    script.write_text(block.group(1), encoding="utf-8")
    monkeypatch.chdir(ROOT)
    runpy.run_path(str(script), run_name="__main__")
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 2  # the fixture's two parallel function calls


@pytest.mark.parametrize("revision", REVISIONS)
def test_readme_python_example_works_on_every_revisions_fixture(
    revision: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The example names the pinned fixture; the same code releases the same two calls
    # from each shipped revision's fixture of that contract (under the default revision).
    block = re.search(r"```python\n(.*?)```", README, re.S)
    assert block is not None
    pinned = "fixtures/openai_responses.json"
    assert pinned in block.group(1)
    path = golden_path("openai-responses", revision).relative_to(ROOT).as_posix()
    script = tmp_path / "readme_example.py"
    script.write_text(block.group(1).replace(pinned, path), encoding="utf-8")
    monkeypatch.chdir(ROOT)
    runpy.run_path(str(script), run_name="__main__")
    printed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in printed] == ["call-A", "call-B"]


def test_every_doc_the_readme_links_exists() -> None:
    for target in re.findall(r"\]\(([^)#]+)\)", README):
        assert (ROOT / target).exists(), target


def test_every_benchmark_the_readme_names_exists() -> None:
    for script in re.findall(r"benchmarks/\w+\.py", README):
        assert (ROOT / script).exists(), script

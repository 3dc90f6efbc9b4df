"""pytest plugin of the conformance kit (entry point ``pytest11: pcfuzz``).

In a test module of your own::

    from pcfuzz.conform.pytest_plugin import pcfuzz_conformance
    from mypkg.stream import adapter

    test_my_parser = pcfuzz_conformance("anthropic-messages", adapter)

collects one test per scenario family (``test_my_parser[valid]``,
``test_my_parser[truncation]``, ``test_my_parser[terminal]``, ...). Each checks the
adapter on the contract's golden stream (a usage error fails the test with what was
expected and what came back), replays the family's saved regressions, then searches
the family (the loaded hypothesis profile's ``max_examples``, or
``--pcfuzz-max-examples``; ``--pcfuzz-budget S`` bounds it in seconds, shrinking
included) for every distinct root cause. A failure starts with the rule that was
broken (what ``pytest -ra`` shows) and then gives each finding in full: the event
that makes the stream unsafe, expected against got, a fix, the minimal stream, saved
to the regression directory (``--pcfuzz-regressions``, default
``conform-regressions`` under the rootdir) for the next run. The adapter runs in a
worker process under ``--pcfuzz-adapter-timeout`` (default 10 s) when it can be
imported by name. ``--pcfuzz-database URL`` (a path or ``redis://host:port/db``,
``--pcfuzz-database-readonly`` for pull requests) shares hypothesis' failing examples
between runners: each family replays what is saved there first; a shared server
that stops answering fails the test as incomplete, and so does a family that ran no
example (a budget that ended before the first). ``--pcfuzz-realism
{sdk,wire,hostile}`` sets how realistic the generated streams are (default ``sdk``:
what the providers send) for every test that does not pass ``realism=`` itself.

The plugin itself only adds the ``--pcfuzz-*`` options: it imports nothing heavy
and changes no test unless a module calls :func:`pcfuzz_conformance`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

__all__ = ["failure_text", "pcfuzz_conformance"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pcfuzz", "pcfuzz conformance kit")
    group.addoption("--pcfuzz-max-examples", type=int, default=None,
                    help="examples per conformance family (default: the hypothesis profile's)")
    group.addoption("--pcfuzz-regressions", default=None,
                    help="directory of saved conformance findings, replayed first "
                         "(default: conform-regressions under the rootdir; 'none' disables)")
    group.addoption("--pcfuzz-strict", action="store_true", default=False,
                    help="conformance tests also check this project's strictness policy")
    group.addoption("--pcfuzz-budget", type=float, default=None,
                    help="seconds per conformance family, shrinking included (default: "
                         "no time bound, the examples decide)")
    group.addoption("--pcfuzz-adapter-timeout", type=float, default=None,
                    help="seconds one adapter call may take (default 10)")
    group.addoption("--pcfuzz-database", default=None, metavar="URL",
                    help="the example database the conformance searches use: a path, or "
                         "redis://host:port/db shared by every runner (needs the scale "
                         "extra; multiplexed with .pcfuzz/conform-db under the rootdir); "
                         "failing examples saved there are replayed first")
    group.addoption("--pcfuzz-database-readonly", action="store_true", default=False,
                    help="replay what the database holds, write nothing to it (pull requests)")
    group.addoption("--pcfuzz-realism", default=None, metavar="{sdk,wire,hostile}",
                    help="how realistic the generated streams are: sdk, what the providers "
                         "send (default); wire, anything the official SDK types accept; "
                         "hostile, this project's adversarial shapes")


#: The session's example database (opened by the first conformance test that needs it).
_DATABASE = pytest.StashKey[tuple[Any, Path]]()


def _option(config: pytest.Config, name: str) -> Any:
    try:
        return config.getoption(name)
    except ValueError:  # the plugin is not registered (imported directly)
        return None


def _database(config: pytest.Config) -> tuple[Any, Path] | None:
    """``(database, lost marker)`` of ``--pcfuzz-database``, or None.

    Without the option, inside ``pcfuzz nightly --database URL`` (whose property phase
    runs the user's conformance tests through this plugin): the night's database, its
    local directory and its lost marker, so the kit's searches share what the night's
    other hypothesis runs share and a lost server makes the night incomplete."""
    url = _option(config, "pcfuzz_database")
    readonly = bool(_option(config, "pcfuzz_database_readonly"))
    local = Path(config.rootpath) / ".pcfuzz" / "conform-db"
    marker = local.with_name("conform-db.lost.json")
    night = os.environ.get("PCFUZZ_DATABASE_URL") if os.environ.get("PCFUZZ_NIGHTLY") else None
    from_night = bool(url is None and not readonly and night)
    if from_night:
        url, readonly = night, os.environ.get("PCFUZZ_DATABASE_READONLY") == "1"
        local = Path(os.environ.get("PCFUZZ_HYPOTHESIS_DB") or local)
        marker = Path(os.environ.get("PCFUZZ_DATABASE_LOST") or marker)
    elif url is None and not readonly:
        return None
    if _DATABASE not in config.stash:
        from pcfuzz.database import open_database

        if not from_night:  # the night's marker is the night's to read
            marker.unlink(missing_ok=True)
        config.stash[_DATABASE] = (open_database(url or str(local), local=local,
                                                 readonly=readonly, lost_marker=marker),
                                   marker)
    return config.stash[_DATABASE]


def failure_text(found: list[Any], replays: list[Any]) -> str:
    """A conformance test's failure: the first line is the first finding's rule (what
    ``pytest -ra`` shows), then every finding in full and the regressions still
    failing, by file."""
    first = found[0].headline() + (f" (and {len(found) - 1} more)" if len(found) > 1 else "")
    lines = [first, ""]
    still = [r for r in replays if not r.passing]
    if replays:
        lines.append(f"regressions replayed: {len(replays)} ({len(replays) - len(still)} "
                     "passing)")
        lines += [f"  still failing: {r.path}" for r in still]
        lines.append("")
    lines.append("\n\n".join(f.text(n) for n, f in enumerate(found, start=1)))
    return "\n".join(lines)


def pcfuzz_conformance(
    contract: str,
    adapter: Callable[[Any], Any],
    *,
    input: str = "events",
    strict: bool = False,
    families: list[str] | None = None,
    regressions: str | Path | None = None,
    form: str = "plain",
    tool_names: list[str] | str | None = None,
    mutations: list[str] | None = None,
    exclude: list[str] | None = None,
    gate: str = "none",
    realism: str | None = None,
) -> Callable[..., None]:
    """A test function parametrized by scenario family; assign it to a ``test_*`` name.

    ``adapter(events) -> [{"call_id", "name", "arguments"}]`` (raising = rejected);
    ``input="sse"`` passes the raw SSE bytes instead of the decoded event list;
    ``strict`` adds this project's strictness checks (unknown fields, usage
    regression, envelope drift) to safety and correct output. ``form="release"``:
    the adapter is ``adapter(stream, release, continuation)`` (see
    :func:`pcfuzz.conform.kit.conform`).

    An ``async def`` adapter is awaited. ``tool_names``, ``mutations``, ``exclude``
    and ``gate`` are those of :func:`pcfuzz.conform.kit.conform` (``pcfuzz conform
    --tool-names``, ``--mutation``, ``--exclude``, ``--gate``): what the gate stops
    does not fail the test. ``realism`` (``sdk``, ``wire``, ``hostile``; ``pcfuzz
    conform --realism``): default ``--pcfuzz-realism``, else ``sdk``. A bad value
    raises ``ValueError`` when the module is collected.
    """
    from pcfuzz.conform import kit
    from pcfuzz.conform.gate import check_gate
    from pcfuzz.conform.options import check_realism, check_tool_names, plan_families
    from pcfuzz.strategies import conformance

    if contract not in conformance.CONTRACTS:
        raise ValueError(f"unknown contract {contract!r}; known: "
                         f"{', '.join(conformance.CONTRACTS)}")
    if input not in kit.INPUTS:
        raise ValueError(f"unknown input {input!r}; known: {', '.join(kit.INPUTS)}")
    if form not in kit.FORMS:
        raise ValueError(f"unknown adapter form {form!r}; known: {', '.join(kit.FORMS)}")
    chosen = families or conformance.families(contract, strict=True)
    try:
        check_tool_names(tool_names)
        if realism is not None:
            check_realism(realism)
        check_gate(contract, gate)
        kit.check_form_and_gate(form, gate)
        if mutations or exclude:  # only the families the filters leave anything in
            chosen = list(plan_families(contract, strict=True, families=chosen,
                                        mutations=mutations, exclude=exclude))
    except kit.UsageError as exc:
        raise ValueError(str(exc)) from exc

    @pytest.mark.parametrize("pcfuzz_family", chosen)
    def test_conformance(pcfuzz_family: str, request: pytest.FixtureRequest) -> None:
        config = request.config
        strict_mode = strict or bool(_option(config, "pcfuzz_strict"))
        if pcfuzz_family not in conformance.families(contract, strict=strict_mode):
            pytest.skip(f"{pcfuzz_family} holds only strictness checks (strict=True or "
                        "--pcfuzz-strict)")
        where = regressions if regressions is not None else _option(config, "pcfuzz_regressions")
        if where is None:
            root: Path | None = Path(config.rootpath) / kit.DEFAULT_REGRESSIONS
        else:
            root = None if str(where) == "none" else Path(where)
        timeout = _option(config, "pcfuzz_adapter_timeout") or kit.DEFAULT_TIMEOUT_S
        gated: list[Any] = []
        try:
            shared = _database(config)
            found, replays, examples = kit.check_family(
                adapter, contract, pcfuzz_family, input=input, strict=strict_mode,
                max_examples=_option(config, "pcfuzz_max_examples"),
                budget_s=_option(config, "pcfuzz_budget"), regressions=root,
                adapter_timeout_s=timeout, database=None if shared is None else shared[0],
                form=form, tool_names=tool_names, mutations=mutations, exclude=exclude,
                gate=gate, gated=gated,
                realism=realism or _option(config, "pcfuzz_realism") or kit.DEFAULT_REALISM)
        except kit.UsageError as exc:
            pytest.fail(f"pcfuzz conformance cannot run: {exc}", pytrace=False)
        # the nightly's property plugin reads it (its report, the next night's costs)
        request.node.user_properties.append(("pcfuzz_examples", examples))
        if gated:
            request.node.user_properties.append(
                ("pcfuzz_stopped_by_gate", [g.line().strip() for g in gated]))
        if found:
            pytest.fail(failure_text(found, replays), pytrace=False)
        if not examples:  # a pass that tried nothing proves nothing: incomplete, never green
            budget = _option(config, "pcfuzz_budget")
            cause = (f"its --pcfuzz-budget of {budget:g} s ended before the first"
                     if budget is not None else "none could be generated and run")
            pytest.fail(f"pcfuzz conformance incomplete: family {pcfuzz_family} ran no "
                        f"example ({cause})", pytrace=False)
        if shared is not None:
            from pcfuzz.database import lost

            why = lost(shared[1])
            if why is not None:  # incomplete, never green
                pytest.fail(f"pcfuzz conformance incomplete: the shared example database was "
                            f"lost: {why}", pytrace=False)

    test_conformance.__doc__ = f"Conformance of {getattr(adapter, '__name__', adapter)} to {contract}."
    # the nightly's property run keeps tests with this mark (they run hypothesis inside)
    test_conformance.pcfuzz_conformance = True  # type: ignore[attr-defined]
    return test_conformance

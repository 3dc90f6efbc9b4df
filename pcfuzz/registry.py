"""The contracts as the tool sees them: :data:`pcfuzz.contracts.registry.CONTRACTS`,
each with the names of its parts outside ``contracts/``.

Every place of the tool that needs the list of contracts (``pcfuzz check``,
``conform``, ``drift``, the transition coverage of the nightly, the kit's
adapters) reads it here; a table of the tool keyed by contract name is checked
against it by ``tests/test_tool_architecture.py``. The parts follow one naming
rule, so a new provider needs no entry here: its package ``contracts/<package>/``,
its strategies ``strategies/<package>.py``, its fuzz targets
``fuzz/fuzz_<package>.py`` and ``fuzz/fuzz_wire_<package>.py``, its page
``docs/<package>.md``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from pcfuzz.contracts.registry import CONTRACTS as _ENTRIES
from pcfuzz.contracts.registry import NAMES, ContractEntry

__all__ = ["CONTRACTS", "NAMES", "Contract", "contract"]


@dataclass(frozen=True)
class Contract:
    """One contract and the names of its parts (see the module docstring)."""

    entry: ContractEntry

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def module_name(self) -> str:
        return f"pcfuzz.contracts.{self.entry.package}"

    @property
    def strategies_name(self) -> str:
        return f"pcfuzz.strategies.{self.entry.package}"

    @property
    def fuzz_targets(self) -> tuple[str, str]:
        """The structured target and the raw-bytes (wire) target."""
        return f"fuzz_{self.entry.package}", f"fuzz_wire_{self.entry.package}"

    @property
    def doc(self) -> str:
        """The page of the contract's rules and decisions, relative to the repository."""
        return f"docs/{self.entry.package}.md"

    def module(self) -> ModuleType:
        """The contract's package (``parse_events``, ``REVISIONS``, the stream class)."""
        return importlib.import_module(self.module_name)

    def strategies(self) -> ModuleType:
        """The contract's strategies module (needs the ``harness`` extra)."""
        return importlib.import_module(self.strategies_name)


CONTRACTS: tuple[Contract, ...] = tuple(Contract(e) for e in _ENTRIES)
_BY_NAME = {c.name: c for c in CONTRACTS}


def contract(name: str) -> Contract:
    """The contract called ``name``; ``KeyError`` for an unknown name."""
    return _BY_NAME[name]

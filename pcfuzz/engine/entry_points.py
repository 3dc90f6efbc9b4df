"""The closed table of contract entry points a property-regression document may name.

A regression document is data that travels in pull requests: it must never choose
code. Its calls name entries of this table, built here from code alone: the public
names (``__all__``) of a fixed list of ``pcfuzz.contracts`` modules (each provider
package of :data:`pcfuzz.contracts.registry.CONTRACTS`, then :data:`SHARED_MODULES`),
keeping functions and classes (not exceptions), and for each class its constructor and
its public methods (the functions of its own namespace, as the call recorder of
:mod:`pcfuzz.engine.show` wraps them). Keys read like the import a person would write:

    openai_chat.parse_events                  a function
    openai_chat.ChatCompletionStream          a constructor
    openai_chat.ChatCompletionStream.feed     a method of an object a constructor made
    strict_json.loads

A name that is not a key is refused before anything runs: looking a name up imports
nothing and calls nothing. :data:`EXCLUDED` leaves out the entry points that read
a file by path.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pcfuzz.contracts.registry import CONTRACTS

__all__ = ["EXCLUDED", "SHARED_MODULES", "Entry", "contract_of", "entries", "key_of", "lookup"]

#: The shared public modules of ``pcfuzz.contracts`` (after the provider packages).
SHARED_MODULES: tuple[str, ...] = ("strict_json", "sse", "wire", "results", "digest",
                                   "fixtures", "provenance")
#: Public names left out of the table: they read a file named by their argument.
EXCLUDED: frozenset[str] = frozenset({"fixtures.load_fixture"})


@dataclass(frozen=True)
class Entry:
    """One entry point: ``function`` is the function, the class (a constructor), or
    the plain function of a method (called with the object as its first argument);
    ``owner`` is the class of a method, else ``None``; ``contract`` the registry name
    of the provider package it belongs to, if any."""

    key: str
    function: Callable[..., Any]
    owner: type | None
    contract: str | None

    @property
    def is_method(self) -> bool:
        return self.owner is not None

    @property
    def is_constructor(self) -> bool:
        return inspect.isclass(self.function)


def _modules() -> list[tuple[str, str | None]]:
    """(module path under ``pcfuzz.contracts``, contract name or None), in key order."""
    return [(c.package, c.name) for c in CONTRACTS] + [(m, None) for m in SHARED_MODULES]


@functools.cache
def _tables() -> tuple[dict[str, Entry], dict[tuple[str, str], str]]:
    table: dict[str, Entry] = {}
    recorded: dict[tuple[str, str], str] = {}  # (defining module, recorded name) -> key

    def add(key: str, entry: Entry, module: str, name: str) -> None:
        if key in EXCLUDED or key in table:
            return
        table[key] = entry
        recorded.setdefault((module, name), key)

    for path, contract in _modules():
        module = importlib.import_module(f"pcfuzz.contracts.{path}")
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            key = f"{path}.{name}"
            if inspect.isfunction(obj):
                add(key, Entry(key, obj, None, contract), obj.__module__, obj.__name__)
            elif inspect.isclass(obj) and not issubclass(obj, BaseException):
                init = vars(obj).get("__init__")
                defined = getattr(init, "__module__", None) or obj.__module__
                add(key, Entry(key, obj, None, contract), defined, obj.__name__)
                for attr, member in vars(obj).items():
                    if attr.startswith("_") or not inspect.isfunction(member):
                        continue
                    add(f"{key}.{attr}", Entry(f"{key}.{attr}", member, obj, contract),
                        member.__module__, f"{obj.__name__}.{attr}")
    return table, recorded


def entries() -> dict[str, Entry]:
    """Every entry point, by key (a copy: the table itself cannot be changed)."""
    return dict(_tables()[0])


def lookup(key: object) -> Entry | None:
    """The entry named ``key``; ``None`` for anything else (nothing is imported)."""
    if type(key) is not str:
        return None
    return _tables()[0].get(key)


def key_of(module: str, name: str) -> str | None:
    """The key of a call the recorder saw (the callable's defining module and its
    recorded name: ``parse_events``, ``ChatCompletionStream``,
    ``ChatCompletionStream.feed``); ``None`` when it is not in the table."""
    return _tables()[1].get((module, name))


def contract_of(key: str) -> str | None:
    """The registry name of the contract an entry belongs to, if any."""
    entry = lookup(key)
    return entry.contract if entry is not None else None

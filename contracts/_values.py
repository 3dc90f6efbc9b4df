"""Shared handling of untrusted values: one bounded preview, one bounded JSON copier.

Every provider package renders caller and wire values into error messages only
through :func:`preview`, and copies every JSON value it keeps (raw items, blocks,
steps, caller-supplied tools and request controls) only through :func:`copy_json`.
One copier means one set of bounds for wire and caller values alike: the bounds of
:class:`~contracts.strict_json.JSONLimits` (default depth 512, 1,000-digit numbers,
4 Mi-character strings, 100,000 items per container, 1,000,000 values), so that any
value the strict JSON loader accepts is also copyable, and a Python caller cannot
pass what the wire could not carry.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Final, cast

from .errors import ContractError, InvalidArgument, LimitExceeded, ProtocolViolation
from .strict_json import DEFAULT_LIMITS, JSONLimits

__all__ = [
    "preview", "type_name", "copy_json", "copy_caller_json", "fast_copy", "NOT_FAST",
    "check_json_limits", "int_bound",
]

#: Characters of a string shown in an error message.
PREVIEW_CHARS: Final = 60
#: Integers shown in full up to this magnitude; larger ones by their bit length.
_PREVIEW_INT: Final = 10**18
#: Characters of a field path kept in an error message.
_PATH_CHARS: Final = 300


def type_name(value: object) -> str:
    """The JSON-ish name of a value's type, never calling anything on the value."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "bool"
    return type(value).__name__[:60]


def preview(value: object, limit: int = PREVIEW_CHARS) -> str:
    """A short rendering of an untrusted value that cannot fail or run caller code.

    Strings are cut to ``limit`` characters (lone surrogates escaped), integers beyond
    18 digits are shown by bit length, floats and ``None``/``bool`` as literals;
    anything else only by its type name. ``repr``/``str`` of a caller object is never
    called: a subclass's ``__repr__`` could raise, loop or lie.
    """
    # type(), never isinstance(): isinstance believes a ``__class__`` property, and the
    # builtin method below would then raise TypeError on the impostor.
    cls = type(value)
    if issubclass(cls, str):
        text = str.__str__(cast(str, value))
        cut = text[:limit]
        return repr(cut) + ("..." if len(text) > limit else "")
    if value is None or value is True or value is False:
        return repr(value)
    if issubclass(cls, int):
        number = int.__index__(cast(int, value))
        if -_PREVIEW_INT < number < _PREVIEW_INT:
            return repr(number)
        return f"<int of {number.bit_length()} bits>"
    if issubclass(cls, float):
        return repr(float.__float__(cast(float, value)))
    return f"<{type_name(value)}>"


def check_json_limits(limits: object) -> JSONLimits:
    """Return ``limits`` (``None`` means the defaults) if it is an intact :class:`JSONLimits`.

    Raises :class:`InvalidArgument` otherwise; the fields are re-checked because a
    frozen dataclass's constructor check can be bypassed.
    """
    if limits is None:
        return DEFAULT_LIMITS
    if type(limits) is not JSONLimits:
        raise InvalidArgument(f"limits must be a JSONLimits, got {preview(limits)}")
    for name in JSONLimits.__slots__:
        value = getattr(limits, name)
        if type(value) is not int or value < 1:
            raise InvalidArgument(f"JSONLimits.{name} must be a positive int, got {preview(value)}")
    return limits


@lru_cache(maxsize=8)
def int_bound(max_number_chars: int) -> int:
    """Integers must be strictly inside ``±10**max_number_chars`` (that many digits)."""
    return int(10**max_number_chars)


class _Path:
    """A container's position, linked to its parent: a path is built only on error."""

    __slots__ = ("parent", "key")

    def __init__(self, parent: _Path | None, key: object) -> None:
        self.parent = parent
        self.key = key

    def render(self, leaf: str = "") -> str:
        steps = [leaf] if leaf else []
        node: _Path | None = self
        while node is not None:
            steps.append(str(node.key) if node.parent is None else _step(node.key))
            node = node.parent
        steps.reverse()
        text = "".join(steps)
        return text if len(text) <= _PATH_CHARS else text[: _PATH_CHARS - 3] + "..."


def _step(key: object) -> str:
    if type(key) is int:
        return f"[{key}]"
    return f".{preview(key, 40)[1:-1]}" if issubclass(type(key), str) else f"[{preview(key)}]"


# --- the fast path: small values of exact types within the default bounds ------------

#: What :func:`fast_copy` returns for a value it leaves to the general copier.
NOT_FAST: Final = object()
_DEFAULTS: Final = JSONLimits()  # private: DEFAULT_LIMITS itself could be tampered with
_FAST_CHARS: Final = _DEFAULTS.max_string_chars
_FAST_BIG: Final = int_bound(_DEFAULTS.max_number_chars)
_FAST_ITEMS: Final = _DEFAULTS.max_container_items
_FAST_VALUES: Final = _DEFAULTS.max_values
if _DEFAULTS.max_depth < 2:  # pragma: no cover - a change of the defaults must revisit this
    raise RuntimeError("the default JSONLimits are too small for copy_json's fast path")


def _utf8(text: str) -> bool:
    """Whether a non-ASCII ``str`` is free of lone surrogates (UTF-8 encodable)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _scalar_ok(value: object) -> bool:
    """Whether ``value`` is an exact JSON scalar within the default bounds."""
    cls = type(value)
    if cls is str:
        text: str = value  # type: ignore[assignment]
        return len(text) <= _FAST_CHARS and (text.isascii() or _utf8(text))
    if cls is int:
        number: int = value  # type: ignore[assignment]
        return -_FAST_BIG < number < _FAST_BIG
    if cls is float:
        real: float = value  # type: ignore[assignment]
        return real - real == 0.0  # false for inf and nan
    return value is None or cls is bool


def flat_copy(value: Any, cls: type) -> Any:
    """A copy of an exact dict/list whose members are exact JSON scalars, or NOT_FAST."""
    if len(value) > _FAST_ITEMS:
        return NOT_FAST
    if cls is dict:
        for key, member in value.items():
            if type(key) is not str or not (key.isascii() or _utf8(key)):
                return NOT_FAST
            member_cls = type(member)
            if member_cls is str:
                if len(member) > _FAST_CHARS or not (member.isascii() or _utf8(member)):
                    return NOT_FAST
            elif member_cls is int:
                if not -_FAST_BIG < member < _FAST_BIG:
                    return NOT_FAST
            elif not _scalar_ok(member):
                return NOT_FAST
        return dict(value)  # immutable scalars: the shallow copy is independent
    for member in value:
        if not _scalar_ok(member):
            return NOT_FAST
    return list(value)


def fast_copy(value: object) -> Any:
    """:func:`copy_json` with the default bounds for the common value, or ``NOT_FAST``.

    Copies exact JSON scalars and exact ``dict``/``list`` values nested at most two
    levels deep (the bounds of :data:`~contracts.strict_json.DEFAULT_LIMITS`: members
    per container, values in all, string length, integer digits); everything else (a
    subclass, a deeper value, anything :func:`copy_json` would reject) returns
    :data:`NOT_FAST`, and the caller runs :func:`copy_json`, which accepts or rejects
    it with its message. Never raises and never runs caller code: only exact builtin
    types are read. A caller that formats its ``what``/``where`` only when this misses
    skips that work on the common path.
    """
    cls = type(value)
    if cls is dict:
        size = len(value)  # type: ignore[arg-type]
        if size > _FAST_ITEMS:
            return NOT_FAST
        budget = _FAST_VALUES - 1 - size
        nested: list[tuple[str, Any]] | None = None
        for key, member in value.items():  # type: ignore[attr-defined]
            if type(key) is not str or not (key.isascii() or _utf8(key)):
                return NOT_FAST
            member_cls = type(member)
            # The common kinds inline; the rest by _scalar_ok (a call costs more
            # than the check on values of a few bytes).
            if member_cls is str:
                if len(member) > _FAST_CHARS or not (member.isascii() or _utf8(member)):
                    return NOT_FAST
            elif member_cls is int:
                if not -_FAST_BIG < member < _FAST_BIG:
                    return NOT_FAST
            elif member_cls is dict or member_cls is list:
                budget -= len(member)
                if budget < 0:
                    return NOT_FAST
                inner = flat_copy(member, member_cls)
                if inner is NOT_FAST:
                    return NOT_FAST
                if nested is None:
                    nested = [(key, inner)]
                else:
                    nested.append((key, inner))
            elif not _scalar_ok(member):
                return NOT_FAST
        out = dict(value)  # type: ignore[call-overload]
        if nested is not None:
            out.update(nested)
        return out
    if cls is list:
        items = list(value)  # type: ignore[call-overload]
        if len(items) > _FAST_ITEMS:
            return NOT_FAST
        budget = _FAST_VALUES - 1 - len(items)
        for i, member in enumerate(items):
            member_cls = type(member)
            if member_cls is dict or member_cls is list:
                budget -= len(member)
                if budget < 0:
                    return NOT_FAST
                inner = flat_copy(member, member_cls)
                if inner is NOT_FAST:
                    return NOT_FAST
                items[i] = inner
            elif not _scalar_ok(member):
                return NOT_FAST
        return items
    return value if _scalar_ok(value) else NOT_FAST


def copy_json(
    value: object,
    *,
    what: str,
    error: type[ContractError] = ProtocolViolation,
    where: str | None = None,
    limits: JSONLimits | None = None,
) -> Any:
    """Return an independent deep copy of a JSON value made of exact builtin types.

    Accepts ``None``, ``bool``, ``int``, finite ``float``, ``str`` without lone
    surrogates, ``list`` and ``dict`` with ``str`` keys; subclasses of those are read
    through the builtin type's own methods (an overridden ``items``/``__iter__``/
    ``__str__`` is never called) and copied as the builtin type. Iterative: never
    recurses, whatever the nesting.

    Bounds (``limits``, default :data:`~contracts.strict_json.DEFAULT_LIMITS`):
    nesting depth, string length, integer digits, items per container, and values in
    the whole copy (a Python caller can share one list many times; the value budget
    keeps the copy linear in what is actually read). Raises :class:`LimitExceeded`
    past a bound and ``error`` (naming ``what`` and the path) for a value JSON cannot
    carry; ``where`` is set on either.
    """
    if limits is None:
        fast = fast_copy(value)
        if fast is not NOT_FAST:
            return fast
        bounds = _DEFAULTS
    else:
        bounds = check_json_limits(limits)
    max_depth = bounds.max_depth
    max_chars = bounds.max_string_chars
    max_items = bounds.max_container_items
    max_values = bounds.max_values
    big = int_bound(bounds.max_number_chars)
    root = _Path(None, what)
    holder: list[Any] = [None]
    # (value, destination container, key in it, depth, path of the container)
    stack: list[tuple[object, Any, Any, int, _Path]] = [(value, holder, 0, 0, root)]
    count = 0

    def fail(
        kind: type[ContractError], problem: str, path: _Path, parent: object, key: object
    ) -> ContractError:
        leaf = "" if parent is holder else _step(key)
        return kind(f"{path.render(leaf)} {problem}", where=where)

    while stack:
        src, parent, key, depth, path = stack.pop()
        count += 1
        if count > max_values:
            raise fail(LimitExceeded, f"has more than {max_values} JSON values", root, holder, 0)
        cls = type(src)
        # Dispatch on type(), never isinstance() (see preview()).
        if issubclass(cls, str):
            text = str.__str__(cast(str, src))
            if len(text) > max_chars:
                raise fail(LimitExceeded, f"is a string over {max_chars} characters", path, parent, key)
            if not text.isascii():
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError:
                    raise fail(error, "has a lone surrogate code point", path, parent, key) from None
            parent[key] = text
        elif src is None or src is True or src is False:
            parent[key] = src
        elif issubclass(cls, int):
            number = int.__index__(cast(int, src))
            if not -big < number < big:
                raise fail(
                    LimitExceeded, f"is an integer over {bounds.max_number_chars} digits",
                    path,
                    parent,
                    key,
                )
            parent[key] = number
        elif issubclass(cls, float):
            real = float.__float__(cast(float, src))
            if not math.isfinite(real):
                raise fail(error, "is a non-finite number", path, parent, key)
            parent[key] = real
        elif issubclass(cls, dict):
            if depth >= max_depth:
                raise fail(LimitExceeded, f"nests deeper than {max_depth} levels", path, parent, key)
            if dict.__len__(cast(dict[str, Any], src)) > max_items:
                raise fail(LimitExceeded, f"has more than {max_items} members", path, parent, key)
            child = path if parent is holder else _Path(path, key)
            new_dict: dict[str, Any] = {}
            parent[key] = new_dict
            for k, v in dict.items(cast(dict[object, Any], src)):
                if type(k) is not str:
                    raise fail(error, f"has a non-string key {preview(k)}", child, holder, 0)
                if not k.isascii():
                    try:
                        k.encode("utf-8")
                    except UnicodeEncodeError:
                        raise fail(
                            error, "has a key with a lone surrogate code point", child, holder, 0
                        ) from None
                new_dict[k] = None
                stack.append((v, new_dict, k, depth + 1, child))
        elif issubclass(cls, list):
            if depth >= max_depth:
                raise fail(LimitExceeded, f"nests deeper than {max_depth} levels", path, parent, key)
            size = list.__len__(cast(list[Any], src))
            if size > max_items:
                raise fail(LimitExceeded, f"has more than {max_items} items", path, parent, key)
            child = path if parent is holder else _Path(path, key)
            new_list: list[Any] = [None] * size
            parent[key] = new_list
            for i, v in enumerate(list.copy(cast(list[Any], src))):
                stack.append((v, new_list, i, depth + 1, child))
        else:
            raise fail(error, f"is {preview(src)}, not a JSON value", path, parent, key)
    return holder[0]


def copy_caller_json(
    value: object, what: str, *, error: type[ContractError], list_only: bool = False
) -> Any:
    """A bounded JSON copy of a caller's value (:func:`copy_json`, ``where=what``).

    A top-level ``tuple`` (Python callers pass tuples where JSON has arrays) is read
    through ``tuple``'s own methods, after a check of its length against the default
    container bound, and copied as a list. With ``list_only`` anything but a list or
    tuple is ``error`` ("must be a list"). Raises ``error`` or :class:`LimitExceeded`.
    """
    # type(), never isinstance(): isinstance believes a ``__class__`` property.
    cls = type(value)
    if issubclass(cls, tuple):
        items = cast("tuple[Any, ...]", value)
        if tuple.__len__(items) > _DEFAULTS.max_container_items:
            raise LimitExceeded(
                f"{what} has more than {_DEFAULTS.max_container_items} items", where=what
            )
        value = list(tuple.__iter__(items))
    elif list_only and not issubclass(cls, list):
        raise error(f"{what} must be a list, got {preview(value)}", where=what)
    return copy_json(value, what=what, error=error, where=what)

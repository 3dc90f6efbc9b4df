"""Strict JSON loading with explicit, documented limits.

:func:`loads` accepts exactly the RFC 8259 documents that :func:`json.loads` also
accepts and returns the same value (same types: ``int`` stays ``int``), minus
everything that makes two JSON parsers disagree or lets a document cost more than
its size:

* duplicate object keys at any depth, compared after escape decoding
  (``{"a":1,"\\u0061":2}``);
* ``NaN``, ``Infinity``, ``-Infinity`` and number literals that overflow to infinity;
* a byte order mark (UTF-8, UTF-16, UTF-32), invalid UTF-8 (truncated, overlong,
  CESU-encoded surrogates), lone surrogate escapes and, for ``str`` input, lone
  surrogate code points;
* empty input, trailing data, whitespace other than space, tab, LF and CR, and
  unescaped control characters inside strings;
* anything over a :class:`JSONLimits` bound.

Every rejection is a :class:`~contracts.errors.StrictJSONError` or a
:class:`~contracts.errors.LimitExceeded` whose ``where`` gives line, column and the
byte offset (``bytes`` input) or character offset (``str`` input). No other
exception escapes, for any argument.

How it works: the argument checks and the size check come first. Then the
document goes through the C scanner of :mod:`json` with hooks that reject duplicate
keys, non-finite numbers and long number literals, unless a pre-scan finds a lone
surrogate escape or a string literal that could be over the string limit. The
depth, item and value limits of a document the scanner accepted are proved from its
size alone when it is small, else from counts of brackets and commas in its text,
else measured exactly on the decoded value (a walk over its containers, level by
level, with C-level steps). Every document that fast path does not accept goes
through an iterative parser (explicit stack, no recursion) that checks each limit
before doing the work the limit protects against and locates the error. Both paths
are linear in time and memory in the size of the input.
"""

from __future__ import annotations

import gc
import json
import json.decoder
import re
from collections.abc import Callable
from dataclasses import dataclass, fields
from itertools import islice, repeat
from typing import Any, Final, NoReturn, cast

from .errors import InvalidArgument, LimitExceeded, StrictJSONError

__all__ = ["JSONLimits", "DEFAULT_LIMITS", "loads"]


def _limit_shown(value: object) -> str:
    """A limit value for a message: never the value's own ``repr`` (a caller's object
    may raise from it; an int past the interpreter's digit limit does)."""
    if value is None or type(value) is bool or (type(value) is int and -10**9 < value < 10**9):
        return repr(value)
    return f"<{type(value).__name__}>"


@dataclass(frozen=True, slots=True)
class JSONLimits:
    """Bounds that :func:`loads` enforces; every field is a positive ``int``.

    ``max_bytes``: size of the document in UTF-8 bytes. For ``str`` input the text is
    measured in UTF-8 bytes too, so the same document has the same size in either
    form (a ``str`` longer than ``max_bytes`` code points is rejected before it is
    encoded). Default 16 MiB: room for a completed-response snapshot that repeats
    the 8 MB of argument text a stream may carry, escaped.

    ``max_depth``: open arrays/objects at any point (``[]`` has depth 1, a scalar
    depth 0). Default 512: tool arguments and provider events nest a few levels,
    JSON Schemas a few dozen; 512 leaves a wide margin and keeps the C scanner well
    inside the interpreter's recursion limit (1000).

    ``max_string_chars``: code points of one decoded string, object keys included.
    Default 4 MiB (4,194,304): above the 1 MB per-call argument bound of the stream
    parsers, so a completed snapshot that carries an argument string still fits.

    ``max_number_chars``: characters of one number literal as written (sign,
    digits, point, exponent). Default 1,000: far beyond a float's 17 significant
    digits, a 64-bit integer's 20 digits and a decimal written with 80+ digits, and
    below the interpreter's 4,300-digit guard on ``int`` conversion, so that guard
    never decides.

    ``max_container_items``: elements of one array or members of one object.
    Default 100,000.

    ``max_values``: values in the whole document (containers, strings, numbers,
    literals; object keys are not counted). Default 1,000,000: bounds the memory a
    document of many tiny containers (``[[],[],...]``) can cost.

    Construction raises :class:`~contracts.errors.InvalidArgument` (a ``ContractError``
    that is also a ``ValueError``) for a field that is not a positive ``int``.
    :func:`loads` re-checks every field on each call (the constructor's check can be
    bypassed) and accepts exactly this class, not a subclass.

    Raising ``max_number_chars`` above the interpreter's int guard keeps failing
    closed (``LimitExceeded``); with the guard disabled too, ``int`` conversion of
    a very long literal is quadratic, so keep it within a few thousand.
    """

    max_bytes: int = 16 * 1024 * 1024
    max_depth: int = 512
    max_string_chars: int = 4 * 1024 * 1024
    max_number_chars: int = 1_000
    max_container_items: int = 100_000
    max_values: int = 1_000_000

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if type(value) is not int or value < 1:
                raise InvalidArgument(
                    f"JSONLimits.{field.name} must be a positive int, got {_limit_shown(value)}",
                    where=f"limits.{field.name}",
                )



DEFAULT_LIMITS: Final = JSONLimits()

# Checked longest first: the UTF-32 LE mark starts with the UTF-16 LE mark.
_BOMS: Final[tuple[tuple[bytes, str], ...]] = (
    (b"\x00\x00\xfe\xff", "UTF-32 BE"),
    (b"\xff\xfe\x00\x00", "UTF-32 LE"),
    (b"\xef\xbb\xbf", "UTF-8"),
    (b"\xfe\xff", "UTF-16 BE"),
    (b"\xff\xfe", "UTF-16 LE"),
)

_WS: Final = re.compile(r"[ \t\n\r]*")
_WS_CHARS: Final = " \t\n\r"
# The common cases in one regex each: a key without escapes with its colon (and the
# whitespace around both), a string value without escapes. Anything else (escapes,
# control characters, no closing quote) goes through the json string scanner.
_SIMPLE_KEY: Final = re.compile(r'[ \t\n\r]*"([^"\\\x00-\x1f]*)"[ \t\n\r]*:[ \t\n\r]*')
_SIMPLE_STRING: Final = re.compile(r'"([^"\\\x00-\x1f]*)"')
# ASCII digits only: ``\d`` would also match other scripts' digits.
_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
# Any escape that can decode to a surrogate; a superset (it also hits ``\\ud800``),
# used only to decide whether decoded strings need the precise check.
_SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
# Full match: every escape in the text is a non-surrogate ``\uXXXX``, a high-low
# surrogate pair, or a two-character escape. Escapes are consumed left to right, so
# ``\\ud800`` is an escaped backslash and text, as JSON reads it. Only consulted
# when ``_SURROGATE_ESCAPE`` hits. Possessive quantifiers (``*+``): the alternatives
# exclude each other, so backtracking could never help, and a backtracking
# repetition keeps a frame per iteration (~90 bytes of memory per escape).
_NO_LONE_SURROGATE_ESCAPE: Final = re.compile(
    r"[^\\]*+(?:\\(?:[^u]|u(?![dD][89a-fA-F])[0-9a-fA-F]{4}"
    r"|u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})[^\\]*+)*+"
)
# For the string-length pre-scan: string literals as json tokenizes valid ones (any
# escape is skipped whole). The closing quote is optional, so an unterminated
# literal runs to the end of the text and the scan never restarts inside it: with a
# required closing quote, a failed match is retried from every escaped quote it
# contains (quadratic in the text). Possessive for the same reason as
# ``_NO_LONE_SURROGATE_ESCAPE`` above.
_STRING_LITERAL: Final = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"?', re.DOTALL)
_INFINITIES: Final = (float("inf"), float("-inf"))

# The C string scanner of the json module: validates escapes and control characters
# exactly as json.loads does (strict=True) and returns the decoded text and its end.
_scanstring: Final[Callable[[str, int, bool], tuple[str, int]]] = (
    json.decoder.scanstring  # type: ignore[attr-defined]
)

_LITERALS: Final[dict[str, tuple[str, Any]]] = {
    "t": ("true", True),
    "f": ("false", False),
    "n": ("null", None),
}
_NON_FINITE: Final = ("NaN", "Infinity", "-Infinity")


def loads(data: bytes | str, *, limits: JSONLimits | None = None) -> Any:
    """Parse one strict JSON document from ``bytes`` (UTF-8) or ``str``.

    Returns what ``json.loads`` returns for the same document. Raises
    :class:`LimitExceeded` for a document over ``limits`` (default
    :data:`DEFAULT_LIMITS`) and :class:`StrictJSONError` for anything else that is
    not strict JSON, including an argument that is neither ``bytes``/``bytearray``
    nor ``str`` (a subclass is read by its real content: its overridden methods are
    never called) and a ``limits`` that is not an intact :class:`JSONLimits` (exactly
    that class, every field a positive ``int``). Never raises anything else.
    """
    if limits is None:
        # A private copy: DEFAULT_LIMITS itself can be tampered with (see
        # _check_limits), this one is never handed out.
        limits = _DEFAULTS
    else:
        _check_limits(limits)
    # type(), not isinstance(): isinstance() believes a ``__class__`` property.
    kind = type(data)
    if kind is bytes or issubclass(kind, bytes):
        text = _decode_utf8(cast(bytes, data), bytes, limits)
        from_bytes = True
    elif issubclass(kind, bytearray):
        text = _decode_utf8(cast(bytearray, data), bytearray, limits)
        from_bytes = True
    elif issubclass(kind, str):
        # str.__str__ gives an exact str (a copy for a subclass, which then cannot
        # override count/encode); the size is checked on the original, before a copy.
        _check_size(str.__len__(cast(str, data)), limits)
        text = _check_text(str.__str__(cast(str, data)), limits)
        from_bytes = False
    else:
        raise StrictJSONError(
            f"JSON input must be bytes (UTF-8) or str, got {kind.__name__}",
            where="argument data",
        )
    if not text:
        raise StrictJSONError("empty document", where=_where(text, 0, from_bytes))
    value = _fast_path(text, limits)
    if value is _NOT_ACCEPTED:
        # A short text the scanner refused is read by the parser's own steps: its
        # windows and runs would be set up and fail for a few items (3x the cost of
        # a rejected small document, most of what a fuzzer feeds).
        mode = _OWN if len(text) <= _OWN_STEPS_UP_TO else _ACCELERATED
        return _parse(text, limits, from_bytes, mode)
    if value is _OVER_LIMIT:
        return _parse(text, limits, from_bytes, _LOCATE)
    return value


_LIMIT_FIELDS: Final = tuple(field.name for field in fields(JSONLimits))
_DEFAULTS: Final = JSONLimits()


def _check_limits(limits: object) -> None:
    # The constructor's check can be bypassed (object.__setattr__, __new__ without
    # __init__) and a subclass could compute its fields: re-check on every call.
    if type(limits) is not JSONLimits:
        raise StrictJSONError(
            f"limits must be a JSONLimits, got {type(limits).__name__}", where="argument limits"
        )
    for name in _LIMIT_FIELDS:
        value = getattr(limits, name, None)
        if type(value) is not int or value < 1:
            raise StrictJSONError(
                f"limits.{name} must be a positive int, got {_limit_shown(value)}",
                where="argument limits",
            )


def _decode_utf8(
    data: bytes | bytearray, base: type[bytes] | type[bytearray], limits: JSONLimits
) -> str:
    # Size first (no copy of an oversized buffer), then one strict decode: the
    # resulting str is immune to later mutation of a bytearray. Every method is
    # taken from ``base``, so a subclass's overrides are never called. A byte order
    # mark is found after decoding: the UTF-8 one decodes to U+FEFF, and every other
    # one starts with a byte that is never valid UTF-8 (0xFE, 0xFF, or 0x00 0x00
    # 0xFE), so it is named on the error path.
    methods: Any = base
    size: int = methods.__len__(data)
    if size > limits.max_bytes:
        raise LimitExceeded(
            f"document is {size} bytes, over the limit of {limits.max_bytes}",
            where="byte offset 0",
        )
    try:
        text: str = methods.decode(data, "utf-8")
    except UnicodeDecodeError as exc:
        for mark, name in _BOMS:
            if methods.startswith(data, mark):
                raise StrictJSONError(f"byte order mark ({name})", where="byte offset 0") from None
        raise StrictJSONError(
            f"invalid UTF-8 ({exc.reason})", where=f"byte offset {exc.start}"
        ) from None
    if text[:1] == "\ufeff":
        raise StrictJSONError("byte order mark (UTF-8)", where="byte offset 0")
    return text


def _check_size(length: int, limits: JSONLimits) -> None:
    # A code point is at least one UTF-8 byte: reject before encoding anything big.
    if length > limits.max_bytes:
        raise LimitExceeded(
            f"document is {length} characters, over the limit of {limits.max_bytes} bytes",
            where="char offset 0",
        )


def _check_text(text: str, limits: JSONLimits) -> str:
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise StrictJSONError(
            f"lone surrogate code point U+{ord(text[exc.start]):04X}",
            where=_where(text, exc.start, False),
        ) from None
    if size > limits.max_bytes:
        raise LimitExceeded(
            f"document is {size} bytes of UTF-8, over the limit of {limits.max_bytes}",
            where="char offset 0",
        )
    if text[:1] == "\ufeff":
        raise StrictJSONError("byte order mark (U+FEFF)", where="char offset 0")
    return text


def _where(text: str, pos: int, from_bytes: bool) -> str:
    """``line L column C (byte offset B)``; computed only when an error is raised."""
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    if from_bytes:
        return f"line {line} column {column} (byte offset {len(text[:pos].encode('utf-8'))})"
    return f"line {line} column {column} (char offset {pos})"


# ---------------------------------------------------------------------------
# Fast path: the json module's C scanner, used only when linear pre-scans prove that
# no string can be over its limit, no lone surrogate escape occurs and (for a large
# document) the value limit cannot be reached; its hooks reject what json.loads
# would let through, and the depth and items of what it accepts are checked after
# it. It never rejects on its own: anything it does not accept is handed to the
# iterative parser, which decides and locates the error.

_NOT_ACCEPTED: Final = object()
#: The scanner accepted the whole document (valid JSON) but it is over the depth or
#: item limit: the iterative parser only has to find where (see _parse's ``mode``).
_OVER_LIMIT: Final = object()


class _NotStrict(Exception):
    """Raised inside the json hooks; turns the fast path into 'not accepted'."""


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _NotStrict
    return obj


def _reject_constant(name: str) -> Any:
    raise _NotStrict


def _fast_decoder(max_number_chars: int) -> json.JSONDecoder:
    def parse_int(literal: str) -> int:
        if len(literal) > max_number_chars:
            raise _NotStrict
        return int(literal)

    def parse_float(literal: str) -> float:
        if len(literal) > max_number_chars:
            raise _NotStrict
        value = float(literal)
        if value in _INFINITIES:
            raise _NotStrict
        return value

    return json.JSONDecoder(
        object_pairs_hook=_unique_pairs,
        parse_constant=_reject_constant,
        parse_int=parse_int,
        parse_float=parse_float,
        strict=True,
    )


_DEFAULT_DECODER: Final = _fast_decoder(DEFAULT_LIMITS.max_number_chars)
# The C scanner itself: JSONDecoder.decode adds two Python frames around it. It
# returns (value, end) and raises StopIteration when no value starts at the index.
_Scan = Callable[[str, int], tuple[Any, int]]
_DEFAULT_SCAN: Final[_Scan] = _DEFAULT_DECODER.scan_once  # type: ignore[attr-defined]


def _fast_path(text: str, limits: JSONLimits) -> Any:
    size = len(text)
    # A literal is at least as long as its decoded string plus the two quotes.
    if (
        size - 2 > limits.max_string_chars
        and max(map(len, _STRING_LITERAL.findall(text)), default=0) - 2 > limits.max_string_chars
    ):
        return _NOT_ACCEPTED
    if (
        "\\u" in text
        and _SURROGATE_ESCAPE.search(text) is not None
        and _NO_LONE_SURROGATE_ESCAPE.fullmatch(text) is None
    ):
        return _NOT_ACCEPTED
    # A valid document has at most ``size`` values, at most (size - 1) // 2 items in
    # one container and nests at most size // 2 levels. The value limit bounds the
    # memory of what the scanner builds, so it is settled before the scanner runs:
    # counts over the raw text (brackets, commas and colons inside strings counted
    # too) give an upper bound.
    counted: tuple[int, int] | None = None
    if size > limits.max_values:
        counted = _counts(text)
        if 1 + sum(counted) + text.count(":") > limits.max_values:
            return _NOT_ACCEPTED
    # Likewise the item limit: a container over it makes the scanner build and the
    # walk below visit the whole document before the rejection, where the iterative
    # parser stops at the item that crosses it. A text with fewer commas cannot hold
    # such a container; one with more goes to the iterative parser, whose C-level
    # steps (runs of flat items, containers scanned within a window) keep acceptance
    # near the scanner's speed.
    if (size - 1) // 2 > limits.max_container_items:
        if counted is None:
            counted = _counts(text)
        if counted[1] + 1 > limits.max_container_items:
            return _NOT_ACCEPTED
    scan: _Scan = (
        _DEFAULT_SCAN
        if limits.max_number_chars == _DEFAULTS.max_number_chars
        else _fast_decoder(limits.max_number_chars).scan_once  # type: ignore[attr-defined]
    )
    start = 0
    if text[0] in _WS_CHARS:
        start = _WS.match(text).end()  # type: ignore[union-attr]
    try:
        value, end = scan(text, start)
    except (_NotStrict, ValueError, RecursionError, StopIteration):
        # ValueError: syntax (JSONDecodeError) or the interpreter's int digit guard;
        # StopIteration: no value at ``start``; RecursionError: nesting beyond the
        # interpreter's recursion limit, or the caller's own stack was already deep.
        # The iterative parser decides.
        return _NOT_ACCEPTED
    if end != size and _WS.match(text, end).end() != size:  # type: ignore[union-attr]
        return _NOT_ACCEPTED
    # The scanner accepted: the document is valid JSON. Depth and items next, each
    # only when the size leaves it in doubt: by counts for a small document (cheap
    # at that size), else by a walk over the value that gives up when it would cost
    # more than counting (many small values), then by counts, and a full walk only
    # when the counts leave a limit in doubt. A document of long strings walks in a
    # few steps, where counting its text would cost a third of decoding it.
    max_depth = limits.max_depth
    max_items = limits.max_container_items
    depth_doubt = size // 2 > max_depth
    items_doubt = (size - 1) // 2 > max_items
    if not (depth_doubt or items_doubt):
        return value
    if counted is None and size <= _COUNT_FIRST and not items_doubt:
        # Only the depth is in doubt (a document up to 16 KiB): its opening brackets
        # bound it; the commas (a third count over the text) are not needed.
        if text.count("[") + text.count("{") <= max_depth:
            return value
        return _OVER_LIMIT if _deeper_than(value, max_depth) else value
    if counted is None and size <= _COUNT_FIRST:
        counted = _counts(text)
    if counted is None:
        measured = _measure(value, max_depth, size // _WALK_BUDGET_DIVISOR)
        if measured is not None:
            return _OVER_LIMIT if _over(measured, limits) else value
        counted = _counts(text)
    opened, commas = counted
    depth_doubt = depth_doubt and opened > max_depth
    items_doubt = items_doubt and commas + 1 > max_items
    if items_doubt:
        return _OVER_LIMIT if _over(_measure(value, max_depth, None), limits) else value
    if depth_doubt:
        return _OVER_LIMIT if _deeper_than(value, max_depth) else value
    return value


# Documents up to this many characters are counted rather than walked.
_COUNT_FIRST: Final = 16 * 1024
# A walk of a larger document gets a budget of one value per this many characters:
# about what counting over the text costs.
_WALK_BUDGET_DIVISOR: Final = 32


def _counts(text: str) -> tuple[int, int]:
    """Opening brackets and commas in the raw text, strings included (upper bounds)."""
    return text.count("[") + text.count("{"), text.count(",")


def _over(measured: tuple[bool, int] | None, limits: JSONLimits) -> bool:
    return measured is None or measured[0] or measured[1] > limits.max_container_items


_referents: Final = gc.get_referents


def _measure(value: Any, max_depth: int, budget: int | None) -> tuple[bool, int] | None:
    """Walk a value the json scanner returned, one nesting level at a time.

    Returns (whether it nests deeper than ``max_depth``, most items in one
    container), or None as soon as the values visited would exceed ``budget``.
    Exact for what the scanner returns, a tree of fresh dicts and lists: the items
    of a container are its referents (a dict with str keys refers to its values
    only; anything else a referent might be is not a dict or list and is skipped).
    Each level costs a handful of C-level calls plus one type test per value:
    linear in the size of the value.
    """
    level: list[Any] = [value] if type(value) is dict or type(value) is list else []
    depth = 0
    most = 0
    visited = 0
    while level:
        depth += 1
        if depth > max_depth:
            return True, most
        sizes = list(map(len, level))
        visited += sum(sizes)
        if budget is not None and visited > budget:
            return None
        most = max(most, max(sizes))
        level = [child for child in _referents(*level) if type(child) is dict or type(child) is list]
    return False, most


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether a value the json scanner returned nests more than ``limit`` levels."""
    measured = _measure(value, limit, None)
    return measured is None or measured[0]


# ---------------------------------------------------------------------------
# The iterative parser: authoritative for every rejection.
#
# Accelerated (what ``loads`` runs), it takes C-level steps where they provably
# accept exactly what its own steps would: a run of up to _RUN flat items of a
# container (scalars without escapes, and arrays/objects of up to _FLAT such
# scalars), matched by one regex and built by the json scanner; and a container that
# the json scanner parses within a window of _WINDOW characters after it, checked
# for depth, items and values. Anything else, or anything in doubt (a hook, a syntax
# error, a limit), is left to its own steps, which decide and locate every
# rejection; so it stops where a limit is exceeded, at about the cost of accepting
# the text before that point.

#: Characters the json scanner may read for one container (see _Window).
_WINDOW: Final = 64 * 1024
#: A document the fast path refused is read by the own steps alone up to this length:
#: at most about _RUN items, where windows and runs save less than they cost.
_OWN_STEPS_UP_TO: Final = 512
#: Items of one run, and items of a flat container inside a run.
_RUN: Final = 256
_FLAT: Final = 64
#: Runs missed in a row after which a container gets none.
_RUN_MISSES: Final = 8
_WS_RE: Final = r"[ \t\n\r]*+"
#: A chain of opening brackets with the whitespace after each, and one bracket.
_OPEN_CHAIN: Final = re.compile(r"(?:\[[ \t\n\r]*+)+")
_BRACKET: Final = re.compile(r"\[")
_NUMBER_RE: Final = r"-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?(?:[eE][-+]?[0-9]++)?"


def _run_patterns(max_string: int, flat: int) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The ``match`` of a run of list items and of a run of object members (each
    item followed by its comma), for strings of at most ``max_string`` characters
    and flat containers of at most ``flat`` items (none if 0)."""
    ws = _WS_RE
    string = r'"[^"\\\x00-\x1f]{0,' + str(max_string) + r'}+"'
    scalar = rf"(?:{_NUMBER_RE}|{string}|true|false|null)"
    item = scalar
    if flat:
        more = f"{{0,{flat - 1}}}"
        array = rf"\[{ws}(?:{scalar}{ws}(?:,{ws}{scalar}{ws}){more})?\]"
        member = rf"{string}{ws}:{ws}{scalar}{ws}"
        obj = rf"\{{{ws}(?:{member}(?:,{ws}{member}){more})?\}}"
        item = rf"(?:{scalar}|{array}|{obj})"
    items = re.compile(rf"(?:{ws}{item}{ws},){{1,{_RUN}}}")
    members = re.compile(rf"(?:{ws}{string}{ws}:{ws}{item}{ws},){{1,{_RUN}}}")
    return items.match, members.match


_RUN_PATTERNS: dict[tuple[int, int], tuple[Callable[..., Any], Callable[..., Any]]] = {}
#: Chunk sizes, in items, from _RUN down: a chunk that fails is retried at half
#: its size (a limit or an error in it is then isolated in a few steps).
_CHUNK_SIZES: Final = (256, 128, 64, 32, 16, 8)
#: n -> the text up to and including the n-th comma: a chunk of items to try whole.
_CHUNKS: Final = {n: re.compile(r"(?:[^,]*+,){" + str(n) + "}").match for n in _CHUNK_SIZES}
#: (bracket, n) -> the text up to and including the n-th comma followed by ``bracket``.
_SEPARATED_CHUNKS: Final = {
    (bracket, n): re.compile(
        "(?:[^,]*+(?:,(?!{0})[^,]*+)*+,(?={0})){{{1}}}".format(re.escape(bracket), n)
    ).match
    for bracket in "[{" for n in _CHUNK_SIZES
}


_SCANS: dict[int, _Scan] = {}


def _scan_for(max_number: int) -> _Scan:
    """The json scanner with the strict hooks for ``max_number`` characters."""
    if max_number == _DEFAULTS.max_number_chars:
        return _DEFAULT_SCAN
    scan = _SCANS.get(max_number)
    if scan is None:
        if len(_SCANS) > 64:
            _SCANS.clear()
        scan = _SCANS[max_number] = _fast_decoder(max_number).scan_once  # type: ignore[attr-defined]
    return scan


def _runs_for(limits: JSONLimits) -> tuple[Callable[..., Any], Callable[..., Any]]:
    # Strings of a run are short: a long one is the parser's own step (a run that
    # gives up after 4,096 characters does not read a long string twice).
    key = (min(limits.max_string_chars, 4096), min(_FLAT, limits.max_container_items))
    runs = _RUN_PATTERNS.get(key)
    if runs is None:
        if len(_RUN_PATTERNS) > 64:  # odd limits, many of them: bounded cache
            _RUN_PATTERNS.clear()
        runs = _RUN_PATTERNS[key] = _run_patterns(*key)
    return runs


def _total_values(value: Any) -> int:
    """Values in a value the json scanner returned (itself and everything inside)."""
    total = 1
    level: list[Any] = [value] if type(value) is dict or type(value) is list else []
    while level:
        total += sum(map(len, level))
        level = [child for child in _referents(*level) if type(child) is dict or type(child) is list]
    return total



#: _parse's modes: its own steps only; with C-level steps (runs and windows); the
#: same for a document the scanner accepted whole but found over the depth or item
#: limit, where a window's container with more brackets than depth left is left to
#: its own steps at once (its exact depth was just measured on the whole value).
_OWN, _ACCELERATED, _LOCATE = 0, 1, 2


def _parse(  # noqa: C901
    text: str, limits: JSONLimits, from_bytes: bool, mode: int = _OWN
) -> Any:
    # ``[ \t\n\r]*`` always matches, so the match is never None.
    ws: Callable[[str, int], re.Match[str]] = _WS.match  # type: ignore[assignment]
    number = _NUMBER.match
    simple_key = _SIMPLE_KEY.match
    simple_string = _SIMPLE_STRING.match
    scan = _scanstring
    end = len(text)
    max_depth = limits.max_depth
    max_items = limits.max_container_items
    max_values = limits.max_values
    max_string = limits.max_string_chars
    max_number = limits.max_number_chars
    check_surrogates = _SURROGATE_ESCAPE.search(text) is not None
    runs: tuple[Callable[..., Any], Callable[..., Any]] | None = None
    scan_c: _Scan | None = None
    window_size = 0
    # Whether the value limit can be reached (the values of what a C-level step
    # takes are then counted exactly): -1 until first asked, since it costs three
    # counts over the whole text and a rejection may come before anything is taken.
    doubt = -1

    def values_doubt() -> bool:
        nonlocal doubt
        if doubt < 0:
            doubt = int(end > max_values and (
                1 + sum(_counts(text)) + text.count(":") > max_values))
        return doubt == 1

    if mode:
        runs = _runs_for(limits)
        scan_c = (_DEFAULT_SCAN if max_number == _DEFAULTS.max_number_chars
                  else _fast_decoder(max_number).scan_once)  # type: ignore[attr-defined]
        # A window no longer than a string may be: no string read in it is too long.
        window_size = min(_WINDOW, max_string + 2)
        if check_surrogates and _NO_LONE_SURROGATE_ESCAPE.fullmatch(text) is None:
            window_size = 0  # strings with escapes need the exact surrogate check
    # The window: text[win_lo:win_lo + len(win)]. A container the scanner could not
    # take (too big for the window, a syntax error, a hook, a limit) is read by the
    # parser's own steps, and its members get windows of their own; the characters
    # scanned in vain are counted, and once they reach twice the text no window is
    # tried again, so windows never cost more than a constant times the text (a
    # chain of nested containers each failing a limit cannot make them quadratic).
    win = ""
    win_lo = 0
    budget = 2 * end
    deep_seen = mode == _LOCATE  # a measured too-deep value: measure no more
    values = 0  # values begun so far (the value limit)

    def flat_and_long(pos: int) -> bool:
        """Whether the document's container at ``pos`` starts with _RUN items free of
        brackets (or _RUN containers): read by chunks from the start, not by a window
        that would read (and drop) up to _WINDOW characters of it before finding it
        does not fit. (Asked of the document's own value only: asked of every nested
        container, the look ahead would cost more than the windows it saves.)"""
        nonlocal budget
        if budget < 0:
            return False
        first = ws(text, pos + 1).end()
        after = _chunk_end(first, min(first + window_size, end), _RUN)
        if after < 0:
            budget -= min(window_size, end - pos)  # read in vain
            return False
        # _RUN items that are containers of their own (cut by the bracket that
        # starts each), or _RUN items free of brackets.
        return text[pos] == "[" and text.startswith(("{", "["), first) or not (
            text.count("[", first, after) or text.count("{", first, after))

    def window_value(pos: int, depth_left: int) -> tuple[Any, int] | None:
        """The container at ``pos`` as the json scanner parses it within a window, and
        its end; ``None`` if it does not fit, does not parse, or is in doubt."""
        nonlocal win, win_lo, budget, deep_seen, values
        if scan_c is None or budget < 0:
            return None
        fresh = not (win_lo <= pos < win_lo + len(win))
        while True:
            if fresh:
                win_lo, win = pos, text[pos : pos + window_size]
            at = pos - win_lo
            try:
                value, stop = scan_c(win, at)
            except (_NotStrict, ValueError, RecursionError, StopIteration):
                value = _NOT_ACCEPTED
            # A number cut by the window's end would have parsed short: a value
            # must end inside the window unless the window ends with the text.
            if value is not _NOT_ACCEPTED and (stop < len(win) or win_lo + len(win) == end):
                break
            budget -= len(win) - at
            if fresh:
                return None
            fresh = True
        # Over a limit (or in doubt): left to the parser's own steps, which stop where
        # the limit is crossed. The exact depth is measured once: after a value was
        # found too deep, a count over the limit is enough (a chain of nested
        # containers must not be measured level after level).
        over = False
        # (A value of n characters nests at most n // 2 levels and holds at most
        # (n - 1) // 2 items in one container: short ones need no count.)
        if (stop - at) // 2 > depth_left and (
                win.count("[", at, stop) + win.count("{", at, stop) > depth_left):
            over = deep_seen or _deeper_than(value, depth_left)
            deep_seen = deep_seen or over
        if not over and (stop - at - 1) // 2 > max_items and (
                win.count(",", at, stop) + 1 > max_items):
            over = _over(_measure(value, max_depth, None), limits)
        inside = _total_values(value) - 1 if not over and values_doubt() else 0
        if over or values + inside > max_values:
            budget -= stop - at
            return None
        values += inside
        return value, win_lo + stop

    def fail(
        message: str, pos: int, error: type[StrictJSONError | LimitExceeded] = StrictJSONError
    ) -> NoReturn:
        raise error(message, where=_where(text, pos, from_bytes))

    def string_at(pos: int, what: str) -> tuple[str, int]:
        # Any string literal, escapes included; ``pos`` is at the opening quote.
        try:
            value, after = scan(text, pos + 1, True)
        except ValueError as exc:
            reason = str(getattr(exc, "msg", exc)).removesuffix(" at")
            fail(f"invalid {what}: {reason}", getattr(exc, "pos", pos))
        if len(value) > max_string:
            fail(
                f"{what} of {len(value)} characters, over the limit of {max_string}",
                pos,
                LimitExceeded,
            )
        if check_surrogates and _SURROGATE.search(value) is not None:
            # Every escape before the lone one is valid (the scanner decoded them),
            # so the longest escape-valid prefix ends exactly at the lone escape.
            lone = _NO_LONE_SURROGATE_ESCAPE.match(text, pos + 1)
            fail(f"lone surrogate escape in {what}", lone.end() if lone else pos)
        return value, after

    def key_at(pos: int) -> tuple[str, int, int]:
        # ``pos`` is after ``{`` or ``,``; returns the key, its offset and the offset
        # of the member's value. Keys without escapes take the one-regex route.
        match = simple_key(text, pos)
        if match is not None:
            key = match.group(1)
            if len(key) > max_string:
                fail(
                    f"object key of {len(key)} characters, over the limit of {max_string}",
                    match.start(1) - 1,
                    LimitExceeded,
                )
            return key, match.start(1) - 1, match.end()
        pos = ws(text, pos).end()
        if pos >= end or text[pos] != '"':
            fail("expected a string object key", pos)
        key, after = string_at(pos, "object key")
        after = ws(text, after).end()
        if after >= end or text[after] != ":":
            fail("expected ':' after object key", after)
        return key, pos, ws(text, after + 1).end()

    stack: list[list[Any] | dict[str, Any]] = []
    pending: list[tuple[str, int]] = []  # (key, offset) of the member being parsed
    value: Any = None

    chunk_sizes: dict[int, int] = {}  # id of an open container -> its chunk size now
    no_runs: set[int] = set()  # ... a run would cross a limit in, or keeps missing in
    run_misses: dict[int, int] = {}

    def chunk_of(at: int, container: list[Any] | dict[str, Any]) -> tuple[Any, int] | None:
        """The next _RUN items (members) at ``at``, up to the _RUN-th comma, as the json
        scanner builds them, and where they end; ``None`` if the comma is not between
        two of them (one inside a string or a nested value: the scan fails), or a
        limit could be crossed inside them. A container a chunk failed in gets none
        again (each failure is counted against the window budget)."""
        nonlocal budget
        size = chunk_sizes.get(id(container), _RUN)
        if not window_size or budget < 0 or not size:
            return None
        limit = min(at + window_size, end)
        after = _chunk_end(at, limit, size)
        if after < 0:
            chunk_sizes[id(container)] = 0
            budget -= limit - at
            return None
        body = text[at : after - 1]
        wrapped = ("[" + body + "]") if type(container) is list else ("{" + body + "}")
        try:
            built, stop = scan_c(wrapped, 0)  # type: ignore[misc]
        except (_NotStrict, ValueError, RecursionError, StopIteration):
            stop = -1
        # The chunk's own commas bound the items of anything nested in it, its
        # brackets its depth, its length every string in it; when they leave a limit
        # in doubt, the built value is measured (one walk per chunk).
        opens = body.count("[") + body.count("{") if stop == len(wrapped) else 0
        if stop != len(wrapped) or len(body) > max_string + 2 or (
                (len(stack) + opens > max_depth or (opens and body.count(",") >= max_items))
                and _over(_measure(built, max_depth - len(stack) + 1, None), limits)):
            chunk_sizes[id(container)] = size // 2 if size > _CHUNK_SIZES[-1] else 0
            budget -= len(body)
            return None
        return built, after

    def _chunk_end(at: int, limit: int, size: int) -> int:
        """Where ``size`` items from ``at`` end (after the comma that follows them),
        or -1 if not within ``limit``. Items that are containers: at a comma followed
        by the bracket the first one starts with; others at a comma (a comma inside
        an item makes the scan fail: that is all a wrong cut costs)."""
        if text.startswith(("{", "["), at):
            match = _SEPARATED_CHUNKS[text[at], size](text, at, limit)
        else:
            match = _CHUNKS[size](text, at, limit)
        return match.end() if match is not None else -1

    def run_of(at: int, container: list[Any] | dict[str, Any]) -> int:
        """Append the run of items (or members) at ``at`` to ``container`` if the json
        scanner accepts it and no limit can be crossed in it: a chunk of _RUN items
        (chunk_of), else a run of flat ones matched by a regex; return where the run
        ended (``at`` if none was taken)."""
        nonlocal values
        if runs is None or scan_c is None or len(stack) >= max_depth or id(container) in no_runs:
            return at
        is_list = type(container) is list
        chunk = chunk_of(at, container)
        if chunk is not None:
            built, after = chunk
        else:
            if text.startswith(("[[", "[{", "{[", "{{"), at):
                return at  # (a container of containers is no flat item)
            match = (runs[0] if is_list else runs[1])(text, at)
            if match is None:
                # Items that are no flat ones: after a few misses in a row, none is
                # tried again in this container.
                misses = run_misses.get(id(container), 0) + 1
                run_misses[id(container)] = misses
                if misses >= _RUN_MISSES:
                    no_runs.add(id(container))
                return at
            run_misses.pop(id(container), None)
            after = match.end()
            try:
                built, _ = scan_c(("[" if is_list else "{") + text[at : after - 1]
                                  + ("]" if is_list else "}"), 0)
            except (_NotStrict, ValueError, RecursionError, StopIteration):
                return at
        added = _total_values(built) - 1 if values_doubt() else len(built)
        if len(container) + len(built) > max_items or values + added > max_values:
            # A limit is crossed within the next _RUN items: the parser's own steps
            # find where; no run is tried again in this container.
            no_runs.add(id(container))
            return at
        if type(container) is list:
            container.extend(built)
        else:
            obj = cast(dict[str, Any], container)
            if not obj.keys().isdisjoint(built):
                return at
            obj.update(built)
        values += added
        return ws(text, after).end()

    def items_at(at: int, after: int, container: list[Any]) -> int:
        """Append the flat items of ``text[at:after]`` (each followed by its comma)
        to ``container`` and return where the next value starts, or ``at`` if the
        scanner refuses them or the depth, item or value limit would be crossed."""
        nonlocal values
        try:
            built, _ = _scan_for(max_number)("[" + text[at : after - 1] + "]", 0)
        except (_NotStrict, ValueError, RecursionError, StopIteration):
            return at
        # (The regex holds strings and flat containers within their limits.)
        inner = [item for item in built if type(item) is list or type(item) is dict]
        added = len(built) + sum(map(len, inner))
        if (len(container) + len(built) > max_items or values + added > max_values
                or (inner and len(stack) >= max_depth)):
            return at
        container.extend(built)
        values += added
        return ws(text, after).end()

    flat_run = None if mode else _runs_for(limits)[0]
    pos = ws(text, 0).end()
    while True:
        # Parse one value at ``pos`` (whitespace already skipped).
        if runs is not None and stack and type(stack[-1]) is list:
            while True:
                taken = run_of(pos, stack[-1])
                if taken == pos:
                    break
                pos = taken
        elif flat_run is not None and stack and type(stack[-1]) is list and (
                (flat := flat_run(text, pos)) is not None):
            # Own steps: flat items of an array (scalars, containers of scalars),
            # each with its comma, in one step when the scanner takes them and no
            # limit is crossed in them (else the own steps read them and stop where
            # the error is).
            pos = items_at(pos, flat.end(), stack[-1])
        if pos >= end:
            fail("expected a value, found end of document", pos)
        values += 1
        if values > max_values:
            fail(f"more than {max_values} values in the document", pos, LimitExceeded)
        char = text[pos]
        if char == '"':
            match = simple_string(text, pos)
            if match is None:
                value, pos = string_at(pos, "string")
            else:
                value = match.group(1)
                if len(value) > max_string:
                    fail(
                        f"string of {len(value)} characters, over the limit of {max_string}",
                        pos,
                        LimitExceeded,
                    )
                pos = match.end()
        elif (char == "{" or char == "[") and (got := (
                window_value(pos, max_depth - len(stack))
                if window_size and len(stack) < max_depth and (stack or not flat_and_long(pos))
                else None)) is not None:
            value, pos = got
        elif char == "{" or char == "[":
            if len(stack) >= max_depth:
                fail(f"nesting deeper than {max_depth} levels", pos, LimitExceeded)
            inner = pos + 1
            if inner < end and text[inner] in _WS_CHARS:
                inner = ws(text, inner).end()
            if char == "[":
                if inner < end and text[inner] == "]":
                    value, pos = [], inner + 1
                else:
                    stack.append([])
                    pos = inner
                    if not mode and inner < end and text[inner] == "[":
                        # A chain of opening brackets (``[[[[``, whitespace between):
                        # all but its last are opened in one step, as far as no
                        # value or depth limit is crossed; the last (which may be
                        # ``[]``), and any that crosses a limit, is the next step.
                        chain = _OPEN_CHAIN.match(text, inner).end()  # type: ignore[union-attr]
                        take = min(text.count("[", inner, chain) - 1,
                                   max_values - values, max_depth - len(stack))
                        if take > 0:
                            stack.extend(map(list, repeat((), take)))
                            values += take
                            pos = next(islice(_BRACKET.finditer(text, inner), take, None)).start()
                    continue
            elif inner < end and text[inner] == "}":
                value, pos = {}, inner + 1
            else:
                created: dict[str, Any] = {}
                stack.append(created)
                if runs is not None:
                    while (taken := run_of(inner, created)) != inner:
                        inner = taken
                key, key_pos, pos = key_at(inner)
                pending.append((key, key_pos))
                continue
        elif char == "-" or "0" <= char <= "9":
            if text.startswith("-Infinity", pos):
                fail("non-finite number -Infinity", pos)
            match = number(text, pos)
            if match is None:
                fail("invalid number", pos)
            after = match.end()
            if after - pos > max_number:
                fail(
                    f"number literal longer than {max_number} characters", pos, LimitExceeded
                )
            literal = text[pos:after]
            if match.group(1) is None and match.group(2) is None:
                try:
                    value = int(literal)
                except ValueError:
                    fail("integer literal over the interpreter's digit limit", pos, LimitExceeded)
            else:
                value = float(literal)
                if value in _INFINITIES:
                    fail(f"number {literal[:40]} overflows to infinity", pos)
            pos = after
        elif char in _LITERALS:
            word, value = _LITERALS[char]
            if not text.startswith(word, pos):
                fail("invalid literal", pos)
            pos += len(word)
        elif text.startswith(_NON_FINITE, pos):
            fail(f"non-finite number {'NaN' if char == 'N' else 'Infinity'}", pos)
        else:
            fail(f"unexpected character {char!r} where a value should start", pos)

        # Attach the finished value to the open containers, closing as many as end here.
        while True:
            if pos < end and text[pos] in _WS_CHARS:
                pos = ws(text, pos).end()
            if not stack:
                if pos != end:
                    fail("trailing data after the document", pos)
                return value
            top = stack[-1]
            char = text[pos] if pos < end else ""
            if type(top) is list:
                if len(top) >= max_items:
                    fail(f"array with more than {max_items} items", pos, LimitExceeded)
                top.append(value)
                if char == ",":
                    pos += 1
                    if pos < end and text[pos] in _WS_CHARS:
                        pos = ws(text, pos).end()
                    break
                if char == "]":
                    value = stack.pop()
                    pos += 1
                    continue
                fail("expected ',' or ']' in array", pos)
            else:
                obj: dict[str, Any] = top  # type: ignore[assignment]
                key, key_pos = pending.pop()
                if key in obj:
                    fail(f"duplicate object key {key[:80]!r}", key_pos)
                if len(obj) >= max_items:
                    fail(f"object with more than {max_items} members", key_pos, LimitExceeded)
                obj[key] = value
                if char == ",":
                    pos += 1
                    if runs is not None:
                        pos = ws(text, pos).end()
                        while (taken := run_of(pos, obj)) != pos:
                            pos = taken
                    key, key_pos, pos = key_at(pos)
                    pending.append((key, key_pos))
                    break
                if char == "}":
                    value = stack.pop()
                    pos += 1
                    continue
                fail("expected ',' or '}' in object", pos)

"""OpenAI Chat Completions: the request side (design 3.2).

Chat Completions has no continuation builder in this library (the next request
is the caller's own message list, and the turn's ``message`` is already the
assistant message to append). What the contract does own on the request side is
the public entry's checks: the response mode must be known, the fidelity mode
(``openai``) takes no structured-output schema, and a fidelity request may not ask
for more than one choice. Every rejection here is an
:class:`~contracts.errors.InvalidArgument` (a ``ValueError``; disposition
``rejected``: the request can never succeed as given). Reads only the revision
tables, never the stream.
"""

from __future__ import annotations

from typing import Any

from .._values import preview
from ..errors import InvalidArgument
from ._tables import REVISION, RevisionTables
from ._turn import tables_for

__all__ = ["check_request", "check_response_mode", "MAX_REQUEST_KEYS"]

#: Top-level keys (and ``extra_body`` keys) one request may carry.
MAX_REQUEST_KEYS = 10_000


def _plain_keys(container: dict[Any, Any], what: str) -> None:
    # Every key an exact str before any lookup: a key whose __eq__/__hash__ is
    # caller code could otherwise run during ``"n" in container``.
    if len(container) > MAX_REQUEST_KEYS:
        raise InvalidArgument(f"{what} has more than {MAX_REQUEST_KEYS} keys", where=what)
    for key in container:
        if type(key) is not str:
            raise InvalidArgument(f"{what} has a non-string key {preview(key)}", where=what)


def check_response_mode(response_mode: object, tables: RevisionTables) -> str:
    """Return ``response_mode`` if it is one of the revision's response modes;
    else raise :class:`~contracts.errors.InvalidArgument` (design 3.2: an unknown
    mode is an error at the public entry)."""
    if type(response_mode) is not str or response_mode not in tables.response_modes:
        raise InvalidArgument(
            f"unknown response mode {preview(response_mode)} "
            f"(known: {', '.join(tables.response_modes)})",
            where="response_mode",
        )
    return response_mode


def check_request(
    request: object,
    *,
    response_mode: str,
    structured: object = None,
    revision: str = REVISION,
) -> None:
    """Check a request at the public entry, before anything is sent (design 3.2).

    In this order: ``response_mode`` must be one of ``RESPONSE_MODES`` (``text``,
    ``openai``); a ``structured`` output request (any value but ``None``: the
    caller's schema) is refused in the ``openai`` mode -- no schema is injected and
    nothing is re-asked; a ``response_format`` inside ``request`` is the caller's own
    field and passes. ``request`` is the JSON payload (a ``dict`` with string keys).
    In the ``openai`` mode ``n`` must be absent or the strict integer 1 (``True``,
    ``1.0``, ``null`` and every other value are rejected), both in the payload and
    in an ``extra_body`` object (checked even when the other value would shadow it;
    a null ``extra_body`` is no extra body). The ``text`` mode keeps the legacy
    behaviour (design 3.2 "text + n"): ``n`` is not checked.

    Raises :class:`~contracts.errors.InvalidArgument` for each of these rejections
    (also past :data:`MAX_REQUEST_KEYS` keys) and for an unknown ``revision``.
    """
    tables = tables_for(revision)
    mode = check_response_mode(response_mode, tables)
    if mode == tables.fidelity_mode and structured is not None:
        raise InvalidArgument(
            f"a structured-output request cannot use the {mode!r} response mode "
            "(no schema is injected and nothing is re-asked; pass response_format "
            "in the request instead)",
            where="structured",
        )
    if type(request) is not dict:
        raise InvalidArgument(
            f"request must be a JSON object (dict), got {preview(request)}", where="request"
        )
    _plain_keys(request, "request")
    if mode != tables.fidelity_mode:
        return
    wanted = tables.request_choice_count
    for container_key in tables.request_choice_containers:
        if not container_key:
            container: dict[Any, Any] = request
            path = "n"
        elif request.get(container_key) is not None:  # null: the SDK's "no extra body"
            value = request[container_key]
            if type(value) is not dict:
                raise InvalidArgument(
                    f"request {container_key} must be an object, got {preview(value)}",
                    where=container_key,
                )
            _plain_keys(value, container_key)
            container = value
            path = f"{container_key}.n"
        else:
            continue
        if "n" not in container:
            continue
        n = container["n"]
        if type(n) is not int or n != wanted:
            raise InvalidArgument(
                f"request {path} must be absent or the integer {wanted} in the "
                f"{mode!r} response mode, got {preview(n)}",
                where=path,
            )

"""OpenAI Chat Completions: the request side (design 3.2).

Chat Completions has no continuation builder in this library (the next request
is the caller's own message list, and the turn's ``message`` is already the
assistant message to append). What the contract does own on the request side is
the choice count: :func:`check_request` refuses a fidelity request that could
return more than one choice. Reads only the revision tables, never the stream.
"""

from __future__ import annotations

from typing import Any

from .._values import preview
from ..errors import LimitExceeded, ProtocolViolation, UnsupportedProviderState
from ._tables import REVISION
from ._turn import tables_for

__all__ = ["check_request", "MAX_REQUEST_KEYS"]

#: Top-level keys (and ``extra_body`` keys) one request may carry.
MAX_REQUEST_KEYS = 10_000


def _plain_keys(container: dict[Any, Any], what: str) -> None:
    # Every key an exact str before any lookup: a key whose __eq__/__hash__ is
    # caller code could otherwise run during ``"n" in container``.
    if len(container) > MAX_REQUEST_KEYS:
        raise LimitExceeded(f"{what} has more than {MAX_REQUEST_KEYS} keys", where=what)
    for key in container:
        if type(key) is not str:
            raise ProtocolViolation(f"{what} has a non-string key {preview(key)}", where=what)


def check_request(request: object, *, revision: str = REVISION) -> None:
    """Check the request-side choice count of a fidelity request (design 3.2).

    ``request`` is the JSON payload (a ``dict`` with string keys). ``n`` must be
    absent or the strict integer 1 (``True``, ``1.0``, ``null`` and every other
    value are rejected), both in the payload and in an ``extra_body`` object
    (checked even when the other value would shadow it; a null ``extra_body`` is no
    extra body). Raises :class:`~contracts.errors.ProtocolViolation` if the request
    or its ``extra_body`` is not such an object,
    :class:`~contracts.errors.UnsupportedProviderState` for another ``n`` or an
    unknown ``revision``, :class:`~contracts.errors.LimitExceeded` past
    :data:`MAX_REQUEST_KEYS`.
    """
    tables = tables_for(revision)
    if type(request) is not dict:
        raise ProtocolViolation(
            f"request must be a JSON object (dict), got {preview(request)}", where="request"
        )
    _plain_keys(request, "request")
    wanted = tables.request_choice_count
    for container_key in tables.request_choice_containers:
        if not container_key:
            container: dict[Any, Any] = request
            path = "n"
        elif request.get(container_key) is not None:  # null: the SDK's "no extra body"
            value = request[container_key]
            if type(value) is not dict:
                raise ProtocolViolation(
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
            raise UnsupportedProviderState(
                f"request {path} must be absent or the integer {wanted}, got {preview(n)}",
                where=path,
            )

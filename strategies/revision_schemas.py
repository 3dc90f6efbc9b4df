"""The JSON Schemas of each contract revision's event shapes.

Layout (package data of ``pcfuzz.fixtures``):

- ``fixtures/schemas/<contract>/*.json``: revision ``2026-07-21``, the seed's pinned
  baseline, hand-written and unchanged;
- ``fixtures/schemas/<contract>/<revision>/*.json``: every later revision, the same
  files, derived from the pinned ones by the patches in this module. Each patch is a
  row of ``fixtures/CHANGELOG.md`` and was written down from the SDK types the
  revision was read from (never read from the parser's tables), so a schema that
  disagrees with the parser is a finding, not a copy.

``python -m pcfuzz.strategies.revision_schemas`` (from a checkout) rewrites the derived
files; ``--check`` only reports whether they are current (exit 1 if not).
``tests/test_revision_schemas.py`` runs the same comparison and validates every
fixture event, and every event the strategies generate for a revision, against that
revision's schemas.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pcfuzz._data import checkout_root, fixtures_dir
from pcfuzz.contracts.registry import NAMES

__all__ = [
    "CONTRACTS",
    "PINNED",
    "REVISIONS",
    "SCHEMAS_DIR",
    "derived_schemas",
    "load_schemas",
    "render_schema",
    "schema_dir",
    "schema_name",
]

SCHEMAS_DIR = fixtures_dir() / "schemas"
PINNED = "2026-07-21"
#: Every revision with schemas, the pinned one first.
REVISIONS = ("2026-07-21", "2026-12-01")
CONTRACTS = NAMES

Schema = dict[str, Any]
Patch = Callable[[str, Schema], None]


def schema_dir(contract: str, revision: str) -> Path:
    """The folder of ``contract``'s schemas at ``revision``."""
    if contract not in CONTRACTS or revision not in REVISIONS:
        raise ValueError(f"no schemas for {contract!r} at revision {revision!r}")
    base = SCHEMAS_DIR / contract.replace("-", "_")
    return base if revision == PINNED else base / revision


def load_schemas(contract: str, revision: str) -> dict[str, Schema]:
    """``{file stem: schema}`` of ``contract`` at ``revision`` (the shipped files)."""
    return {path.name[: -len(".json")]: json.loads(path.read_text(encoding="utf-8"))
            for path in sorted(schema_dir(contract, revision).glob("*.json"))}


def schema_name(contract: str, event: Any) -> str | None:
    """The schema (file stem) that describes ``event`` as ``contract``'s parser takes it;
    ``None`` for an event no schema describes (the Chat ``[DONE]`` sentinel)."""
    if contract == "openai-responses":
        return str(event["type"])
    if contract == "anthropic-messages":
        return str(event["event"])
    if contract == "gemini-interactions":
        return str(event["event_type"]).replace(".", "_")
    if event == "[DONE]" or event == {"data": "[DONE]"}:
        return None
    return "chunk"


# --- the patches of revision 2026-12-01 ------------------------------------------------
# Written from openai 3.57.0, anthropic 2.15.0 and google-genai 3.6.1 (the SDK versions
# the revision is pinned to in contracts.fixtures.CONTRACT_PINS).

#: (pinned text, this revision's text) in every description; each schema file must
#: contain the pinned text at least once.
_PROVENANCE: dict[str, tuple[str, str]] = {
    "openai-responses": (
        "Pinned event shape, contract revision 2026-07-21 (openai-python 2.46.0)",
        "Event shape of contract revision 2026-12-01 (openai-python 3.57.0)"),
    "anthropic-messages": (
        "(pinned revision 2026-07-21, anthropic-python 0.117.0)",
        "(contract revision 2026-12-01, anthropic-python 2.15.0)"),
    "gemini-interactions": (
        "Pinned shape (contract revision 2026-07-21, API v1, google-genai 2.12.1)",
        "Shape of contract revision 2026-12-01 (API v1, google-genai 3.6.1)"),
    "openai-chat": (
        "Pinned to openai-python 2.46.0",
        "Contract revision 2026-12-01, read from openai-python 3.57.0"),
}

#: google-genai 3.6.1 InteractionStatus (google/genai/_gaos/types/interactions/
#: interaction.py) beyond 2.12.1's six.
_NEW_STATUSES = ("budget_exceeded", "queued", "idle", "requires_continuation")
#: google-genai 3.6.1 Step union (step.py) beyond the pinned v1 steps; each has a delta
#: type of the same name (processingcalldelta.py, retrievalcalldelta.py, ...).
_NEW_STEPS = ("processing_call", "processing_result", "retrieval_call", "retrieval_result",
              "tool_search_call", "tool_search_result")
#: google-genai 3.6.1 hosted call deltas carry ``arguments`` as an object
#: (codeexecutioncalldelta.py, urlcontextcalldelta.py, googlesearchcalldelta.py,
#: googlemapscalldelta.py, retrievalcalldelta.py, toolsearchcalldelta.py); only
#: ``arguments_delta`` (argumentsdelta.py) carries a string fragment.
_DELTA_ARGUMENTS: Schema = {
    "type": ["string", "object"],
    "description": "a string fragment on arguments_delta, the arguments object on a "
                   "hosted call's delta (google-genai 3.6.1)",
}
_DELTA_ARGUMENTS_BY_TYPE: Schema = {
    "if": {"properties": {"type": {"const": "arguments_delta"}}},
    "then": {"properties": {"arguments": {"type": "string"}}},
    "else": {"properties": {"arguments": {"type": "object"}}},
}
_PINNED_STATUSES = ["in_progress", "requires_action", "completed", "failed", "cancelled",
                    "incomplete"]


def _walk(node: Any, visit: Callable[[dict[str, Any]], None]) -> None:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            visit(current)
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)


def _responses_args_done(name: str, schema: Schema) -> None:
    # ResponseFunctionCallArgumentsDoneEvent (response_function_call_arguments_done_event.py)
    # is {arguments, item_id, output_index, sequence_number, type}: no name.
    if name != "response.function_call_arguments.done":
        return
    schema["required"] = [key for key in schema["required"] if key != "name"]
    schema["title"] = "final arguments (name optional since revision 2026-12-01)"
    schema["properties"]["name"]["description"] = (
        "not in the openai 3.57.0 type; when present it must equal the added item's name")


def _gemini_enums(name: str, schema: Schema) -> None:
    counts = {"status": 0, "step": 0, "delta": 0}

    def visit(node: dict[str, Any]) -> None:
        properties = node.get("properties")
        if not isinstance(properties, dict):
            return
        status = properties.get("status")
        if isinstance(status, dict) and status.get("enum") == _PINNED_STATUSES:
            status["enum"] = [*_PINNED_STATUSES, *_NEW_STATUSES]
            counts["status"] += 1
        kind = properties.get("type")
        if isinstance(kind, dict) and isinstance(kind.get("enum"), list):
            values = kind["enum"]
            if "function_call" in values and "google_maps_result" in values:
                kind["enum"] = [*values, *_NEW_STEPS]
                counts["step"] += 1
            elif "arguments_delta" in values:
                kind["enum"] = [*values, *_NEW_STEPS]
                properties["arguments"] = copy.deepcopy(_DELTA_ARGUMENTS)
                node.update(copy.deepcopy(_DELTA_ARGUMENTS_BY_TYPE))
                counts["delta"] += 1

    _walk(schema, visit)
    expected = {
        "event": {"status": 3, "step": 1, "delta": 1},
        "interaction_created": {"status": 1},
        "interaction_status_update": {"status": 1},
        "interaction_completed": {"status": 1},
        "step_start": {"step": 1},
        "step_delta": {"delta": 1},
    }.get(name, {})
    found = {key: value for key, value in counts.items() if value}
    if found != expected:  # the pinned schema changed shape: the patch no longer fits
        raise RuntimeError(f"gemini-interactions/{name}: patched {found}, expected {expected}")


def _chat_audio(name: str, schema: Schema) -> None:
    # ChoiceDelta (openai/types/chat/chat_completion_chunk.py) gained
    # audio: Optional[ChoiceDeltaAudio]; this contract accepts it only as null.
    if name != "chunk":
        return
    delta = schema["properties"]["choices"]["items"]["properties"]["delta"]
    delta["properties"]["audio"] = {
        "type": "null",
        "description": "openai 3.57.0 ChoiceDelta.audio: no merge rule here, so only null "
                       "(a non-null audio delta fails closed)",
    }


_PATCHES: dict[str, dict[str, tuple[Patch, ...]]] = {
    "2026-12-01": {
        "openai-responses": (_responses_args_done,),
        # No field set the parser reads changed (fixtures/CHANGELOG.md): metadata only.
        "anthropic-messages": (),
        "gemini-interactions": (_gemini_enums,),
        # The final message level is open (extension fields kept): only the chunk changes.
        "openai-chat": (_chat_audio,),
    },
}


def _provenance(contract: str, revision: str, name: str, schema: Schema) -> None:
    old, new = _PROVENANCE[contract]
    replaced = 0

    def visit(node: dict[str, Any]) -> None:
        nonlocal replaced
        text = node.get("description")
        if isinstance(text, str) and old in text:
            node["description"] = text.replace(old, new)
            replaced += 1

    _walk(schema, visit)
    if not replaced:
        raise RuntimeError(f"{contract}/{name}: no description names {old!r}")
    ident = schema.get("$id")
    if isinstance(ident, str):
        if PINNED in ident:
            schema["$id"] = ident.replace(PINNED, revision)
        else:  # "<folder>/<name>.json": the file's own path
            folder, _, rest = ident.rpartition("/")
            schema["$id"] = f"{folder}/{revision}/{rest}"


def derived_schemas(contract: str, revision: str) -> dict[str, Schema]:
    """The schemas of ``contract`` at a later ``revision``: the pinned files with that
    revision's provenance and its patches applied."""
    if revision == PINNED or revision not in _PATCHES:
        raise ValueError(f"revision {revision!r} is not derived")
    out: dict[str, Schema] = {}
    for name, pinned in load_schemas(contract, PINNED).items():
        schema = copy.deepcopy(pinned)
        _provenance(contract, revision, name, schema)
        for patch in _PATCHES[revision][contract]:
            patch(name, schema)
        out[name] = schema
    return out


def render_schema(schema: Schema) -> bytes:
    return (json.dumps(schema, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def main(argv: list[str]) -> int:
    check = "--check" in argv
    if not check and checkout_root() is None:
        print("revision_schemas: rewriting needs a source checkout (the installed schemas "
              "are read-only); --check only compares", file=sys.stderr)
        return 2
    stale: list[Path] = []
    for revision in REVISIONS[1:]:
        for contract in CONTRACTS:
            folder = schema_dir(contract, revision)
            wanted = {f"{name}.json": render_schema(schema)
                      for name, schema in derived_schemas(contract, revision).items()}
            present = {p.name for p in folder.glob("*.json")} if folder.is_dir() else set()
            for extra in sorted(present - wanted.keys()):
                stale.append(folder / extra)
                if not check:
                    (folder / extra).unlink()
            for file, data in wanted.items():
                path = folder / file
                if path.is_file() and path.read_bytes() == data:
                    continue
                stale.append(path)
                if not check:
                    folder.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(data)
    for path in stale:
        print(f"{'stale' if check else 'wrote'}: {path.relative_to(SCHEMAS_DIR.parent.parent)}")
    return 1 if stale and check else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

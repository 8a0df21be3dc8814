"""Export and import as JSONL: one record per line, lossless round trip.

Line shapes: ``{"type": "memory", ...MemoryItem}``, ``{"type": "vector", "id", "embedding_id",
"vector": base64 float32}``, ``{"type": "history", ...HistoryEvent}``, ``{"type": "message",
"scope", "message"}``, ``{"type": "entity" | "relation", ...}`` (graph).
The first line is a header with the format version.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from memstrata.errors import InvalidInputError
from memstrata.graph.model import Entity, Relation
from memstrata.storage.protocol import Store, Vector, WriteBatch
from memstrata.types import HistoryEvent, MemoryItem, Message, Scope, StoredMessage
from memstrata.validation import describe_validation_error

FORMAT = "memstrata-export"
VERSION = 1

Embed = Callable[[list[MemoryItem]], list[tuple[str, Any]]]


def _lines(store: Store) -> Iterator[dict[str, Any]]:
    yield {"type": "header", "format": FORMAT, "version": VERSION, "embedding_id": store.embedding_id()}
    for kind, record in store.export_all():
        if kind == "memory" and isinstance(record, MemoryItem):
            yield {"type": "memory", **record.model_dump(mode="json")}
        elif kind == "vector" and isinstance(record, tuple):
            memory_id, embedding_id, vector = record
            encoded = base64.b64encode(np.asarray(vector, dtype=np.float32).tobytes()).decode("ascii")
            yield {"type": "vector", "id": memory_id, "embedding_id": embedding_id, "vector": encoded}
        elif kind == "history" and isinstance(record, HistoryEvent):
            yield {"type": "history", **record.model_dump(mode="json")}
        elif kind == "message" and isinstance(record, StoredMessage):
            yield {
                "type": "message",
                "scope": record.scope.model_dump(mode="json"),
                "message": record.message.model_dump(mode="json"),
            }
        elif kind in ("entity", "relation") and isinstance(record, Entity | Relation):
            yield {"type": kind, **record.model_dump(mode="json")}


def export_jsonl(store: Store, path: Path) -> int:
    count = 0
    tmp = path.with_name(path.name + ".partial")
    with tmp.open("w", encoding="utf-8") as out:
        for line in _lines(store):
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
            count += 1
    tmp.replace(path)  # a reader never sees a half-written export
    return count


def import_jsonl(store: Store, path: Path, embed: Embed, embedding_id: str) -> int:
    """All-or-nothing import. Vectors of another model are dropped and re-embedded. Graph entities come
    without name vectors: resolution matches them by name and alias until they are mentioned again."""
    records = _Records()
    try:
        with path.open(encoding="utf-8") as source:
            for number, raw in enumerate(source, start=1):
                if raw.strip():
                    _parse_line(number, json.loads(raw), records, embedding_id)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInputError(f"cannot read export {path}: {exc}") from None
    memories, vectors = records.memories, records.vectors
    missing = [item for item in memories if item.id not in vectors]
    batch_vectors = [(item.id, vectors[item.id]) for item in memories if item.id in vectors]
    if missing:
        batch_vectors.extend(embed(missing))
    store.write(
        WriteBatch(
            messages=records.messages,
            inserts=memories,
            history=records.history,
            vectors=batch_vectors,
            embedding_id=embedding_id if batch_vectors else None,
            entities=records.entities,
            relations=records.relations,
        )
    )
    return len(memories)


@dataclass
class _Records:
    memories: list[MemoryItem] = field(default_factory=list)
    history: list[HistoryEvent] = field(default_factory=list)
    messages: list[tuple[Message, Scope]] = field(default_factory=list)
    vectors: dict[str, Vector] = field(default_factory=dict)
    entities: list[Entity] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)


def _parse_line(number: int, line: dict[str, Any], records: _Records, embedding_id: str) -> None:
    kind = line.pop("type", None)
    try:
        if kind == "header":
            if line.get("format") != FORMAT or line.get("version") != VERSION:
                raise InvalidInputError(f"line {number}: not a {FORMAT} v{VERSION} file")
        elif kind == "memory":
            records.memories.append(MemoryItem.model_validate(line))
        elif kind == "history":
            records.history.append(HistoryEvent.model_validate(line))
        elif kind == "message":
            records.messages.append((Message.model_validate(line["message"]), Scope.model_validate(line["scope"])))
        elif kind == "entity":
            records.entities.append(Entity.model_validate(line))
        elif kind == "relation":
            records.relations.append(Relation.model_validate(line))
        elif kind == "vector":
            if line["embedding_id"] == embedding_id:
                records.vectors[line["id"]] = np.frombuffer(base64.b64decode(line["vector"]), dtype=np.float32)
        else:
            raise InvalidInputError(f"line {number}: unknown record type {kind!r}")
    except ValidationError as exc:
        raise InvalidInputError(f"line {number}: invalid {kind}: {describe_validation_error(exc)}") from None
    except KeyError as exc:
        raise InvalidInputError(f"line {number}: {kind} record lacks field {exc}") from None

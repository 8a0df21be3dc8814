"""Export and import as JSONL: one record per line, lossless round trip.

Line shapes: ``{"type": "memory", ...MemoryItem}``, ``{"type": "vector", "id", "embedding_id",
"vector": base64 float32}``, ``{"type": "history", ...HistoryEvent}``, ``{"type": "message",
"scope", "message"}``, ``{"type": "entity", "entity_type", ...Entity}`` and ``{"type": "relation", ...}`` (graph),
``{"type": "knowledge_source", ...SourceRecord}`` (an ingested document's version with its stable Markdown),
``{"type": "task" | "task_step" | "task_hypothesis" | "task_artifact" | "task_strategy", ...}`` (process memory).
An entity's own ``type`` (person, place...) travels as ``entity_type``: exports before that put it over the
line's type (``{"type": "person", ...}``), and import still reads such lines as entities.
The first line is a header with the format version.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from pydantic import TypeAdapter, ValidationError

from memstrata.errors import InvalidInputError
from memstrata.records.graph import Entity, Relation
from memstrata.records.process import PROCESS_RECORDS, Artifact, Hypothesis, Step, Strategy, Task, TaskQuery
from memstrata.storage.knowledge_protocol import SourceRecord
from memstrata.storage.protocol import Store, Vector, WriteBatch
from memstrata.types import HistoryEvent, MemoryItem, Message, Scope, StoredMessage, UtcDatetime
from memstrata.validation import check_strings, describe_validation_error

FORMAT = "memstrata-export"
# 2: the last line is {"type": "end", "lines": N}, the number of lines before it, so an export cut at a line break
# (a copy stopped short, `head -n`) is refused instead of importing part of the store. 1: no such line.
VERSION = 2
_READABLE = (1, 2)

ProcessRecord = Task | Step | Hypothesis | Artifact | Strategy
_PLAIN_RECORDS = frozenset({"relation", "knowledge_source", *PROCESS_RECORDS})  # a line is the record's fields
Embed = Callable[[list[MemoryItem]], list[tuple[str, Any]]]

_MOMENT: TypeAdapter[datetime] = TypeAdapter(UtcDatetime)


class Bounds(Protocol):
    """Whose records an export or import may hold (a Memory view's binding)."""

    def covers(self, scope: Scope) -> bool: ...


def _within(store: Store, bounds: Bounds | None) -> Iterator[tuple[str, object]]:
    """The store's records, those of ``bounds`` only when given (a vector goes with its memory)."""
    kept: set[str] = set()
    for kind, record in store.export_all():
        if bounds is None:
            yield kind, record
        elif kind == "vector" and isinstance(record, tuple):
            if record[0] in kept:
                yield kind, record
        elif (scope := _scope_of(record)) is not None and bounds.covers(scope):
            if isinstance(record, MemoryItem):
                kept.add(record.id)
            yield kind, record


def _scope_of(record: object) -> Scope | None:
    scope = getattr(record, "scope", None)
    return scope if isinstance(scope, Scope) else None


def _lines(store: Store, bounds: Bounds | None) -> Iterator[dict[str, Any]]:
    yield {"type": "header", "format": FORMAT, "version": VERSION, "embedding_id": store.embedding_id()}
    for kind, record in _within(store, bounds):
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
                **({"stored_at": record.stored_at.isoformat()} if record.stored_at else {}),
            }
        elif kind == "entity" and isinstance(record, Entity):
            fields = record.model_dump(mode="json")
            yield {"type": "entity", "entity_type": fields.pop("type"), **fields}
        elif kind in _PLAIN_RECORDS and isinstance(record, Relation | SourceRecord | ProcessRecord):
            yield {"type": kind, **record.model_dump(mode="json")}


def export_jsonl(store: Store, path: Path, *, file_mode: int | None = 0o600, within: Bounds | None = None) -> int:
    """Every record of ``store`` (of ``within`` only, when given) into ``path``, created with ``file_mode`` (the
    store's own: an export holds every memory's text). Written beside it first, so a reader never sees half an
    export, and nothing is left behind when writing fails."""
    if path.is_dir():
        raise InvalidInputError(f"{path} is a directory; name the export file, e.g. {path / 'memstrata.jsonl'}")
    count = 0
    tmp = path.with_name(path.name + ".partial")
    try:
        tmp.unlink(missing_ok=True)  # one left by a killed export keeps its permissions through O_TRUNC
        descriptor = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666 if file_mode is None else file_mode)
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            for line in _lines(store, within):
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
                count += 1
            out.write(json.dumps({"type": "end", "lines": count}) + "\n")
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise InvalidInputError(f"cannot write the export to {path}: {exc.strerror or exc}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return count


@dataclass(frozen=True)
class ImportReport:
    """What an import did. Records the store already holds are not written again, so importing an export into
    the store it came from (or twice) merges instead of failing."""

    memories: int  # memories written
    already_there: int  # records of the file the store already held, identical: left as they are
    kept_stored: int  # memories the store holds in another version (changed after the export): the stored one kept


def import_jsonl(
    store: Store, path: Path, embed: Embed, embedding_id: str, *, within: Bounds | None = None
) -> ImportReport:
    """All-or-nothing import. Vectors of another model are dropped and re-embedded. Graph entities come
    without name vectors: resolution matches them by name and alias until they are mentioned again. With
    ``within``, a file holding any record outside it is refused."""
    records = _Records()
    number = 0
    try:
        with path.open(encoding="utf-8-sig") as source:  # a file saved by a Windows editor starts with a BOM
            for number, raw in enumerate(source, start=1):
                if raw.strip():
                    _parse_line(number, json.loads(raw), records, embedding_id)
    except json.JSONDecodeError as exc:  # its own "line 1" is the line's: the file's line is what to look at
        raise InvalidInputError(
            f"cannot read export {path}: line {number} is not JSON ({exc.msg} at character {exc.pos + 1}); "
            "a file cut short ends mid-line: export again"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"cannot read export {path}: {exc}") from None
    _check_whole(path, records)
    if within is not None:
        _check_within(path, records, within)
    fresh = _without_stored(store, records)
    memories, vectors = fresh.memories, records.vectors
    # Embedded in the source but without a usable vector here (another model's was dropped); a memory that was not
    # embedded yet (a running task's, embedded when the task ends) stays so.
    missing = [item for item in memories if item.id not in vectors and item.embedding_id is not None]
    batch_vectors = [(item.id, vectors[item.id]) for item in memories if item.id in vectors]
    if missing:
        batch_vectors.extend(embed(missing))
    batch = WriteBatch(
        messages=fresh.messages,
        message_stored_at=records.stored_at,
        inserts=memories,
        history=fresh.history,
        vectors=batch_vectors,
        embedding_id=embedding_id if batch_vectors else None,
        entities=fresh.entities,
        relations=fresh.relations,
        sources=fresh.sources,
        tasks=[record for record in fresh.process.get("task", []) if isinstance(record, Task)],
        steps=[record for record in fresh.process.get("task_step", []) if isinstance(record, Step)],
        hypotheses=[record for record in fresh.process.get("task_hypothesis", []) if isinstance(record, Hypothesis)],
        artifacts=[record for record in fresh.process.get("task_artifact", []) if isinstance(record, Artifact)],
        strategies=[record for record in fresh.process.get("task_strategy", []) if isinstance(record, Strategy)],
        skip_identical=True,  # a row written since the check above by someone else is not a conflict either
    )
    if not batch.is_empty():
        store.write(batch)
    already_there = records.count() - fresh.count()
    return ImportReport(memories=len(memories), already_there=already_there, kept_stored=fresh.kept_stored)


def _check_whole(path: Path, records: _Records) -> None:
    """The file is a whole export: its header first and, from version 2 on, its end line counting the lines before
    it last. An export cut at a line break read as a smaller store: 15 memories imported, the turns, most history
    and the graph gone, exit 0."""
    if records.version is None:
        raise InvalidInputError(f"{path} does not start with a {FORMAT} header; is it an export of memstrata?")
    if records.version >= 2 and records.end != records.lines:
        found = "no end line" if records.end is None else f"an end line after {records.lines} lines, not {records.end}"
        raise InvalidInputError(f"{path} is not a whole export ({found}); it was cut short: export again")


def _check_within(path: Path, records: _Records, within: Bounds) -> None:
    scopes = [
        *(item.scope for item in records.memories),
        *(event.scope for event in records.history),
        *(scope for _, scope in records.messages),
        *(entity.scope for entity in records.entities),
        *(relation.scope for relation in records.relations),
        *(source.scope for source in records.sources),
        *(record.scope for listed in records.process.values() for record in listed),
    ]
    outside = [scope for scope in scopes if not within.covers(scope)]
    if outside:
        raise InvalidInputError(
            f"{path} holds {len(outside)} record(s) outside this view (the first: {outside[0].label()}); a view "
            "imports its own records only: import into the whole store (no tenant, no scope), or under the tenant "
            "and scope the records belong to"
        )


_VOLATILE = {"last_accessed_at", "access_count"}  # change with use, not with content


def _without_stored(store: Store, records: _Records) -> _Records:
    """The records the store does not hold yet, looked up by id inside each record's own scope."""
    fresh = _Records()
    stored_memories: dict[str, MemoryItem] = {}
    for scope, ids in _by_scope((item.scope, item.id) for item in records.memories).items():
        stored_memories.update({item.id: item for item in store.get(scope, ids)})
    for item in records.memories:
        held = stored_memories.get(item.id)
        if held is None:
            fresh.memories.append(item)
        elif held.model_dump(exclude=_VOLATILE) != item.model_dump(exclude=_VOLATILE):
            fresh.kept_stored += 1
    stored_events: set[str] = set()
    for memory_id, scope in {event.memory_id: event.scope for event in records.history}.items():
        if memory_id in stored_memories:
            stored_events.update(event.id for event in store.history(scope, memory_id))
    fresh.history = [event for event in records.history if event.id not in stored_events]
    stored_messages: set[str] = set()
    for scope, ids in _by_scope((scope, message.id) for message, scope in records.messages).items():
        stored_messages.update(found.message.id for found in store.messages_by_id(scope, ids))
    fresh.messages = [(message, scope) for message, scope in records.messages if message.id not in stored_messages]
    stored_entities: set[str] = set()
    for scope, ids in _by_scope((entity.scope, entity.id) for entity in records.entities).items():
        stored_entities.update(entity.id for entity in store.graph_entities(scope, ids))
    fresh.entities = [entity for entity in records.entities if entity.id not in stored_entities]
    stored_relations: set[str] = set()
    for scope, ids in _by_scope((relation.scope, relation.id) for relation in records.relations).items():
        found = store.graph_relations(scope, relation_ids=ids, include_closed=True)
        stored_relations.update(relation.id for relation in found)
    fresh.relations = [relation for relation in records.relations if relation.id not in stored_relations]
    fresh.sources = records.sources  # few rows: the write's skip_identical leaves out those already stored
    for kind, listed in records.process.items():
        stored: set[str] = set()
        for scope, ids in _by_scope((record.scope, record.id) for record in listed).items():
            stored.update(record.id for record in _stored_process(store, kind, scope, ids))
        fresh.process[kind] = [record for record in listed if record.id not in stored]
    return fresh


def _stored_process(store: Store, kind: str, scope: Scope, ids: list[str]) -> Sequence[ProcessRecord]:
    """The process records of one type and scope that the store already holds, by id."""
    process = store.process
    if kind == "task":
        return process.tasks(TaskQuery(scope=scope, ids=tuple(ids), limit=max(len(ids), 1)))
    if kind == "task_step":
        return process.steps(scope, step_ids=ids)
    if kind == "task_hypothesis":
        return process.hypotheses(scope, ids=ids)
    if kind == "task_artifact":
        return process.artifacts(scope, ids=ids)
    return process.strategies(scope, ids=ids, limit=max(len(ids), 1))


def _by_scope(pairs: Iterable[tuple[Scope, str]]) -> dict[Scope, list[str]]:
    grouped: dict[Scope, list[str]] = {}
    for scope, record_id in pairs:
        grouped.setdefault(scope, []).append(record_id)
    return grouped


@dataclass
class _Records:
    memories: list[MemoryItem] = field(default_factory=list)
    history: list[HistoryEvent] = field(default_factory=list)
    messages: list[tuple[Message, Scope]] = field(default_factory=list)
    stored_at: dict[str, datetime] = field(default_factory=dict)  # of the messages, by id (older exports: none)
    vectors: dict[str, Vector] = field(default_factory=dict)
    entities: list[Entity] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    sources: list[SourceRecord] = field(default_factory=list)
    process: dict[str, list[ProcessRecord]] = field(default_factory=dict)  # by export type (PROCESS_RECORDS)
    kept_stored: int = 0
    version: int | None = None  # the header's, once read
    lines: int = 0  # records read, the header included
    end: int | None = None  # what the end line counts

    def count(self) -> int:
        return (
            len(self.memories)
            + len(self.history)
            + len(self.messages)
            + len(self.entities)
            + len(self.relations)
            + sum(len(found) for found in self.process.values())
            + self.kept_stored
        )


_LEGACY_ENTITY = frozenset({"id", "scope", "name", "aliases", "merged_into"})  # fields only an entity has together


def _parse_line(number: int, line: Any, records: _Records, embedding_id: str) -> None:
    if not isinstance(line, dict):  # a JSON array or string (a chat app's export) is no line of memstrata's
        raise InvalidInputError(
            f"line {number}: a JSON {type(line).__name__}, not a record; is the file an export of memstrata? "
            "(to bring in conversations from elsewhere, add their turns with add(), 'memstrata add --jsonl' or REST)"
        )
    # what add() refuses an import refuses too: NUL, lone surrogates, metadata nested past MAX_NESTING (stored, it
    # broke every REST read of its scope); the record is one level itself
    check_strings(line, f"line {number}", depth=-1)
    kind = line.pop("type", None)
    if records.end is not None:
        raise InvalidInputError(f"line {number}: a record after the export's end line; the file was joined or edited")
    if kind != "header" and records.version is None:
        raise InvalidInputError(f"line {number}: the file does not start with a {FORMAT} header")
    if kind != "end":
        records.lines += 1
    try:
        if kind == "header":
            if line.get("format") != FORMAT or line.get("version") not in _READABLE:
                raise InvalidInputError(
                    f"line {number}: not a {FORMAT} file of version {', '.join(map(str, _READABLE))}"
                )
            records.version = int(line["version"])
        elif kind == "end":
            records.end = int(line["lines"])
        elif kind == "memory":
            records.memories.append(_importable(MemoryItem.model_validate(line)))
        elif kind == "history":
            records.history.append(HistoryEvent.model_validate(line))
        elif kind == "message":
            message = Message.model_validate(line["message"])
            records.messages.append((message, Scope.model_validate(line["scope"])))
            if line.get("stored_at"):
                records.stored_at[str(message.id)] = _MOMENT.validate_python(line["stored_at"])
        elif kind == "entity":
            entity_type = line.pop("entity_type", "thing")
            records.entities.append(Entity.model_validate({**line, "type": entity_type}))
        elif isinstance(kind, str) and line.keys() >= _LEGACY_ENTITY:  # an older export: the entity's type won
            records.entities.append(Entity.model_validate({**line, "type": kind}))
        elif kind == "relation":
            records.relations.append(Relation.model_validate(line))
        elif kind == "knowledge_source":
            records.sources.append(SourceRecord.model_validate(line))
        elif kind in PROCESS_RECORDS:
            records.process.setdefault(kind, []).append(PROCESS_RECORDS[kind].model_validate(line))
        elif kind == "vector":
            if line["embedding_id"] == embedding_id:
                vector = np.frombuffer(base64.b64decode(line["vector"], validate=True), dtype=np.float32)
                if not vector.size or not np.isfinite(vector).all():
                    raise ValueError("the vector is empty or holds NaN or infinity")
                records.vectors[line["id"]] = vector
        else:
            raise InvalidInputError(f"line {number}: unknown record type {kind!r}")
    except ValidationError as exc:
        raise InvalidInputError(f"line {number}: invalid {kind}: {describe_validation_error(exc)}") from None
    except KeyError as exc:
        raise InvalidInputError(f"line {number}: {kind} record lacks field {exc}") from None
    except (ValueError, TypeError) as exc:  # a count that is no number, a vector that is no base64 of float32s
        raise InvalidInputError(f"line {number}: invalid {kind}: {exc}") from None


def _importable(item: MemoryItem) -> MemoryItem:
    """What add() could never have stored is refused: an empty id (it cannot be shown or deleted), empty text, a
    validity that ends before it starts (found by a hardening run)."""
    if not item.id.strip():
        raise ValueError("the memory's id is empty")
    if not item.text.strip():
        raise ValueError(f"memory {item.id} has no text")
    if item.valid_to is not None and item.valid_to < item.valid_from:
        raise ValueError(f"memory {item.id} stops being valid ({item.valid_to}) before it starts ({item.valid_from})")
    return item

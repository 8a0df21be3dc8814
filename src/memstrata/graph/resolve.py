"""Entity resolution: is this name a node we already have, or a new one?

In order: the user node ("我" / "I"); an exact match of the normalised name or an alias; then a name whose
embedding is at least ``threshold`` similar *and* that could abbreviate or be abbreviated by the other
("字节" / "字节跳动"); then the same name in the other script ("Hangzhou" / "杭州", graph/scripts.py). The
abbreviation test is what keeps "张工" apart from "张三" and "前端开发" from "后端开发", whose embeddings are
closer than those of most true aliases. Places inside places stay apart ("北京" vs
"北京市朝阳区"). A match keeps the new name as an alias and the turn as a source.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from memstrata.graph.names import USER_NAME, is_abbreviation, is_sub_place, is_user, normalize
from memstrata.graph.scripts import TRANSLATED_TYPES, TRANSLATION_FLOOR, split_scripts, transliterates
from memstrata.patterns import lazy_pattern
from memstrata.records.graph import Entity
from memstrata.storage.protocol import Vector
from memstrata.types import HistoryAction, HistoryEvent, Scope, new_id

EmbedNames = Callable[[Sequence[str]], list[Vector]]
_OPEN_TYPES = {"thing", "concept"}  # an untyped mention may join a typed node and the reverse
_KINDS_OF_BEING = {"person", "organization", "location"}  # never one another; the rest blur (project/product)


def types_compatible(a: str, b: str) -> bool:
    """Models type the same thing differently ("后端 API": project or product); people, organisations and
    places are the types whose confusion would merge different things, so only they must agree."""
    return a == b or a in _OPEN_TYPES or b in _OPEN_TYPES or not (a in _KINDS_OF_BEING and b in _KINDS_OF_BEING)


@dataclass
class EntityResolver:
    scope: Scope
    entities: dict[str, Entity]
    vectors: dict[str, Vector]
    embed: EmbedNames
    threshold: float
    now: datetime
    actor: str
    changed: set[str] = field(default_factory=set)
    created: set[str] = field(default_factory=set)
    new_vectors: dict[str, Vector] = field(default_factory=dict)
    history: list[HistoryEvent] = field(default_factory=list)
    added: int = 0
    aliased: int = 0

    def resolve(self, name: str, kind: str, message_ids: tuple[str, ...], *, speaker: bool = False) -> Entity:
        name = USER_NAME if is_user(name) else " ".join(name.split())
        found = self._by_name(name, kind) or self._by_embedding(name, kind) or self._in_other_script(name, kind)
        entity = self._create(name, kind) if found is None else found
        if (speaker or name == USER_NAME) and not entity.metadata.get("speaker"):
            # Speakers are hubs: nearly everything said is about them. Retrieval walks them differently.
            entity = entity.model_copy(update={"metadata": {**entity.metadata, "speaker": True}})
            self.entities[entity.id] = entity
            self.changed.add(entity.id)
        return self._remember(entity, name, kind, message_ids)

    def _by_name(self, name: str, kind: str) -> Entity | None:
        wanted = normalize(name)
        for entity in self.entities.values():
            if types_compatible(entity.type, kind) and wanted in {normalize(n) for n in entity.names()}:
                return entity
        return self._by_given_name(name, kind)

    def _by_given_name(self, name: str, kind: str) -> Entity | None:
        """ "小雨" for "林小雨" (and the other way round): a Chinese name that is a known person's full name without
        its one- or two-character surname, when exactly one known person fits. Their names' embeddings are too far
        apart (0.70) for the embedding match, and "我妹妹叫林小雨" / "小雨养了一只猫" stayed two people."""
        if kind not in ("person", *_OPEN_TYPES) or not _HAN_NAME.fullmatch(name):
            return None
        fits = [
            entity
            for entity in self.entities.values()
            if entity.type == "person" and any(_given_name_of(name, known) for known in entity.names())
        ]
        return fits[0] if len(fits) == 1 else None

    def _by_embedding(self, name: str, kind: str) -> Entity | None:
        if name == USER_NAME or not self.vectors:
            return None
        vector = self._vector(name)
        best: tuple[float, Entity] | None = None
        for entity_id, other in self.vectors.items():
            entity = self.entities.get(entity_id)
            if entity is None or not types_compatible(entity.type, kind) or not _could_be_same(name, entity):
                continue
            similarity = float(np.dot(vector, other))
            if similarity >= self.threshold and (best is None or similarity > best[0]):
                best = (similarity, entity)
        return None if best is None else best[1]

    def _in_other_script(self, name: str, kind: str) -> Entity | None:
        """A node named in the other script: its pinyin, or (places, organisations) its translation."""
        if name == USER_NAME:
            return None
        best: tuple[float, Entity] | None = None
        for entity in self.entities.values():
            across = [known for known in entity.names() if split_scripts(name, known)]
            if not across or not types_compatible(entity.type, kind):
                continue
            if any(transliterates(name, known) for known in across):
                return entity
            other = self.vectors.get(entity.id)
            if other is None or not {entity.type, kind} <= TRANSLATED_TYPES or not split_scripts(name, entity.name):
                continue
            similarity = float(np.dot(self._vector(name), other))
            if similarity >= TRANSLATION_FLOOR and (best is None or similarity > best[0]):
                best = (similarity, entity)
        return None if best is None else best[1]

    def _vector(self, name: str) -> Vector:
        if name not in self.new_vectors:
            self.new_vectors[name] = self.embed([name])[0]
        return self.new_vectors[name]

    def _create(self, name: str, kind: str) -> Entity:
        entity = Entity(id=new_id(), scope=self.scope, name=name, type=kind, created_at=self.now, updated_at=self.now)
        self.entities[entity.id] = entity
        self.changed.add(entity.id)
        self.created.add(entity.id)
        if name != USER_NAME:
            self.vectors[entity.id] = self._vector(name)
        self.added += 1
        self._event(entity, HistoryAction.ADD, None, f"{entity.name} ({entity.type})", "new entity")
        return entity

    def _remember(self, entity: Entity, name: str, kind: str, message_ids: tuple[str, ...]) -> Entity:
        """Keep the new name as an alias, the turn as a source, and a sharper type than 'thing'."""
        aliases = entity.aliases
        if normalize(name) not in {normalize(n) for n in entity.names()}:
            aliases = (*aliases, name)
            self.aliased += 1
            self._event(entity, HistoryAction.MERGE, entity.name, f"{entity.name} = {name}", f"alias {name!r}")
        sources = tuple(dict.fromkeys((*entity.message_ids, *message_ids)))
        sharper = kind if entity.type in _OPEN_TYPES and kind not in _OPEN_TYPES else entity.type
        if (aliases, sources, sharper) == (entity.aliases, entity.message_ids, entity.type):
            return entity
        updated = entity.model_copy(
            update={"aliases": aliases, "message_ids": sources, "type": sharper, "updated_at": self.now}
        )
        self.entities[entity.id] = updated
        self.changed.add(entity.id)
        return updated

    def _event(self, entity: Entity, action: HistoryAction, old: str | None, new: str, reason: str) -> None:
        self.history.append(
            HistoryEvent(
                id=new_id(), memory_id=entity.id, scope=self.scope, action=action, old_text=old, new_text=new,
                actor=self.actor, reason=reason, created_at=self.now, details={"graph": "entity"},
            )
        )  # fmt: skip

    def written_entities(self) -> list[Entity]:
        return [self.entities[entity_id] for entity_id in sorted(self.changed)]

    def written_vectors(self) -> list[tuple[str, Vector]]:
        """Vectors of entities created in this batch (existing ones keep theirs)."""
        return [(entity_id, self.vectors[entity_id]) for entity_id in sorted(self.created) if entity_id in self.vectors]


_HAN_NAME = lazy_pattern(r"[\u4e00-\u9fff]{2,4}")


def _given_name_of(name: str, known: str) -> bool:
    """One of the two names is the other without a one- or two-character surname (林小雨 / 小雨, 欧阳娜娜 / 娜娜)."""
    if not _HAN_NAME.fullmatch(known):
        return False
    short, full = sorted((name, known), key=len)
    return len(short) >= 2 and len(full) - len(short) in (1, 2) and full.endswith(short)


def _could_be_same(name: str, entity: Entity) -> bool:
    for known in entity.names():
        short, long = sorted((name, known), key=lambda n: len(normalize(n)))
        if entity.type == "location" and is_sub_place(short, long):
            continue
        if is_abbreviation(short, long):
            return True
    return False

"""Consolidation: near-duplicate memories of one scope and kind merge into one, provenance kept.

Rules, no model: two memories of the same exact scope (tenant, user, agent and session), kind and key
whose vectors are at least ``threshold`` similar and that name the same numbers form a cluster (embeddings
hardly tell "Invoice 1001 is paid" from "Invoice 1002 is paid", or 同事7号 from 同事8号); the most confident
(then most recent) survives and takes every source turn and metadata field of the others (its own values win), which are
closed as superseded with a pointer to the survivor. A user's scope lists its agents' and sessions'
memories too, and merging across them would move a user-wide memory into one agent's private scope.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from memstrata.patterns import lazy_pattern
from memstrata.records.history import history_event
from memstrata.storage.protocol import StatusChange, Vector, WriteBatch
from memstrata.types import HistoryAction, MemoryItem, MemoryStatus


@dataclass(frozen=True)
class Cluster:
    survivor: MemoryItem
    merged: list[MemoryItem]


def clusters(items: Sequence[MemoryItem], vectors: Sequence[Vector], threshold: float) -> list[Cluster]:
    parent = list(range(len(items)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            if _mergeable(items[i], items[j]) and float(vectors[i] @ vectors[j]) >= threshold:
                parent[root(j)] = root(i)
    groups: dict[int, list[MemoryItem]] = {}
    for i, item in enumerate(items):
        groups.setdefault(root(i), []).append(item)
    found = []
    for members in groups.values():
        if len(members) > 1:
            ordered = sorted(members, key=lambda m: (m.confidence, m.updated_at), reverse=True)
            found.append(Cluster(ordered[0], ordered[1:]))
    return found


def _mergeable(a: MemoryItem, b: MemoryItem) -> bool:
    # A part of a long text (facade/texts.py) is no duplicate of anything: the parts of a repetitive text were merged
    # into one, and the text could no longer be joined back (a user trial lost 36 of 38 parts).
    if "part_of" in a.metadata or "part_of" in b.metadata:
        return False
    return (a.scope, a.kind, a.key) == (b.scope, b.kind, b.key) and _numbers(a.text) == _numbers(b.text)


# Digits (any script's), and Chinese numerals that count or order something (第三, 七号, 两个, 三楼 ...)
_HAN_NUMERAL = "零一二三四五六七八九十百千万两"
_NUMBER = lazy_pattern(rf"\d+(?:[.,:/-]\d+)*|第[{_HAN_NUMERAL}]+|[{_HAN_NUMERAL}]+(?=[号个位年月日点岁楼层次天周])")


def _numbers(text: str) -> Counter[str]:
    return Counter(_NUMBER.findall(text))


def merge_batch(cluster: Cluster, now: datetime, actor: str = "consolidation") -> WriteBatch:
    survivor = cluster.survivor
    sources = list(survivor.provenance.message_ids)
    for item in cluster.merged:
        sources += [m for m in item.provenance.message_ids if m not in sources]
    merged_ids = [item.id for item in cluster.merged]
    metadata: dict[str, object] = {}
    for item in reversed(cluster.merged):  # the most confident's values win, the survivor's over all
        metadata.update(item.metadata)
    metadata.update(survivor.metadata)
    metadata["merged_from"] = [
        *survivor.metadata.get("merged_from", []),
        *(merged for item in cluster.merged for merged in [*item.metadata.get("merged_from", []), item.id]),
    ]
    updated = survivor.model_copy(
        update={
            "updated_at": now,
            "provenance": survivor.provenance.model_copy(update={"message_ids": tuple(sources)}),
            "metadata": metadata,
        }
    )
    history = [
        history_event(updated, HistoryAction.UPDATE, at=now, actor=actor, old_text=survivor.text,
                      reason=f"consolidated {len(merged_ids)} near-duplicates", details={"merged": merged_ids})
    ]  # fmt: skip
    history += [
        history_event(item, HistoryAction.UPDATE, at=now, actor=actor, old_text=item.text,
                      reason=f"merged into {survivor.id}", details={"merged_into": survivor.id})
        for item in cluster.merged
    ]  # fmt: skip
    return WriteBatch(
        replacements=[(updated, survivor.updated_at)],
        status_changes=[StatusChange(i.id, i.scope, MemoryStatus.SUPERSEDED, now) for i in cluster.merged],
        history=history,
    )

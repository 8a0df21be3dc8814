"""Stored readings on every backend: what the word tables read in a memory's text is written with its row and
primes the caches when the row is read, is never used for another text or another version of the tables, and
leaves search results exactly as computing it would."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata import Memory, stored_words
from memstrata.answers import answer_words, change_answers, planned_change_answers
from memstrata.han import simplified
from memstrata.indexing import unsaid_category_words
from memstrata.storage.protocol import Store, WriteBatch
from memstrata.storage.sql import store as sql_store
from memstrata.types import MemoryItem, Scope, new_id

T0 = datetime(2025, 1, 1, 9, 0, tzinfo=UTC)
LIN = Scope(user_id="lin")
READINGS = (unsaid_category_words, answer_words, change_answers, planned_change_answers)
# a category (pets), a change (a move), a plan, Traditional script, and a statement the tables say nothing of
TEXTS = ("Just adopted a beagle puppy named Biscuit", "我上个月搬到深圳南山区了", "I'm moving to Berlin in March",
         "我媽下週搬來新加坡跟我們住", "The meeting notes are in the shared drive")  # fmt: skip


def put(store: Store, text: str) -> MemoryItem:
    item = MemoryItem(id=new_id(), scope=LIN, kind="fact", text=text, created_at=T0, updated_at=T0, valid_from=T0)
    store.write(WriteBatch(inserts=[item]))
    return item


def stored(store: Store, memory_id: str) -> str | None:
    found = store._rows("SELECT words FROM memories WHERE id = ?", (memory_id,))  # type: ignore[attr-defined]
    return found[0][0]


def set_words(store: Store, memory_id: str, words: str | None) -> None:
    store.dialect.transaction(  # type: ignore[attr-defined]
        lambda tx: tx.execute("UPDATE memories SET words = ? WHERE id = ?", (words, memory_id))
    )


def forget_readings() -> None:
    for reading in READINGS:
        reading.cache_clear()


def computed(text: str) -> bool:
    """Whether asking the readings of ``text`` (as ranking reads it) computed any, rather than finding all stored
    (one reading may compute another: answer_words asks change_answers)."""
    before = sum(reading.cache_info().misses for reading in READINGS)
    for reading in READINGS:
        reading(simplified(text))
    return sum(reading.cache_info().misses for reading in READINGS) > before


def test_a_memory_is_stored_with_its_readings_and_reading_its_row_serves_them(store: Store) -> None:
    items = [put(store, text) for text in TEXTS]
    for item in items:
        assert stored(store, item.id) == stored_words.stored_words(item.text)
    forget_readings()
    store.get(LIN, [item.id for item in items])
    for item in items:
        read = simplified(item.text)
        expected = [reading.__wrapped__(read) for reading in READINGS]  # type: ignore[attr-defined]
        assert not computed(item.text), item.text  # a Traditional text too: ranking reads it as Simplified
        assert [reading(read) for reading in READINGS] == expected
    assert unsaid_category_words(TEXTS[0]) == "pet pets 宠物 dog dogs 狗"  # the words a beagle puppy gives
    forget_readings()
    assert computed(TEXTS[0])  # nothing read: computed


def test_an_update_stores_the_readings_of_the_new_text(store: Store) -> None:
    item = put(store, "我住在北京朝阳区")
    moved = item.model_copy(update={"text": "我搬到上海了", "updated_at": T0.replace(hour=10)})
    store.write(WriteBatch(replacements=[(moved, item.updated_at)]))
    assert stored(store, item.id) == stored_words.stored_words("我搬到上海了")


def test_readings_stored_for_another_text_or_version_are_not_used(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    item = put(store, TEXTS[0])
    set_words(store, item.id, stored_words.stored_words("我对花生过敏"))  # a row edited behind memstrata's back
    forget_readings()
    store.get(LIN, [item.id])
    assert computed(item.text)

    set_words(store, item.id, stored_words.stored_words(item.text))
    monkeypatch.setattr(stored_words, "VERSION", "0.older")  # the word tables changed since it was written
    forget_readings()
    store.get(LIN, [item.id])
    assert computed(item.text)
    monkeypatch.undo()

    set_words(store, item.id, None)  # written before readings were stored
    forget_readings()
    assert [found.text for found in store.get(LIN, [item.id])] == [item.text]
    assert computed(item.text)


def test_changed_word_tables_rebuild_the_readings_with_the_keyword_terms(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = [put(store, text) for text in TEXTS]
    for item in items:
        set_words(store, item.id, None)
    assert store.keyword_index_current()
    monkeypatch.setattr(sql_store, "STORED_WORDS_VERSION", "0.newer")  # as after an upgrade that changed a table
    monkeypatch.setattr(stored_words, "VERSION", "0.newer")
    assert not store.keyword_index_current()
    assert sum(store.rebuild_keyword_index(batch_size=2)) == len(items)
    assert store.keyword_index_current()
    for item in items:
        assert stored(store, item.id) == stored_words.stored_words(item.text)
        assert stored(store, item.id).startswith("0.newer:")


def test_search_ranks_the_same_with_stored_readings_as_with_computed_ones(memory: Memory) -> None:
    texts = [*TEXTS, "My sister Emma adopted two cats", "我在字节跳动上班", "I quit my job at Stripe last week",
             "Had a lovely picnic with the kids", "我下个月要搬到上海了"]  # fmt: skip
    memory.add(texts, user_id="lin", infer=False)
    questions = [
        "What pets do I have?",
        "我住在哪？",
        "Where do I live?",
        "我在哪上班？",
        "Where do I work?",
        "我妈住哪",
    ]

    def ranked() -> list[list[tuple[str, float]]]:
        found = [memory.search(question, user_id="lin", limit=5, record_access=False) for question in questions]
        return [[(hit.memory.text, round(hit.score, 6)) for hit in hits] for hits in found]

    forget_readings()
    misses = sum(reading.cache_info().misses for reading in READINGS)
    with_stored = ranked()  # the rows read served the readings
    served = sum(reading.cache_info().misses for reading in READINGS) - misses
    store = memory._core.store  # type: ignore[attr-defined]
    store.dialect.transaction(lambda tx: tx.execute("UPDATE memories SET words = NULL"))
    forget_readings()
    misses = sum(reading.cache_info().misses for reading in READINGS)
    assert ranked() == with_stored  # computed instead
    assert sum(reading.cache_info().misses for reading in READINGS) - misses > served

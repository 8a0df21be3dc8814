"""Batches as callers send them: per-item options, bad items by position, duplicates, long texts, ids."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from memstrata import InvalidInputError, Memory, NotFoundError
from memstrata.config import load_settings
from memstrata.errors import ConflictError
from memstrata.lifecycle.session import estimate_tokens
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.sentences import split_spans
from memstrata.storage.protocol import Store, WriteBatch
from memstrata.types import MemoryStatus, Message
from memstrata.write.turn_batches import input_budget, turn_batches
from support.at_once import failures_at_once


def test_batch_items_carry_their_own_metadata_and_kind(memory: Memory) -> None:
    result = memory.add(
        [
            {"text": "Lin prefers oolong tea", "metadata": {"qid": "q1"}, "kind": "preference"},
            "Lin lives in Hangzhou",
            {"text": "林晓对花生过敏", "metadata": {"qid": "q3"}, "confidence": 0.9},
        ],
        user_id="lin",
        metadata={"source": "eval"},
    )
    assert [event.index for event in result.results] == [0, 1, 2]
    stored = {item.text: item for item in memory.get_all(user_id="lin")}
    assert stored["Lin prefers oolong tea"].kind == "preference"
    assert stored["Lin prefers oolong tea"].metadata == {"source": "eval", "qid": "q1"}
    assert stored["Lin lives in Hangzhou"].metadata == {"source": "eval"}
    assert stored["林晓对花生过敏"].confidence == 0.9 and stored["林晓对花生过敏"].kind == "fact"


def test_a_bad_item_refuses_the_batch_or_is_skipped_by_position(memory: Memory) -> None:
    batch = ["fine one", "", {"text": "bad meta", "metadata": {"k": "\ud800"}}, "fine two", {"text": "x", "kind": "No"}]
    with pytest.raises(InvalidInputError, match="item 1 is empty"):
        memory.add(batch, user_id="u")
    assert memory.get_all(user_id="u") == []  # all or nothing

    result = memory.add(batch, user_id="u", on_error="skip")
    assert [(event.index, event.memory) for event in result.results] == [(0, "fine one"), (3, "fine two")]
    assert [error.index for error in result.errors] == [1, 2, 4]
    assert "surrogate" in result.errors[1].error and "lowercase identifier" in result.errors[2].error
    assert sorted(item.text for item in memory.get_all(user_id="u")) == ["fine one", "fine two"]
    with pytest.raises(InvalidInputError, match="on_error"):
        memory.add("x", user_id="u", on_error="ignore")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="kept none"):
        memory.add(["", " "], user_id="u", on_error="skip")


def test_the_same_text_twice_is_one_memory_reinforced(memory: Memory) -> None:
    first = memory.add("Prefers window seats", user_id="u").results[0]
    again = memory.add("prefers  window seats", user_id="u").results[0]  # case and spacing do not matter
    assert (again.event, again.id) == ("NONE", first.id)
    assert memory.get(first.id, user_id="u").access_count == 1  # repeating a fact is a signal of use
    in_one_call = memory.add(["Likes jazz", "Likes jazz", "Likes blues"], user_id="u").results
    assert [event.event for event in in_one_call] == ["ADD", "NONE", "ADD"]
    assert in_one_call[1].id == in_one_call[0].id
    with_metadata = memory.add("Prefers window seats", user_id="u", metadata={"source": "trip"}).results[0]
    assert (with_metadata.event, with_metadata.id) == ("UPDATE", first.id)
    assert memory.get(first.id, user_id="u").metadata == {"source": "trip"}
    assert len(memory.get_all(user_id="u")) == 3
    # Another scope, or another kind, is another memory.
    assert memory.add("Prefers window seats", user_id="v").results[0].event == "ADD"
    assert memory.add("Prefers window seats", user_id="u", kind="preference").results[0].event == "ADD"


def test_keyed_items_update_or_do_nothing(memory: Memory) -> None:
    first = memory.add("DuckDB 1.4", user_id="u", key="pipeline:engine:db").results[0]
    same = memory.add("DuckDB 1.4", user_id="u", key="pipeline:engine:db").results[0]
    assert (same.event, same.id) == ("NONE", first.id)
    items = [{"text": "DuckDB 1.5", "key": "pipeline:engine:db"}, {"text": "Python 3.12", "key": "pipeline:lang:py"}]
    events = memory.add(items, user_id="u").results
    assert [(event.event, event.previous_memory) for event in events] == [("UPDATE", "DuckDB 1.4"), ("ADD", None)]
    with pytest.raises(InvalidInputError, match="appears twice"):
        memory.add([{"text": "a", "key": "x:y"}, {"text": "b", "key": "x:y"}], user_id="u")


def test_a_new_value_for_a_key_takes_the_options_named_with_it(memory: Memory) -> None:
    """A key re-added with kind='decision' kept kind 'fact' (and its confidence): named options were lost."""
    first = memory.add("Postgres 15", user_id="k", key="proj:db:engine", confidence=0.6).results[0]
    moved = memory.add("Postgres 16", user_id="k", key="proj:db:engine", kind="decision").results[0]
    assert (moved.event, moved.id, moved.kind) == ("UPDATE", first.id, "decision")
    stored = memory.get(first.id, user_id="k")
    assert (stored.kind, stored.confidence) == ("decision", 0.6)  # what was not named stays as it was
    surer = memory.add([{"text": "Postgres 16", "key": "proj:db:engine", "confidence": 0.9}], user_id="k")
    assert surer.results[0].event == "UPDATE" and memory.get(first.id, user_id="k").confidence == 0.9
    again = memory.add("Postgres 16", user_id="k", key="proj:db:engine", kind="decision").results[0]
    assert again.event == "NONE"  # named, but already so: nothing changes
    reasons = [event.reason for event in memory.history(first.id, user_id="k")]
    assert (
        "new value for key proj:db:engine (kind)" in reasons
        and "new value for key proj:db:engine (confidence)" in reasons
    )


def test_long_texts_and_turns_are_kept_in_parts(store: Store, embedder: UniversalSentenceEncoder) -> None:
    settings = load_settings({"limits": {"max_text_chars": 200, "max_whole_chars": 10_000}})
    memory = Memory(store, embedder, settings=settings)
    paragraphs = [f"第{n}段：这是关于项目计划的说明，包含一些细节。Paragraph {n} explains step {n}." for n in range(12)]
    text = "\n\n".join(paragraphs)
    result = memory.add(text, user_id="u")
    parts = [memory.get(event.id, user_id="u") for event in result.results]
    assert len(parts) > 3 and all(len(part.text) <= 200 for part in parts)
    assert "".join(part.text for part in parts) == text  # in order, they give the text back exactly
    assert {part.metadata["part_of"] for part in parts} == {parts[0].id}
    assert parts[-1].metadata["part"] == f"{len(parts)}/{len(parts)}"
    assert all(part.text.endswith("\n\n") for part in parts[:-1])  # cut between paragraphs
    assert memory.search("Paragraph 11 explains step 11", user_id="u", limit=1)[0].id == parts[-1].id
    again = memory.add(text, user_id="u").results  # the same long text again: its first part answers
    assert [(event.event, event.id) for event in again] == [("NONE", parts[0].id)]
    assert all(memory.get(part.id, user_id="u").access_count == 1 for part in parts)  # every part reinforced
    tagged = memory.add(text, user_id="u", metadata={"source": "wiki"}).results
    assert [(event.event, event.id) for event in tagged] == [("UPDATE", parts[0].id)]
    assert all(memory.get(part.id, user_id="u").metadata["source"] == "wiki" for part in parts)

    # parts of a repetitive text look alike but are no duplicates: consolidation leaves every one (it kept one of 3)
    repeated = memory.add("The quarterly report row: revenue up, costs flat. " * 12, user_id="rows").results
    assert len(repeated) >= 3 and memory.consolidate(user_id="rows") == 0
    assert len(memory.get_all(user_id="rows")) == len(repeated)

    turn = memory.add([{"role": "user", "content": text}], user_id="u", session_id="s")
    (stored,) = memory.messages(user_id="u", session_id="s")
    assert stored.message.content == text  # the raw turn is whole
    episodes = [memory.get(event.id, user_id="u") for event in turn.results]
    assert len(episodes) == len(parts)
    assert all(e.provenance.message_ids == (stored.message.id,) for e in episodes)
    assert [text[slice(*e.provenance.span)] for e in episodes] == [e.text for e in episodes]  # type: ignore[misc]


def test_split_spans_cover_the_text() -> None:
    for text, limit in [("a" * 95, 10), ("one. two. three. four.", 7), ("x", 5), ("甲乙丙。丁戊己。" * 20, 9)]:
        spans = split_spans(text, limit)
        assert "".join(text[a:b] for a, b in spans) == text
        assert all(0 < b - a <= limit for a, b in spans)


def test_empty_turns_are_kept_raw_without_an_episode(memory: Memory) -> None:
    result = memory.add([{"role": "assistant", "content": ""}, {"role": "user", "content": "看这张图"}], user_id="u")
    assert len(result.message_ids) == 2 and [event.index for event in result.results] == [1]
    assert [m.message.content for m in memory.messages(user_id="u")] == ["", "看这张图"]


def test_turns_with_ids_are_idempotent(memory: Memory) -> None:
    turns = [{"role": "user", "content": "我叫林晓", "id": "t1"}, {"role": "assistant", "content": "你好", "id": "t2"}]
    first = memory.add(turns, user_id="u")
    again = memory.add(turns, user_id="u")
    assert again.results == () and again.message_ids == first.message_ids
    assert [turn_id.split("@")[0] for turn_id in first.message_ids] == ["t1", "t2"]  # stored as <id>@<scope>
    assert len(memory.messages(user_id="u")) == 2 and len(memory.get_all(user_id="u")) == 2
    with pytest.raises(ConflictError, match="t1 already holds another turn"):
        memory.add([{"role": "user", "content": "something else", "id": "t1"}], user_id="u")


def test_dated_turns_without_ids_imported_again_are_stored_once(memory: Memory) -> None:
    """Chat logs carry no turn ids: the same history imported twice stored every turn and episode twice (40 -> 80,
    found by a user trial). A turn with its own time is named by what it is; two identical ones in a call are both
    kept, and turns said now (no timestamp) are new each time."""
    log = [{"role": "user", "content": "ok", "timestamp": "2023-04-05T22:10:00+08:00"},
           {"role": "user", "content": "ok", "timestamp": "2023-04-05T22:10:00+08:00"},
           {"role": "assistant", "content": "好的，已记下。", "timestamp": "2023-04-05T22:11:00+08:00"}]  # fmt: skip
    first = memory.add(log, user_id="imp")
    again = memory.add(log, user_id="imp")
    assert first.message_ids == again.message_ids and len(set(first.message_ids)) == 3
    assert len(memory.messages(user_id="imp")) == 3
    memory.add([{"role": "user", "content": "ok"}], user_id="imp")
    memory.add([{"role": "user", "content": "ok"}], user_id="imp")
    assert len(memory.messages(user_id="imp")) == 5
    assert len(memory.messages(user_id="imp", session_id="s1")) == 0
    memory.add(log, user_id="imp", session_id="s1")  # another scope: its own turns
    assert len(memory.messages(user_id="imp", session_id="s1")) == 3


def test_a_history_imported_with_its_turn_ids_and_again_without_them_is_stored_once(memory: Memory) -> None:
    """The two imports named each turn differently (the caller's ids, then ids made from what was said), so every
    turn and episode was stored twice (found by a user trial). A stored turn with the same words and time stands
    for the turn, either way round; a turn the caller numbers itself never takes another numbered turn's place."""
    said = [{"role": "user", "content": "我下周三去杭州出差", "timestamp": "2024-03-01T09:00:00+08:00"},
            {"role": "assistant", "content": "好的，记下了。", "timestamp": "2024-03-01T09:00:05+08:00"},
            {"role": "user", "content": "ok", "timestamp": "2024-03-01T09:01:00+08:00"},
            {"role": "user", "content": "ok", "timestamp": "2024-03-01T09:01:00+08:00"}]  # fmt: skip
    numbered = [{**turn, "id": f"m{n}"} for n, turn in enumerate(said)]
    first = memory.add(numbered, user_id="a")
    again = memory.add(said, user_id="a")
    assert again.message_ids == first.message_ids and len(memory.messages(user_id="a")) == 4
    memory.add(said, user_id="b")
    memory.add(numbered, user_id="b")  # the other way round
    assert len(memory.messages(user_id="b")) == 4
    renumbered = [{**turn, "id": f"x{n}"} for n, turn in enumerate(said)]
    memory.add(renumbered, user_id="a")  # other ids of the caller's own: other turns, as before
    assert len(memory.messages(user_id="a")) == 8
    memory.add(said, user_id="a", session_id="s1")  # a session of the user is a scope of its own
    assert len(memory.messages(user_id="a", session_id="s1")) == 4


def test_turn_ids_are_the_callers_own_within_a_scope(memory: Memory) -> None:
    """Turn ids were unique in the whole store: a second user (or tenant) numbering turns 1, 2, 3 got a 409, which
    also told it that another scope had used the id."""
    for user in ("u1", "u2"):
        memory.add([{"role": "user", "content": f"hello from {user}", "id": "1"}], user_id=user)
    memory.for_tenant("acme").add([{"role": "user", "content": "hello from acme", "id": "1"}], user_id="u1")
    assert [m.message.content for m in memory.messages(user_id="u2")] == ["hello from u2"]
    assert [m.message.content for m in memory.for_tenant("acme").messages(user_id="u1")] == ["hello from acme"]
    with pytest.raises(ConflictError, match="1 already holds another turn in this scope"):
        memory.add([{"role": "user", "content": "changed", "id": "1"}], user_id="u2")


def test_one_id_given_to_two_turns_of_a_call_is_refused_by_position(memory: Memory) -> None:
    """The second turn clashed with the first inside the write: a 409 saying the id already existed, with SQL."""
    turns = [{"role": "user", "content": "第一句", "id": "1"}, {"role": "user", "content": "第二句", "id": "1"}]
    with pytest.raises(InvalidInputError, match=r"messages\[0\] and messages\[1\] both have id '1'"):
        memory.add(turns, user_id="u")
    assert memory.messages(user_id="u") == []


def test_a_turn_stored_under_its_own_id_before_ids_were_scoped_is_found_again(memory: Memory) -> None:
    legacy = Message(role="user", content="我叫林晓", id="t1")
    memory.store.write(WriteBatch(messages=[(legacy, memory.resolve_scope(user_id="u"))]))
    again = memory.add([{"role": "user", "content": "我叫林晓", "id": "t1"}], user_id="u")
    assert again.results == () and again.message_ids == ("t1",) and len(memory.messages(user_id="u")) == 1


def test_id_prefixes_resolve_within_the_scope(memory: Memory) -> None:
    ids = [event.id for event in memory.add([f"fact number {n}" for n in range(40)], user_id="u").results]
    target = ids[0]
    assert memory.resolve_id(target, user_id="u") == target
    unique = next(n for n in range(4, 33) if sum(i.startswith(target[:n]) for i in ids) == 1)
    assert memory.resolve_id(target[: max(unique, 12)], user_id="u") == target
    with pytest.raises(NotFoundError):
        memory.resolve_id(target[:12], user_id="someone-else")  # another scope's id is never found
    with pytest.raises(InvalidInputError, match="at least 4"):
        memory.resolve_id("ab", user_id="u")
    with pytest.raises(NotFoundError, match=f"no memory {'0' * 32} in scope"):  # a whole id: no listing
        memory.resolve_id("0" * 32, user_id="u")
    every_id = [item.id for item in memory.get_all(filters={"status": list(MemoryStatus)}, limit=1000, user_id="u")]
    # A prefix no stored id starts with (ids are random), so exactly the two twins share it.
    free = next(p for p in (f"{n:04x}" for n in range(0xABCD, 0x10000)) if not any(i.startswith(p) for i in every_id))
    twins = [
        memory.get(i, user_id="u").model_copy(update={"id": f"{free}{n}" + "0" * 27}) for n, i in enumerate(ids[:2])
    ]
    memory.store.write(WriteBatch(inserts=twins))
    shown = rf"\({free}00000000, {free}10000000\)"
    with pytest.raises(InvalidInputError, match=rf"'{free}' matches 2 memory ids {shown}"):
        memory.resolve_id(free, user_id="u")
    assert memory.resolve_id(f"{free}1", user_id="u") == twins[1].id
    memory.delete(target, user_id="u")
    assert memory.resolve_id(target[:12], user_id="u") == target  # deleted memories still have a history


def test_new_sqlite_files_are_private(tmp_path: Path) -> None:
    path = tmp_path / "new" / "dir" / "memstrata.db"
    with Memory.from_config({"store": {"path": str(path)}}) as memory:
        memory.add("secret", user_id="u")
        for file in [path, *path.parent.glob("memstrata.db-*")]:
            assert stat.S_IMODE(file.stat().st_mode) == 0o600, file
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    shared = tmp_path / "shared.db"
    with Memory.from_config({"store": {"path": str(shared), "file_mode": "0640"}}):
        assert stat.S_IMODE(shared.stat().st_mode) == 0o640
    with pytest.raises(InvalidInputError, match="file_mode"):
        load_settings({"store": {"path": str(shared), "file_mode": "rw-------"}})


def test_export_then_import_into_the_same_store_merges(memory: Memory, tmp_path: Path) -> None:
    memory.add([{"role": "user", "content": "我住在杭州"}, {"role": "assistant", "content": "好的"}], user_id="u")
    kept = memory.add("Prefers dark mode", user_id="u").results[0]
    path = tmp_path / "export.jsonl"
    memory.export_jsonl(path)
    memory.update(kept.id, "Prefers dark mode everywhere", user_id="u")  # changed after the export
    report = memory.import_jsonl(path)
    assert (report.memories, report.kept_stored) == (0, 1) and report.already_there >= 5
    assert memory.get(kept.id, user_id="u").text == "Prefers dark mode everywhere"  # the stored version stays
    assert len(memory.messages(user_id="u")) == 2 and len(memory.get_all(user_id="u")) == 3


def test_the_same_turn_sent_twice_at_once_is_stored_once_without_a_conflict(memory: Memory) -> None:
    """Two writers sending one turn at once: the one that lost the race got ConflictError / 409 with the database's
    constraint text (29 of 40 on PostgreSQL, 11 of 40 on SQLite; found by a user trial), where a resend one after the
    other is a no-op."""
    failures: list[BaseException] = []
    for round_number in range(8):
        turn = [{"role": "user", "content": f"我明天去杭州 {round_number}", "id": f"turn-{round_number}"}]
        failures += failures_at_once(lambda turn=turn: memory.add(turn, user_id="race", session_id="s"), threads=4)
    assert failures == []
    assert len(memory.messages(user_id="race", session_id="s")) == 8


@pytest.mark.parametrize("budget", [200, 996, 3000])
def test_turn_batches_fit_the_budget_and_keep_every_character(budget: int) -> None:
    mixed = "我今天很开心，因为天气很好。" * 300 + "Then English. " * 200
    turns = [Message(role="user", content=text)
             for text in ("短的一句。", "The cat sat on the mat. " * 400, mixed, "x" * 9000, "ok")]  # fmt: skip
    batches = turn_batches(turns, budget)
    assert all(sum(estimate_tokens(t.content) + 8 for t in batch) <= budget or len(batch) == 1 for batch in batches)
    assert all(estimate_tokens(t.content) + 8 <= budget for batch in batches for t in batch)
    pieces = [t for batch in batches for t in batch]
    for turn in turns:  # each turn's pieces, in order, are the turn (blank pieces between them aside)
        assert "".join(t.content for t in pieces if t.id == turn.id) == turn.content
    assert input_budget(4096, 1000) < 1100  # the bundled model's context: room for a retry's answer and note

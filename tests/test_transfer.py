"""Export, then import into a fresh store, gives identical memories, history and raw turns."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from memstrata import ConflictError, InvalidInputError, Memory
from memstrata.records.graph import Entity, Relation
from memstrata.storage.protocol import WriteBatch
from memstrata.types import Scope


def _snapshot(memory: Memory, user: str) -> tuple[list[object], list[object], list[object]]:
    everything = {"status": ["active", "pending", "archived", "deleted"]}
    items = memory.get_all(user_id=user, filters=everything, limit=1000, descending=False)
    history = [memory.history(item.id, user_id=user) for item in items]
    turns = [(turn.message, turn.stored_at) for turn in memory.messages(user_id=user)]  # stored_at: not the import's
    return items, history, turns


def test_export_import_round_trip(make_memory: Callable[[str], Memory], tmp_path: Path) -> None:
    source = make_memory("source")
    source.add([{"role": "user", "content": "我住在杭州"}, {"role": "assistant", "content": "Got it."}], user_id="u1")
    kept = source.add("Prefers dark mode", user_id="u1", kind="preference", metadata={"ui": True}).results[0]
    source.update(kept.id, "Prefers dark mode everywhere", user_id="u1")
    gone = source.add("temporary note", user_id="u1").results[0]
    source.delete(gone.id, user_id="u1", reason="cleanup")
    source.search("dark mode", user_id="u1")  # access counts must survive too
    path = tmp_path / "export.jsonl"
    lines = source.export_jsonl(path)
    assert lines + 1 == len(path.read_text(encoding="utf-8").splitlines())  # the records, then the end line
    assert "我住在杭州" in path.read_text(encoding="utf-8")  # Chinese stays Chinese, unescaped

    target = make_memory("target")
    assert target.import_jsonl(path).memories == 5  # four, and the text the update replaced as a closed version
    assert _snapshot(target, "u1") == _snapshot(source, "u1")
    assert target.search("dark mode", user_id="u1", record_access=False)[0].id == kept.id
    assert target.stats().vectors == source.stats().vectors == 5

    again = target.import_jsonl(path)  # importing twice merges: nothing new, nothing doubled (issue 13)
    assert again.memories == 0 and again.already_there > 5 and again.kept_stored == 0
    assert _snapshot(target, "u1") == _snapshot(source, "u1")


def test_import_rejects_garbage_without_writing(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    header = {"type": "header", "format": "memstrata-export", "version": 1, "embedding_id": None}
    path.write_text(json.dumps(header) + "\n" + json.dumps({"type": "memory", "id": "x"}) + "\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="line 2"):
        memory.import_jsonl(path)
    path.write_text("not json\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="cannot read export"):
        memory.import_jsonl(path)
    # a file cut short: the error named json's "line 1" of the last line, not the file's line (a user trial)
    path.write_text(json.dumps(header) + "\n" + json.dumps(header) + "\n" + '{"type": "memory", "id": "x', "utf-8")
    with pytest.raises(InvalidInputError, match="line 3 is not JSON"):
        memory.import_jsonl(path)
    # a chat app's export (a JSON array) or a JSON string ended in a TypeError / AttributeError traceback
    for other in ('[{"title": "chat", "mapping": {}}]', '"just a string"'):
        path.write_text(other + "\n", encoding="utf-8")
        with pytest.raises(InvalidInputError, match=r"line 1: a JSON (list|str), not a record"):
            memory.import_jsonl(path)
    assert memory.stats().memories_by_status == {}


_NAN_VECTOR = base64.b64encode(np.full(512, np.nan, "<f4").tobytes()).decode()


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda lines: lines[-1].update(lines="seven"), "line 5: invalid end"),
        (lambda lines: lines[2].update(vector="!!!notbase64"), "line 3: invalid vector"),
        (lambda lines: lines[2].update(vector="YWJjZGU="), "line 3: invalid vector"),  # 5 bytes: no float32s
        (lambda lines: lines[2].update(vector=_NAN_VECTOR), "NaN"),
        (lambda lines: lines[1].update(id=""), "id is empty"),
        (lambda lines: lines[1].update(text="  "), "has no text"),
        (lambda lines: lines[1].update(valid_to="2001-01-01T00:00:00Z"), "stops being valid"),
    ],
)
def test_an_import_refuses_what_add_could_not_have_stored(
    memory: Memory, tmp_path: Path, change: Callable[[list[dict[str, object]]], None], reason: str
) -> None:
    """A count that is no number or a vector that is no base64 of float32s ended in a traceback; a NaN vector, an
    empty id (never to be shown or deleted), empty text and a validity ending before it starts were imported (found
    by a hardening run)."""
    source = tmp_path / "good.jsonl"
    memory.add("Prefers oolong tea", user_id="u")
    memory.export_jsonl(source)
    lines = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    assert [line["type"] for line in lines] == ["header", "memory", "vector", "history", "end"]
    change(lines)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(InvalidInputError, match=reason):
        memory.import_jsonl(bad)


def test_graph_entities_keep_their_type_through_a_round_trip(
    make_memory: Callable[[str], Memory], tmp_path: Path
) -> None:
    """An entity's own type (person, location) overwrote the line's record type, so no export of a store with a
    graph could be imported ("unknown record type 'person'"); such older files still import."""
    source = make_memory("source")
    t0 = datetime(2025, 3, 1, tzinfo=UTC)
    scope = Scope(user_id="lin")
    people = [Entity(id="e1", scope=scope, name="王总", type="person", aliases=("老王",), created_at=t0, updated_at=t0),
              Entity(id="e2", scope=scope, name="杭州", type="location", created_at=t0, updated_at=t0)]  # fmt: skip
    lives = Relation(id="r1", scope=scope, source_id="e1", relation="lives_in", target_id="e2", valid_from=t0,
                     created_at=t0, updated_at=t0)  # fmt: skip
    source.store.write(WriteBatch(entities=people, relations=[lives]))
    path = tmp_path / "graph.jsonl"
    source.export_jsonl(path)
    target = make_memory("target")
    target.import_jsonl(path)
    assert {(e.name, e.type) for e in target.graph.entities(user_id="lin")} == {
        ("王总", "person"),
        ("杭州", "location"),
    }

    legacy = tmp_path / "legacy.jsonl"  # the shape exports had before: the entity's type as the line's type
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for line in lines:
        if line["type"] == "entity":
            line["type"] = line.pop("entity_type")
    legacy.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    older = make_memory("older")
    older.import_jsonl(legacy)
    assert {(e.name, e.type) for e in older.graph.entities(user_id="lin")} == {("王总", "person"), ("杭州", "location")}


def test_process_memory_survives_a_round_trip(make_memory: Callable[[str], Memory], tmp_path: Path) -> None:
    """Tasks, steps and hypotheses were left out of the export: a restored backup had their index memories but no
    tasks (`task list` empty)."""
    source = make_memory("source")
    task = source.tasks.begin("把夜间构建从 40 分钟降到 15 分钟", user_id="lin")
    step = source.tasks.record_step(task.id, "run", "cache the Docker layers", output="38 min", dead_end=True,
                                    user_id="lin")  # fmt: skip
    source.tasks.hypothesize(task.id, "the test stage dominates", step_id=step.id, user_id="lin")
    source.tasks.finish(task.id, "parallel tests: 14 min", user_id="lin")
    path = tmp_path / "tasks.jsonl"
    source.export_jsonl(path)
    target = make_memory("target")
    target.import_jsonl(path)
    restored = target.tasks.get(task.id, user_id="lin")
    assert restored == source.tasks.get(task.id, user_id="lin")
    assert target.store.process.counts(None) == source.store.process.counts(None)
    assert target.import_jsonl(path).already_there > 0 and target.store.process.counts(
        None
    ) == source.store.process.counts(None)


def test_a_memory_not_embedded_yet_is_restored_as_it_was(make_memory: Callable[[str], Memory], tmp_path: Path) -> None:
    """A running task's memory waits for its vector (process memory embeds at the task's end); the import embedded
    it, so a restored backup differed from its source and `copy --verify-only` reported "not verified"."""
    source = make_memory("source")
    source.add("Prefers oolong tea", user_id="lin")
    source.tasks.begin("reduce search latency", user_id="lin")
    path = tmp_path / "running.jsonl"
    source.export_jsonl(path)
    target = make_memory("target")
    target.import_jsonl(path)
    assert target.stats().vectors == source.stats().vectors == 1
    ids = [item.id for item in source.get_all(user_id="lin")]
    assert [target.get(i, user_id="lin") for i in ids] == [source.get(i, user_id="lin") for i in ids]


def test_an_import_whose_key_holds_another_value_here_is_refused_whole(
    make_memory: Callable[[str], Memory], tmp_path: Path
) -> None:
    """Importing gave the key two current values (the key table pointed at the imported one only)."""
    source, target = make_memory("source"), make_memory("target")
    source.add("v1", user_id="u", key="k:a:b")
    source.add("an unrelated memory", user_id="u")
    exported = tmp_path / "out.jsonl"
    source.export_jsonl(exported)
    target.add("v2", user_id="u", key="k:a:b")
    with pytest.raises(ConflictError, match="already holds another current value"):
        target.import_jsonl(exported)
    assert [m.text for m in target.get_all(user_id="u")] == ["v2"]  # all or nothing


def test_an_import_refuses_metadata_nested_past_the_limit(make_memory: Callable[[str], Memory], tmp_path: Path) -> None:
    """add() refuses metadata nested past 32 levels; an import wrote it, and every REST read of the scope
    then answered 500. The import checks what add() checks; 32 levels still round-trip."""
    source, target = make_memory("source"), make_memory("target")
    deep: dict[str, object] = {"leaf": 1}
    for _ in range(31):
        deep = {"a": deep}
    source.add("深层元数据", user_id="imp", metadata=deep)
    path = tmp_path / "export.jsonl"
    source.export_jsonl(path)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    (memory_line,) = [line for line in lines if line["type"] == "memory"]
    memory_line["metadata"] = {"a": memory_line["metadata"]}  # one level more: 33
    too_deep = tmp_path / "too-deep.jsonl"
    too_deep.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(InvalidInputError, match="nests deeper than 32 levels"):
        target.import_jsonl(too_deep)
    assert target.get_all(user_id="imp") == []
    assert target.import_jsonl(path).memories == 1


def test_an_export_cut_at_a_line_break_is_refused(make_memory: Callable[[str], Memory], tmp_path: Path) -> None:
    """`head -n 40` of an export imported with exit 0: 15 memories, the turns, most history and the graph gone."""
    source = make_memory("source")
    source.add([{"role": "user", "content": "我住在杭州"}, {"role": "assistant", "content": "好的"}], user_id="u1")
    source.add("Prefers dark mode", user_id="u1", kind="preference")
    path = tmp_path / "export.jsonl"
    source.export_jsonl(path)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    target = make_memory("target")
    cut = tmp_path / "cut.jsonl"
    for keep, complaint in ((len(lines) - 1, "no end line"), (3, "no end line")):
        cut.write_text("".join(lines[:keep]), encoding="utf-8")
        with pytest.raises(InvalidInputError, match=f"not a whole export \\({complaint}\\)"):
            target.import_jsonl(cut)
    cut.write_text("".join(lines[1:]), encoding="utf-8")
    with pytest.raises(InvalidInputError, match="does not start with a memstrata-export header"):
        target.import_jsonl(cut)
    cut.write_text("".join(lines[:3] + lines[-1:]), encoding="utf-8")  # the end line kept, the middle cut out
    with pytest.raises(InvalidInputError, match="not a whole export"):
        target.import_jsonl(cut)
    assert target.get_all(user_id="u1") == [] and target.messages(user_id="u1") == []
    # An export made before the end line (version 1) still imports.
    older = [line.replace('"version": 2', '"version": 1') for line in lines[:-1]]
    cut.write_text("".join(older), encoding="utf-8")
    assert target.import_jsonl(cut).memories == 3


def test_a_views_export_holds_its_own_records_and_its_import_refuses_others(
    make_memory: Callable[[str], Memory], tmp_path: Path
) -> None:
    """A tenant's view exported every tenant's memories (another tenant's secrets and the default tenant's), and
    importing through a view wrote records into the tenants they came from (found by two user trials)."""
    source = make_memory("source")
    acme, globex = source.for_tenant("acme"), source.for_tenant("globex")
    acme.add([{"role": "user", "content": "我搬到上海了"}], user_id="lin")
    acme.add("Lin prefers tea", user_id="lin")
    acme.add("Bob's desk is by the window", user_id="bob")
    globex.add("GLOBEX merger is secret", user_id="lin")
    source.add("default tenant PIN 4321", user_id="carol")

    whole_tenant, one_user = tmp_path / "acme.jsonl", tmp_path / "acme-lin.jsonl"
    acme.export_jsonl(whole_tenant)
    acme.scoped(user_id="lin").export_jsonl(one_user)
    for path, users in ((whole_tenant, {"lin", "bob"}), (one_user, {"lin"})):
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:-1]]
        scopes = [line["scope"] for line in lines if "scope" in line]
        assert scopes and {scope["tenant_id"] for scope in scopes} == {"acme"}
        assert {scope["user_id"] for scope in scopes} == users
        memories = {line["id"] for line in lines if line["type"] == "memory"}
        assert {line["id"] for line in lines if line["type"] == "vector"} == memories
    # the secrets' whole texts: "4321" alone turned up by chance in an id or a timestamp's microseconds
    exported = whole_tenant.read_text(encoding="utf-8")
    assert "GLOBEX merger" not in exported and "PIN 4321" not in exported

    target = make_memory("target")
    with pytest.raises(InvalidInputError, match="outside this view"):
        target.for_tenant("evil").import_jsonl(whole_tenant)
    with pytest.raises(InvalidInputError, match="outside this view"):
        target.for_tenant("acme").scoped(user_id="lin").import_jsonl(whole_tenant)
    assert target.stats().messages == target.stats().vectors == 0  # nothing written
    assert target.for_tenant("acme").import_jsonl(whole_tenant).memories == 3  # the turn, tea, the desk
    assert {item.text for item in target.for_tenant("acme").get_all(user_id="lin")} >= {"Lin prefers tea"}
    assert target.for_tenant("globex").get_all(user_id="lin") == []

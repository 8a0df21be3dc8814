"""Bad input gets a clear error, and nothing is partially written."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata import InvalidInputError, Memory
from memstrata.config import load_settings


def _nothing_written(memory: Memory) -> None:
    stats = memory.stats()
    assert stats.memories_by_status == {} and stats.messages == 0 and stats.history_events == 0


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ("", "empty"),
        ("   \n\t", "empty"),
        ("\u200b\u200b", "only invisible characters"),  # was stored: str.strip() keeps zero-width spaces
        ("\ufeff \u2060", "only invisible characters"),
        ("\x7f", "only invisible characters"),  # DEL alone was stored, a memory that showed as empty (a user trial)
        ("\x01\x02 \x1b", "only invisible characters"),
        ("nul\x00inside", "NUL"),
        ("broken \udcff surrogate", "UTF-8"),
        (b"\xff\xfe not utf-8", "UTF-8"),
        (12345, "must be a string|text, a message dict"),
        ([], "empty list"),
        (["fine", ""], "item 1 is empty"),
        ([{"role": "user"}], "content"),
        ([{"role": "robot", "content": "hi"}], "role"),
        ([{"role": "user", "content": "hi", "colour": "red"}], "unknown field"),
        (["text", {"role": "user", "content": "hi"}], "both plain strings and messages"),
    ],
)
def test_bad_add_input_is_rejected_and_nothing_is_written(memory: Memory, payload: object, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        memory.add(payload, user_id="u1")  # type: ignore[arg-type]
    _nothing_written(memory)


def test_missing_scope_is_rejected(memory: Memory) -> None:
    # a rule of the whole scope names no field (it said "invalid scope: value: …", pydantic's word)
    with pytest.raises(InvalidInputError, match=r"^invalid scope: a scope needs at least one of user_id"):
        memory.add("hello")
    with pytest.raises(InvalidInputError, match="at least one of user_id"):
        memory.search("hello")
    with pytest.raises(InvalidInputError, match="blank"):
        memory.add("hello", user_id="  ")
    _nothing_written(memory)


def test_wrong_types_and_values(memory: Memory) -> None:
    with pytest.raises(InvalidInputError, match="metadata must be a dict"):
        memory.add("x", user_id="u1", metadata=["a"])  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="JSON-serialisable"):
        memory.add("x", user_id="u1", metadata={"when": object()})
    with pytest.raises(InvalidInputError, match="lowercase identifier"):
        memory.add("x", user_id="u1", kind="Not A Kind")
    with pytest.raises(InvalidInputError, match="namespaced"):
        memory.add("x", user_id="u1", key="no spaces allowed")
    with pytest.raises(InvalidInputError, match="confidence"):
        memory.add("x", user_id="u1", confidence=1.5)
    # PostgreSQL's index refused a ~2.7 KB key as a lost connection (REST 503, "retry"); NUL read as a namespace fault
    with pytest.raises(InvalidInputError, match="key is 3,002 characters; at most 512"):
        memory.add("x", user_id="u1", key="a:" + "k" * 3000)
    with pytest.raises(InvalidInputError, match="key contains a NUL character"):
        memory.add("x", user_id="u1", key="a:b\x00c")
    with pytest.raises(InvalidInputError, match="event_time: 'last tuesday' is not an ISO 8601 date-time"):
        memory.add("x", user_id="u1", event_time="last tuesday")
    with pytest.raises(InvalidInputError, match="limit"):
        memory.search("x", user_id="u1", limit=0)
    _nothing_written(memory)


def test_text_over_the_whole_limit_is_refused(store, embedder) -> None:  # type: ignore[no-untyped-def]
    limits = {"max_text_chars": 20, "max_whole_chars": 50}
    memory = Memory(store, embedder, settings=load_settings({"limits": limits}))
    with pytest.raises(InvalidInputError, match=r"over the limit of 50; split it, or raise limits\.max_whole_chars"):
        memory.add("x" * 51, user_id="u1")  # the setting that refused it, not max_text_chars (the part size)
    with pytest.raises(InvalidInputError, match="item 1 has 51 characters, over the limit of 50"):
        memory.add(["short", "y" * 51], user_id="u1")
    _nothing_written(memory)
    assert len(memory.add("x" * 50, user_id="u1").results) == 3  # over max_text_chars: stored in parts


@pytest.mark.parametrize(
    "filters",
    [{"colour": "red"}, {"status": "sleeping"}, {"metadata": {"bad key!": 1}}, {"created_at": {"after": "2024"}}],
)
def test_unknown_or_invalid_filters(memory: Memory, filters: dict[str, object]) -> None:
    with pytest.raises(InvalidInputError, match="invalid filters"):
        memory.search("x", user_id="u1", filters=filters)
    with pytest.raises(InvalidInputError, match="invalid filters"):
        memory.get_all(user_id="u1", filters=filters)


@pytest.mark.parametrize(
    "query", ['"foo" OR', "*", 'unbalanced "quote', "NEAR(a b)", "a AND", "(", "-", "col:value", "^start"]
)
def test_fts_syntax_in_queries_is_treated_literally(memory: Memory, query: str) -> None:
    memory.add(['the "foo" OR bar case', "value of col", "start here"], user_id="u1")
    memory.search(query, user_id="u1")  # must not raise: the words are searched, the syntax is not parsed


def test_fts_operators_do_not_act_as_operators(memory: Memory) -> None:
    memory.add(["apples and pears", "bananas only"], user_id="u1")
    hits = memory.search("NOT apples", user_id="u1")
    assert hits and hits[0].text == "apples and pears"


def test_a_turn_of_invisible_characters_is_kept_raw_without_an_episode(memory: Memory) -> None:
    result = memory.add([{"role": "user", "content": "\u200b"}, {"role": "user", "content": "好的"}], user_id="zw")
    assert len(result.message_ids) == 2 and [event.memory for event in result.results] == ["好的"]
    assert [turn.message.content for turn in memory.messages(user_id="zw")] == ["\u200b", "好的"]  # verbatim


def test_invisible_characters_neither_make_a_duplicate_nor_an_id(memory: Memory) -> None:
    """A zero-width space pasted along stored the same note twice; a BOM read from a file stayed in the text; a
    zero-width user id was accepted although a blank one is refused."""
    first = memory.add("我的密码提示是猫的名字", user_id="zw").results[0]
    again = memory.add("我的密码提示是\u200b猫\u200b的名字", user_id="zw").results[0]
    assert (again.event, again.id) == ("NONE", first.id)
    assert memory.add("\ufeffBOM note from a file", user_id="zw").results[0].memory == "BOM note from a file"
    with pytest.raises(InvalidInputError, match="blank"):
        memory.add("hello", user_id="\u200b")
    with pytest.raises(InvalidInputError, match="only invisible characters"):  # marks with nothing to mark
        memory.add("\u0301\u0301\u0301", user_id="zw")
    assert memory.add("café 很好", user_id="zw").results[0].event == "ADD"  # a mark on a letter is text


@pytest.mark.parametrize("user_id", ["alice\nbob", "ali\tce", "alice\x07", "\u202eecila", "ali\u200bce"])
def test_scope_ids_with_control_or_hiding_characters_are_refused(memory: Memory, user_id: str) -> None:
    """An id with a newline, a bell, a bidi override or a zero-width space was stored: it prints like another
    user's id in the CLI, the logs and the console."""
    with pytest.raises(InvalidInputError, match="control character U\\+"):
        memory.add("hello", user_id=user_id)
    assert memory.stats().memories_by_status == {}


def test_scope_ids_keep_joiners_and_every_script(memory: Memory) -> None:
    for user_id in ("爱丽丝", "\u0645\u0631\u06cc\u200c\u0645", "👩\u200d💻"):  # ZWNJ in a Persian name, ZWJ in emoji
        assert memory.add("hello", user_id=user_id, infer=False).results[0].event == "ADD"


def test_integers_beyond_64_bits_are_refused_in_metadata_and_filters(memory: Memory) -> None:
    """Such a value was stored, then any filter on it failed in the database (HTTP 500 over REST)."""
    with pytest.raises(InvalidInputError, match=r"metadata\.a\.b\[0\]: 1{20} does not fit in 64 bits"):
        memory.add("hello", user_id="u1", metadata={"a": {"b": [int("1" * 20)]}})
    for value in (2**63, -(2**63) - 1):
        for call in (memory.search, memory.deep_search, memory.context):
            with pytest.raises(InvalidInputError, match="does not fit in 64 bits"):
                call("x", user_id="u1", filters={"metadata": {"a": value}})
        with pytest.raises(InvalidInputError, match="does not fit in 64 bits"):
            memory.get_all(user_id="u1", filters={"metadata": {"a": value}})
    memory.add("hello", user_id="u1", metadata={"a": 2**63 - 1})
    assert [h.text for h in memory.search("hello", user_id="u1", filters={"metadata": {"a": 2**63 - 1}})] == ["hello"]


def test_a_timestamp_is_read_as_iso_8601_with_a_reason_when_it_is_not(memory: Memory) -> None:
    """ "+08" is an ISO 8601 offset and was refused; "+25:00" and a 60th second were refused as "unexpected extra
    characters at the end of the input", which names no fault."""
    added = memory.add([{"role": "user", "content": "hi there", "timestamp": "2024-01-01T10:00:00+08"}], user_id="t")
    assert memory.messages(user_id="t")[0].message.timestamp.isoformat() == "2024-01-01T02:00:00+00:00"
    assert added.message_ids
    for bad, reason in (("2024-01-01T10:00:00+25:00", "UTC offset"), ("2024-01-01T23:59:60Z", "second must be")):
        with pytest.raises(InvalidInputError, match=reason):
            memory.add([{"role": "user", "content": "hello", "timestamp": bad}], user_id="t")


def test_event_time_and_as_of_read_iso_8601_text_as_a_turns_timestamp_does(memory: Memory) -> None:
    """add(event_time="2024-01-01T00:00:00+08:00") was refused ("must be a datetime") where a turn's timestamp of the
    same text was read (found by a user trial)."""
    added = memory.add("住在杭州", user_id="t", key="t:home:city", event_time="2024-01-01T00:00:00+08:00")
    stored = memory.get(added.results[0].id, user_id="t")
    assert stored is not None and stored.valid_from.isoformat() == "2023-12-31T16:00:00+00:00"
    assert memory.search("t:home:city", user_id="t", as_of="2024-06-01")[0].text == "住在杭州"
    assert memory.search("t:home:city", user_id="t", as_of="2023-06-01T00:00:00Z") == []


def test_a_read_replica_needs_postgres_on_both_sides(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match=r"store\.read_url needs PostgreSQL"):
        load_settings({"store": {"path": str(tmp_path / "m.db"), "read_url": "postgresql://replica/db"}})
    with pytest.raises(InvalidInputError, match=r"store\.read_url needs PostgreSQL"):
        load_settings({"store": {"path": "postgresql://primary/db", "read_url": str(tmp_path / "copy.db")}})
    assert load_settings({"store": {"path": str(tmp_path / "m.db"), "read_url": " "}}).store.read_url is None


def test_the_cli_db_option_is_checked_with_the_replica_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from memstrata.cli.context import CliState

    monkeypatch.setenv("MEMSTRATA_STORE__READ_URL", "postgresql://standby/memstrata")
    settings = CliState(db="postgresql://primary/memstrata").settings()  # was refused: checked before --db applied
    assert (settings.store.path, settings.store.read_url) == (
        "postgresql://primary/memstrata",
        "postgresql://standby/memstrata",
    )

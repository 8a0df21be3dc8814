"""The CLI as a user runs it: a real store, JSON output for assertions (tests/support/cli.py runs the commands)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memstrata.cli.render import history_table
from memstrata.types import HistoryAction, HistoryEvent, Scope
from support.cli import run, run_json


def test_cli_round_trip_as_its_own_process(tmp_path: Path) -> None:
    """The whole round trip as a user's shell runs it: ``python -m memstrata``, one process per command."""
    added = json.loads(run(tmp_path, "--json", "add", "我喜欢喝乌龙茶", "I play tennis on Sundays", "--user", "u1",
                           own_process=True).stdout)  # fmt: skip
    assert len(added["results"]) == 2 and run(tmp_path, "list", "--user", "u1", own_process=True).returncode == 0


def test_cli_round_trip(tmp_path: Path) -> None:
    added = run_json(tmp_path, "add", "我喜欢喝乌龙茶", "I play tennis on Sundays", "--user", "u1")
    tea_id = added["results"][0]["id"]
    keyed = run_json(tmp_path, "add", "Postgres 17", "--user", "u1", "--key", "app:db:engine")
    assert keyed["results"][0]["event"] == "ADD"
    run(tmp_path, "add", "-", "--user", "u1", "--role", "user", stdin="first turn\nsecond turn\n")

    hits = run_json(tmp_path, "search", "What tea do I like?", "--user", "u1", "-k", "2")
    assert hits[0]["memory"]["id"] == tea_id
    assert hits[0]["breakdown"]["vector_rank"] == 1
    assert run_json(tmp_path, "search", "app:db:engine", "--user", "u1")[0]["breakdown"]["key_match"]
    assert run_json(tmp_path, "search", "tea", "--user", "someone-else") == []

    listed = run_json(tmp_path, "list", "--user", "u1", "--kind", "episode")
    assert sorted(item["text"] for item in listed) == ["first turn", "second turn"]
    assert run_json(tmp_path, "show", tea_id, "--user", "u1")["text"] == "我喜欢喝乌龙茶"

    run(tmp_path, "update", tea_id, "我现在更喜欢喝红茶", "--user", "u1", "--reason", "taste changed")
    run(tmp_path, "delete", tea_id, "--user", "u1")
    actions = [e["action"] for e in run_json(tmp_path, "history", tea_id, "--user", "u1")]
    assert actions == ["ADD", "UPDATE", "DELETE"]

    stats = run_json(tmp_path, "stats")
    # the text the update replaced is kept as a closed (superseded) version, for as_of / known_at searches
    assert stats["memories_by_status"] == {"active": 4, "deleted": 1, "superseded": 1} and stats["messages"] == 2

    export = tmp_path / "out.jsonl"
    run(tmp_path, "export", str(export))
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    assert run_json(fresh, "import", str(export)) == {"memories": 6, "already_there": 0, "kept_stored": 0}
    assert run_json(fresh, "reindex") == {"reindexed": 0, "keyword_index_rebuilt": 0}

    table = run(tmp_path, "search", "tennis", "--user", "u1").stdout
    assert "I play tennis on Sundays" in table


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("add", "no scope given"), "at least one of user_id"),
        (("add", "x", "--user", "u1", "--metadata", "{not json"), "--metadata must be JSON"),
        (("search", "x", "--user", "u1", "--filters", '{"colour": 1}'), "unknown field"),
        (("show", "does-not-exist", "--user", "u1"), "no memory does-not-exist in scope user_id=u1"),
        (("import", "/nonexistent/file.jsonl"), "is not a file"),
    ],
)
def test_cli_errors_are_one_line_and_non_zero(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    result = run(tmp_path, *args, ok=False)
    assert result.returncode != 0
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_cli_usage_error_exits_non_zero(tmp_path: Path) -> None:
    result = run(tmp_path, "search", ok=False)
    assert result.returncode == 2


def test_demo_runs(tmp_path: Path) -> None:
    out = run(tmp_path, "demo", "--db", str(tmp_path / "demo.db")).stdout
    assert "rock climbing" in out and "我对花生过敏" in out and "DELETE" in out


def test_cli_lifecycle_commands(tmp_path: Path) -> None:
    note = run_json(tmp_path, "add", "My old locker code was 1234", "--user", "u1")["results"][0]["id"]
    run(tmp_path, "add", "I work as a pharmacist", "--user", "u1")
    archived = run_json(tmp_path, "archive", note, "--user", "u1")
    assert archived["status"] == "archived"
    assert run_json(tmp_path, "restore", note, "--user", "u1")["status"] == "active"
    preview = run_json(tmp_path, "forget", "locker code", "--user", "u1")
    assert not preview["deleted"] and [m["id"] for m in preview["matched"]] == [note]
    assert run_json(tmp_path, "forget", "locker code", "--user", "u1", "--yes")["deleted"]
    assert run_json(tmp_path, "review", "--user", "u1") == []
    assert set(run_json(tmp_path, "maintain")) == {"expired_pending", "archived", "sessions_released"}
    refused = run(tmp_path, "erase-user", "u1", ok=False)
    assert refused.returncode != 0 and "--yes" in refused.stderr  # the CLI fix, not the Python call
    erased = run_json(tmp_path, "erase-user", "u1", "--yes")
    assert set(erased["remaining"].values()) == {0}


def test_importing_the_same_turns_again_says_nothing_new(tmp_path: Path) -> None:
    """A second import of the same file printed nothing at all: no sign it had run."""
    turns = "".join(json.dumps({"role": "user", "content": f"turn {n} of the chat", "id": f"t{n}"}) + "\n"
                    for n in range(3))  # fmt: skip
    first = run(tmp_path, "add", "--jsonl", "--user", "u1", "-", stdin=turns)
    assert first.stdout.count("ADD") == 3
    again = run(tmp_path, "add", "--jsonl", "--user", "u1", "-", stdin=turns)
    assert "nothing new: the 3 turn(s) were stored already" in again.stdout
    # the same file saved by a Windows editor, with a byte-order mark: "line 1 is not JSON (Unexpected UTF-8 BOM)"
    marked = run(tmp_path, "add", "--jsonl", "--user", "u1", "-", stdin="\ufeff" + turns)
    assert "nothing new: the 3 turn(s) were stored already" in marked.stdout


def test_cli_acts_inside_a_tenant(tmp_path: Path) -> None:
    """What the service stored under a key's tenant was out of the CLI's reach: `erase-user alice --yes` reported
    "erased alice" with nothing erased while the tenant still held her memories."""
    run(tmp_path, "--tenant", "acme", "add", "I play tennis on Sundays", "--user", "alice")
    assert run_json(tmp_path, "search", "tennis", "--user", "alice") == []  # the default tenant holds nothing
    assert run_json(tmp_path, "--tenant", "acme", "search", "tennis", "--user", "alice")[0]["memory"]["text"]
    missed = run(tmp_path, "erase-user", "alice", "--yes")
    assert "nothing stored for alice" in missed.stderr and "--tenant" in missed.stderr
    erased = run_json(tmp_path, "--tenant", "acme", "erase-user", "alice", "--yes")
    assert erased["deleted"]["memories"] == 1 and set(erased["remaining"].values()) == {0}
    assert run_json(tmp_path, "--tenant", "acme", "search", "tennis", "--user", "alice") == []


def test_cli_counts_and_lists_jobs_of_a_whole_tenant(tmp_path: Path) -> None:
    """`--tenant acme stats` and `--tenant acme jobs` failed with "a scope needs at least one of user_id...";
    they now cover that tenant alone."""
    run(tmp_path, "--tenant", "acme", "add", "I play tennis on Sundays", "--user", "alice")
    run(tmp_path, "--tenant", "acme", "add", "我喜欢喝乌龙茶", "--user", "bob")
    run(tmp_path, "add", "a default-tenant memory", "--user", "alice")
    assert run_json(tmp_path, "--tenant", "acme", "stats")["memories_by_status"] == {"active": 2}
    assert run_json(tmp_path, "--tenant", "nobody", "stats")["memories_by_status"] == {}
    assert run_json(tmp_path, "stats")["memories_by_status"] == {"active": 3}
    assert run_json(tmp_path, "--tenant", "acme", "jobs") == []


def test_add_infer_exits_non_zero_when_the_model_fails_and_keeps_the_turn(tmp_path: Path) -> None:
    """The model is a scripted OpenAI-compatible server at the HTTP boundary that answers garbage."""
    from support.scripted_llm import ScriptedServer, completion

    with ScriptedServer().running() as server:
        server.answer_with(lambda _request: completion("this is not JSON"))
        env = {"MEMSTRATA_LLM__PROVIDER": "openai", "MEMSTRATA_LLM__BASE_URL": server.base_url,
               "MEMSTRATA_LLM__MODEL": "scripted", "MEMSTRATA_LLM__API_KEY": "x", "MEMSTRATA_LLM__MAX_ATTEMPTS": "1",
               "MEMSTRATA_WRITE__TRIGGER": "every_turn"}  # fmt: skip
        said = ("add", "我下周去成都出差", "--user", "u1", "--role", "user", "--infer")
        failed = run(tmp_path, *said, ok=False, env=env)
        assert failed.returncode != 0
        assert "failed" in failed.stderr and "memstrata jobs --retry" in failed.stderr
        shown = run_json(tmp_path, "jobs", "--user", "u1", "--status", "failed")
        assert len(shown) == 1 and "this is not JSON" in (shown[0]["raw_output"] or "")
    assert [item["text"] for item in run_json(tmp_path, "list", "--user", "u1")] == ["我下周去成都出差"]  # its episode


def test_json_may_follow_the_command(tmp_path: Path) -> None:
    """Scripts put --json after the command; typer refused it there ("No such option")."""
    from memstrata.cli.app import _global_flags_first

    run(tmp_path, "add", "我喜欢喝乌龙茶", "--user", "u1")
    hits = json.loads(run(tmp_path, "search", "乌龙茶", "--user", "u1", "--json").stdout)
    assert hits[0]["memory"]["text"] == "我喜欢喝乌龙茶"
    assert _global_flags_first(["add", "--", "--json"]) == ["add", "--", "--json"]  # after --, a text


def test_a_past_conversation_imports_with_when_each_turn_was_said(tmp_path: Path) -> None:
    """There was no CLI way to add turns with their own times: --event-time was refused with --role."""
    turns = [{"role": "user", "content": "I adopted a dog named Biscuit", "timestamp": "2023-05-01T10:00:00Z"},
             {"role": "assistant", "content": "Congratulations!", "timestamp": "2023-05-01T10:00:05Z"}]  # fmt: skip
    run(tmp_path, "add", "-", "--jsonl", "--user", "lin", stdin="\n".join(json.dumps(t) for t in turns))
    hits = run_json(tmp_path, "search", "Biscuit", "--user", "lin")
    assert hits[0]["memory"]["event_time"].startswith("2023-05-01T10:00:00")
    refused = run(tmp_path, "add", "-", "--jsonl", "--user", "lin", stdin="not json\n", ok=False)
    assert refused.returncode == 2 and "--jsonl line 1 is not JSON" in refused.stderr
    # a file named: its lines are the turns (a user trial passed the file's name and was told it was not JSON)
    history = tmp_path / "chat.jsonl"
    history.write_text(json.dumps({"role": "user", "content": "我的猫叫团子", "timestamp": "2022-01-02T09:00:00Z"},
                                  ensure_ascii=False) + "\n", encoding="utf-8")  # fmt: skip
    run(tmp_path, "add", "--jsonl", "--user", "lin", str(history))
    hits = run_json(tmp_path, "search", "团子", "--user", "lin")
    assert hits[0]["memory"]["text"] == "我的猫叫团子" and hits[0]["memory"]["event_time"].startswith("2022-01-02")
    missing = run(tmp_path, "add", "--jsonl", "--user", "lin", str(tmp_path / "no-such.jsonl"), ok=False)
    assert missing.returncode == 2 and "--jsonl line 1 is not JSON" in missing.stderr


def test_mcp_over_stdio_refuses_a_blank_tenant_at_start(tmp_path: Path) -> None:
    """It started, then every tool call failed."""
    refused = run(tmp_path, "mcp", "--tenant", "", ok=False, stdin="")
    assert refused.returncode == 2 and "tenant_id: scope ids must not be blank" in refused.stderr


def test_db_option_takes_a_postgres_url(tmp_path: Path, postgres_databases: Any) -> None:
    """``--db postgresql://…`` opens that server: typed as a path, the URL lost one of its slashes and opened a
    SQLite file named "postgresql:" instead."""
    url = postgres_databases.create("cli-db-url")
    added = run_json(tmp_path, "--db", url, "add", "我的车是蓝色的", "--user", "u1")
    assert added["results"][0]["event"] == "ADD"
    assert run_json(tmp_path, "--db", url, "stats")["location"].startswith("postgresql://")
    assert not list(tmp_path.glob("postgresql*"))


def test_a_history_is_titled_with_what_was_asked_about() -> None:
    """The title named the first event's memory: for a memory that superseded another, the oldest version's id; for
    a vault note, an internal section id instead of its path."""
    at = datetime(2025, 1, 6, tzinfo=UTC)
    events = [HistoryEvent(id=f"e{n}", memory_id=memory_id, scope=Scope(user_id="u1"), action=HistoryAction.ADD,
                           old_text=None, new_text="x", actor="api", reason=None, created_at=at)
              for n, memory_id in enumerate(["4c42a64b" + "0" * 24, "2139b7ed" + "0" * 24])]  # fmt: skip
    assert str(history_table(events, of="2139b7ed" + "0" * 24).title) == f"history of {'2139b7ed' + '0' * 24}"
    assert str(history_table(events, of="research/notes/hnsw.md").title) == "history of research/notes/hnsw.md"

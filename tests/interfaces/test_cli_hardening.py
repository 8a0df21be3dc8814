"""CLI behaviours from issue 13, run as a user runs them: id prefixes, an honest doctor, serve's help and a
busy port, unknown kinds, readable output, a demo that cleans up after itself."""

from __future__ import annotations

import random
import socket
import time
from datetime import UTC, datetime
from pathlib import Path

from memstrata.memory import Memory
from memstrata.storage.protocol import WriteBatch
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.types import MemoryItem, Scope, new_id
from support.cli import run, run_json


def test_ids_shown_in_tables_are_accepted_everywhere(tmp_path: Path) -> None:
    added = run_json(tmp_path, "add", "Prefers oolong tea", "Plays tennis", "--user", "u1")
    full = added["results"][0]["id"]
    short = full[:12]
    table = run(tmp_path, "list", "--user", "u1").stdout
    assert short in table and full not in table  # tables show 12 characters ...
    assert run_json(tmp_path, "show", short, "--user", "u1")["id"] == full  # ... and 12 characters are enough
    run(tmp_path, "update", short, "Prefers green tea", "--user", "u1")
    assert [e["action"] for e in run_json(tmp_path, "history", short, "--user", "u1")] == ["ADD", "UPDATE"]
    assert run_json(tmp_path, "archive", short, "--user", "u1")["status"] == "archived"
    assert run_json(tmp_path, "restore", short[:6], "--user", "u1")["status"] == "active"
    run(tmp_path, "delete", short, "--user", "u1")
    unknown = run(tmp_path, "show", "ffffffffffff", "--user", "u1", ok=False)
    assert unknown.returncode == 1 and "no memory id starts with 'ffffffffffff'" in unknown.stderr
    too_short = run(tmp_path, "show", "ab", "--user", "u1", ok=False)
    assert too_short.returncode == 2 and "at least 4 characters" in too_short.stderr
    other_scope = run(tmp_path, "show", short, "--user", "someone-else", ok=False)
    assert other_scope.returncode == 1  # a prefix never reaches another scope's memory


def test_doctor_calls_the_model_and_fails_loudly(tmp_path: Path) -> None:
    healthy = run(tmp_path, "doctor", "--no-model-call")
    assert "embedder" in healthy.stdout and "FAILED" not in healthy.stdout
    with socket.socket() as closed:  # a port nobody listens on: the model is unreachable
        closed.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
    env = {"MEMSTRATA_LLM__PROVIDER": "auto", "MEMSTRATA_LLM__BASE_URL": dead, "MEMSTRATA_LLM__MODEL": "m",
           "MEMSTRATA_LLM__MAX_ATTEMPTS": "1",
           "MEMSTRATA_LLM__TIMEOUT_S": "5"}  # fmt: skip
    broken = run(tmp_path, "--json", "doctor", ok=False, env=env)
    assert broken.returncode == 1
    assert '"ok": false' in broken.stdout and "FAILED" not in broken.stdout  # JSON for scripts
    table = run(tmp_path, "doctor", ok=False, env=env)
    assert table.returncode == 1 and "FAILED" in table.stdout and "llm.base_url" in table.stdout


def test_doctor_finds_memories_an_interrupted_add_left_without_vectors(tmp_path: Path) -> None:
    """Ctrl-C during `add --jsonl` stored 1,500 memories and no vectors; doctor said ok and adding again did nothing,
    so dense search (every cross-language question) missed them until a reindex nobody was told to run."""
    run(tmp_path, "add", "My cat is called Tuanzi", "--user", "u1")
    store = SQLiteStore(tmp_path / "cli.db")  # an add stopped between storing and embedding
    now = datetime.now(UTC)
    item = MemoryItem(id=new_id(), scope=Scope(user_id="u1"), kind="fact", text="I live in Lisbon",
                      created_at=now, updated_at=now, valid_from=now)  # fmt: skip
    store.write(WriteBatch(inserts=[item]))
    store.close()
    found = run(tmp_path, "doctor", "--no-model-call", ok=False)
    assert found.returncode == 1 and "have no vector" in found.stdout and "reindex" in found.stdout
    run(tmp_path, "reindex")
    assert "FAILED" not in run(tmp_path, "doctor", "--no-model-call").stdout
    # a running task's units get their vectors when it ends, by design: not a fault (doctor failed on any such store)
    with Memory.from_config({"store": {"path": str(tmp_path / "cli.db")}}) as memory:
        memory.tasks.start("登录接口返回 500", task_type="debugging", user_id="u1")
    healthy = run(tmp_path, "doctor", "--no-model-call").stdout
    assert "FAILED" not in healthy and "process units wait for their vectors" in healthy


def test_a_damaged_page_is_found_by_doctor_and_said_plainly_by_search_and_add(tmp_path: Path) -> None:
    """One damaged page in the middle of the file: doctor said ok, search and add ended in a raw
    sqlite3.DatabaseError traceback (REST: a bare 500; found by a hardening run)."""
    run(tmp_path, "add", *[f"memory line {n} about tea and coffee" for n in range(60)], "--user", "u")
    path = tmp_path / "cli.db"
    size = path.stat().st_size
    with path.open("r+b") as file:
        file.seek(size // 3 // 16384 * 16384)  # three whole pages (16 KiB each)
        file.write(random.Random(7).randbytes(3 * 16384))
    doctor = run(tmp_path, "--json", "doctor", "--no-model-call", ok=False)
    assert doctor.returncode == 1 and "is damaged" in doctor.stdout, doctor.stdout
    for command in (("search", "tea", "--user", "u"), ("add", "one more", "--user", "u")):
        failed = run(tmp_path, *command, ok=False)
        assert failed.returncode == 1 and "Traceback" not in failed.stderr, command
        assert "the store file is damaged" in failed.stderr and "restore" in failed.stderr, command


def test_serve_help_and_a_busy_port(tmp_path: Path) -> None:
    help_text = " ".join(run(tmp_path, "serve", "--help").stdout.split())
    for words in ("--db", "--config", "postgresql://", "--keys", "keys create", "MEMSTRATA_SERVER__"):
        assert words in help_text, words
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        refused = run(tmp_path, "serve", "--port", port, ok=False)
    assert refused.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in refused.stderr and "--port" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_unknown_kinds_are_pointed_out(tmp_path: Path) -> None:
    added = run(tmp_path, "add", "Standup at 9:30", "--user", "u1", "--kind", "routine")
    assert "new kind 'routine'" in added.stderr  # kinds are extensible: a note, not an error
    listed = run(tmp_path, "list", "--user", "u1", "--kind", "routin")
    assert "no memory in this scope has kind 'routin'" in listed.stderr and "routine" in listed.stderr
    searched = run(tmp_path, "search", "standup", "--user", "u1", "--kind", "routine")
    assert "warning" not in searched.stderr
    bad = run(tmp_path, "list", "--user", "u1", "--kind", "Not A Kind", ok=False)
    assert bad.returncode == 2 and "lowercase identifier" in bad.stderr


def test_reports_are_tables_not_dicts(tmp_path: Path) -> None:
    run(tmp_path, "add", "note", "--user", "u1")
    for command in (["maintain"], ["stats"], ["erase-user", "u1", "--yes"]):
        out = run(tmp_path, *command).stdout
        assert "{" not in out and "'" not in out, (command, out)


def test_demo_leaves_no_temporary_directory(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    run(tmp_path, "demo", env={"TMPDIR": str(temp)})
    assert list(temp.iterdir()) == []


def test_import_into_the_same_store_merges(tmp_path: Path) -> None:
    run(tmp_path, "add", "我住在杭州", "--user", "u1")
    export = tmp_path / "out.jsonl"
    run(tmp_path, "export", str(export))
    merged = run_json(tmp_path, "import", str(export))
    assert merged["memories"] == 0 and merged["already_there"] >= 2


def test_stored_text_and_keys_are_printed_as_they_are(tmp_path: Path) -> None:
    """Rich read stored text as markup: "[/i]" (code) crashed every command showing it, "[bold]" vanished, and
    the key acct:bank:pin came out as "acct🏦pin"."""
    code, styled = "use list[/i] syntax in python", "[bold]red[/bold] text"
    added = run(tmp_path, "add", code, styled, "--user", "carol")
    assert code in added.stdout and styled in added.stdout
    run(tmp_path, "add", "PIN is kept in the safe", "--user", "carol", "--key", "acct:bank:pin")
    listed = run(tmp_path, "list", "--user", "carol").stdout
    assert "list[/i]" in listed and "[bold]red[/bold]" in listed and "acct:bank:pin" in listed
    assert "list[/i]" in run(tmp_path, "search", "python syntax", "--user", "carol").stdout
    refused = run(tmp_path, "add", "x", "--user", "carol", "--kind", "Bad Kind", ok=False)
    assert refused.returncode == 2 and "note:" not in refused.stderr and "lowercase identifier" in refused.stderr


def test_file_problems_are_one_line_errors_and_exports_stay_private(tmp_path: Path) -> None:
    """A path that cannot be written or is no store ended in a Python traceback; an export into a directory left a
    world-readable `.partial` copy of every memory beside it."""
    run(tmp_path, "add", "秘密：保险箱密码 4711", "--user", "u1")
    for args in (("export", str(tmp_path / "missing" / "x.jsonl")), ("export", str(tmp_path)),
                 ("graph", "export", "-f", "graphml", "-o", str(tmp_path / "missing" / "g.graphml"), "--user", "u1"),
                 ("--db", str(tmp_path), "list", "--user", "u1")):  # fmt: skip
        failed = run(tmp_path, *args, ok=False)
        assert failed.returncode in (1, 2) and "Traceback" not in failed.stderr and "error:" in failed.stderr
    assert not list(tmp_path.rglob("*.partial"))
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database", encoding="utf-8")
    refused = run(tmp_path, "--db", str(notes), "list", "--user", "u1", ok=False)
    assert "not a database" in refused.stderr and "Traceback" not in refused.stderr
    assert notes.read_text(encoding="utf-8") == "not a database"
    run(tmp_path, "export", "out.jsonl")
    assert (tmp_path / "out.jsonl").stat().st_mode & 0o777 == 0o600  # as private as the store


def test_cli_errors_name_the_cli_fix(tmp_path: Path) -> None:
    """Errors pointed at Python calls (erase_user(user_id, confirm=True), "add() got an empty list")."""
    refused = run(tmp_path, "erase-user", "bob", ok=False)
    assert refused.returncode == 2 and "--yes" in refused.stderr
    empty = run(tmp_path, "add", "-", "--user", "u1", stdin="", ok=False)
    assert empty.returncode == 2 and "stdin" in empty.stderr


def test_reading_a_store_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    """A mistyped --db quietly created an empty store and answered "nothing found"."""
    refused = run(tmp_path, "--db", str(tmp_path / "typo.db"), "list", "--user", "u1", ok=False)
    assert refused.returncode == 2 and "no store at" in refused.stderr and not (tmp_path / "typo.db").exists()
    checked = run(tmp_path, "--db", str(tmp_path / "typo.db"), "doctor", "--no-model-call", ok=False)  # said "ok"
    assert checked.returncode == 2 and "no store at" in checked.stderr and not (tmp_path / "typo.db").exists()
    run(tmp_path, "--db", str(tmp_path / "new.db"), "add", "first memory", "--user", "u1")  # a write creates it
    assert "first memory" in run(tmp_path, "--db", str(tmp_path / "new.db"), "list", "--user", "u1").stdout


def test_search_travels_in_time_from_the_cli(tmp_path: Path) -> None:
    """as_of / known_at were only in the Python API."""
    run(tmp_path, "add", "Postgres 16", "--user", "u1", "--key", "app:db:engine")
    time.sleep(1.1)
    then = datetime.now(UTC).isoformat()
    time.sleep(1.1)
    run(tmp_path, "add", "DuckDB 1.5", "--user", "u1", "--key", "app:db:engine")
    for option in ("--as-of", "--known-at"):
        found = run_json(tmp_path, "search", "app:db:engine", "--user", "u1", option, then)
        assert found[0]["memory"]["text"] == "Postgres 16"
    assert run_json(tmp_path, "search", "app:db:engine", "--user", "u1")[0]["memory"]["text"] == "DuckDB 1.5"
    refused = run(tmp_path, "search", "x", "--user", "u1", "--as-of", "last tuesday", ok=False)
    assert refused.returncode == 2 and "ISO 8601" in refused.stderr


def test_counts_read_as_english() -> None:
    """'created 1 files', '1 memories cited'."""
    from memstrata.cli.render import counted

    said = [counted(1, "file"), counted(2, "file"), counted(1, "memory", "memories"), counted(0, "memory", "memories")]
    assert said == ["1 file", "2 files", "1 memory", "0 memories"]


def test_repeats_say_nothing_changed_and_an_export_with_a_bom_imports(tmp_path: Path) -> None:
    """Deleting a deleted memory printed DELETE, an update to the same text UPDATE (nothing was written); a file
    saved by a Windows editor (UTF-8 with a BOM) failed to import."""
    full = run_json(tmp_path, "add", "Prefers oolong tea", "--user", "u1")["results"][0]["id"]
    assert run(tmp_path, "update", full, "Prefers oolong tea", "--user", "u1").stdout.startswith("UNCHANGED")
    assert run(tmp_path, "update", full, "Prefers green tea", "--user", "u1").stdout.startswith("UPDATE")
    assert run(tmp_path, "delete", full, "--user", "u1").stdout.startswith("DELETE")
    assert run(tmp_path, "delete", full, "--user", "u1").stdout.startswith("ALREADY DELETED")
    export = tmp_path / "out.jsonl"
    run(tmp_path, "export", str(export))
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + export.read_bytes())
    other = tmp_path / "other"
    other.mkdir()
    assert run_json(other, "import", str(bom))["memories"] >= 1


def test_with_json_an_error_is_a_json_object_too(tmp_path: Path) -> None:
    import json

    failed = run(tmp_path, "--json", "show", "ffffffffffff", "--user", "u1", ok=False)
    assert failed.returncode == 1 and failed.stdout == ""
    error = json.loads(failed.stderr)
    assert error["type"] == "NotFoundError" and error["exit_code"] == 1 and "ffffffffffff" in error["error"]
    plain = run(tmp_path, "show", "ffffffffffff", "--user", "u1", ok=False)
    assert plain.stderr.startswith("error: ")


def test_add_takes_an_event_time(tmp_path: Path) -> None:
    """The CLI had no way to say when a value became true, so keyed history could not be written from it."""
    run(tmp_path, "add", "住在杭州", "--user", "w", "--key", "me:home:city", "--event-time", "2020-01-01")
    run(tmp_path, "add", "住在深圳", "--user", "w", "--key", "me:home:city", "--event-time", "2023-06-01")
    then = run_json(tmp_path, "search", "me:home:city", "--user", "w", "--as-of", "2021-01-01")
    assert [hit["memory"]["text"] for hit in then][:1] == ["住在杭州"]
    bad = run(tmp_path, "add", "x", "--user", "w", "--event-time", "yesterday", ok=False)
    assert bad.returncode == 2 and "event-time" in bad.stderr


def test_an_update_printed_by_add_infer_says_what_it_closed() -> None:
    """A user trial: "UPDATE User's brother's name is Tim" gave no sign it had closed the sister's name."""
    from memstrata.cli.render import decision_line

    update = {"action": "UPDATE", "old": "用户妹妹叫吴小雪", "text": "User's brother's name is Tim", "supersedes": "a"}
    assert decision_line(update) == "  [cyan]UPDATE[/cyan] 用户妹妹叫吴小雪 -> User's brother's name is Tim"
    assert decision_line({"action": "ADD", "text": "用户养了一只猫"}) == "  [cyan]ADD[/cyan] 用户养了一只猫"
    assert decision_line({"action": "DELETE", "old": "[x] gone"}) == "  [cyan]DELETE[/cyan] \\[x] gone"

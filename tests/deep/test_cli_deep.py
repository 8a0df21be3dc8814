"""`memstrata search --mode deep` and `memstrata context` as a user runs them (a real subprocess and store; no
model: MEMSTRATA_LLM__PROVIDER=rules, so deep mode runs its offline heuristics)."""

from __future__ import annotations

from pathlib import Path

from support.cli import run, run_json


def test_deep_search_and_context_commands(tmp_path: Path) -> None:
    run(tmp_path, "add", "We use PostgreSQL 16 with pgvector.", "--key", "project:db:engine", "--user", "u1")
    run(tmp_path, "add", "Caroline painted a sunset over the lake.", "--user", "u1")
    chatty = "ugh, long week. anyway, quick question: what did Caroline paint?"
    hits = run_json(tmp_path, "search", chatty, "--user", "u1", "--mode", "deep")
    assert hits[0]["memory"]["text"] == "Caroline painted a sunset over the lake."
    shown = run(tmp_path, "search", chatty, "--user", "u1", "--mode", "deep").stdout
    assert "stopped:" in shown and "0 model call(s)" in shown
    context = run_json(tmp_path, "context", "which db engine?", "--user", "u1", "--budget", "200")
    assert context["tokens"] <= 200 and "PostgreSQL 16" in context["text"]
    assert "Key facts" in run(tmp_path, "context", "which db engine?", "--user", "u1").stdout
    long_ago = run_json(tmp_path, "context", "which db engine?", "--user", "u1", "--as-of", "2000-01-01")
    assert long_ago["facts"] == [] and "PostgreSQL" not in long_ago["text"]  # nothing held yet in 2000
    bad_time = run(tmp_path, "context", "x", "--user", "u1", "--as-of", "someday", ok=False)
    assert bad_time.returncode != 0 and "as-of" in bad_time.stderr
    refused = run(tmp_path, "search", "x", "--user", "u1", "--mode", "slow", ok=False)
    assert refused.returncode != 0 and "slow" in refused.stderr

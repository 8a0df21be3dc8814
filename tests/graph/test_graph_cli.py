"""``memstrata graph ...`` as a user runs it: the CLI over a real store (rules extractor; tests/support/cli.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.cli import run, run_json


@pytest.fixture(scope="module")
def said(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One store for the module: the conversation is said once."""
    tmp_path = tmp_path_factory.mktemp("graph-cli")
    run(tmp_path, "add", "王总的太太是李女士", "王总喜欢红酒", "我在字节跳动做后端，住在北京", "--user", "u1",
        "--role", "user", "--infer")  # fmt: skip
    run(tmp_path, "add", "我搬到北京市朝阳区了", "--user", "u1", "--role", "user", "--infer")
    return tmp_path


def test_graph_commands(said: Path) -> None:
    names = {entity["name"] for entity in run_json(said, "graph", "entities", "--user", "u1")}
    assert {"王总", "李女士", "红酒", "字节跳动", "北京", "北京市朝阳区", "user"} <= names
    near = run_json(said, "graph", "neighbors", "李女士", "--hops", "2", "--user", "u1")
    assert {(r["relation"]) for r in near["relations"]} == {"spouse_of", "likes"}
    chain = run_json(said, "graph", "path", "李女士", "红酒", "--user", "u1")
    assert [step["relation"] for step in chain] == ["spouse_of", "likes"]
    homes = run_json(said, "graph", "relations", "我", "--relation", "lives_in", "--user", "u1")
    assert [home["valid_to"] is None for home in homes] == [False, True]
    events = run_json(said, "graph", "history", homes[0]["id"], "--user", "u1")
    assert [event["action"] for event in events] == ["ADD", "CLOSE"]
    table = run(said, "graph", "neighbors", "王总", "--user", "u1").stdout
    assert "spouse_of" in table and "likes" in table


def test_graph_exports(said: Path, tmp_path: Path) -> None:
    mermaid = run(said, "graph", "export", "--format", "mermaid", "--user", "u1").stdout
    assert mermaid.startswith("graph LR") and "-.->|lives_in|" in mermaid  # the closed home is dotted
    run(said, "graph", "export", "-f", "graphml", "-o", str(tmp_path / "g.graphml"), "--user", "u1")
    assert "<graphml" in (tmp_path / "g.graphml").read_text(encoding="utf-8")


def test_graph_errors_are_one_line_and_non_zero(said: Path) -> None:
    missing = run(said, "graph", "neighbors", "赵总", "--user", "u1", ok=False)
    assert missing.returncode == 1 and "no entity named '赵总'" in missing.stderr
    bad = run(said, "graph", "export", "--format", "dot", "--user", "u1", ok=False)
    assert bad.returncode == 2 and "json, graphml or mermaid" in bad.stderr
    other_user = run(said, "graph", "path", "李女士", "红酒", "--user", "u2", ok=False)
    assert other_user.returncode == 1
    as_json = run(said, "--json", "graph", "path", "李女士", "红酒", "--max-hops", "1", "--user", "u1", ok=False)
    assert as_json.returncode == 1 and json.loads(as_json.stdout) is None  # it printed plain text

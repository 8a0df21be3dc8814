"""``memstrata ingest`` and ``memstrata collections`` through typer's runner on a real SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memstrata.cli.app import app
from memstrata.errors import ConfirmationRequiredError


@pytest.fixture
def cli(tmp_path: Path) -> list[str]:
    return ["--db", str(tmp_path / "cli.db"), "--json"]  # each invocation opens and closes its own Memory


def test_ingest_then_collections(cli: list[str], corpus_dir: Path) -> None:
    runner = CliRunner()
    (corpus_dir / "broken.docx").write_bytes(b"not a zip")
    result = runner.invoke(
        app, [*cli, "ingest", str(corpus_dir), "-c", "手册", "--user", "u1", "--chunker", "recursive"]
    )
    assert result.exit_code == 1  # one file failed: the exit code says so
    report = json.loads(result.stdout)
    assert report["summary"]["added"] == 10 and report["summary"]["failed"] == 1
    failed = next(s for s in report["sources"] if s["status"] == "failed")
    assert failed["source"].endswith("broken.docx") and "not a readable docx" in failed["error"]

    (corpus_dir / "broken.docx").unlink()
    again = runner.invoke(app, [*cli, "ingest", str(corpus_dir), "-c", "手册", "--user", "u1"])
    assert again.exit_code == 0 and json.loads(again.stdout)["summary"]["unchanged"] == 10

    listed = json.loads(runner.invoke(app, [*cli, "collections", "list", "--user", "u1"]).stdout)
    assert listed[0]["name"] == "手册" and listed[0]["sources"] == 10
    shown = json.loads(runner.invoke(app, [*cli, "collections", "show", "手册", "--user", "u1"]).stdout)
    assert len(shown) == 10 and all(row["chunks"] >= 1 for row in shown)

    refused = runner.invoke(app, [*cli, "collections", "remove", "手册", "--user", "u1"])
    assert isinstance(refused.exception, ConfirmationRequiredError)
    removed = runner.invoke(app, [*cli, "collections", "remove", "手册", "--user", "u1", "--yes"])
    assert json.loads(removed.stdout)["sources"] == 10
    assert json.loads(runner.invoke(app, [*cli, "collections", "list", "--user", "u1"]).stdout) == []

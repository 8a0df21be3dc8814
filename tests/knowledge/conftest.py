"""Fixtures for knowledge ingestion: the planted corpus (written once per session) and one shared
conversion sandbox (its child process imports MarkItDown once, ~1 s)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("markitdown", reason="pip install -e '.[ingest]' for the knowledge ingestion tests")

from knowledge.corpus import Planted, write_corpus
from memstrata.knowledge.limits import IngestLimits
from memstrata.knowledge.sandbox import ConversionSandbox


@pytest.fixture(scope="session")
def planted_corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Planted]:
    return write_corpus(tmp_path_factory.mktemp("corpus"))


@pytest.fixture
def corpus_dir(planted_corpus: dict[Path, Planted], tmp_path: Path) -> Path:
    """A private copy of the corpus that a test may change."""
    target = tmp_path / "docs"
    shutil.copytree(next(iter(planted_corpus)).parent, target)
    return target


@pytest.fixture(scope="session")
def sandbox() -> Iterator[ConversionSandbox]:
    with ConversionSandbox(IngestLimits()) as running:
        yield running

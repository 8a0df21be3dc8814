"""Knowledge ingestion: documents → stable Markdown → chunks with provenance → knowledge memories.

Pieces, each usable alone (the facade wiring lives outside this package):

- ``convert``: MarkItDown conversion and the stable Markdown (``ConvertedDocument``), page starts
- ``limits`` / ``sandbox``: per-file limits and a child process that converts under a time and memory cap
- ``media``: images and audio, described only by a configured model
- ``chunking``: fixed, recursive, structure, semantic and agentic chunkers behind one protocol
- ``walk`` / ``plan`` / ``state``: which files, what changed (a pure planner), what is indexed (the
  sources table, ``store.knowledge``: one row per document version with its stable Markdown)
- ``records`` / ``writer``: chunks as ``knowledge`` memories and their source row, written one document per
  transaction
- ``pipeline``: the streaming run with a report per source; ``progress``: rich progress bars
- ``fetch``: a URL to a local file under a size and time limit

The facade is ``memory.knowledge`` (``facade/knowledge.py``); REST ``/v1/knowledge``; MCP knowledge tools.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# eager: light, and the function ``plan`` must win over the submodule of that name
from memstrata.knowledge.plan import Plan, plan

if TYPE_CHECKING:
    from memstrata.knowledge.chunking import CHUNKER_NAMES, Chunker, ChunkerName, ChunkSize
    from memstrata.knowledge.convert import ConvertedDocument
    from memstrata.knowledge.limits import IngestLimits, SourceRejected
    from memstrata.knowledge.media import ImageDescriber, MediaModels, OpenAIImageDescriber, Transcriber
    from memstrata.knowledge.pipeline import IngestOptions, Ingestor, IngestReport, SourceOutcome, ingest
    from memstrata.knowledge.state import CollectionSummary, collections, indexed_sources

# Loaded on first use (PEP 562): ``memstrata.knowledge.chunking``, which every Memory imports, would otherwise bring
# the converter, the media models and their HTTP client (httpx, YAML: ~10 MB of every process) with this package.
_EXPORTS = {
    "CHUNKER_NAMES": "memstrata.knowledge.chunking",
    "Chunker": "memstrata.knowledge.chunking",
    "ChunkerName": "memstrata.knowledge.chunking",
    "ChunkSize": "memstrata.knowledge.chunking",
    "ConvertedDocument": "memstrata.knowledge.convert",
    "IngestLimits": "memstrata.knowledge.limits",
    "SourceRejected": "memstrata.knowledge.limits",
    "ImageDescriber": "memstrata.knowledge.media",
    "MediaModels": "memstrata.knowledge.media",
    "OpenAIImageDescriber": "memstrata.knowledge.media",
    "Transcriber": "memstrata.knowledge.media",
    "IngestOptions": "memstrata.knowledge.pipeline",
    "Ingestor": "memstrata.knowledge.pipeline",
    "IngestReport": "memstrata.knowledge.pipeline",
    "SourceOutcome": "memstrata.knowledge.pipeline",
    "ingest": "memstrata.knowledge.pipeline",
    "CollectionSummary": "memstrata.knowledge.state",
    "collections": "memstrata.knowledge.state",
    "indexed_sources": "memstrata.knowledge.state",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "CHUNKER_NAMES",
    "ChunkSize",
    "Chunker",
    "ChunkerName",
    "CollectionSummary",
    "ConvertedDocument",
    "ImageDescriber",
    "IngestLimits",
    "IngestOptions",
    "IngestReport",
    "Ingestor",
    "MediaModels",
    "OpenAIImageDescriber",
    "Plan",
    "SourceOutcome",
    "SourceRejected",
    "Transcriber",
    "collections",
    "indexed_sources",
    "ingest",
    "plan",
]

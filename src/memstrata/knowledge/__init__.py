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

from memstrata.knowledge.chunking import CHUNKER_NAMES, Chunker, ChunkerName, ChunkSize
from memstrata.knowledge.convert import ConvertedDocument
from memstrata.knowledge.limits import IngestLimits, SourceRejected
from memstrata.knowledge.media import ImageDescriber, MediaModels, OpenAIImageDescriber, Transcriber
from memstrata.knowledge.pipeline import IngestOptions, Ingestor, IngestReport, SourceOutcome, ingest
from memstrata.knowledge.plan import Plan, plan
from memstrata.knowledge.state import CollectionSummary, collections, indexed_sources

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

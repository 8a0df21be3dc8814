"""MCP tools for knowledge: search the ingested documents (alone, or one collection), list collections,
show the text around a hit, and, for a local (stdio) server only, ingest a file or folder.

Ingesting reads the server's own files, so it is refused over HTTP: a remote caller must never make the
server read paths on its machine. Remote clients upload through REST (``POST /v1/knowledge``).
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from memstrata.facade.knowledge import SourceSpan
from memstrata.knowledge.chunking import CHUNKER_NAMES
from memstrata.knowledge.records import KNOWLEDGE
from memstrata.mcp_server.arguments import StrictArgumentsServer
from memstrata.mcp_server.common import READ_ONLY, AgentId, Callers, SessionId, UserId, reported, writes
from memstrata.storage.knowledge_protocol import CollectionCounts

Collection = Annotated[str, Field(min_length=1, max_length=64, description="a knowledge collection, e.g. 'handbook'")]


class KnowledgeHit(BaseModel):
    memory_id: str
    score: float
    text: str
    collection: str
    source: str
    title: str
    page: int | None
    heading_path: list[str]


class IngestSummary(BaseModel):
    summary: dict[str, Any]
    failed: dict[str, str] = Field(description="source -> why it failed; the others were ingested")
    skipped: dict[str, str] = Field(
        default_factory=dict, description="source -> why it was not ingested (empty, an unsupported type)"
    )


def register_knowledge_tools(server: StrictArgumentsServer, callers: Callers) -> None:
    @server.tool(annotations=READ_ONLY)
    @reported
    def search_knowledge(
        ctx: Context[Any, Any],
        query: Annotated[str, Field(min_length=1, description="the question, in any language")],
        collection: Annotated[str | None, Field(description="only this collection; all when unset")] = None,
        limit: Annotated[int, Field(ge=1, le=50)] = 5,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> list[KnowledgeHit]:
        """Search ingested documents only (not conversation memories). Each hit names its source, page and
        heading; knowledge_around shows the text around it."""
        view, scope, _ = callers.scoped(ctx, user_id, agent_id, session_id)
        filters: dict[str, Any] = {"kind": [KNOWLEDGE]}
        if collection is not None:
            filters["metadata"] = {"collection": collection}
        hits = view.search(query, limit=limit, filters=filters, **scope)
        return [_hit(hit.memory.id, hit.score, hit.memory.text, hit.memory.metadata) for hit in hits]

    @server.tool(annotations=READ_ONLY)
    @reported
    def knowledge_around(
        ctx: Context[Any, Any],
        memory_id: Annotated[str, Field(description="a hit's memory_id from search_knowledge")],
        chars: Annotated[int, Field(ge=0, le=20_000, description="characters of context on each side")] = 600,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> SourceSpan:
        """The document text before and after a knowledge hit (from the stored Markdown of its source)."""
        view, scope, _ = callers.scoped(ctx, user_id, agent_id, session_id)
        return view.knowledge.around(memory_id, chars=chars, **scope)

    @server.tool(annotations=READ_ONLY)
    @reported
    def knowledge_collections(
        ctx: Context[Any, Any], user_id: UserId = None, agent_id: AgentId = None, session_id: SessionId = None
    ) -> list[CollectionCounts]:
        """The knowledge collections of this scope: sources, chunks, pages and formats."""
        view, scope, _ = callers.scoped(ctx, user_id, agent_id, session_id)
        return view.knowledge.collections(**scope)

    if callers.local is None:  # a remote caller must not make the server read its own files
        server.withhold("ingest_document", "ingest_document reads the server's own files and is only offered to a "
                        "local (stdio) client; upload documents over REST instead (POST /v1/knowledge)")  # fmt: skip
        return

    @server.tool(annotations=writes("Ingest documents", destructive=False, idempotent=True))
    @reported
    def ingest_document(
        ctx: Context[Any, Any],
        path: Annotated[str, Field(min_length=1, max_length=4096, description="a file or folder on this machine")],
        collection: Collection = "default",
        chunker: Annotated[str | None, Field(description=f"one of {', '.join(CHUNKER_NAMES)}")] = None,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> IngestSummary:
        """Ingest a local file or folder into a knowledge collection (local stdio server only). Unchanged files
        are skipped; changed ones replace their chunks."""
        view, scope, _ = callers.scoped(ctx, user_id, agent_id, session_id)
        report = view.knowledge.ingest(path, collection=collection, chunker=chunker, **scope)
        skipped = {o.source: o.error or "" for o in report.outcomes if o.status == "skipped"}
        return IngestSummary(summary=report.summary(), failed={o.source: o.error or "" for o in report.failed},
                             skipped=skipped)  # fmt: skip


def _hit(memory_id: str, score: float, text: str, metadata: dict[str, Any]) -> KnowledgeHit:
    page = metadata.get("page")
    return KnowledgeHit(
        memory_id=memory_id, score=score, text=text, collection=str(metadata.get("collection", "")),
        source=str(metadata.get("source", "")), title=str(metadata.get("title", "")),
        page=page if isinstance(page, int) else None,
        heading_path=[str(part) for part in metadata.get("heading_path") or ()],
    )  # fmt: skip

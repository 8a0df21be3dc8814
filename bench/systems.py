"""What a quality benchmark compares: retrievers over scoped documents, and memstrata's recipes.

Every system gets the same documents per scope and answers ``search(scope, query, k)`` with doc
ids, best first. memstrata is driven only through its public API (``Memory.add`` / ``search``).

To benchmark a new retrieval recipe, add one line to :data:`MEMSTRATA_RECIPES`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from memstrata import Memory, MemstrataError
from memstrata.config import load_settings
from memstrata.storage.sqlite.store import SQLiteStore


@dataclass(frozen=True)
class Doc:
    """One retrievable unit. ``text`` is what baselines index (memstrata's own index text)."""

    doc_id: str
    text: str
    content: str  # what memstrata is given (speaker and date travel as message fields)
    speaker: str | None = None
    when: datetime | None = None
    official: str | None = None  # the paper's retrieval unit, for the reference BM25


class Retriever(Protocol):
    name: str

    def index(self, scope: str, docs: Sequence[Doc]) -> None: ...

    def search(self, scope: str, query: str, k: int) -> list[str]: ...


@dataclass(frozen=True)
class MemstrataRecipe:
    """A memstrata configuration under test: settings, search() keywords, and the write path."""

    name: str
    settings: dict[str, Any] = field(default_factory=dict)
    search: dict[str, Any] = field(default_factory=dict)  # e.g. {"recipe": "..."} once named recipes land
    infer: bool = False  # LLM write path (fact-augmented keys); needs --with-llm and add(infer=True)
    note: str = ""


MEMSTRATA_RECIPES: list[MemstrataRecipe] = [
    MemstrataRecipe("memstrata-hybrid", note="memstrata's defaults, whatever they are at this commit"),
    MemstrataRecipe(
        "memstrata-rrf-equal",
        settings={
            "search": {"fusion": "rrf", "candidates": 50, "rrf_k": 60, "keyword_weight": 1.0, "dense_weight": 1.0}
        },
        note="the first release's fusion: equal weights, RRF k=60, 50 candidates each",
    ),
    MemstrataRecipe(
        "memstrata-fusion-only",
        search={"lifecycle": False, "understand_time": False},
        note="defaults without lifecycle ranking and without time understanding in queries",
    ),
    # HOOK (LLM write path): facts extracted by add(infer=True) beside the raw turns. Runs only with
    # --with-llm, and only if a probe add(infer=True, wait=True) succeeds with the configured model.
    # The bundled local model (~10 tokens/s here) would need many hours for LoCoMo's 5,882 turns:
    # point settings["llm"] at a faster OpenAI-compatible endpoint for this recipe.
    MemstrataRecipe("memstrata-infer", infer=True, note="add(infer=True): LLM facts beside raw turns"),
]


def infer_available(embedder: Any, settings: dict[str, Any]) -> tuple[bool, str]:
    """Probe add(infer=True, wait=True) on a throwaway store; the message says why it is unavailable."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "probe.db"
        try:
            merged = deep_merge(settings, {"store": {"path": str(path)}})
            memory = Memory(SQLiteStore(path), embedder, settings=load_settings(merged))
            try:
                memory.add([{"role": "user", "content": "I live in Hangzhou."}], user_id="probe", infer=True, wait=True)
            finally:
                memory.close()
        except (MemstrataError, TypeError) as exc:
            return False, f"add(infer=True) unavailable: {type(exc).__name__}: {exc}"
    return True, ""


def recipe_supported(recipe: MemstrataRecipe, embedder: Any) -> str | None:
    """None when this memstrata accepts the recipe's settings and search keywords, else why not."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "probe.db"
        try:
            settings = load_settings(deep_merge(recipe.settings, {"store": {"path": str(path)}}))
            memory = Memory(SQLiteStore(path), embedder, settings=settings)
            try:
                memory.search("probe", user_id="probe", record_access=False, **recipe.search)
            finally:
                memory.close()
        except (MemstrataError, TypeError) as exc:
            return f"not supported by this memstrata: {type(exc).__name__}: {exc}"
    return None


class MemstrataRetriever:
    """One recipe. Recipes that ingest the same way share one store (``owner`` ingests it)."""

    def __init__(
        self,
        recipe: MemstrataRecipe,
        embedder: Any,
        db_path: Path,
        *,
        owner: bool,
        extra_settings: dict[str, Any] | None = None,
    ) -> None:
        self.name = recipe.name
        self.recipe = recipe
        self.embedder = embedder
        self.owner = owner
        merged = deep_merge(deep_merge(extra_settings or {}, recipe.settings), {"store": {"path": str(db_path)}})
        settings = load_settings(merged)
        self._doc_of_message: dict[str, str] = {}
        self.memory = Memory(SQLiteStore(db_path), embedder, settings=settings)

    def index(self, scope: str, docs: Sequence[Doc]) -> None:
        if not self.owner:
            return
        # Warm the embedder's disk cache in one batch; add() below then finds every vector there.
        # (memstrata embeds episodes as "speaker: content", which is exactly Doc.text.)
        if hasattr(self.embedder, "embed_batch"):
            self.embedder.embed_batch([doc.text for doc in docs])
        for doc in docs:
            # metadata is per add() call, so each doc is its own call to carry its id.
            meta = {"doc_id": doc.doc_id}
            if doc.speaker is not None:
                message = {"role": "user", "content": doc.content, "name": doc.speaker}
                if doc.when is not None:
                    message["timestamp"] = doc.when
                result = self.memory.add([message], user_id=scope, metadata=meta, infer=self.recipe.infer)
            else:
                result = self.memory.add([doc.content], user_id=scope, metadata=meta, infer=self.recipe.infer)
            self._doc_of_message.update(dict.fromkeys(result.message_ids, doc.doc_id))
        if self.recipe.infer:
            self.memory.flush(user_id=scope)

    def search(self, scope: str, query: str, k: int) -> list[str]:
        hits = self.memory.search(query, user_id=scope, limit=k, record_access=False, **self.recipe.search)
        return list(dict.fromkeys(doc for hit in hits for doc in self._docs_of(hit)))

    def _docs_of(self, hit: Any) -> list[str]:
        """A raw-turn hit carries its doc id; a derived fact points at its source turns."""
        if "doc_id" in hit.memory.metadata:
            return [str(hit.memory.metadata["doc_id"])]
        return [self._doc_of_message[m] for m in hit.memory.provenance.message_ids if m in self._doc_of_message]

    def close(self) -> None:
        self.memory.close()


class MemstrataPart:
    """One retriever inside a memstrata search, read from each hit's ScoreBreakdown ranks.

    A diagnostic view, not a configuration: it shows what the keyword and dense retrievers found
    before fusion, so a fusion loss is visible in every run. One search (limit 2k, so both
    candidate lists survive fusion) serves both parts.
    """

    def __init__(self, source: MemstrataRetriever, part: str, cache: dict[tuple[str, str, int], Any]) -> None:
        self.name = f"{source.name}:{part}-part"
        self.source = source
        self.part = part
        self._cache = cache

    def index(self, scope: str, docs: Sequence[Doc]) -> None:
        """The source retriever has indexed the documents already."""

    def search(self, scope: str, query: str, k: int) -> list[str]:
        key = (scope, query, k)
        if key not in self._cache:
            self._cache.clear()
            self._cache[key] = self.source.memory.search(query, user_id=scope, limit=2 * k, record_access=False)
        rank = "keyword_rank" if self.part == "keyword" else "vector_rank"
        ranked = sorted(
            (h for h in self._cache[key] if getattr(h.breakdown, rank) is not None),
            key=lambda h: getattr(h.breakdown, rank),
        )
        return [str(h.memory.metadata.get("doc_id")) for h in ranked][:k]


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        merged[key] = (
            deep_merge(merged[key], value) if isinstance(value, dict) and isinstance(merged.get(key), dict) else value
        )
    return merged


def memstrata_retrievers(
    recipes: Sequence[MemstrataRecipe],
    embedder: Any,
    workdir: Path,
    *,
    with_llm: bool,
    extra_settings: dict[str, Any] | None = None,
) -> tuple[list[MemstrataRetriever], dict[str, str]]:
    """Retrievers for the runnable recipes, plus {recipe: reason} for the skipped ones."""
    skipped: dict[str, str] = {}
    chosen: list[MemstrataRecipe] = []
    probe: tuple[bool, str] | None = None
    for recipe in recipes:
        if recipe.infer:
            if not with_llm:
                skipped[recipe.name] = "LLM write path not requested (run with --with-llm)"
                continue
            probe = probe or infer_available(embedder, recipe.settings)
            if not probe[0]:
                skipped[recipe.name] = probe[1]
                continue
        elif reason := recipe_supported(recipe, embedder):
            skipped[recipe.name] = reason
            continue
        chosen.append(recipe)
    owners: set[bool] = set()
    retrievers = []
    for recipe in chosen:
        retrievers.append(
            MemstrataRetriever(
                recipe,
                embedder,
                workdir / f"memstrata-infer-{recipe.infer}.db",
                owner=recipe.infer not in owners,
                extra_settings=extra_settings,
            )
        )
        owners.add(recipe.infer)
    return retrievers, skipped

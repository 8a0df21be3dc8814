"""Raw material for ranking experiments: every candidate a query could see, with its raw signals.

LoCoMo and MADial are written into memstrata through its public API (``Memory.add``), in the
memory unit under test; then each query asks the store for its *whole* keyword list (BM25 score)
and *whole* similarity list (cosine), so a sweep (``bench/ranking_sweep.py``) can emulate any
candidate limit and any fusion offline, through the same functions the read path uses.

Only the dev sets in ``../shared/data`` are used. Results are cached under ``bench/.cache``.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from bench.datasets import Conversation, MadialSet, load_locomo, load_madial
from bench.embedders import CACHE_DIR, CachedEmbedder
from memstrata import Memory
from memstrata.config import load_settings
from memstrata.indexing import index_text
from memstrata.lexical import search_terms
from memstrata.query import Filters
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.types import Scope
from memstrata.write import ingest

# Memory units under test: how many earlier turns each episode is indexed with (write/ingest.py).
UNITS = {"turn": 0, "turn+previous": 1, "turn+2previous": 2, "turn+3previous": 3}


@dataclass(frozen=True)
class Case:
    """One query with every candidate's raw signals (doc ids, best first)."""

    dataset: str
    category: int  # LoCoMo category number; 0 for MADial
    scope: str
    text: str
    relevant: frozenset[str]
    keyword: tuple[tuple[str, float], ...]  # (doc id, BM25 score), all matches
    dense: tuple[tuple[str, float], ...]  # (doc id, cosine), every doc of the scope


# Questions no personal memory store should answer: the relevance cutoff should return nothing.
OFF_TOPIC = (
    "What is the boiling point of mercury?",
    "How do I configure a Kubernetes ingress controller?",
    "What is the derivative of arctan(x)?",
    "Which enzyme unwinds DNA during replication?",
    "What was the GDP of Norway in 1995?",
    "How many moons does Neptune have?",
    "What port does PostgreSQL listen on by default?",
    "Who negotiated the Peace of Westphalia?",
    "What is the half-life of carbon-14?",
    "Explain the CAP theorem.",
    "How do I reset a Cisco router password?",
    "What torque should a bicycle stem bolt have?",
    "汞的沸点是多少？",
    "如何配置Kubernetes的Ingress控制器？",
    "反正切函数的导数是什么？",
    "DNA复制时哪种酶负责解旋？",
    "1995年挪威的GDP是多少？",
    "海王星有几颗卫星？",
    "PostgreSQL默认监听哪个端口？",
    "威斯特伐利亚和约是谁谈判的？",
    "碳14的半衰期是多少？",
    "解释一下CAP定理。",
    "怎样重置思科路由器的密码？",
    "自行车把立螺丝应该拧多大扭矩？",
)


@dataclass(frozen=True)
class Corpus:
    """The cases of one dataset and memory unit, and what each doc was indexed as.

    ``off_topic``: every OFF_TOPIC question against every scope; ``foreign``: each question asked
    of another scope (LoCoMo: the next conversation, other people; MADial: the next user).
    Both have no relevant docs: they measure what the relevance cutoff lets through.
    """

    name: str
    unit: str
    cases: tuple[Case, ...]
    indexed: dict[str, dict[str, str]]  # scope -> doc id -> index text
    off_topic: tuple[Case, ...] = ()
    foreign: tuple[Case, ...] = ()


def _memory(path: Path, embedder: Any) -> Memory:
    return Memory(SQLiteStore(path), embedder, settings=load_settings({"store": {"path": str(path)}}))


def _add_locomo(memory: Memory, conversation: Conversation) -> dict[str, str]:
    """Adds the conversation one session per call; returns memory id -> dia id."""
    doc_of: dict[str, str] = {}
    sessions: dict[int, list[Any]] = {}
    for turn in conversation.turns:
        sessions.setdefault(turn.session, []).append(turn)
    for _, batch in sorted(sessions.items()):
        messages = [
            {"role": "user", "content": t.content, "name": t.speaker, **({"timestamp": t.when} if t.when else {})}
            for t in batch
        ]
        result = memory.add(messages, user_id=conversation.sample_id)
        doc_of.update({event.id: turn.dia_id for event, turn in zip(result.results, batch, strict=True)})
    return doc_of


@contextmanager
def context_turns(count: int) -> Iterator[None]:
    """Index each episode with ``count`` earlier turns while inside (the unit under test)."""
    before = ingest.CONTEXT_TURNS
    ingest.CONTEXT_TURNS = count
    try:
        yield
    finally:
        ingest.CONTEXT_TURNS = before


def _signals(memory: Memory, scope: str, text: str, size: int) -> tuple[list[tuple[str, float]], ...]:
    store = memory.store
    user = Scope(user_id=scope)
    keyword = store.keyword_search(user, search_terms(text), Filters(), size)
    vector = memory.embedder.embed_batch([text])[0]
    dense = store.vector_search(user, vector, Filters(), size)
    return [(h.memory_id, h.score) for h in keyword], [(h.memory_id, h.score) for h in dense]


def _indexed(memory: Memory, scope: str, doc_of: dict[str, str]) -> dict[str, str]:
    items = memory.store.get(Scope(user_id=scope), list(doc_of))
    return {doc_of[item.id]: index_text(item) for item in items}


def _unrelated(
    memory: Memory, name: str, doc_of: dict[str, str], questions: Sequence[tuple[str, str]]
) -> tuple[Case, ...]:
    """Cases with no relevant doc: each (scope, question) pair asked of that scope."""
    memory.embedder.embed_batch(list(dict.fromkeys(text for _, text in questions)))
    cases = []
    for scope, text in questions:
        keyword, dense = _signals(memory, scope, text, 2000)
        cases.append(
            Case(
                name,
                0,
                scope,
                text,
                frozenset(),
                tuple((doc_of[m], s) for m, s in keyword),
                tuple((doc_of[m], s) for m, s in dense),
            )
        )
    return tuple(cases)


def build_locomo(unit: str, embedder: Any, conversations: Sequence[Conversation], workdir: Path) -> Corpus:
    cases: list[Case] = []
    indexed: dict[str, dict[str, str]] = {}
    memory = _memory(workdir / f"locomo-{unit}.db", embedder)
    every_doc: dict[str, str] = {}
    try:
        for conversation in tqdm(conversations, desc=f"locomo {unit}", leave=False):
            with context_turns(UNITS[unit]):
                doc_of = _add_locomo(memory, conversation)
            every_doc.update(doc_of)
            scope = conversation.sample_id
            indexed[scope] = _indexed(memory, scope, doc_of)
            embedder.embed_batch([q.question.strip() for q in conversation.questions])
            for q in conversation.questions:
                keyword, dense = _signals(memory, scope, q.question.strip(), len(doc_of))
                cases.append(
                    Case(
                        "locomo",
                        q.category,
                        scope,
                        q.question.strip(),
                        frozenset(q.evidence),
                        tuple((doc_of[m], s) for m, s in keyword),
                        tuple((doc_of[m], s) for m, s in dense),
                    )
                )
        scopes = [c.sample_id for c in conversations]
        off_topic = _unrelated(memory, "off-topic", every_doc, [(sc, text) for sc in scopes for text in OFF_TOPIC])
        following = {sc: scopes[(i + 1) % len(scopes)] for i, sc in enumerate(scopes)}
        foreign = _unrelated(memory, "foreign", every_doc, [(following[c.scope], c.text) for c in cases])
    finally:
        memory.close()
    return Corpus("locomo", unit, tuple(cases), indexed, off_topic, foreign)


def build_madial(data: MadialSet, embedder: Any, workdir: Path) -> Corpus:
    cases: list[Case] = []
    indexed: dict[str, dict[str, str]] = {}
    memory = _memory(workdir / f"madial-{data.language}.db", embedder)
    doc_of: dict[str, str] = {}
    try:
        by_user: dict[str, list[Any]] = {}
        for item in data.memories:
            by_user.setdefault(item.user_id, []).append(item)
        for user, items in by_user.items():
            embedder.embed_batch([item.text for item in items])
            for item in items:
                doc_of[memory.add(item.text, user_id=user).results[0].id] = item.memory_id
            indexed[user] = _indexed(
                memory, user, {m: d for m, d in doc_of.items() if d in {i.memory_id for i in items}}
            )
        embedder.embed_batch([q.query for q in data.queries])
        for q in tqdm(data.queries, desc=f"madial {data.language}", leave=False):
            keyword, dense = _signals(memory, q.user_id, q.query, len(indexed.get(q.user_id, {})) or 1)
            cases.append(
                Case(
                    f"madial-{data.language}",
                    0,
                    q.user_id,
                    q.query,
                    frozenset(q.relevant),
                    tuple((doc_of[m], s) for m, s in keyword),
                    tuple((doc_of[m], s) for m, s in dense),
                )
            )
        users = sorted(indexed)
        off_topic = _unrelated(memory, "off-topic", doc_of, [(user, text) for user in users for text in OFF_TOPIC])
        following = {user: users[(i + 1) % len(users)] for i, user in enumerate(users)}
        foreign = _unrelated(memory, "foreign", doc_of, [(following[c.scope], c.text) for c in cases])
    finally:
        memory.close()
    return Corpus(f"madial-{data.language}", "memory", tuple(cases), indexed, off_topic, foreign)


def corpora(embedder: Any | None = None, *, refresh: bool = False) -> Iterator[Corpus]:
    """LoCoMo in each memory unit, then MADial zh and en; built once, then read from the cache."""
    embedder = embedder or CachedEmbedder()
    wanted = [("locomo", unit) for unit in UNITS] + [("madial", "zh"), ("madial", "en")]
    for dataset, variant in wanted:
        path = CACHE_DIR / f"ranking-{dataset}-{variant}-{embedder.model_id}.pickle"
        if path.exists() and not refresh:
            yield pickle.loads(path.read_bytes())
            continue
        with tempfile.TemporaryDirectory() as tmp:
            if dataset == "locomo":
                corpus = build_locomo(variant, embedder, load_locomo(), Path(tmp))
            else:
                corpus = build_madial(load_madial(variant), embedder, Path(tmp))
        path.write_bytes(pickle.dumps(corpus))
        yield corpus


def similarity_sample(corpus: Corpus, relevant: bool) -> np.ndarray:
    """Cosines of relevant (or of all other) query-doc pairs: where a real match lies for this embedder."""
    values = [s for case in corpus.cases for doc, s in case.dense if (doc in case.relevant) == relevant]
    return np.asarray(values, dtype=np.float32)

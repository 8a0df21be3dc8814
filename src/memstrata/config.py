"""One settings object. Only entry points (CLI, server, ``Memory.from_config``) read it.

Sources, strongest first: explicit values, ``MEMSTRATA_*`` environment variables (nested with
``__``, e.g. ``MEMSTRATA_EMBEDDER__PROVIDER=openai``), ``memstrata.toml``, defaults. With no
configuration at all you get a working offline set-up: a SQLite file under the user's data
directory and the bundled multilingual embedder.
"""

from __future__ import annotations

import os
import tomllib
from datetime import tzinfo
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from memstrata.errors import InvalidInputError
from memstrata.patterns import lazy_pattern
from memstrata.timezones import zone_of
from memstrata.types import Scope
from memstrata.validation import DEFAULT_MAX_TEXT_CHARS, describe_validation_error

CONFIG_FILE_ENV = "MEMSTRATA_CONFIG"
DEFAULT_CONFIG_FILE = "memstrata.toml"


POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(location: str) -> bool:
    """``store.path`` (or ``store.read_url``) names a PostgreSQL server, not a SQLite file."""
    return location.strip().lower().startswith(POSTGRES_SCHEMES)


def default_db_path() -> Path:
    return Path(platformdirs.user_data_dir("memstrata", appauthor=False)) / "memstrata.db"


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StoreSettings(Section):
    path: str = Field(
        default_factory=lambda: str(default_db_path()),
        description="SQLite file path, or a postgresql:// URL for the PostgreSQL + pgvector backend",
    )
    busy_timeout_s: float = Field(default=30.0, gt=0, description="longest wait for a lock or a pooled connection")
    pool_size: int = Field(
        default=8, ge=1, le=1000, description="most connections per process (SQLite: readers; PostgreSQL: all)"
    )
    file_mode: str | None = Field(
        default="0600",
        pattern=r"^(0?[0-7]{3})?$",
        description="SQLite: permissions of the database files memstrata creates, octal (default 0600: the owner "
        "only; new directories get the matching 0700); empty or null leaves them to the umask",
    )

    ann_min_rows: int = Field(
        default=20_000,
        ge=0,
        description="SQLite: a search whose scope and filters leave at least this many vectors uses the HNSW graph "
        "(approximate, rescored exactly); fewer are scanned exactly. 0 forces the graph for every search (tests)",
    )
    keyword_cache_min_rows: int = Field(
        default=1_000,
        ge=0,
        description="SQLite: stores of at least this many memories answer keyword searches from an in-memory copy "
        "of the FTS5 index (same BM25 ranking, without FTS5's per-row cost); smaller ones ask FTS5. 0: always",
    )

    read_url: str | None = Field(
        default=None,
        description="PostgreSQL: URL of a hot standby of store.path that answers searches (their keyword and vector "
        "candidates; the records come from the primary, and so does every write); if it fails, searches use the "
        "primary for 30 s. A memory added moments ago may be missed for the replication delay",
    )

    def file_mode_bits(self) -> int | None:
        return int(self.file_mode, 8) if self.file_mode else None

    @field_validator("read_url", mode="before")
    @classmethod
    def _blank_is_none(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @model_validator(mode="after")
    def _replica_needs_postgres(self) -> StoreSettings:
        if self.read_url is not None and not (is_postgres_url(self.path) and is_postgres_url(self.read_url)):
            raise ValueError(
                "store.read_url needs PostgreSQL: both store.path and store.read_url must be postgresql:// URLs "
                "(a SQLite file has no replicas)"
            )
        return self


class EmbedderSettings(Section):
    provider: Literal["use", "openai"] = "use"
    model: str | None = None  # for provider=openai, e.g. "bge-m3" or "text-embedding-3-small"
    dims: int | None = Field(default=None, gt=0)
    base_url: str | None = None
    api_key: str | None = None
    threads: int = Field(default=1, ge=1)
    blas_threads: int = Field(
        default=1,
        ge=0,
        description="BLAS threads for this process (embedding and vector maths run as many small matrix products "
        "from many threads: more threads per call oversubscribe the cores); set when a Memory is built; 0 leaves "
        "numpy's default",
    )
    query_batch: int = Field(
        default=32,
        ge=1,
        description="search queries embedded together at most: concurrent searches that find the embedder busy "
        "share its next call (USE: 2.6 ms for one query, 0.8 ms each in a batch of eight); 1 turns this off",
    )
    query_cache: int = Field(
        default=2048,
        ge=0,
        description="vectors of recent search queries kept by text, so a repeated query (context()'s standing "
        "questions, a deep search's rounds) is not embedded again; 0 turns this off",
    )


class SearchSettings(Section):
    """How search ranks and cuts, tuned on the LoCoMo and MADial dev sets (bench/results/*-ranking.md).

    Score fusion (default) combines calibrated evidence: keyword evidence (the weighted share of the
    query's words a memory holds, scaled by its BM25 relative to the best match) and dense evidence
    (cosine similarity mapped from ``dense_floor`` to ``dense_ceiling``). Relevance is in [0, 1] and
    comparable across queries, so hits under ``min_relevance`` are dropped: an unrelated query or an
    empty scope returns nothing. A memory in another script than the query (Chinese memory, English
    question) cannot have keyword evidence, so its similarity alone is its relevance, mapped from
    the stricter ``dense_alone_floor``: with the bundled model unrelated zh<->en pairs mostly stay
    under cosine 0.22 and real matches reach 0.28-0.6. Another embedding model needs its own floors
    and ceiling (see memstrata.read.evidence and bench/results/*-ranking.md). The default cutoff kept
    96-100% of the relevant top-10 hits on the dev sets and answered 0-8% of off-topic questions.
    """

    fusion: Literal["score", "rrf"] = Field(
        default="score", description="score: fuse calibrated evidence; rrf: reciprocal rank fusion (first release)"
    )
    candidates: int = Field(default=100, ge=1, le=2000, description="per-retriever candidates before fusion")
    keyword_weight: float = Field(default=0.6, ge=0, description="weight of keyword evidence (or list, for rrf)")
    dense_weight: float = Field(default=0.4, ge=0, description="weight of dense evidence (or list, for rrf)")
    graph_evidence: float = Field(
        default=0.5, ge=0, le=1, description="relevance a one-hop graph hit gets from the graph alone (halved per hop)"
    )
    dense_floor: float = Field(default=0.1, ge=-1, lt=1, description="cosine similarity that counts as no evidence")
    dense_ceiling: float = Field(default=0.7, gt=-1, le=1, description="cosine similarity that counts as full evidence")
    dense_alone_floor: float = Field(
        default=0.2,
        ge=-1,
        lt=1,
        description="cosine similarity that counts as no evidence for a memory in another script than the query",
    )
    min_relevance: float = Field(
        default=0.1, ge=0, le=1, description="hits below this relevance are dropped; threshold= overrides per call"
    )
    conversation_cutoff: float = Field(
        default=0.2,
        ge=0,
        le=1,
        description="for a conversation as the query (20 or more distinct words), hits down to this share of the "
        "best hit's relevance are kept under min_relevance; min_relevance still decides whether any hit is returned",
    )
    rrf_k: int = Field(default=20, ge=1, description="rank offset for fusion=rrf")
    context_weight: float = Field(
        default=0.3,
        ge=0,
        le=1,
        description="share of keyword evidence a turn gets for query words found only in the turns indexed with it "
        "(the answer's own turn ranks above the turn that follows it)",
    )
    correct_spelling: bool = Field(
        default=True,
        description="read a misspelt English word of a query ('adress') as the word one edit away that the scope's "
        "memories hold ('address'); words the scope holds and names are never changed",
    )
    translate_words: bool = Field(
        default=True,
        description="also ask a query word that no memory of the scope holds by its other-language words that some "
        "memory holds, from CC-CEDICT ('research' as 研究, 论文 as 'paper'); a store in one language is unaffected",
    )
    reply_context_weight: float = Field(
        default=0.6,
        ge=0,
        le=1,
        description="the same share for a turn that replies to a question another speaker asked just before it: "
        "the question names what the reply says in other words (LoCoMo recall@10 0.789 -> 0.793 at 0.6)",
    )

    @model_validator(mode="after")
    def _floor_below_ceiling(self) -> SearchSettings:
        if self.dense_ceiling <= max(self.dense_floor, self.dense_alone_floor):
            raise ValueError("search.dense_ceiling must be greater than search.dense_floor and dense_alone_floor")
        if self.keyword_weight + self.dense_weight <= 0:
            raise ValueError("search.keyword_weight and search.dense_weight cannot both be 0")
        return self


class LLMSettings(Section):
    """Which model extracts and reconciles facts (infer=True).

    provider "auto" resolves, in order: explicit base_url here > OpenAI-compatible settings in the
    environment (OPENAI_API_KEY, optionally OPENAI_BASE_URL / OPENAI_MODEL) > the bundled local model
    if ``memstrata[local]`` is installed > the rules extractor. A preset name (openai, deepseek, qwen,
    dashscope, ollama, vllm) picks that vendor's row.
    """

    provider: str = "auto"
    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    timeout_s: float = Field(default=60.0, gt=0)
    max_attempts: int = Field(default=3, ge=1, le=10)
    model_path: str | None = None  # a GGUF file for provider=local; default: assembled from the wheels
    model_dir: str | None = None  # where the assembled GGUF is cached
    threads: int = Field(default=2, ge=1)
    n_ctx: int = Field(default=4096, ge=512)


class WriteSettings(Section):
    trigger: Literal["every_turn", "every_n", "cues"] = "cues"
    every_n: int = Field(default=4, ge=1, description="turns per model call (every_n), or most turns waiting (cues)")
    background: bool = True
    lease_s: float = Field(default=600.0, gt=0, description="a running job not finished by then is run again")
    batch_jobs: int = Field(default=8, ge=1, description="jobs of one scope sent to the model together")
    session_summary: Literal["off", "extractive", "model"] = Field(
        default="extractive",
        description="end_session stores a summary memory of the session: extractive (offline, instant) or "
        "written by the configured model (falls back to extractive when the model fails)",
    )


def _default_half_lives() -> dict[str, float]:
    return {
        "preference": 730.0,
        "fact": 365.0,
        "relationship": 365.0,
        "knowledge": 365.0,
        "procedure": 365.0,
        "plan": 30.0,
        "event": 180.0,
        "episode": 90.0,
        "task": 3.0,
    }


class LifecycleSettings(Section):
    """How memories age. Half-lives and archive ages are in days, per kind ("*" is the fallback)."""

    half_life_days: dict[str, float] = Field(default_factory=_default_half_lives)
    default_half_life_days: float = Field(default=180.0, gt=0)
    recency_half_days: float = Field(default=30.0, gt=0, description="days unaccessed at which recency is 0.5")
    recency_at_90_days: float = Field(default=0.2, gt=0, lt=0.5)
    reinforcement: float = Field(default=0.25, ge=0, description="boost per log(1 + access count)")
    max_reinforcement: float = Field(default=2.0, ge=1)
    weight: float = Field(
        default=0.3,
        ge=0,
        le=1,
        description="share of a hit's score lifecycle may take away: it reorders hits whose relevance is within "
        "this share of each other and never lifts one past a hit more relevant than that",
    )
    pending_below: float = Field(default=0.5, ge=0, le=1, description="extracted facts below this go pending")
    promote_step: float = Field(default=0.2, ge=0, le=1, description="confidence gained when a fact repeats")
    pending_ttl_days: float = Field(default=30.0, gt=0)
    archive_after_days: dict[str, float] = Field(default_factory=lambda: {"*": 180.0})
    session_ttl_minutes: float = Field(default=30.0, gt=0)
    time_boost: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="share of its missing relevance a topical hit gains inside a time range the query names",
    )

    def half_life(self, kind: str) -> float:
        return self.half_life_days.get(kind, self.default_half_life_days)

    def archive_after(self, kind: str) -> float:
        return self.archive_after_days.get(kind, self.archive_after_days.get("*", 180.0))


class GraphSettings(Section):
    """Graph memory: entities and relations extracted on the write path, walked on the read path."""

    enabled: bool = Field(default=True, description="extract entities and relations, and use them in search")
    resolution_threshold: float = Field(
        default=0.7, ge=0, le=1, description="name-embedding similarity at which a new name may join an entity"
    )
    hops: int = Field(default=2, ge=1, le=4, description="neighbourhood depth walked from entities in a query")
    weight: float = Field(default=1.0, ge=0, description="weight of the graph list in rank fusion")
    max_relations: int = Field(default=50, ge=1, le=1000, description="most relations a query's walk may return")


class RecallWeights(Section):
    """How recall ranks past tasks of one type. The four signals are each in [0, 1] and mixed by these weights
    (normalised to sum 1): relevance (cosine similarity of the task's best-matching goal, step or summary
    unit), confidence (of its successful path's steps, else of the task), cost (1 / (1 + seconds /
    cost_scale_seconds + tokens / cost_scale_tokens) of that path: cheap paths first) and recency (halves every
    recency_half_life_days)."""

    relevance: float = Field(default=0.6, ge=0)
    confidence: float = Field(default=0.15, ge=0)
    cost: float = Field(default=0.1, ge=0)
    recency: float = Field(default=0.15, ge=0)
    recency_half_life_days: float = Field(default=90.0, gt=0)
    cost_scale_seconds: float = Field(default=600.0, gt=0, description="a path this long scores 0.5 on cost")
    cost_scale_tokens: float = Field(default=20_000.0, gt=0, description="a path this costly scores 0.5 on cost")
    unsuccessful: float = Field(
        default=0.5, ge=0, le=1, description="score factor of tasks that failed or were abandoned"
    )


def _default_recall_weights() -> dict[str, RecallWeights]:
    return {
        "*": RecallWeights(),
        # Debugging: what fixed a similar bug matters most, and a proven fix beats a fresh guess.
        "debugging": RecallWeights(relevance=0.6, confidence=0.2, cost=0.1, recency=0.1),
        # Research and data analysis: sources and data go stale; prefer recent work.
        "research": RecallWeights(relevance=0.55, confidence=0.1, cost=0.05, recency=0.3, recency_half_life_days=30),
        "analysis": RecallWeights(relevance=0.55, confidence=0.15, cost=0.1, recency=0.2, recency_half_life_days=60),
    }


class ProcessSettings(Section):
    """Process memory (``memory.tasks``): recording, recall, dead-end checks, strategies, compression."""

    weights: dict[str, RecallWeights] = Field(
        default_factory=_default_recall_weights, description='recall weights per task type; "*" is the fallback'
    )
    candidates: int = Field(default=60, ge=1, le=1000, description="index units retrieved per recall or check")
    min_relevance: float = Field(
        default=0.3, ge=0, le=1, description="past tasks less similar than this are not recalled"
    )
    dead_end_similarity: float = Field(
        default=0.55, ge=0, le=1, description="cosine similarity at which a planned step matches a recorded one"
    )
    compress_on_finish: bool = Field(default=True, description="summarise a finished task and archive its chain")
    summary_model: bool = Field(default=True, description="let the configured model write summaries, if there is one")
    summary_max_tokens: int = Field(default=300, ge=16, le=4000)
    strategy_min_support: int = Field(default=2, ge=1, description="succeeded tasks a sequence needs to be mined")
    strategy_min_confidence: float = Field(
        default=0.5, ge=0, le=1, description="strategies below this are kept with their evidence but not proposed"
    )
    strategy_max_length: int = Field(default=4, ge=1, le=8, description="longest action sequence mined")
    strategy_window: int = Field(default=200, ge=1, le=100_000, description="latest finished tasks per type mined")
    strategies_per_type: int = Field(default=10, ge=1, le=1000)
    index_batch: int = Field(default=64, ge=1, le=10_000, description="units embedded per write when indexing")

    def weights_for(self, task_type: str) -> RecallWeights:
        return self.weights.get(task_type) or self.weights.get("*") or RecallWeights()


class DeepSettings(Section):
    """Deep retrieval (``search(..., mode="deep")``, ``context(..., mode="deep")``): the query is understood
    (the real question, time, entities, sub-questions), expanded, searched once per expansion, fused, and judged
    by an evaluator that may send the search back with a sharper query. Every step uses the configured chat
    model when there is one and falls back to offline heuristics when there is none or it fails (the trace says
    which ran). Costs and recall per step: bench/results/*-deep.md."""

    understand: bool = Field(default=True, description="ask the model for the real question, entities, sub-questions")
    multi_query: bool = Field(default=True, description="search paraphrases of the question too (multi-query)")
    paraphrases: int = Field(default=2, ge=1, le=5, description="how many paraphrases multi-query asks for")
    hyde: bool = Field(default=True, description="search a hypothetical memory that would answer it (HyDE)")
    step_back: bool = Field(default=False, description="search the more general question too (step-back)")
    evaluate: bool = Field(default=True, description="let an evaluator judge the hits and ask for another round")
    chat_rounds: int = Field(default=3, ge=1, le=10, description="most retrieval rounds for a chat caller")
    agent_rounds: int = Field(default=5, ge=1, le=10, description="most retrieval rounds for an agent caller")
    candidates: int = Field(default=30, ge=5, le=500, description="hits kept per expansion before fusion")
    evaluator_hits: int = Field(default=8, ge=1, le=30, description="best hits the evaluator reads each round")
    max_tokens: int = Field(default=200, ge=32, le=4096, description="longest answer asked of the model per step")


class RerankSettings(Section):
    """An optional reranker for deep mode (never in fast mode): ``llm`` asks the configured chat model,
    ``http`` calls an OpenAI-compatible ``/rerank`` endpoint (vLLM, Jina, Cohere style)."""

    provider: Literal["off", "llm", "http"] = "off"
    style: Literal["listwise", "pointwise"] = Field(
        default="listwise", description="llm: one call ordering the candidates, or one yes/no call per candidate"
    )
    top_n: int = Field(default=8, ge=2, le=100, description="best fused candidates the reranker reorders")
    weight: float = Field(default=0.5, ge=0, le=1, description="share of a candidate's score the reranker decides")
    base_url: str | None = Field(default=None, description="http: the server, e.g. http://localhost:8000/v1")
    model: str | None = Field(default=None, description="http: the reranking model the server serves")
    api_key: str | None = None
    api_key_env: str | None = Field(default=None, description="http: environment variable holding the API key")
    timeout_s: float = Field(default=30.0, gt=0)

    @model_validator(mode="after")
    def _http_needs_server(self) -> RerankSettings:
        if self.provider == "http" and not (self.base_url and self.model):
            raise ValueError("rerank.provider = 'http' needs rerank.base_url and rerank.model")
        return self


_NAME = lazy_pattern(r"^[a-z0-9][a-z0-9_\-]{0,63}$")


class VaultSettings(Section):
    """One vault: a folder of domains (one folder each) with Markdown notes, indexed into one scope."""

    path: str | None = Field(default=None, description="the vault folder; vault calls need it (rules do not)")
    name: str = Field(default="vault", description="kept with every indexed section: tells vaults apart")
    # The scope the index belongs to. A caller sees the vault only if its scope contains this one.
    user_id: str | None = None
    agent_id: str | None = "vault"
    tenant_id: str | None = Field(default=None, description="the tenant whose keys may use this vault")
    rules_dir: str = Field(default="rules", description="folder in the vault: *.md for all, <agent_id>/*.md per agent")
    rules_files: list[str] = Field(
        default_factory=list, description="more rules files (AGENTS.md, CLAUDE.md...), loaded first, in this order"
    )
    watch: bool = Field(default=True, description="`memstrata serve` re-indexes notes edited while it runs")
    watch_debounce_ms: int = Field(default=300, ge=10, le=10_000)
    force_polling: bool = Field(default=False, description="poll instead of OS events (network drives)")
    batch_notes: int = Field(default=64, ge=1, le=10_000, description="notes embedded and written per transaction")
    max_section_chars: int = Field(default=2000, ge=200, le=20_000, description="longer sections are split")
    max_note_bytes: int = Field(default=2_000_000, ge=1024, description="larger files are skipped, with a warning")
    usage_weight: float = Field(
        default=0.1,
        ge=0,
        le=1,
        description="most a note's usage may lift its score, as a share of what the score lacks of 1",
    )
    delete_guard: float = Field(
        default=0.5, ge=0, le=1, description="a sync that would drop more than this share of notes asks first"
    )

    @field_validator("name")
    @classmethod
    def _plain_name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError("vault.name must be lowercase letters, digits, '-' or '_' (at most 64)")
        return value

    def owner(self) -> Scope:
        """The scope every indexed section is stored under."""
        try:
            return Scope(user_id=self.user_id, agent_id=self.agent_id, tenant_id=self.tenant_id)
        except ValueError as exc:
            raise InvalidInputError(f"vault.user_id / vault.agent_id: {exc}") from None

    def root(self) -> Path:
        if self.path is None:
            raise InvalidInputError(
                "no vault is configured: set vault.path in memstrata.toml (or MEMSTRATA_VAULT__PATH), "
                "or pass --vault PATH; `memstrata vault init --example` creates one"
            )
        return Path(self.path).expanduser().resolve()


class LimitSettings(Section):
    max_text_chars: int = Field(
        default=DEFAULT_MAX_TEXT_CHARS,
        ge=1,
        description="longest text indexed as one memory; a longer text or turn is stored in parts of at most this",
    )
    max_whole_chars: int = Field(
        default=1_000_000, ge=1, description="longest text or turn accepted at all (split into parts when long)"
    )
    max_batch: int = Field(default=10_000, ge=1)


class IngestSettings(Section):
    """Knowledge ingestion (``memory.ingest``, ``memstrata ingest``, uploads): defaults and per-source limits."""

    chunker: str = Field(default="structure", pattern=r"^(fixed|recursive|structure|semantic|agentic)$")
    chunk_size: int = Field(default=256, ge=8, le=8192, description="chunk size in (estimated) tokens")
    overlap: int = Field(default=32, ge=0, description="overlap between chunks in tokens, under half the size")
    max_file_mb: float = Field(default=50.0, gt=0, description="largest file converted; a larger one fails alone")
    timeout_s: float = Field(default=120.0, gt=0, description="longest conversion of one file")
    memory_mb: int = Field(default=3072, ge=256, description="address space of the conversion process")
    max_upload_mb: float = Field(default=50.0, gt=0, description="largest REST upload; larger ones get 413")
    url_timeout_s: float = Field(default=30.0, gt=0, description="fetching one URL, connect to last byte")
    max_url_mb: float = Field(default=50.0, gt=0, description="largest document fetched from a URL")


class ServerSettings(Section):
    """``memstrata serve``: where it listens, where API keys live, what it accepts."""

    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)
    keys_path: str | None = Field(
        default=None,
        description="API-key SQLite file (default: keys.db beside a SQLite store; in the user data dir for PostgreSQL)",
    )
    max_request_bytes: int = Field(default=1_048_576, ge=1024, description="larger request bodies get 413")
    allow_anonymous_loopback: bool = Field(
        default=False, description="accept requests without a key, only on a loopback host, as the default tenant"
    )
    workers: int = Field(
        default=1,
        ge=1,
        le=64,
        description="processes answering on the one port (`memstrata serve --workers`): Python runs one thread of a "
        "process at a time, so a second core needs a second process; each holds its own embedder and indexes",
    )
    access_log: bool = Field(
        default=False,
        description="a line per request on standard output (uvicorn's access log); off, as in gunicorn: writing it "
        "cost a tenth of a search's CPU (0.4 of 4.4 ms per REST search, measured ad hoc)",
    )
    max_active_requests: int = Field(
        default=32, ge=1, le=10_000, description="requests handled at once; more wait (see max_waiting_requests)"
    )
    max_waiting_requests: int = Field(
        default=256, ge=0, le=100_000, description="requests waiting for a slot; beyond this, 503 with Retry-After"
    )
    max_wait_s: float = Field(default=2.0, gt=0, description="longest wait for a slot before 503 with Retry-After")
    retry_after_s: int = Field(default=1, ge=0, le=3600, description="the Retry-After a 503 for overload carries")

    def keys_file(self, store_path: str) -> Path:
        if self.keys_path:
            return Path(self.keys_path).expanduser()
        if "://" in store_path:  # "beside" a URL was a folder named after it (password included) in the cwd
            return default_db_path().parent / "keys.db"
        return Path(store_path).expanduser().parent / "keys.db"


class TimeSettings(Section):
    timezone: str = Field(
        default="UTC",
        description="the users' timezone: an IANA name ('Asia/Shanghai'), 'UTC', or an offset ('+08:00'); relative "
        "time in questions and turns ('yesterday', '上周末') names days of this zone, and context() dates are in it",
    )

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        zone_of(value)  # raises ValueError naming what is accepted
        return value.strip()

    def zone(self) -> tzinfo:
        return zone_of(self.timezone)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="MEMSTRATA_", env_nested_delimiter="__", extra="forbid", toml_file=None
    )

    store: StoreSettings = Field(default_factory=StoreSettings)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    write: WriteSettings = Field(default_factory=WriteSettings)
    lifecycle: LifecycleSettings = Field(default_factory=LifecycleSettings)
    graph: GraphSettings = Field(default_factory=GraphSettings)
    deep: DeepSettings = Field(default_factory=DeepSettings)
    rerank: RerankSettings = Field(default_factory=RerankSettings)
    vault: VaultSettings = Field(default_factory=VaultSettings)
    process: ProcessSettings = Field(default_factory=ProcessSettings)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    time: TimeSettings = Field(default_factory=TimeSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml_path = _config_file()
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if toml_path is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=toml_path))
        return tuple(sources)


def _config_file() -> Path | None:
    explicit = os.environ.get(CONFIG_FILE_ENV)
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise InvalidInputError(f"{CONFIG_FILE_ENV} points at {path}, which is not a file")
        return path
    local = Path.cwd() / DEFAULT_CONFIG_FILE
    return local if local.is_file() else None


def load_settings(overrides: dict[str, Any] | str | Path | None = None, *, store_path: str | None = None) -> Settings:
    """Build settings from a dict, a TOML file path, or nothing (env + memstrata.toml + defaults); ``store_path``
    (the CLI's ``--db``) replaces store.path before the settings are checked, as they are checked together."""
    try:
        data: dict[str, Any] = dict(overrides or {}) if not isinstance(overrides, str | Path) else {}
        if isinstance(overrides, str | Path):
            path = Path(overrides).expanduser()
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except (OSError, tomllib.TOMLDecodeError) as exc:
                raise InvalidInputError(f"cannot read config file {path}: {exc}") from None
        if store_path is not None:
            data["store"] = {**dict(data.get("store") or {}), "path": store_path}
        return Settings(**data)
    except ValidationError as exc:
        raise InvalidInputError(f"invalid configuration: {describe_validation_error(exc)}") from None

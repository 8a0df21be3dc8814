"""Retrieval: the candidate lists a query gets from the store (key, keyword, dense, time range, graph).

The store applies scope and filters inside every query; nothing here post-filters by scope.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from functools import lru_cache

from memstrata.answers import change_answers
from memstrata.config import GraphSettings
from memstrata.errors import ProviderError
from memstrata.graph.retrieve import GraphHit, graph_hits
from memstrata.han import HAN_RUN
from memstrata.lexical import keyword_tokens, search_terms
from memstrata.lifecycle.decay import said_at
from memstrata.lifecycle.timeparse import TimeSpan, find_time_span, overlaps, recent_span
from memstrata.patterns import lazy_pattern
from memstrata.providers.protocol import Embedder
from memstrata.query import Filters, ListQuery, SearchQuery, TimeRange, looks_like_key, named_key_forms
from memstrata.read.evidence import is_conversation, match_form
from memstrata.storage.protocol import ScoredId, Store, Vector
from memstrata.timezones import local
from memstrata.types import MemoryItem, MemoryStatus, Scope

log = logging.getLogger(__name__)
KEY_VERSIONS = 100  # versions of one key read for a filtered key lookup (keys that start with it come too)


@dataclass(frozen=True)
class Retrieved:
    """Each retriever's list, best first. ``dense_limit`` is how many the vector search was asked
    for: a full list means memories missing from it are less similar than its last one."""

    keyword: list[ScoredId]
    dense: list[ScoredId]
    in_time_range: list[ScoredId] = field(default_factory=list)
    graph: list[GraphHit] = field(default_factory=list)
    dense_limit: int = 0

    def dense_bound(self) -> float | None:
        """An upper bound on the similarity of a memory the dense list left out, if one is known."""
        if self.dense and len(self.dense) >= self.dense_limit:
            return self.dense[-1].score
        return None


def exact_key_hits(store: Store, query: SearchQuery) -> list[MemoryItem]:
    """A query that *is* a namespaced key (``project:db:engine``) is answered by exact lookup first: the key's
    current memory, or, under filters the key table cannot answer (a time to travel to, metadata, other
    statuses), the newest version of the key that passes them, looked up in the store like any filtered read.
    A question naming keys among other words gets each named key's value first."""
    found = _key_hit(store, query) if looks_like_key(query.text) else None
    return [found] if found is not None else _named_key_hits(store, query)


def _key_hit(store: Store, query: SearchQuery) -> MemoryItem | None:
    filters = query.filters
    if filters.needs_row_filter() or filters.status != (MemoryStatus.ACTIVE,):
        return _key_version(store, query.scope, query.text, filters)
    item = store.find_by_key(query.scope, query.text)
    if item is None or (filters.kind and item.kind not in filters.kind) or item.kind in filters.exclude_kind:
        return None
    return value_now(store, query.scope, item, query.now)


def _named_key_hits(store: Store, query: SearchQuery) -> list[MemoryItem]:
    """Per key the question names ("what are app:db:engine and lin:home:city?"), the value of its first form found
    (named_key_forms: as typed, without Chinese glued to it, in lower case)."""
    found: dict[str, MemoryItem] = {}
    for forms in named_key_forms(query.text):
        for key in forms:
            item = _key_hit(store, query.model_copy(update={"text": key})) if key != query.text else None
            if item is not None:
                found.setdefault(item.id, item)
                break
    return list(found.values())


def value_now(store: Store, scope: Scope, item: MemoryItem, now: datetime) -> MemoryItem | None:
    """A key's current value as of ``now``: a value sent with a later event time ("Postgres 17 from 2030") is
    the latest recorded, but until then the one it will replace still holds."""
    if item.key is None or item.valid_from <= now:
        return item
    holding = Filters(valid_at=now, status=(MemoryStatus.ACTIVE, MemoryStatus.SUPERSEDED))
    return _key_version(store, scope, item.key, holding)


def _key_versions(store: Store, scope: Scope, key: str, filters: Filters) -> list[MemoryItem]:
    """The versions of exactly ``key`` that pass ``filters`` (a key prefix lists longer keys too)."""
    listed = ListQuery(scope=scope, filters=filters.model_copy(update={"key_prefix": key}), limit=KEY_VERSIONS,
                       order_by="updated_at")  # fmt: skip
    return [item for item in store.list_memories(listed) if item.key == key]


def _key_version(store: Store, scope: Scope, key: str, filters: Filters) -> MemoryItem | None:
    versions = _key_versions(store, scope, key, filters)
    # the current version when it passes, else the latest to have become true
    return max(versions, key=lambda m: (m.status == MemoryStatus.ACTIVE, m.valid_from), default=None)


def held_in(item: MemoryItem, span: TimeSpan) -> bool:
    """Whether a key's value held during the time a question names (Shopee, the employer from 2023 to 2025, for
    "Where did I work in 2024?"). Only for a key the question names: a value is a state, not an event, and the home
    and the employer held every weekend ("What did I do last weekend?" listed them)."""
    return item.valid_from < span.end and (item.valid_to is None or item.valid_to > span.start)


def key_values_then(store: Store, query: SearchQuery, item: MemoryItem, span: TimeSpan) -> list[MemoryItem]:
    """The values ``item``'s key held in the time a question names, when ``item`` became true only after it, the one
    that held longest in it first: "Where did I work in 2024?" asks for the employers of 2024, not for the one since
    2025 (which answered, and the 2024 value was not searched at all: search reads current values). One value of the
    end of the time was not enough: "Where did I work in 2023?" got the employer of December, not the one of March to
    November."""
    if item.key is None or item.valid_from < span.end or span.vague:
        return []
    until = min(span.end, query.now)
    statuses = query.filters.model_copy(update={"status": (MemoryStatus.ACTIVE, MemoryStatus.SUPERSEDED)})
    versions = [
        found
        for found in _key_versions(store, query.scope, item.key, statuses)
        if found.id != item.id and found.valid_from < until and held_in(found, span)
    ]

    def held(found: MemoryItem) -> timedelta:
        return min(found.valid_to or until, until) - max(found.valid_from, span.start)

    return sorted(versions, key=held, reverse=True)


def former_values(store: Store, query: SearchQuery, item: MemoryItem) -> list[MemoryItem]:
    """The values ``item``'s key held before it, the latest first: what a question asking for all of them lists
    ("我工作过哪些公司？" found the current employer only; search reads current values)."""
    if item.key is None:
        return []
    superseded = query.filters.model_copy(update={"status": (MemoryStatus.SUPERSEDED,)})
    earlier = [found for found in _key_versions(store, query.scope, item.key, superseded) if found.id != item.id]
    return sorted(earlier, key=lambda found: found.valid_from, reverse=True)


# A question for every value something has had: "我工作过哪些公司？", "我住过哪些城市？", "What companies have I worked
# for?", "Where have I lived?", "How many jobs have I had?".
_EVERY_VALUE = lazy_pattern(
    r"[过過]哪些|哪些[^，。？?]{0,6}[过過]|[过過]几|几[家个座次][^，。？?]{0,6}[过過]|都(?:在|去|住)过"
    r"|\bhave\s+(?:i|we)\s+(?:ever\s+)?(?:worked|lived|had|been|owned|used)\b|\ball\s+(?:the\s+)?(?:my\s+)?"
    r"(?:companies|jobs|employers|places|cities|homes|addresses|phones?|numbers)\b",
    re.IGNORECASE,
)


def asks_every_value(text: str) -> bool:
    """Whether the question asks for every value a key has had, not the current one."""
    return _EVERY_VALUE.search(text) is not None


# A question about what held before now, without naming when: "我以前在哪家公司？", "Where did I use to live?",
# "我前男友是做什么的？" (an ex is the partner before the current one)
_FORMERLY = lazy_pattern(
    r"以前|之前|原来|曾经|过去|\b(?:used to|previously|formerly)\b|\bdid\s+(?:i|we)\s+use\s+to\b|\bbefore\s*\?*$"
    r"|\bbefore\s+(?-i:[A-Z])[\w&.-]*\s*\?*$"  # "What was my job before Stripe?"
    r"|\b(?:my|our)\s+(?:old|previous|former|last)\s+(?:job|company|employer|address|home|apartment|city|phone)\b"
    r"|\bex-?(?:boyfriend|girlfriend|husband|wife|partner|bf|gf)\b|前(?:男友|女友|男朋友|女朋友|任|夫|妻)",
    re.IGNORECASE,
)


def asks_formerly(text: str) -> bool:
    """Whether the question asks what held before now without naming when (a key it names answers with the value
    before its current one: "我以前在哪家公司？" found the current employer first)."""
    return _FORMERLY.search(text) is not None


def before_value(item: MemoryItem) -> TimeSpan:
    """The time before a key's value became true: what the question asks for when it asks what held before."""
    return TimeSpan(start=datetime.min.replace(tzinfo=UTC), end=item.valid_from, expression="")


def query_time_span(query: SearchQuery, zone: tzinfo = UTC) -> TimeSpan | None:
    """The time the question names, in days of the users' ``zone`` ("yesterday" asked at 07:00 in Beijing is the
    Beijing day before, not UTC's); else, for a question that asks what went on "recently" / "最近", the last month
    (a vague span: it holds only if the scope has memories of that time, see :func:`recent_after_all`). A whole
    conversation as the query says "最近" in passing, so it names no time by it."""
    if not query.understand_time:
        return None
    now = local(query.now, zone)
    named = find_time_span(query.text, now)
    if named is not None or is_conversation(query.text):
        return named
    return recent_span(query.text, now)


def nothing_in_range(retrieved: Retrieved) -> bool:
    """Whether no memory of the scope falls in the time range the question names (known once the question was
    embedded: the time list holds every memory of the range, most similar first)."""
    return retrieved.dense_limit > 0 and not retrieved.in_time_range


def recent_after_all(span: TimeSpan | None, retrieved: Retrieved) -> TimeSpan | None:
    """``span``, unless it is "recently" and no memory of the scope falls in it: a history imported from long ago has
    nothing of the last month, and there the question asks about the latest of what it holds, as before."""
    return None if span is not None and span.vague and nothing_in_range(retrieved) else span


def meaning_text(text: str, span: TimeSpan | None) -> str:
    """The question without the time it names, for the embedder: the time range is searched as a range (a list of
    its own and a boost), while in the embedded text "in 2025" pulled the question's vector away from its topic
    ("Where did I live in 2025?" found its answer at cosine 0.17, "... last year?" at 0.30)."""
    if span is None or span.vague:  # "recently" stays: where it names no memory's time it is the question as asked
        return text
    rest = " ".join(text.replace(span.expression, " ").split())
    return rest if any(character.isalnum() for character in rest) else text


# Words that ask what went on, not about what: "what did I do / what happened / 我在忙什么 in 2024?", "what are my
# plans / 我下周去哪 / 明天干嘛?", "where did I travel / 去哪玩了 / where did we go on holiday in July?" ask about the
# time alone (match forms, see read/evidence.py).
# Also the everyday ways to ask it: "我上周末干了啥？", "What did I get up to / accomplish this summer?",
# "去年我去了哪些地方玩？", "Which places did I visit?", "How many trips did I take in 2025?", "我2025年去了几次
# 旅行？" were read as topical, and memories of the time without the topic's word got no evidence (a user trial).
_ABOUT_ANYTHING = frozenset(
    {
        *("do", "happen", "go", "busi", "plan", "travel", "trip", "holidai", "vacat"),
        *("get", "accomplish", "achiev", "visit", "spend", "spent", "take", "place", "mani"),
        *("做", "干", "干嘛", "去", "玩", "旅游", "旅行", "度假", "假期", "发生", "忙", "经历", "安排", "计划"),
        *("啥", "地方", "哪些地方", "几次", "哪些", "那时", "那会"),
    }
)


def asks_about_the_time_alone(text: str, span: TimeSpan | None) -> bool:
    """True when the query names a time and, without it, no word of a topic: every memory of that time answers."""
    if span is None:
        return False
    return all(match_form(token) in _ABOUT_ANYTHING for token in keyword_tokens(text.replace(span.expression, " ")))


def said_or_meant_in(item: MemoryItem, span: TimeSpan, zone: tzinfo) -> bool:
    """Whether a memory belongs to the time a question names: it happened then (``event_time``), or it is a turn or
    an undated fact that names that time itself. "我下周去东京出差" said on 4 December is about the week of 7
    December: "Where am I going next week?" asked that day, and "上周我去哪里出差了？" asked a fortnight later, are
    answered by it; before, both found nothing, since the turn's own time is the day it was said."""
    if item.event_time is not None and span.start <= item.event_time < span.end:
        return True
    named = time_it_names(item, zone)
    return named is not None and overlaps(named, span) and not _coarser(named, span)


def _coarser(named: TimeSpan, asked: TimeSpan) -> bool:
    """A time much longer than the one asked about says nothing about it: "今年春节我要回老家过年" names all of
    2025 (the festival's date is not read) and answered "What happened in April 2025?" beside the job change of that
    April. A season still answers for one of its months, a week for one of its days."""
    return named.end - named.start > 3 * (asked.end - asked.start) + timedelta(days=1)


def changed_after(item: MemoryItem, span: TimeSpan, zone: tzinfo) -> bool:
    """Whether a memory states a change (answers.change_answers: a move, a new job) that came after the range a
    question names: "I moved to Berlin last month", said in January 2026, tells where the user lived from December,
    not in 2024, and answered "Where did I live in 2024?" above the home of that year."""
    if not change_answers(item.text):
        return False
    said, named = item.event_time or item.created_at, time_it_names(item, zone)
    if named is not None and named.start > said:
        return False  # a change said as done is not in its future: "in December" said in January was last December
    return (named.start if named is not None else said) >= span.end


def time_it_names(item: MemoryItem, zone: tzinfo) -> TimeSpan | None:
    """The time a turn or an undated fact names, read from when it was said (lifecycle.decay.said_at: an imported
    fact from its turn's time, not the import's; "用户下个月要搬到台中" of 2024 named 2027 read from the day it was
    stored). A fact with an ``event_time`` has its named time resolved already (write/facts.py): read again from
    there, "next week" would be a week later still."""
    said = item.event_time if item.kind == "episode" else None if item.event_time is not None else said_at(item)
    return None if said is None else _time_named(item.text, local(said, zone))


@lru_cache(maxsize=65_536)
def _time_named(text: str, said: datetime) -> TimeSpan | None:
    return find_time_span(text, said)


def _embed_query(embedder: Embedder, text: str) -> Vector | None:
    try:
        vector: Vector = embedder.embed_batch([text])[0]
        return vector
    except ProviderError as exc:
        # An embedding outage degrades search to keyword-only instead of failing it; the log says so
        # and every hit's breakdown shows no vector rank.
        log.warning("dense retrieval skipped, keyword results only: %s", exc)
        return None


def retrieve_graph(store: Store, query: SearchQuery, settings: GraphSettings) -> list[GraphHit]:
    """Memories the edges around the query's entities point at, kept only if they pass the query's filters.
    Filters on other columns (metadata, key, time ranges) are the store's job: the graph list sits out then."""
    if not (settings.enabled and query.graph) or query.filters.needs_row_filter():
        return []
    hits = graph_hits(store, query.scope, query.text, hops=settings.hops, max_relations=settings.max_relations)
    items = {item.id: item for item in store.get(query.scope, [hit.memory_id for hit in hits])}
    filters = query.filters
    return [
        hit for hit in hits
        if (item := items.get(hit.memory_id)) is not None
        and item.status in filters.status
        and (filters.kind is None or item.kind in filters.kind)
        and item.kind not in filters.exclude_kind
    ]  # fmt: skip


# Words that ask about someone without naming what ("tell me about", "你了解林美吗", "介绍一下"; match forms).
_ASKING_ABOUT = frozenset(
    {"tell", "know", "who", "whom", "describ", "介绍", "是谁", "谁", "了解", "知道", "说说", "讲讲"}
)
_NAMING = frozenset({"name", "call", "nicknam", "名字", "姓名", "全名", "真名", "叫", "称呼"})
_NAME = lazy_pattern(r"[^\W\d_]{2,40}")  # a user id that could be a name: letters only (Latin, Han, ...)


def topic_text(text: str, scope: Scope) -> str:
    """The query without the name of the user whose memories it searches ("Is Mei allergic to anything?" in Mei's
    scope asks "allergic to anything?"). Every memory of the scope is about that user, so the name tells nothing of
    which one answers; kept, it made greetings and introductions that spell the name ("你好 Mei") outrank the
    answer on words and meaning alike. A user id that is not a word (a number, an email, "u_123") names nobody."""
    name = scope.user_id
    if not name or not _NAME.fullmatch(name):
        return text
    pattern = re.escape(name) if HAN_RUN.fullmatch(name) else rf"\b{re.escape(name)}(?:['’]s)?\b"
    rest = " ".join(re.sub(pattern, " ", text, flags=re.IGNORECASE).split())
    # "Who is Anna?" / "介绍一下林美" ask about the user as such: without the name they name no topic.
    forms = {match_form(token) for token in keyword_tokens(rest)}
    if forms & _NAMING:  # "What's Mei's real name?": the name is what is asked about
        return text
    return rest if forms - _ASKING_ABOUT else text


def keyword_candidates(store: Store, query: SearchQuery, candidates: int, topic: str) -> list[ScoredId]:
    """The keyword list: the memories matching ``topic``'s words, best first."""
    return store.keyword_search(query.scope, search_terms(topic), query.filters, max(candidates, query.limit))


def retrieve(
    store: Store,
    embedder: Embedder,
    query: SearchQuery,
    candidates: int,
    graph: GraphSettings,
    span: TimeSpan | None,
    topic: str | None = None,
) -> Retrieved:
    """The candidate lists; ``topic``: the query text that keyword and dense search look for (:func:`topic_text`),
    while the graph walks from every name the query gives."""
    limit = max(candidates, query.limit)
    topic = query.text if topic is None else topic
    keyword = keyword_candidates(store, query, candidates, topic)
    graphed = retrieve_graph(store, query, graph)
    vector = _embed_query(embedder, meaning_text(topic, span))
    if vector is None:
        return Retrieved(keyword=keyword, dense=[], graph=graphed)
    dense = store.vector_search(query.scope, vector, query.filters, limit)
    in_range: list[ScoredId] = []
    if span is not None:  # a third list: the most similar memories whose event lies in the named range
        timed = query.filters.model_copy(update={"event_time": TimeRange(gte=span.start, lt=span.end)})
        in_range = store.vector_search(query.scope, vector, timed, limit)
    return Retrieved(keyword=keyword, dense=dense, in_time_range=in_range, graph=graphed, dense_limit=limit)

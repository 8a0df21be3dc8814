"""The read path: route -> retrieve (key, keyword, dense, time, graph) -> fuse -> lifecycle -> cut.

Each step is a small function over a :class:`SearchQuery`; the store applies scope and filters
inside every retrieval query. Search only reads: counting a memory as used is the caller's call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from memstrata.han import simplified
from memstrata.lexical import search_terms
from memstrata.lifecycle.timeparse import TimeSpan
from memstrata.providers.protocol import Embedder
from memstrata.query import SearchQuery
from memstrata.read.due_plans import changes_by, read_as_done
from memstrata.read.endings import with_later_news
from memstrata.read.former import with_what_they_replaced
from memstrata.read.fuse import relevance_floor
from memstrata.read.idioms import plain_question
from memstrata.read.instances import asked_by_other_names
from memstrata.read.left_out import turns_before_what_they_left_out
from memstrata.read.move_up import in_place_of
from memstrata.read.named_keys import answers_for_another, asks_for_key
from memstrata.read.newer import (
    changed_by_then,
    newer_first,
    said_by_then_first,
    with_what_replaced_them,
    with_what_they_changed,
)
from memstrata.read.other_language import asked_in_other_language
from memstrata.read.own_first import (
    later_of_equals_first,
    named_first,
    own_before_others,
    theirs_before_own,
)
from memstrata.read.rank import MemoryText, Ranker, keyword_matches_to_read, memory_text, pool, rescore
from memstrata.read.relatives import Relatives, relatives_asked
from memstrata.read.replies import turns_before_their_replies
from memstrata.read.retrieve import (
    Retrieved,
    asks_about_the_time_alone,
    asks_every_value,
    asks_formerly,
    before_value,
    changed_after,
    exact_key_hits,
    former_values,
    held_in,
    key_values_then,
    keyword_candidates,
    meaning_text,
    nothing_in_range,
    query_time_span,
    recent_after_all,
    retrieve,
    said_or_meant_in,
    topic_text,
)
from memstrata.read.settings import ReadSettings
from memstrata.read.spelling import corrected_spelling
from memstrata.read.updated import with_the_updates_of_turns
from memstrata.read.when import timed_first
from memstrata.storage.protocol import Store
from memstrata.types import MemoryItem, Scope, ScoreBreakdown, SearchHit

__all__ = ["ReadSettings", "below_best", "minimum_relevance", "search"]


def _hydrate(store: Store, scope: Scope, ids: Sequence[str], known: dict[str, MemoryItem]) -> dict[str, MemoryItem]:
    missing = [memory_id for memory_id in ids if memory_id not in known]
    return known | {item.id: item for item in store.get(scope, missing)} if missing else known


def minimum_relevance(query: SearchQuery, settings: ReadSettings) -> float:
    """``threshold=`` on the call, else the configured ``search.min_relevance``."""
    return settings.min_relevance if query.threshold is None else query.threshold


def below_best(query: SearchQuery, settings: ReadSettings, conversation: bool) -> float | None:
    """For a whole conversation as the query, the share of the best hit's relevance that keeps a hit under the bar
    (``search.conversation_cutoff``), else None. A conversation spreads its evidence thin: a memory matches a few of
    its many words, and its meaning is one part of the conversation's, so related memories score 0.06-0.1 where a
    question's answer scores 0.3-0.9 (MADial: the bar dropped 6 zh and 11 en relevant hits of the top 10,
    bench/results/2026-12-05-quality-conversation-cutoff.md). ``threshold=`` on the call is always the bar."""
    return settings.conversation_cutoff if conversation and query.threshold is None else None


@dataclass(frozen=True)
class _Retrieval:
    span: TimeSpan | None  # the time the question names ("recently" only where the scope holds some of it)
    asked: str  # what it asks about, its time aside: the reasons two statements answer it for (read/newer.py)
    topic: str  # the words ranking reads: ``asked``, with the time's words where the scope holds nothing of it
    relatives: Relatives | None
    retrieved: Retrieved


def _asked(query: SearchQuery, span: TimeSpan | None) -> str:
    # The time a question names is searched as a range, not as words: "what did I buy this week?" matched "I started
    # the violin last week" (said in March) on "week" and ranked it above the laptop bought this week.
    return topic_text(meaning_text(plain_question(query.text), span), query.scope)


def likely_embedded(query: SearchQuery, settings: ReadSettings) -> str:
    """The text :func:`search` embeds for ``query`` unless it corrects a misspelt word, names a relative or adds the
    other language's words (which read the store): what searches arriving together embed in one model call ahead of
    running (``Memory.embed_queries``). A text that turns out different costs only the search's own embedding."""
    query = query.model_copy(update={"text": simplified(query.text)})
    span = query_time_span(query, settings.timezone)
    return meaning_text(_asked(query, span), span)


def _retrieve(store: Store, embedder: Embedder, query: SearchQuery, settings: ReadSettings) -> _Retrieval:
    span = query_time_span(query, settings.timezone)
    asked = _asked(query, span)
    # "What's my research area?" of "研究方向也转成 LLM agent 的长期记忆": also asked as 研究 (read/other_language.py)
    if settings.translate_words:
        asked = asked_in_other_language(store, query, asked)
    # "What does my sister do?" is also about Emma, if the user named her so (read/relatives.py).
    relatives = relatives_asked(store, query, asked)
    searched = relatives.searched(asked) if relatives else asked
    retrieved = retrieve(store, embedder, query, settings.candidates, settings.graph, span, searched)
    topic = asked
    if span is not None and not span.vague and nothing_in_range(retrieved) and _time_words_held(store, query, asked):
        # No memory of the scope was said in the time the question names, so its words are searched too: a history
        # imported from 2022 asked "What did Evan start one year ago?" in 2026 has nothing said in 2025, and its
        # answer says "I started lifting weights one year ago" in those words. The range still counts for what
        # names it (a plan said before it); the embedded question and the other lists stay as they are.
        topic = topic_text(plain_question(query.text), query.scope)
        searched = relatives.searched(topic) if relatives else topic
        retrieved = replace(retrieved, keyword=keyword_candidates(store, query, settings.candidates, searched))
    return _Retrieval(recent_after_all(span, retrieved), asked, topic, relatives, retrieved)


def _time_words_held(store: Store, query: SearchQuery, asked: str) -> bool:
    """Whether a memory of the scope says a word of the time the question names. A word no memory says ("2022" in
    "Where did I live in 2022?" of a history that never writes it) weighs most among the question's words, so every
    statement matched it only in part ("First night in the new flat in Kowloon", 2021: relevance 0.40 -> 0.03; a
    held-out trial)."""
    said = set(search_terms(topic_text(plain_question(query.text), query.scope))) - set(search_terms(asked))
    return bool(said) and bool(store.keyword_search(query.scope, sorted(said), query.filters, 1))


def search(store: Store, embedder: Embedder, query: SearchQuery, settings: ReadSettings) -> list[SearchHit]:
    hits: list[SearchHit] = []
    key_items = exact_key_hits(store, query)
    for key_item in key_items:
        breakdown = ScoreBreakdown(key_match=True, fused=1.0, relevance=1.0, final=1.0)
        hits.append(SearchHit(memory=key_item, score=1.0, breakdown=breakdown))
    answered = {item.id for item in key_items}
    # Past the exact key, words are matched as Simplified: "我爸媽住在哪裡？" is asked with the word lists' 爸妈 and
    # 哪里 (relatives, personal keys, time words such as 上週), and embedded as the same question.
    query = query.model_copy(update={"text": simplified(query.text)})
    if settings.correct_spelling:  # "whats my current adress" asks for the address (read/spelling.py)
        query = query.model_copy(update={"text": corrected_spelling(store, query, translated=settings.translate_words)})
    # "How much metformin do I take?" of "二甲双胍 850mg": also asked as a medicine (read/instances.py)
    query = query.model_copy(update={"text": asked_by_other_names(store, query)})
    found = _retrieve(store, embedder, query, settings)
    span, asked, topic, relatives, retrieved = found.span, found.asked, found.topic, found.relatives, found.retrieved
    items = _hydrate(store, query.scope, keyword_matches_to_read(retrieved), {})

    def read(item: MemoryItem) -> MemoryText:
        text = read_as_done(memory_text(item), item, query.now, settings.timezone)  # read/due_plans.py
        return relatives.read(text) if relatives else text

    texts = {memory_id: read(item) for memory_id, item in items.items()}
    ranker = Ranker(topic, settings)
    ranked = [c for c in ranker.candidates(retrieved, texts) if c.memory_id not in answered]
    # Lifecycle and the time boost reorder, so a few more candidates than will be returned are read.
    chosen = pool(ranked, max(query.limit * 3, 30), max(query.limit, 10))
    items = _hydrate(store, query.scope, [c.memory_id for c in chosen], items)
    about_the_time = asks_about_the_time_alone(query.text, span)
    formerly = span is None and asks_formerly(query.text)
    every_value = span is None and asks_every_value(query.text)
    scored: list[SearchHit] = []
    for candidate in chosen:
        item = items.get(candidate.memory_id)
        if item is None or _not_yet(item, query):
            continue
        if item.key is not None and answers_for_another(query.text, item.key, query.scope.user_id):
            continue
        # Keyword matches read before fusion are settled already; the rest are read here once.
        settled = ranker.settle(candidate, texts.get(candidate.memory_id) or read(item)).breakdown()
        if item.key is not None and asks_for_key(query.text, item.key, query.scope.user_id):
            settled = settled.model_copy(update={"key_named": True})
        # "我以前在哪家公司？": for a key the question names, the time before its current value
        when = before_value(item) if formerly and settled.key_named else span
        scored.append(_scored(item, settled, when, query, settings, about_the_time=about_the_time))
        held = key_values_then(store, query, item, when) if settled.key_named and when else []
        if settled.key_named and every_value:  # "我工作过哪些公司？": the earlier values too, after the current
            held = former_values(store, query, item)
        for then in held:  # the key's values in the time asked, matched as its key, the longest held first
            if then.id not in items:
                items[then.id] = then
                scored.append(_scored(then, settled, when, query, settings, about_the_time=about_the_time))
    best = max((hit.breakdown.relevance for hit in scored), default=0.0)
    share = below_best(query, settings, ranker.conversation)
    minimum = relevance_floor(minimum_relevance(query, settings), best, share)
    rescored = [hit for hit in scored if hit.breakdown.relevance >= minimum]
    below = [hit for hit in scored if hit.breakdown.relevance < minimum]  # what replaced a hit is looked for here
    rescored.sort(key=lambda hit: hit.score, reverse=True)
    # Of two statements answering alike, the later one (read/newer.py); unless the question names its time:
    # "Where did I live in January?" asks for what held then, not for what replaced it (a correction still counts).
    # A time still to come asks what holds then, and what changed holds on: "Schedule a 1:1 with my boss next week"
    # asks for the boss of today, while "Is there a meeting on Monday?" still asks for Monday's meeting.
    known = relatives.names if relatives else ()  # the relatives' names the scope gives: "my sister" is Emma
    if query.lifecycle:
        named, to_come = span is not None, span is not None and span.start > query.now
        changes = changes_by(query.now, settings.timezone)  # said as done, or a plan whose time has come
        # "我以前在哪家公司？" asks for what held before: what replaced it is no answer, a correction still is.
        rescored = with_what_replaced_them(rescored, below, asked, names_a_time=(named and not to_come) or formerly,
                                           names=known, changes=changes)  # fmt: skip
        rescored = newer_first(rescored, asked, names_a_time=named, time_to_come=to_come, formerly=formerly,
                               names=known, changes=changes)  # fmt: skip
        if formerly:  # what a hit changed, above it: stored beside it, or replaced by the write path (read/former.py)
            rescored = with_what_they_changed(rescored, below, asked, names=known, changes=changes)
            rescored = with_what_they_replaced(store, query, rescored)
        else:
            if span is None or to_come:  # a turn whose fact the write path updated since, after the update
                rescored = with_the_updates_of_turns(store, query, rescored, below, asked)  # (read/updated.py)
            if span is None:  # what a hit names, ended or taken back since (read/endings.py)
                rescored = with_later_news(store, query, rescored, below)
                rescored = turns_before_what_they_left_out(rescored)  # an ending its fact left out (read/left_out.py)
        if span is not None and not to_come:  # what held for most of the time asked about
            rescored = changed_by_then(rescored, asked, span, settings.timezone)
            rescored = said_by_then_first(rescored, asked, span, settings.timezone)
    rescored = own_before_others(rescored, query.text)  # what the user said of themselves, for a question about them
    rescored = theirs_before_own(rescored, query.text, names=known)  # and what was said of someone asked about
    rescored = named_first(rescored, query.text)  # "Who is my girlfriend?" asks for a name
    if query.lifecycle and span is None and not formerly:
        rescored = later_of_equals_first(rescored, query.text, known)
    rescored = timed_first(rescored, query.text)  # "When do I go swimming?" asks for a time, of equals too
    rescored = turns_before_their_replies(rescored)  # the user's word before the assistant's echo of it, ties too
    return _distinct_texts(hits + rescored)[: query.limit]


def _scored(
    item: MemoryItem,
    settled: ScoreBreakdown,
    span: TimeSpan | None,
    query: SearchQuery,
    settings: ReadSettings,
    *,
    about_the_time: bool,
) -> SearchHit:
    """The hit with time and lifecycle applied: a key the question names belongs to the time it held in (a value is
    a state, not an event); any other memory to the time it happened or names."""
    in_time, later = None, False
    if span is not None and item.key is not None and settled.key_named:
        in_time, later = held_in(item, span), item.valid_from >= span.end
    elif span is not None:
        zone = settings.timezone
        in_time, later = said_or_meant_in(item, span, zone), changed_after(item, span, zone)
    final = rescore(
        item,
        settled,
        now=query.now,
        use_lifecycle=query.lifecycle,
        settings=settings.lifecycle,
        in_time=in_time,
        about_the_time=about_the_time,
        changed_after=later,
        recently=span is not None and span.vague,
    )
    return SearchHit(memory=item, score=final.final, breakdown=final)


def _not_yet(item: MemoryItem, query: SearchQuery) -> bool:
    """A key's value dated later than now holds only from then: until that day the value it will replace
    answers (the exact key hit), unless the query travels in time."""
    travels = query.filters.valid_at is not None or query.filters.known_at is not None
    return item.key is not None and item.valid_from > query.now and not travels


def _distinct_texts(hits: list[SearchHit]) -> list[SearchHit]:
    """One hit per text, at the place of its best: a fact the extractor took over word for word from its turn (the
    rules path does for a sentence it cannot shorten) would otherwise fill a second slot of the limit with the same
    words. The fact stands for both, though the raw turn ranked higher: it is the memory that updates, ends and
    keeps history, and it points back at the turn (a user trial saw the turn answer "我对什么过敏？")."""
    groups: dict[str, list[SearchHit]] = {}
    for hit in hits:
        groups.setdefault(" ".join(hit.memory.text.split()).casefold(), []).append(hit)
    kept = []
    for best, *rest in groups.values():
        fact = next((hit for hit in rest if best.memory.kind == "episode" and hit.memory.kind != "episode"), None)
        kept.append(best if fact is None else in_place_of(fact, best))
    return kept

"""The read calls that can go deep: ``search(mode=...)``, ``deep_search`` and ``context``.

Fast mode is the one search path (``MemoryCore.search``) untouched. Deep mode (memstrata.deep) drives that
same path once per query it plans, with the configured chat model (or its offline heuristics) and the
configured reranker. ``context`` gathers what an agent should read and packs it under a token budget
(deep/assemble.py): the rules layer, key facts (the ones whose key the query names always), the user's standing
facts (deep/profile.py), the relevant memories with their source turns and dates, and the session's recent turns,
each cited by memory id.
Memories it includes count as used (the access log, batched off the read path).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo

from memstrata.deep.assemble import Piece, ladder, pack
from memstrata.deep.context_model import Audience, ContextMemory, ContextTurn, MemoryContext, Mode
from memstrata.deep.profile import standing_facts
from memstrata.deep.search import DeepDeps, DeepResult, deep_search
from memstrata.deep.trace import DeepTrace
from memstrata.errors import InvalidInputError
from memstrata.facade.core import MemoryCore
from memstrata.indexing import normalised
from memstrata.lifecycle.shown_dates import shown_date
from memstrata.providers.rerank_factory import build_reranker
from memstrata.query import Filters, ListQuery, SearchQuery, keys_named_in
from memstrata.read.endings import LaterNews
from memstrata.read.evidence import is_conversation
from memstrata.read.expand import best_source_turns, source_turns
from memstrata.read.named_keys import names_key
from memstrata.read.newer import replacement
from memstrata.read.pipeline import below_best, minimum_relevance
from memstrata.read.retrieve import value_now
from memstrata.records.process import SUMMARY_KIND, TASK_KIND
from memstrata.sentences import cut_to_budget
from memstrata.timezones import local
from memstrata.types import MemoryItem, Scope, SearchHit, StoredMessage

KEY_SCAN = 2000  # most recently updated keyed facts read for a context
OTHER_FACTS = 20  # key facts the query does not name, at most (budget permitting)
PROFILE_FACTS = 5  # of those, ones no search found relevant (the latest updated)
SESSION_TURNS = 50  # the session's latest turns considered for working memory
NAMED_BY_WORDS = 3  # keys a query may name by their words alone ("Where do I work?") and require all of
SOURCE_TURNS = 2  # source turns shown under a derived memory, at most
MEMORY_TOKENS, TURN_TOKENS, BARE_TOKENS = 120, 80, 40
# A standing fact's barest rendering: its first words say it ("Moved to 上海 this week…", "Met someone … her name is
# 林晓雯"), and the profile's fifth of a 600-token budget held two or three facts at 40 tokens each, so the partner,
# the children and the pets, asked last, were left out whenever a home or a diet came first.
PROFILE_BARE_TOKENS = 24


def checked_mode(mode: str) -> Mode:
    if mode not in ("fast", "deep"):
        raise InvalidInputError(f"mode must be 'fast' or 'deep', not {mode!r}")
    return "deep" if mode == "deep" else "fast"


def checked_audience(audience: str) -> Audience:
    if audience not in ("chat", "agent"):
        raise InvalidInputError(f"audience must be 'chat' or 'agent', not {audience!r}")
    return "agent" if audience == "agent" else "chat"


def max_rounds(core: MemoryCore, audience: Audience) -> int:
    deep = core.settings.deep
    return deep.agent_rounds if audience == "agent" else deep.chat_rounds


def deep_result(core: MemoryCore, query: SearchQuery, audience: Audience) -> DeepResult:
    deps = DeepDeps(
        search=core.search,
        model=core.chat_model,
        reranker=build_reranker(core.settings.rerank, core.chat_model, os.environ),
        settings=core.settings.deep,
        rerank=core.settings.rerank,
        minimum=minimum_relevance(query, core.read_settings),
        below_best=below_best(query, core.read_settings, is_conversation(query.text)),
        zone=core.read_settings.timezone,
    )
    return deep_search(query, deps, max_rounds=max_rounds(core, audience))


def search_in_mode(core: MemoryCore, query: SearchQuery, mode: Mode, audience: Audience
                   ) -> tuple[list[SearchHit], DeepTrace | None]:  # fmt: skip
    if mode == "fast":
        return core.search(query), None
    result = deep_result(core, query, audience)
    return result.hits, result.trace


# --- key facts ---------------------------------------------------------------------------------------
def key_facts(
    core: MemoryCore, scope: Scope, query: str, session: Scope | None = None, now: datetime | None = None
) -> tuple[list[MemoryItem], list[MemoryItem]]:
    """(key facts the query names, other key facts), each most recently updated first. In a session, a value
    the session holds of its own answers for the key (as search in that session does), else the scope's. ``now``:
    the time the values are read as of (a question asked as of an earlier time), by default the clock's."""
    store = core.store
    own = session or scope
    literal = [store.find_by_key(own, key) for key in keys_named_in(query, most=10)]
    filters = Filters(exclude_kind=("episode", "summary"), has_key=True)
    recent = store.list_memories(ListQuery(scope=scope, filters=filters, limit=KEY_SCAN, order_by="updated_at"))
    if session is not None:
        listed = ListQuery(scope=session, filters=filters, limit=KEY_SCAN, order_by="updated_at")
        recent += [item for item in store.list_memories(listed) if item.scope == session and item.key]
    now = now or core.clock()
    current = [value_now(store, scope, item, now) for item in [*(i for i in literal if i is not None), *recent]]
    standing = {own: 2, scope: 1}  # the session's own value, then the scope's, then a narrower scope's

    by_key: dict[str, MemoryItem] = {}
    for item in current:  # one value per key
        if item is None or not item.key:
            continue
        held = by_key.get(item.key)
        if held is None or standing.get(item.scope, 0) > standing.get(held.scope, 0):
            by_key[item.key] = item
    keyed = {item.id: item for item in by_key.values()}
    # A key written out names that key alone: "What is svc3:runtime:version?" named all 25 "…:version" keys by
    # their last word, each one required, and a budget of 1,000 tokens was refused. Named by words alone, a few keys
    # are required; more are a word many keys share, and search ranks them.
    spelled = [item for item in keyed.values() if item.key and item.key.lower() in query.lower()]
    worded = [item for item in keyed.values() if item.key and names_key(query, item.key)]
    named = spelled or (worded if len(worded) <= NAMED_BY_WORDS else [])
    others = [item for item in keyed.values() if item not in named]
    return named, others


# --- pieces -----------------------------------------------------------------------------------------
def _refs(ids: Sequence[str]) -> dict[str, str]:
    """The shortest prefix (at least 8 characters) telling each id apart from the others."""
    refs = {}
    for memory_id in ids:
        size = 8
        while size < len(memory_id) and any(o != memory_id and o.startswith(memory_id[:size]) for o in ids):
            size += 4
        refs[memory_id] = memory_id[:size]
    return refs


def _when(item: MemoryItem) -> datetime:
    """A memory's date in the context: its own event time, else since when it holds (a fact drawn from an imported
    2023 turn holds from 2023; its created_at is the day of the import). Its line shows it at the precision of the
    period its words name (lifecycle/shown_dates.py)."""
    return item.event_time or item.valid_from


def _turn_line(turn: StoredMessage, zone: tzinfo) -> str:
    message = turn.message
    text = " ".join(message.content.split())
    return f"  > {local(message.timestamp, zone).date().isoformat()} {message.name or message.role}: {text}"


@dataclass
class _Gathered:
    facts: list[tuple[MemoryItem, bool, float]]  # item, named by the query, relevance
    memories: list[tuple[SearchHit, list[StoredMessage]]]
    profile: list[SearchHit]  # the user's standing facts no other block shows
    session: list[StoredMessage]
    # session turns the search found, by message id: the rank among the memories they would have had
    found_in_session: dict[str, int]
    endings: dict[str, MemoryItem]  # later news that ends a memory shown, by its id (read/endings.py)

    def shown_items(self) -> list[MemoryItem]:
        return [*(item for item, _, _ in self.facts), *(hit.memory for hit in self.profile),
                *(hit.memory for hit, _ in self.memories)]  # fmt: skip


def _gather(core: MemoryCore, query: SearchQuery, session: Scope | None, hits: list[SearchHit]) -> _Gathered:
    scope = query.scope
    named, others = key_facts(core, scope, query.text, session, query.now)
    relevance = {hit.id: hit.breakdown.relevance for hit in hits}
    ranked_others = sorted(others, key=lambda item: (-relevance.get(item.id, 0.0), item.updated_at.timestamp() * -1))
    facts = [(item, True, relevance.get(item.id, 1.0)) for item in named]
    # unnamed key facts the search found relevant, then a few most recently updated ones as a profile: sixty
    # port numbers filled the key facts of a question about food
    found = [item for item in ranked_others if relevance.get(item.id, 0.0) > 0]
    latest = [item for item in ranked_others if relevance.get(item.id, 0.0) <= 0][:PROFILE_FACTS]
    facts += [(item, False, relevance.get(item.id, 0.0)) for item in [*found, *latest][:OTHER_FACTS]]
    turns = core.store.messages(session, limit=SESSION_TURNS, latest=True) if session is not None else []
    shown = {turn.message.id for turn in turns}
    seen_ids = {item.id for item, _, _ in facts}
    seen_texts = {normalised(item.text) for item, _, _ in facts}
    fact_keys = {item.key for item, _, _ in facts}
    # A finished task's summary opens with its goal: the goal's own unit beside it showed the task twice.
    summarised = {hit.memory.metadata.get("task_id") for hit in hits if hit.memory.kind == SUMMARY_KIND}
    memories: list[tuple[SearchHit, list[StoredMessage]]] = []
    found_in_session: dict[str, int] = {}
    # search put later news before the hit it ends (read/endings.py); here it is that memory's "> later:" line
    ended_here = {hit.breakdown.later_news_of for hit in hits} & {hit.id for hit in hits}
    for hit in hits:
        item = hit.memory
        if hit.breakdown.later_news_of in ended_here:
            continue
        if item.id in seen_ids or normalised(item.text) in seen_texts or (item.key and item.key in fact_keys):
            continue  # shown already, or another value of a key whose answer is shown (one value per key)
        if item.kind == TASK_KIND and item.metadata.get("task_id") in summarised:
            continue
        own = item.kind == "episode"
        if own and set(item.provenance.message_ids) & shown:
            for message_id in set(item.provenance.message_ids) & shown:  # the session block shows it, as needed
                found_in_session.setdefault(message_id, len(memories))
            continue
        sources = [] if own else source_turns(core.store, scope, item)
        best = [turn for turn in best_source_turns(sources, query.text, len(sources)) if turn.message.id not in shown]
        shown |= {turn.message.id for turn in best[:SOURCE_TURNS]} | set(item.provenance.message_ids if own else ())
        seen_ids.add(item.id)
        seen_texts.add(normalised(item.text))
        memories.append((hit, best[:SOURCE_TURNS]))
    news = LaterNews(core.store, scope, query.filters, query.now)
    standing = (
        []
        if scope.user_id is None
        else standing_facts(
            core.search,
            query,
            seen_ids,
            core.query_embedder(scope),
            ended=lambda m: bool(news.ending(m)),
            keys=[item for item, _, _ in facts if item.key],
        )
    )
    profile = [hit for hit in standing if normalised(hit.memory.text) not in seen_texts]
    endings = {hit.id: ending for hit, _ in memories if (ending := news.ending(hit.memory)) is not None}
    # and a correction the profile shows: "I'm allergic to shellfish" matched "Order seafood dinner for me" and was
    # shown without "Actually 不是 shellfish allergy，是 crab 过敏，shrimp 没事" (a user trial)
    for hit, _ in memories:
        if hit.id not in endings and (instead := replacement(hit, profile, query.text)) is not None:
            endings[hit.id] = instead.memory
    # what still holds is read first: "Book a dinner for me and my wife" found "My girlfriend Mei…" (split up since)
    # above the wedding, so an ended memory follows the others, its ending beside it
    memories.sort(key=lambda shown: shown[0].id in endings)
    return _Gathered(facts, memories, profile, turns, found_in_session, endings)


def _shown_already(before: str, shown: set[str]) -> bool:
    """Every turn of a reply's ``preceding_turns`` ("role: text" lines, ingest.turn_context) is a memory shown."""
    said = [line.split(": ", 1)[-1] for line in before.splitlines() if line.strip()]
    return bool(said) and all(normalised(text) in shown for text in said)


def _pieces(gathered: _Gathered, refs: dict[str, str], zone: tzinfo) -> list[Piece]:
    """The context's lines; dates are days of the users' ``zone`` (time.timezone): a turn said at 21:00 in
    California was shown as the next day."""
    pieces = []
    shown = {normalised(item.text) for item in gathered.shown_items()}
    for order, (item, named, relevance) in enumerate(gathered.facts):
        head = f"- [{refs[item.id]}] {item.key}: "
        pieces.append(Piece("facts", ladder(head, item.text, (), rich=MEMORY_TOKENS, bare=BARE_TOKENS), order,
                            required=named, relevant=relevance > 0, memory_id=item.id))  # fmt: skip
    for order, (hit, turns) in enumerate(gathered.memories):
        item = hit.memory
        speaker = item.metadata.get("speaker") if item.kind == "episode" else None
        who = f"{speaker}: " if isinstance(speaker, str) and speaker else ""
        head = f"- [{refs[item.id]}] {shown_date(item, zone)} {who}"
        extras = [cut_to_budget(_turn_line(turn, zone), TURN_TOKENS) for turn in turns]
        ending = gathered.endings.get(item.id)
        if ending is not None and normalised(ending.text) not in shown:  # what holds now, beside what held
            extras.insert(0, cut_to_budget(f"  > later: {shown_date(ending, zone)} {' '.join(ending.text.split())}",
                                           TURN_TOKENS))  # fmt: skip
        elif ending is not None and ending.id in refs:  # shown elsewhere: where to read it
            extras.insert(0, f"  > later: see [{refs[ending.id]}]")
        before = item.metadata.get("preceding_turns") if item.kind == "episode" else None
        # a reply reads as nothing without what it answered, unless the context shows that turn as a memory already
        if isinstance(before, str) and before.strip() and not _shown_already(before, shown):
            extras.insert(0, cut_to_budget("  > before: " + " ".join(before.split()), TURN_TOKENS))
        rungs = ladder(head, item.text, extras, rich=MEMORY_TOKENS, bare=BARE_TOKENS)
        pieces.append(Piece("memories", rungs, order, memory_id=item.id))
    for order, hit in enumerate(gathered.profile):
        head = f"- [{refs[hit.id]}] {shown_date(hit.memory, zone)} "
        rungs = ladder(head, hit.memory.text, (), rich=MEMORY_TOKENS, bare=PROFILE_BARE_TOKENS)
        pieces.append(Piece("profile", rungs, order, memory_id=hit.id))
    for order, turn in enumerate(gathered.session):
        message = turn.message
        head = f"- {message.name or message.role}: "
        rungs = ladder(head, message.content, (), rich=150, bare=BARE_TOKENS)
        pieces.append(Piece("session", rungs, order, rank=gathered.found_in_session.get(message.id)))
    return pieces


def _context_turn(turn: StoredMessage) -> ContextTurn:
    message = turn.message
    return ContextTurn(message_id=message.id, role=message.role, name=message.name, content=message.content,
                       timestamp=message.timestamp)  # fmt: skip


def build_context(
    core: MemoryCore,
    query: SearchQuery,
    *,
    session: Scope | None,
    rules: str,
    rules_files: tuple[str, ...],
    budget_tokens: int,
    mode: Mode,
    audience: Audience,
) -> MemoryContext:
    started = time.perf_counter()
    hits, trace = search_in_mode(core, query, mode, audience)
    gathered = _gather(core, query, session, hits)
    ids = [item.id for item, _, _ in gathered.facts] + [hit.id for hit, _ in gathered.memories]
    ids += [hit.id for hit in gathered.profile]
    refs = _refs(ids)
    packed = pack(rules, _pieces(gathered, refs, core.read_settings.timezone), budget_tokens)
    facts = {item.id: (item, named, relevance) for item, named, relevance in gathered.facts}
    memories = {hit.id: (hit, turns) for hit, turns in gathered.memories}
    profile = {hit.id: hit for hit in gathered.profile}
    kept_facts, kept_profile, kept_memories, kept_session = [], [], [], []
    for piece, rung in sorted(packed.kept, key=lambda kept: (kept[0].section != "session", kept[0].order)):
        if piece.section == "session":
            kept_session.append(_context_turn(gathered.session[piece.order]))
        elif piece.section == "facts" and piece.memory_id in facts:
            item, named, relevance = facts[piece.memory_id]
            kept_facts.append(ContextMemory(ref=refs[item.id], memory_id=item.id, kind=item.kind, key=item.key,
                                            date=_when(item), relevance=relevance,
                                            named=named))  # fmt: skip
        elif piece.section == "profile" and piece.memory_id in profile:
            hit = profile[piece.memory_id]
            kept_profile.append(ContextMemory(ref=refs[hit.id], memory_id=hit.id, kind=hit.memory.kind,
                                              key=hit.memory.key, date=_when(hit.memory),
                                              relevance=hit.breakdown.relevance))  # fmt: skip
        elif piece.memory_id in memories:
            hit, turns = memories[piece.memory_id]
            shown_turns = max(0, len(turns) - rung)
            kept_memories.append(ContextMemory(ref=refs[hit.id], memory_id=hit.id, kind=hit.memory.kind,
                                               key=hit.memory.key, date=_when(hit.memory),
                                               relevance=hit.breakdown.relevance,
                                               turns=tuple(_context_turn(t) for t in turns[:shown_turns])))  # fmt: skip
    citations = tuple(m.memory_id for m in [*kept_facts, *kept_profile, *kept_memories])
    core.access.record_later(query.scope, list(citations))  # put in front of an agent: that is use
    return MemoryContext(
        query=query.text, mode=mode, text=packed.text, tokens=packed.tokens, budget_tokens=budget_tokens,
        rules_files=rules_files, facts=tuple(kept_facts), profile=tuple(kept_profile), memories=tuple(kept_memories),
        session=tuple(kept_session), citations=citations,
        left_out=len(packed.dropped), seconds=round(time.perf_counter() - started, 3), trace=trace,
    )  # fmt: skip

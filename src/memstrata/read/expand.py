"""Expanding a hit to the raw turns it came from: a fact or a session summary points at its turns
(provenance), and a caller that wants the exact words (a quote, a date) reads them here.

The store applies the scope, so a hit can only expand to turns of the scope it was found in.
"""

from __future__ import annotations

from memstrata.read.evidence import keyword_coverage, memory_terms, query_terms, term_weights
from memstrata.storage.protocol import Store
from memstrata.types import MemoryItem, Scope, StoredMessage


def source_turns(store: Store, scope: Scope, item: MemoryItem) -> list[StoredMessage]:
    """The raw turns that said the memory as it reads now, in conversation order (empty for memories added as text).

    An update keeps the turns of the versions it replaced in its provenance (their lineage), but they were said
    before it and do not say it: "User's boyfriend is a firefighter" was quoted with "My boyfriend Leo is a pastry
    chef" (a user trial). The replaced versions and their turns stay in the history."""
    turns = store.messages_by_id(scope, list(item.provenance.message_ids))
    said = item.provenance.said_at
    return turns if said is None else [turn for turn in turns if turn.message.timestamp >= said]


def best_source_turns(turns: list[StoredMessage], query: str, limit: int) -> list[StoredMessage]:
    """The ``limit`` turns that hold most of the query's words (rare words weigh more), best first;
    ties keep conversation order. For a summary hit, these are the turns worth quoting."""
    terms = query_terms(query)
    found = [memory_terms(f"{turn.message.name or ''} {turn.message.content}") for turn in turns]
    weights = term_weights(terms, [f for f in found if f & set(terms)], population=len(turns))
    scored = sorted(range(len(turns)), key=lambda i: keyword_coverage(weights, found[i]), reverse=True)
    return [turns[i] for i in scored[:limit]]


def expand(store: Store, scope: Scope, item: MemoryItem, query: str, limit: int = 3) -> list[StoredMessage]:
    """The turns behind ``item`` that best answer ``query`` (at most ``limit``), best first."""
    return best_source_turns(source_turns(store, scope, item), query, limit)

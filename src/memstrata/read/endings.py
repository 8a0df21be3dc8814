"""Later news that ends what a memory says of someone or something named: "We had to put Biscuit down this morning"
after "Our golden retriever Biscuit is 9 now", "Anna and I broke up" after "My girlfriend Anna loves hiking",
"团子去喵星了" after "我的猫叫团子".

The ending shares no word with the task that found the earlier memory ("Find a vet near home for my pets"), so no
search ranks it, and a context showed a dog put down two years before as the user's pet (a held-out trial). What
ties the two is the name, so the name is looked up: the keyword index, no embedding, one lookup per memory shown
that names someone or something. An ending counts where its own clause names the one the earlier memory named
("We had to put Biscuit down this morning. … Adam held his paw" ends Biscuit, not the cat Adam named), as the ended
one ("Anna's dog died" ends the dog, not Anna), said after the earlier memory and by the time the context is for.

Search reads the same news (:func:`with_later_news`): "不好意思，我说错了，是 Tiong Bahru 不是 Tanjong Pagar", said
after "Keys to the Tanjong Pagar place", shares no word with "Where do I live?", so the correction was never among
the candidates and the place taken back answered alone; it now comes before the statement it corrects.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from memstrata.han import simplified
from memstrata.indexing import states_for_the_user
from memstrata.lexical import keyword_tokens
from memstrata.lifecycle.decay import said_at
from memstrata.modality import ENDING_WORDS, NEGATED, clauses, corrects, ends_or_corrects, sentences
from memstrata.patterns import lazy_pattern
from memstrata.query import Filters, SearchQuery
from memstrata.read.names import in_other_script, name_pattern, names_in, things_named
from memstrata.read.newer import FOLLOWED, REPLACING_EVIDENCE
from memstrata.read.parting import asks_past_the_parting
from memstrata.read.takes_back import asks_what_was_said
from memstrata.storage.protocol import Store
from memstrata.types import MemoryItem, Scope, ScoreBreakdown, SearchHit

LOOKED_UP = 30  # memories the keyword index returns for a memory's names (a dog named in 12 turns)
# In search, fewer: the index ranks short statements of the name first, as endings are ("We had to put Biscuit down"),
# and each hit looked up costs a keyword search and the rows read (30 rows: +2 ms a search at 10k memories).
LOOKED_UP_IN_SEARCH = 5

# A name given, wherever in the statement: "Adopted a cat, we named her 饺子", "取名叫年糕" (not a bare 叫 / called:
# "大家叫聂总" names the boss someone mentions, not what the statement is about).
_GIVES_A_NAME = lazy_pattern(
    r"(?:\bnamed\s+(?:him|her|it|them)?\s*|\bname\s+is\s+|取名叫?|起名叫?|名字(?:是|叫))"
    r"([A-Z][a-z]+(?:\s+[A-Z][a-z]+)?|[\u4e00-\u9fff]{2,3}?)(?=[，。！？,.!?\s(（]|$)"
)


def _first_clause(text: str) -> str:
    said = clauses(simplified(text).strip())
    return said[0] if said else ""


def ends(later: MemoryItem, name: str) -> bool:
    """Whether a clause of ``later`` that ends or corrects (modality.ends_or_corrects), or a sentence that corrects,
    names ``name`` as the one ended: beside the words that say so (:data:`NEAR`), not as whose ("Anna's dog died"), nor
    as where, beside another one ended ("Snap Fitness in Sai Kung now, cancelled Anytime" ended the gym, not the home
    in Sai Kung)."""
    if not states_for_the_user(later):
        return False
    pattern = name_pattern(name)
    for sentence in sentences(simplified(later.text)):
        # a correction says so anywhere in the sentence ("我说错了，是 Tiong Bahru 不是 Tanjong Pagar") and takes back
        # what it negates: "Sorry, correction: Arjun works at Microsoft, but in Suzhou, not Shanghai" takes back
        # Shanghai, not what else was said of Arjun (his allergy)
        if corrects(sentence) and _said_beside(sentence, pattern, NEGATED, after=True):
            return True
        if any(ends_or_corrects(said) and _said_beside(said, pattern, ENDING_WORDS) for said in clauses(sentence)):
            return True
    return False


# Characters at most between a name and the words that end or correct it: "Anna and I broke up", "小汤圆昨天晚上走了",
# "不是 Tanjong Pagar". Further away the name is someone in the news, not what it ends: "The amusement park trip Lisa
# was looking forward to was cancelled" ended no Lisa (each of a dialogue set's users was so "ended" in turn).
NEAR = 12


def _said_beside(text: str, name: re.Pattern[str], words: re.Pattern[str], *, after: bool = False) -> bool:
    """Whether ``name`` (not as whose) is within :data:`NEAR` of one of ``words``; ``after``: following it."""
    named = [found for found in name.finditer(text) if not text[found.end() :].startswith(("'s", "’s", "的"))]
    said = list(words.finditer(text))
    return any(word.start() - found.end() <= NEAR and found.start() - word.end() <= NEAR
               and (not after or found.start() >= word.end()) for found in named for word in said)  # fmt: skip


class LaterNews:
    """Endings of memories in one ``scope`` under a query's ``filters`` (its time travel included), said by
    ``until``; each memory looked up once. ``opening_only``: only of what a memory names in its first clause or gives
    a name to, what it is about ("Keys to the Tanjong Pagar place"), not someone it mentions on the way
    ("第一天去海澄生物上班，…，大家叫聂总": the boss leaving changed neither the company nor the title)."""

    def __init__(self, store: Store, scope: Scope, filters: Filters, until: datetime, *, opening_only: bool = False,
                 looked_up: int = LOOKED_UP) -> None:  # fmt: skip
        self._store, self._scope, self._filters, self._until = store, scope, filters, until
        self._opening_only, self._looked_up = opening_only, looked_up
        self._found: dict[str, MemoryItem | None] = {}

    def ending(self, item: MemoryItem) -> MemoryItem | None:
        """The first memory said after ``item`` that ends one it names, if any."""
        if item.id not in self._found:
            self.look_up([item])
        return self._found[item.id]

    def look_up(self, items: Sequence[MemoryItem]) -> None:
        """The endings of ``items``, with one keyword search and one read for all of them (search asks of three)."""
        named = {item.id: self._names(item) for item in items if item.id not in self._found}
        self._found |= {item_id: None for item_id, names in named.items() if not names}
        asking = [item for item in items if named.get(item.id)]
        if not asking:
            return
        tokens = list(
            dict.fromkeys(token for item in asking for name in named[item.id] for token in keyword_tokens(name))
        )
        found = self._store.keyword_search(self._scope, tokens, self._filters, self._looked_up * len(asking))
        candidates = sorted(self._store.get(self._scope, [hit.memory_id for hit in found]), key=said_at)
        for item in asking:
            since = said_at(item)
            later = (other for other in candidates if other.id != item.id and since < said_at(other) <= self._until
                     and _same_speaker(other, item))  # fmt: skip
            self._found[item.id] = next((other for other in later if any(ends(other, n) for n in named[item.id])), None)

    def _names(self, item: MemoryItem) -> frozenset[str]:
        if not self._opening_only:
            named = names_in(item.text)
        else:
            # what a statement is about: what its first clause names, and whatever it gives a name to
            given = {found.group(1) for found in _GIVES_A_NAME.finditer(simplified(item.text))}
            named = names_in(_first_clause(item.text)) | given
        # and as the other language writes it: "日本不去了" ends "Planning a trip to Japan next April" (a user trial)
        return named | {across for name in named if (across := in_other_script(name)) is not None}


def with_later_news(store: Store, query: SearchQuery, hits: Sequence[SearchHit], below: Sequence[SearchHit]
                    ) -> list[SearchHit]:  # fmt: skip
    """Each of the first ``FOLLOWED`` hits that is the user's own statement preceded by the later news that ends or
    corrects what it names (:class:`LaterNews`), with its place and score, as read/newer.py's replacements take
    theirs; the news is taken from lower in the list or from ``below`` the cutoff where search found it (else it
    carries no evidence of its own: ``moved_from`` 0), and ``later_news_of`` says which hit it ends. A key fact is the
    key's current value and is never ended so."""
    news = LaterNews(store, query.scope, query.filters, query.now, opening_only=True, looked_up=LOOKED_UP_IN_SEARCH)
    news.look_up([hit.memory for hit in hits[:FOLLOWED] if _may_be_ended(hit)])
    ordered, position = list(hits), 0
    while position < min(FOLLOWED, len(ordered)):
        earlier = ordered[position]
        position += 1
        if not _may_be_ended(earlier):
            continue
        ending = news.ending(earlier.memory)
        if ending is None or any(hit.id == ending.id for hit in ordered[: position - 1]):
            continue
        if asks_past_the_parting(query.text, earlier.memory, ending):  # (read/parting.py)
            continue
        if asks_what_was_said(query.text) and not corrects(ending.text):  # (read/takes_back.py)
            continue
        found = next((hit for hit in [*ordered[position:], *below] if hit.id == ending.id), None)
        if not _answers_instead(earlier, ending, found):
            continue
        if found in ordered:
            ordered.remove(found)
        ordered.insert(position - 1, _in_place_of(earlier, ending, found))
        position += 1
    return ordered


def _same_speaker(later: MemoryItem, earlier: MemoryItem) -> bool:
    """News ends what the one who said it said: in a group chat or a transcript, another speaker's cat of the same name
    is another cat."""
    return later.metadata.get("speaker") == earlier.metadata.get("speaker")


def _may_be_ended(hit: SearchHit) -> bool:
    """The user's own statement, not a key fact: a key's value is its current one however search found it."""
    return hit.memory.key is None and states_for_the_user(hit.memory)


def _answers_instead(earlier: SearchHit, news: MemoryItem, found: SearchHit | None) -> bool:
    """An ending ends what the earlier statement is about. News of a statement that names several things may end or
    take back one the question does not ask about ("Sorry, correction: Arjun works … in Suzhou, not Shanghai" for
    "What's my husband allergic to?"; "I quit Stripe" for "Where do I live?" of "moved to Dublin and joined Stripe",
    a user trial), so there it needs evidence of its own, as read/newer.py asks of corrections."""
    if things_named(earlier.memory.text) <= 1:
        return True
    return found is not None and found.breakdown.relevance >= REPLACING_EVIDENCE * earlier.breakdown.relevance


def _in_place_of(earlier: SearchHit, ending: MemoryItem, found: SearchHit | None) -> SearchHit:
    """The news, with the place and score of the hit it ends; its own score kept as ``moved_from``."""
    if found is None:
        breakdown = ScoreBreakdown(relevance=earlier.breakdown.relevance, moved_from=0.0)
    else:
        breakdown = found.breakdown.model_copy(update={"moved_from": found.score})
    breakdown = breakdown.model_copy(update={"later_news_of": earlier.id, "final": earlier.score})
    return SearchHit(memory=ending, score=earlier.score, breakdown=breakdown)

"""Ranking: calibrated evidence for every candidate, fused into one relevance, then bounded lifecycle.

Pure functions over what retrieval returned and the texts of the memories read so far; the
pipeline does the store calls. Every number that decides a hit's place ends up in its
ScoreBreakdown.

Relevance needs a memory's text (its words, its script). Keyword matches are read before fusion;
a candidate only the dense or graph list found is first ranked as if it shared the query's script
and settled once it is read (:func:`pool`), so only candidates that can reach the top are read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from memstrata.config import LifecycleSettings
from memstrata.graph.retrieve import GraphHit
from memstrata.indexing import (
    as_simplified,
    category_text,
    index_text,
    indexed_context,
    own_index_text,
    replies,
    statement_text,
)
from memstrata.lifecycle.decay import lifecycle_factors, lifecycle_multiplier
from memstrata.read.evidence import (
    cross_script,
    dense_evidence,
    has_meaning,
    has_words,
    is_conversation,
    keyword_coverage,
    keyword_evidence,
    memory_terms,
    query_terms,
    scripts,
    term_weights,
)
from memstrata.read.fuse import (
    EvidenceWeights,
    for_named_key,
    graph_evidence,
    in_time_range,
    max_rrf,
    outside_the_time,
    rrf,
    score_fusion,
)
from memstrata.read.retrieve import Retrieved
from memstrata.read.settings import ReadSettings
from memstrata.smalltalk import is_small_talk
from memstrata.types import MemoryItem, ScoreBreakdown


@dataclass(frozen=True, slots=True)
class MemoryText:
    """What ranking reads of a memory: the text the indexes saw (with speaker and preceding turns)
    for its words, and its own text for its script (context in another language is not its own)."""

    indexed: str
    own: str
    own_indexed: str | None = None  # ``indexed`` without the preceding turns (None: it has none)
    said: str | None = None  # ``own`` without the words of the questions it answers (None: the same)
    replies: bool = False  # a turn answering the question another speaker asked in the turn before it

    def coverage(self, weights: Mapping[str, float], context_weight: float, reply_weight: float) -> float:
        """Keyword coverage of the indexed text, where words only the preceding turns hold count
        ``context_weight`` as much as the memory's own, or ``reply_weight`` for a reply to a question:
        "Three times a week" says what "How often do you all work out?" asked, in none of its words."""
        full = keyword_coverage(weights, memory_terms(self.indexed))
        if self.replies:
            context_weight = max(context_weight, reply_weight)
        if self.own_indexed is None or context_weight >= 1.0:
            return full
        own = keyword_coverage(weights, memory_terms(self.own_indexed))
        return own + context_weight * max(0.0, full - own)


def memory_text(item: MemoryItem) -> MemoryText:
    """What ranking reads of a stored memory (see :class:`MemoryText`), its words as matched (Traditional read as
    Simplified)."""
    item = as_simplified(item)
    has_context = indexed_context(item) is not None
    # A key's words are part of what its value states, and the words of the questions a statement of change answers
    # part of what it says ("live 住" of "搬到深圳南山区了": an English question matches it on words, not only across
    # scripts on meaning).
    own = own_index_text(item) if item.key else statement_text(item)
    indexed, own_indexed = index_text(item), own_index_text(item) if has_context else None
    categories = category_text(item)  # keyword words only: see indexing.category_text
    if categories:
        indexed, own = f"{indexed}\n{categories}", f"{own}\n{categories}"
        own_indexed = None if own_indexed is None else f"{own_indexed}\n{categories}"
    said = None if item.key or own == item.text else item.text
    return MemoryText(indexed, own, own_indexed=own_indexed, said=said, replies=has_context and replies(item))


@dataclass(slots=True)
class Candidate:
    """One memory some retriever found, with its evidence; built and settled by a Ranker (in place:
    a query has a few hundred of these). ``cross_script`` is None until its text is known; until
    then relevance assumes the memory shares the query's script, and a keyword match that was not
    read yet (``keyword_exact`` False) is credited with the lowest coverage among those read."""

    memory_id: str
    keyword_rank: int | None = None
    keyword_score: float | None = None
    keyword_match: float | None = None
    vector_rank: int | None = None
    similarity: float | None = None
    known_similarity: float | None = None  # the similarity, or its bound when the dense list left it out
    dense_match: float | None = None
    time_rank: int | None = None
    graph_rank: int | None = None
    graph_hit: GraphHit | None = None
    cross_script: bool | None = None
    keyword_exact: bool = True
    relevance: float = 0.0
    fused: float = 0.0  # what the fusion orders by: relevance, or the rank fusion score for fusion="rrf"

    def settled(self) -> bool:
        return self.cross_script is not None

    def breakdown(self) -> ScoreBreakdown:
        return ScoreBreakdown(
            keyword_rank=self.keyword_rank,
            keyword_score=self.keyword_score,
            keyword_match=self.keyword_match,
            vector_rank=self.vector_rank,
            vector_similarity=self.similarity,
            dense_match=self.dense_match,
            cross_script=bool(self.cross_script),
            time_rank=self.time_rank,
            graph_rank=self.graph_rank,
            graph_hop=self.graph_hit.hop if self.graph_hit else None,
            graph_relation=self.graph_hit.relation if self.graph_hit else None,
            fused=self.fused,
            relevance=self.relevance,
        )


def _relevance(candidate: Candidate, settings: ReadSettings, weights: EvidenceWeights, cross: bool) -> float:
    hit = candidate.graph_hit
    dense = candidate.dense_match or 0.0
    if cross and candidate.known_similarity is not None:
        # Standing alone, similarity must clear a higher floor: unrelated zh<->en pairs reach ~0.22.
        dense = dense_evidence(candidate.known_similarity, settings.dense_alone_floor, settings.dense_ceiling)
    graph = graph_evidence(hit.hop, weights, on_topic=hit.on_topic) if hit else 0.0
    return score_fusion(candidate.keyword_match or 0.0, dense, graph, weights, cross_script=cross)


def _rank_fusion(retrieved: Retrieved, settings: ReadSettings) -> dict[str, float]:
    lists = {
        "keyword": [hit.memory_id for hit in retrieved.keyword],
        "dense": [hit.memory_id for hit in retrieved.dense],
    }
    if retrieved.in_time_range:
        lists["time"] = [hit.memory_id for hit in retrieved.in_time_range]
    if retrieved.graph:
        lists["graph"] = [hit.memory_id for hit in retrieved.graph]
    weights = {
        "keyword": settings.keyword_weight,
        "dense": settings.dense_weight,
        "time": settings.dense_weight,
        "graph": settings.graph.weight,
    }
    graph_weight = settings.graph.weight if retrieved.graph else 0.0
    # The time list is a bonus on top: scores may exceed 1 inside a named range, so they are capped.
    scale = max_rrf(settings.keyword_weight + settings.dense_weight + graph_weight, settings.rrf_k)
    return {memory_id: min(1.0, score / scale) for memory_id, score in rrf(lists, settings.rrf_k, weights).items()}


KEYWORD_READ = 40  # keyword matches read before fusion: enough to weigh the query's words


def keyword_matches_to_read(retrieved: Retrieved) -> list[str]:
    """The keyword matches whose text fusion needs up front (the rest are read if they reach the pool)."""
    return [hit.memory_id for hit in retrieved.keyword[:KEYWORD_READ]]


def _gather(retrieved: Retrieved) -> dict[str, Candidate]:
    """One candidate per memory any list found (keyword matches first, best first), with its rank
    (and raw score) in each list."""
    by_id: dict[str, Candidate] = {}

    def get(memory_id: str) -> Candidate:
        found = by_id.get(memory_id)
        if found is None:
            found = by_id[memory_id] = Candidate(memory_id)
        return found

    for rank, hit in enumerate(retrieved.keyword, start=1):
        candidate = get(hit.memory_id)
        candidate.keyword_rank, candidate.keyword_score = rank, hit.score
    for rank, hit in enumerate(retrieved.dense, start=1):
        candidate = get(hit.memory_id)
        candidate.vector_rank, candidate.similarity = rank, hit.score
    for rank, hit in enumerate(retrieved.in_time_range, start=1):
        get(hit.memory_id).time_rank = rank
    for rank, graphed in enumerate(retrieved.graph, start=1):
        candidate = get(graphed.memory_id)
        candidate.graph_rank, candidate.graph_hit = rank, graphed
    return by_id


class Ranker:
    """Evidence and relevance for one query's candidates (see the module docstring)."""

    def __init__(self, query_text: str, settings: ReadSettings) -> None:
        self.terms = query_terms(query_text)
        self.conversation = is_conversation(query_text)
        self.scripts = scripts(query_text)
        self.query_has_words = has_words(query_text)
        self.query_has_meaning = has_meaning(query_text, query=True)
        self.query_is_small_talk = is_small_talk(query_text)
        self.settings = settings
        self.weights = settings.evidence_weights()
        self.term_weights: dict[str, float] = {}
        self.best_keyword = 0.0
        # No memory in reach holds any of the query's words ("Do I have a dog?" and "Just adopted a beagle puppy"):
        # then missing keyword evidence says nothing of any one memory, as across scripts, and each stands on its
        # meaning alone. Before, such a memory in the query's language counted 0.4 of its dense evidence against
        # 0.85 for one in another script: a Chinese cat (cosine 0.30) answered "Do I have a dog?" above the dog
        # (0.33).
        self.words_unmatched = False

    def candidates(self, retrieved: Retrieved, texts: Mapping[str, MemoryText]) -> list[Candidate]:
        """Every candidate, best first by the configured fusion. ``texts`` holds the keyword matches
        read so far (:func:`keyword_matches_to_read`): query words are weighted by how rare they are
        among those, and each read match's coverage comes from its own words."""
        read = [hit.memory_id for hit in retrieved.keyword if hit.memory_id in texts]
        found = [memory_terms(texts[memory_id].indexed) for memory_id in read]
        population = max(len(retrieved.dense), len(retrieved.keyword))
        self.term_weights = term_weights(self.terms, found, population)
        self.best_keyword = retrieved.keyword[0].score if retrieved.keyword else 0.0
        self.words_unmatched = self.query_has_words and not retrieved.keyword
        coverages = {memory_id: self._coverage(texts[memory_id]) for memory_id in read}
        unread_coverage = min(coverages.values(), default=0.0)
        bound = retrieved.dense_bound()
        settings = self.settings
        ranked = []
        for candidate in _gather(retrieved).values():
            # Left out of a full dense list means less similar than its last entry: that bound is used.
            known = candidate.similarity if candidate.similarity is not None else bound
            candidate.known_similarity = known
            if known is not None:
                candidate.dense_match = dense_evidence(known, settings.dense_floor, settings.dense_ceiling)
            if candidate.keyword_score is not None:
                candidate.keyword_exact = candidate.memory_id in coverages
                coverage = coverages.get(candidate.memory_id, unread_coverage)
                candidate.keyword_match = self._keyword(candidate, coverage)
            ranked.append(self.settle(candidate, texts.get(candidate.memory_id)))
        if settings.fusion == "rrf":
            fused = _rank_fusion(retrieved, settings)
            for candidate in ranked:
                candidate.fused = fused.get(candidate.memory_id, 0.0)
        ranked.sort(key=lambda c: c.fused, reverse=True)
        return ranked

    def _keyword(self, candidate: Candidate, coverage: float) -> float:
        return keyword_evidence(coverage, candidate.keyword_score or 0.0, self.best_keyword, candidate.dense_match)

    def _cross_script(self, text: MemoryText) -> bool:
        """Whether the memory's words could not have matched the query's: it shares no script with the query, or
        shares one only through the question words indexed beside it (a category's or a state's, in both
        languages, see answers.answer_words) and none of those matched. A Chinese memory followed by "pet pets
        宠物" stands on its meaning alone for an English question that asks in other words."""
        if cross_script(self.scripts, text.own):
            return True
        said = text.own if text.said is None else text.said
        if not cross_script(self.scripts, said) and not scripts(said) - self.scripts:
            return False
        # Said in another script, or partly: "我女朋友 Vivian 是 UX designer" has English words, none of them the
        # question's ("What's my girlfriend's name?"), and the Chinese ones hold the answer; counted as a same-script
        # miss (0.4 of its meaning), it fell under the cutoff.
        return keyword_coverage(self.term_weights, memory_terms(text.own)) == 0.0

    def _coverage(self, text: MemoryText) -> float:
        return text.coverage(self.term_weights, self.settings.context_weight, self.settings.reply_context_weight)

    def settle(self, candidate: Candidate, text: MemoryText | None) -> Candidate:
        """The candidate's relevance once its text is known (``text=None``: not yet known)."""
        if candidate.settled():
            return candidate
        if text is None:
            candidate.relevance = candidate.fused = _relevance(
                candidate, self.settings, self.weights, cross=self.words_unmatched
            )
            return candidate
        if not candidate.keyword_exact:
            coverage = self._coverage(text)
            candidate.keyword_match, candidate.keyword_exact = self._keyword(candidate, coverage), True
        candidate.cross_script = self._cross_script(text)
        if not (self.query_has_meaning and has_meaning(text.own)):
            candidate.dense_match = candidate.known_similarity = None  # no meaning to compare (has_meaning)
        alone = candidate.cross_script or self.words_unmatched
        candidate.relevance = _relevance(candidate, self.settings, self.weights, cross=alone)
        said = text.own if text.said is None else text.said
        if not alone and cross_script(self.scripts, said):
            # Said in another script and matched only on the words indexed beside it (a relation's, a category's):
            # read on its meaning as well, the better of the two. "爸妈还在成都。我爸…他以前教物理" matched "What did
            # my dad do before he retired?" on "dad" alone once the relation's words were added, and fell from 0.48
            # (its meaning across scripts) to 0.25 (a user trial).
            across = _relevance(candidate, self.settings, self.weights, cross=True)
            candidate.relevance = max(candidate.relevance, across)
        if is_small_talk(said) and not self.query_is_small_talk:
            # "记下了。" / "Thanks!" after a fact: its words and meaning are the earlier turn's (indexed with it),
            # which is a hit of its own; the acknowledgement answers nothing and only takes a place in the list.
            # Read without the speaker's name a named turn is indexed with ("Joanna: Bye Nate!")
            candidate.relevance = 0.0
        if self.settings.fusion == "score":
            candidate.fused = candidate.relevance
        return candidate


def pool(ranked: list[Candidate], size: int, most_similar: int) -> list[Candidate]:
    """The candidates worth reading: the best ``size`` by fused score, plus the ``most_similar``
    unread ones by dense evidence, which may turn out to be in another script than the query (a
    Chinese memory for an English question has no keyword evidence but can be the answer)."""
    chosen = ranked[:size]
    unread = sorted((c for c in ranked[size:] if not c.settled()), key=lambda c: c.dense_match or 0.0, reverse=True)
    return chosen + unread[:most_similar]


def rescore(
    item: MemoryItem,
    breakdown: ScoreBreakdown,
    *,
    now: datetime,
    use_lifecycle: bool,
    settings: LifecycleSettings,
    in_time: bool | None,
    about_the_time: bool = False,
    changed_after: bool = False,
    recently: bool = False,
) -> ScoreBreakdown:
    """A time range the query names raises relevance inside it (read/fuse.py; ``in_time``: the memory belongs to the
    range, None: the query names none; ``about_the_time``: the query asks about nothing else) and lowers it outside,
    for a question about the time alone or a change that came after the range (``changed_after``: not what held
    then); lifecycle then takes at most ``settings.weight`` of the score (lifecycle/decay.py), so it reorders only
    close calls. A named time makes age no matter, except "recently" (``recently``), which asks for the newer."""
    relevance, fused, boost = breakdown.relevance, breakdown.fused, 1.0
    if about_the_time and in_time and is_small_talk(item.text):
        # "哈哈哈哈" and "好的谢谢" of last weekend gained the whole boost (0 -> 0.5) and answered "我上周末干嘛了？"
        # first, tied with what the user did (found by a user trial): they say nothing of what was done
        in_time = None
    if breakdown.key_named:
        relevance, fused = for_named_key(relevance), for_named_key(fused)
    if in_time:
        relevance = in_time_range(relevance, settings.time_boost, about_the_time=about_the_time)
        fused = in_time_range(fused, settings.time_boost, about_the_time=about_the_time)
        boost = 1.0 + settings.time_boost  # inside the range: the configured boost applied
    elif about_the_time or changed_after:
        relevance = outside_the_time(relevance, settings.time_boost)
        fused = outside_the_time(fused, settings.time_boost)
    ageless = in_time is not None and not recently
    factors = lifecycle_factors(item, now, settings, ageless=ageless) if use_lifecycle else None
    multiplier = lifecycle_multiplier(factors, settings) if factors else 1.0
    return breakdown.model_copy(
        update={
            "relevance": relevance,
            "lifecycle": factors,
            "lifecycle_factor": multiplier,
            "time_boost": boost,
            "final": fused * multiplier,
        }
    )

"""How strongly each retriever says a memory matches a query, on a scale that means the same in
every query: 0 is no evidence, 1 is as strong as that signal gets.

- Keyword evidence: the share of the query's informative words the memory contains (each query
  word weighted by how rare it is among the memories that matched any query word), scaled by the
  memory's BM25 score relative to the best keyword match. A memory holding every rare word of a
  short question scores near 1; one sharing a single common word scores near 0, whatever the
  store's BM25 scale is (SQLite's bm25 and PostgreSQL's ts_rank_cd differ by orders of magnitude).
  A long query (a whole conversation) can never be covered by one memory, so there the share of
  the memory's words found in the query counts too. Words shared with a memory that means
  something else (dense evidence near 0: "How many moons..." vs "so many cool people") are weak
  evidence, so keyword evidence counts fully only once the dense similarity agrees a little.
- Dense evidence: cosine similarity mapped linearly from the embedder's "unrelated" level
  (``floor``) to its "same meaning" level (``ceiling``), clipped to [0, 1]. Both depend on the
  embedding model and are settings (``search.dense_floor`` / ``search.dense_ceiling``). For the
  bundled USE model, relevant LoCoMo / MADial pairs have median cosine 0.30-0.40 and others
  0.17-0.22 (bench/ranking_data.py); floor 0.1 and ceiling 0.7 ranked best (bench/results).
- Text without words (emoji, symbols), or a lone token ("gz", "x"), has no dense evidence either way
  (:func:`has_meaning`).
- Scripts: a memory and a query that share no script (Han characters vs other letters) cannot
  share keywords, so keyword evidence is not expected of that memory (read/fuse.py).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from functools import lru_cache

from memstrata.answers import answer_words
from memstrata.han import HAN_CHAR, HAN_RANGES
from memstrata.indexing import unsaid_category_words
from memstrata.lexical import fts_terms, keyword_tokens
from memstrata.patterns import lazy_pattern

_HAN = HAN_CHAR
_OTHER_LETTER = lazy_pattern(rf"[^\W\d_{HAN_RANGES}]")


@lru_cache(maxsize=32_768)
def scripts(text: str) -> frozenset[str]:
    """Which writing systems a text uses, as far as keyword search is concerned: "han" and "letters"."""
    found = set()
    if _HAN.search(text):
        found.add("han")
    if _OTHER_LETTER.search(text):
        found.add("letters")
    return frozenset(found)


_WORD_CHARACTER = lazy_pattern(r"[^\W_]")


def has_words(text: str) -> bool:
    """False for text of emoji, symbols and punctuation only. The embedder reads no meaning into such
    text: every one of them lands near the same vector, about as similar to any query as an unrelated
    sentence (a stored '👍' came back for '茶' and 'weather tomorrow'), so its similarity is no evidence."""
    return _WORD_CHARACTER.search(text) is not None


_WORD_RUN = lazy_pattern(r"[^\W_]+")


def has_meaning(text: str, *, query: bool = False) -> bool:
    """:func:`has_words`, and enough of them for the embedder to place: one token alone ("gz", "ok2", "x") lands
    near every other lone token (cosine 0.77-0.97 among them), so a stored "gz" answered "piano" above "I play the
    violin" and "x" at relevance 0.62. A Chinese character means something ("茶"); otherwise a memory needs two
    words, and a query may be one (a search box's "piano") of three letters or more."""
    runs = _WORD_RUN.findall(text)
    if not runs:
        return False
    if len(runs) > 1 or _HAN.search(text):
        return True
    return query and len(runs[0]) > 2


def cross_script(query: frozenset[str], memory_text: str) -> bool:
    """True when query and memory share no script: keyword search cannot match them at all."""
    return bool(query) and not (query & scripts(memory_text))


def match_forms(tokens: Sequence[str]) -> list[str]:
    """The keyword index's terms for these tokens (porter stemming, case and diacritics folded): "ordering"
    matches "order" and "weekends" "weekend" here as they do in SQLite's keyword search, which found the
    memory (its evidence was 0 when only plurals were folded)."""
    return [term for terms in fts_terms(tokens) for term in terms]


def match_form(token: str) -> str:
    """One word's match form (see :func:`match_forms`); only for matching query words to memory words here."""
    return next(iter(match_forms([token])), token)


@lru_cache(maxsize=32_768)
def memory_terms(text: str) -> frozenset[str]:
    """The match forms of a memory's keyword tokens (cached: memories are searched again and again)."""
    return frozenset(match_forms(keyword_tokens(text)))


@lru_cache(maxsize=1024)
def query_terms(text: str) -> tuple[str, ...]:
    """The query's distinct match forms, in order (cached: one search reads them for ranking, time and deep)."""
    return tuple(dict.fromkeys(match_forms(keyword_tokens(text))))


def term_weights(terms: Sequence[str], matched: Sequence[frozenset[str]], population: int) -> dict[str, float]:
    """BM25's idf for each query term, counted among ``matched`` (the memories that hold any query
    term) out of ``population`` memories. A term no memory holds keeps the highest weight: the
    question asks for something the store does not have, and a match on the rest is partial."""
    total = max(population, len(matched), 1)
    weights = {}
    for term in terms:
        frequency = sum(1 for found in matched if term in found)
        weights[term] = math.log(1.0 + (total - frequency + 0.5) / (frequency + 0.5))
    return weights


LONG_QUERY_TERMS = 20  # from this many distinct terms on, a query is a conversation, not a question


def is_conversation(text: str) -> bool:
    """A whole conversation as the query (``LONG_QUERY_TERMS`` distinct terms or more), not a question."""
    return len(query_terms(text)) >= LONG_QUERY_TERMS


AGREEMENT_FLOOR = 0.3  # share of keyword evidence kept when the dense evidence is 0
AGREEMENT_AT = 0.25  # dense evidence from which keyword evidence counts fully


def _found(term: str, found: Collection[str]) -> bool:
    """``term`` is among ``found``, or is a Chinese name the segmenter glued to the next character: "张伟住在哪个城市"
    is cut "张伟住 / 在 / 哪个 / 城市", and a memory of "张伟" shared no term with it (a user trial: 0.013)."""
    if term in found:
        return True
    return len(term) >= 3 and HAN_CHAR.match(term) is not None and (term[:2] in found or term[:3] in found)


def keyword_coverage(weights: Mapping[str, float], found: Collection[str]) -> float:
    """The weighted share of query terms present in a memory's terms, in [0, 1]; for a long query,
    or the share of the memory's terms present in the query, whichever is larger."""
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    covered = sum(weight for term, weight in weights.items() if _found(term, found)) / total
    if len(weights) < LONG_QUERY_TERMS or not found:
        return covered
    return max(covered, sum(1 for term in found if term in weights) / len(found))


def keyword_evidence(coverage: float, score: float, best_score: float, dense: float | None) -> float:
    """Coverage scaled by the store's keyword score relative to the query's best keyword match
    (BM25 adds term frequency and length), and by how much the dense similarity agrees."""
    if best_score <= 0 or score <= 0:
        return 0.0
    agreement = AGREEMENT_FLOOR + (1.0 - AGREEMENT_FLOOR) * min(1.0, (dense or 0.0) / AGREEMENT_AT)
    return coverage * min(1.0, score / best_score) * agreement


def dense_evidence(similarity: float, floor: float, ceiling: float) -> float:
    """Cosine similarity mapped to [0, 1] between the embedder's unrelated and same-meaning levels."""
    if ceiling <= floor:
        raise ValueError("search.dense_ceiling must be greater than search.dense_floor")
    return min(1.0, max(0.0, (similarity - floor) / (ceiling - floor)))


def says_a_word_of(text: str, question: str) -> bool:
    """Whether ``text`` itself (with the category and answer words it is indexed with) holds a word of
    ``question``, not only the turns indexed beside it (read/memory units): "I drive a blue Tesla Model 3." matched
    "What am I allergic to?" on the allergy said the turn before it, and "thanks, that's all for now lol" matched
    "forget what I said about rock climbing" on the climbing (user trials)."""
    own = memory_terms(f"{text} {unsaid_category_words(text)} {answer_words(text)}")
    return bool(own & set(query_terms(question)))

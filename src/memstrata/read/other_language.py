"""A question's words that no memory of the scope says, asked by their other-language words that some memory says.

"What's my research area?" of a user who wrote "研究方向也转成 LLM agent 的长期记忆": no memory says "research" or
"area", and the bundled embedder puts the two at cosine 0.12, so the answer fell below the relevance cutoff and the
search returned nothing (a user trial). The glossary (CC-CEDICT, glossary.py) knows 研究 is "research"; the question is
then asked as "What's my research area? 研究".

Only a word the scope lacks is translated, and only into words the scope holds: a store in one language is asked
exactly as before (one keyword lookup finds none of the translations held), and a word the user wrote in the
question's own language keeps its own matches. Left alone too:
- the words the categories and relatives already ask in both languages (categories.py): "daughter" is asked by the
  names the user gave her (read/relatives.py), and 女儿 added beside put "我们女儿朵朵今年五岁，在幼儿园上学" above
  "朵朵上小学了，学校是莘庄实验小学" for "What school does my daughter go to?";
- a one-character Chinese word, either way: 打 is "hit", "play" and "call", 中 "China", "middle" and "hit the mark".
"""

from __future__ import annotations

from memstrata.categories import category_vocabulary, english_vocabulary
from memstrata.glossary import CANDIDATES, glossary
from memstrata.lexical import keyword_tokens
from memstrata.patterns import lazy_pattern
from memstrata.query import SearchQuery
from memstrata.storage.protocol import Store

_TRANSLATABLE = lazy_pattern(r"[a-z][a-z'-]{2,}|[\u4e00-\u9fff]{2,4}")  # a one-character word has too many senses
MOST_WORDS = 8  # a long message (a pasted conversation) is not a question whose every word needs translating
PER_WORD = 2  # held translations added per word


def asked_in_other_language(store: Store, query: SearchQuery, asked: str) -> str:
    """``asked`` (what the query asks, past the time it names: "recently" is a range, not a word to translate),
    followed by the held other-language words of each word of it the scope does not hold."""
    words = [word for word in dict.fromkeys(keyword_tokens(asked)) if translatable(word)]
    if not words or len(words) > MOST_WORDS:
        return asked
    offered = {word: [t for t in other_words(word) if t not in words] for word in words}
    offered = {word: found for word, found in offered.items() if found}
    # One lookup for everything the dictionary offers: in a store of one language none is held, and that is all
    every = sorted(
        {term for found in offered.values() for translation in found for term in keyword_tokens(translation)}
    )
    if not every or not _held(store, query, every):
        return asked
    added: list[str] = []
    for word, found in offered.items():
        if _held(store, query, [word]):
            continue
        held = [translation for translation in found if _held(store, query, keyword_tokens(translation))]
        added.extend(translation for translation in held[:PER_WORD] if translation not in added)
    return " ".join([asked, *added])


def other_words(word: str) -> list[str]:
    """The other language's words ``word`` is asked by (see the module for those left out)."""
    return [translation for translation in glossary().translations(word, CANDIDATES) if translatable(translation)]


def held(store: Store, query: SearchQuery, word: str) -> bool:
    """Whether some memory of the scope, under the query's filters, says ``word`` as a word (not only its characters,
    which a Chinese category word indexed with an English statement may hold: 生日 with a birthday)."""
    return _held(store, query, keyword_tokens(word))


def translatable(word: str) -> bool:
    return (
        bool(_TRANSLATABLE.fullmatch(word)) and word not in english_vocabulary() and word not in category_vocabulary()
    )


def _held(store: Store, query: SearchQuery, terms: list[str]) -> bool:
    return bool(terms) and bool(store.keyword_search(query.scope, terms, query.filters, 1))

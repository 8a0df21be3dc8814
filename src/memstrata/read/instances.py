"""A thing the question names in the other language's words, or by a rare name no memory of the scope says: asked
by its other name, or as its kind.

"How much metformin do I take?" shares no word with "医生把二甲双胍加到 850mg 了": the user named the medicine in
Chinese, the question in English, and the dictionary the read path translates words by (glossary.py, CC-CEDICT) has
neither name. A thing named by another word in each
language (a medicine, a breed, a car brand: same_names.py) is asked by both names. A rare English name with no known
other name (a medicine, a breed) that no memory of the scope holds, under the query's filters, is asked as its
category too: a statement naming an instance is indexed with its category's words in both languages (categories.py:
"medication medicine dose 药 药物 剂量"). An instance the scope does hold is asked as it is: "metformin" then means
that medicine, not every one.

Common words are left alone: a category's instances include "painting", "puppies" and "daughter", and a whole
conversation asked as a query names many (MADial en: recall@10 0.758 -> 0.749 when every instance no memory held
was asked as its kind, and "daughter" as one of the children made the kindergarten answer "What school does my
daughter go to?" in a user trial). So are Chinese words: the pairs cover the names asked across languages, and a
common word of either language is asked by its translations (read/other_language.py).
"""

from __future__ import annotations

from memstrata.categories import category_vocabulary, instances_named
from memstrata.lexical import has_han, search_terms
from memstrata.patterns import lazy_pattern
from memstrata.query import SearchQuery
from memstrata.read.english_words import english_words
from memstrata.same_names import has_a_pair, names_in_other_language
from memstrata.storage.protocol import Store

_LOWER_CASE_WORD = lazy_pattern(r"(?<![A-Za-z])[a-z][a-z'-]+|^[A-Z][a-z'-]+")
RARE = 1_500  # a word at most this frequent in English text (the dictionary's counts) is a rare name: "beagle" 452


def asked_by_other_names(store: Store, query: SearchQuery) -> str:
    """``query.text``, followed by the other language's name of each thing it names that has one, and by the words
    of each category it names an instance of by a rare name that has none and that no memory of the scope says (see
    the module)."""
    added = [names_in_other_language(query.text)]
    # Only the rare words can name a rare instance, and reading them alone spares reading the whole question with
    # every category (0.2 ms a question)
    # (a name inside the sentence, "Caroline", is capitalised; a medicine or a breed is not)
    said = _LOWER_CASE_WORD.findall(query.text)
    rare = " ".join(word for word, count in zip(said, english_words().frequencies(said), strict=True) if count <= RARE)
    for instance, words in instances_named(rare) if rare else ():
        lowered = instance.lower()
        if words in added or lowered in category_vocabulary() or has_a_pair(lowered) or not _rare_name(lowered):
            continue
        if not store.keyword_search(query.scope, search_terms(lowered), query.filters, 1):
            added.append(words)
    return " ".join(filter(None, [query.text, *added]))


def _rare_name(instance: str) -> bool:
    words = english_words()
    return not has_han(instance) and all(words.frequency(word) <= RARE for word in instance.split())

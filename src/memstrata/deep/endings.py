"""Later news that ends what a memory says of someone or something named: "We had to put Biscuit down this morning"
after "Our golden retriever Biscuit is 9 now", "Anna and I broke up" after "My girlfriend Anna loves hiking",
"团子去喵星了" after "我的猫叫团子".

The ending shares no word with the task that found the earlier memory ("Find a vet near home for my pets"), so no
search ranks it, and a context showed a dog put down two years before as the user's pet (a held-out trial). What
ties the two is the name, so the name is looked up: the keyword index, no embedding, one lookup per memory shown
that names someone or something. An ending counts where its own clause names the one the earlier memory named
("We had to put Biscuit down this morning. … Adam held his paw" ends Biscuit, not the cat Adam named), as the ended
one ("Anna's dog died" ends the dog, not Anna), said after the earlier memory and by the time the context is for.
"""

from __future__ import annotations

import re
from datetime import datetime

from memstrata.han import simplified
from memstrata.indexing import states_for_the_user
from memstrata.lexical import has_han, keyword_tokens
from memstrata.lifecycle.decay import said_at
from memstrata.modality import clauses, corrects, ends_or_corrects, sentences
from memstrata.query import Filters
from memstrata.read.spelling import is_common_word
from memstrata.storage.protocol import Store
from memstrata.types import MemoryItem, Scope

LOOKED_UP = 30  # memories the keyword index returns for a memory's names (a dog named in 12 turns)

# A Latin name: a capitalised word mid-sentence, or one English rarely writes ("Biscuit" is not among the 10,000
# commonest words; "Seal", the car, is); months, weekdays and "I" name times and the speaker.
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:-[A-Z][a-z]+)?\b")
_NOT_NAMES = re.compile(
    r"I|January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|Chinese|English"
)
# A Chinese name said as one: after 叫 / named / called, or right after the word for a pet or a partner
# ("我的猫叫团子", "we named her 饺子", "男朋友阿杰，", "我家狗豆豆是柯基").
_HAN_NAME = re.compile(
    r"(?:叫|名叫|取名|起名|名字是|\bname\s+is\s+|\bnamed\s+(?:him|her|it|them)?\s*|\bcalled\s+)([\u4e00-\u9fff]{2,3}?)(?=[，。！？,.!?\s(（]|是|的|$)"
    r"|(?:猫|狗|猫咪|狗狗|男朋友|女朋友|男友|女友|老公|老婆)([\u4e00-\u9fff]{2})(?=[，。！？,.!?\s(（]|是|$)",
    re.IGNORECASE,
)


def names_in(text: str) -> frozenset[str]:
    """The names a statement gives someone or something, as found in text (Latin ones as written)."""
    said = simplified(text)
    latin = set()
    for sentence in sentences(said):
        for found in _CAPITALISED.finditer(sentence):
            word = found.group()
            opening = not sentence[: found.start()].strip()
            if not _NOT_NAMES.fullmatch(word) and not (opening and is_common_word(word)):
                latin.add(word)
    han = {next(name for name in found.groups() if name) for found in _HAN_NAME.finditer(said)}
    return frozenset(latin | han)


def ends(later: MemoryItem, name: str) -> bool:
    """Whether a clause of ``later`` that ends or corrects (modality.ends_or_corrects), or one of a sentence that
    corrects, names ``name`` as the one ended: not as whose ("Anna's dog died"), nor as where, beside another one
    ended ("Snap Fitness in Sai Kung now, cancelled Anytime" ended the gym, not the home in Sai Kung)."""
    if not states_for_the_user(later):
        return False
    pattern = _name_pattern(name)
    for sentence in sentences(simplified(later.text)):
        for said in clauses(sentence):
            named = [
                found for found in pattern.finditer(said) if not said[found.end() :].startswith(("'s", "’s", "的"))
            ]
            # a correction may say so in the clause before ("我说错了，是 Tiong Bahru 不是 Tanjong Pagar")
            if named and (ends_or_corrects(said) or corrects(sentence)):
                return True
    return False


def _name_pattern(name: str) -> re.Pattern[str]:
    return re.compile(re.escape(name) if has_han(name) else rf"\b{re.escape(name)}\b")


class LaterNews:
    """Endings of memories in one ``scope`` under a query's ``filters`` (its time travel included), said by
    ``until``; each memory looked up once."""

    def __init__(self, store: Store, scope: Scope, filters: Filters, until: datetime) -> None:
        self._store, self._scope, self._filters, self._until = store, scope, filters, until
        self._found: dict[str, MemoryItem | None] = {}

    def ending(self, item: MemoryItem) -> MemoryItem | None:
        """The first memory said after ``item`` that ends one it names, if any."""
        if item.id not in self._found:
            self._found[item.id] = self._look_up(item)
        return self._found[item.id]

    def _look_up(self, item: MemoryItem) -> MemoryItem | None:
        names = names_in(item.text)
        if not names:
            return None
        tokens = [token for name in names for token in keyword_tokens(name)]
        found = self._store.keyword_search(self._scope, tokens, self._filters, LOOKED_UP)
        since = said_at(item)
        later = [
            other
            for other in self._store.get(self._scope, [hit.memory_id for hit in found])
            if other.id != item.id and since < said_at(other) <= self._until
        ]
        for other in sorted(later, key=said_at):
            if any(ends(other, name) for name in names):
                return other
        return None

"""The names a statement gives someone or something: "Biscuit", "Tanjong Pagar", "团子" of "我的猫叫团子". What ties
later news to the statement it ends (read/endings.py), and a question to the one it asks about (read/parting.py)."""

from __future__ import annotations

import re
from functools import lru_cache

from memstrata.graph.scripts import transliterates
from memstrata.han import simplified
from memstrata.lexical import has_han, jieba, keyword_tokens
from memstrata.modality import ENDING_WORDS, NEGATED, clauses, sentences
from memstrata.patterns import lazy_pattern
from memstrata.read.other_language import other_words, translatable
from memstrata.read.spelling import is_common_word

# A Latin name: a capitalised word mid-sentence, or one English rarely writes ("Biscuit" is not among the 10,000
# commonest words; "Seal", the car, is); months, weekdays and "I" name times and the speaker.
_CAPITALISED = lazy_pattern(r"\b[A-Z][a-z]+(?:-[A-Z][a-z]+)?\b")
# "User" and "Assistant" are how extracted facts name the speakers: "User quit Alibaba" ended "User is Daniel Wu" and
# every other fact of the user (a user trial).
_NOT_NAMES = lazy_pattern(
    r"I|January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|Chinese|English|User|Users|Assistant"
)
# A Chinese name said as one: after 叫 / named / called, or right after the word for a pet or a partner
# ("我的猫叫团子", "we named her 饺子", "男朋友阿杰，", "我家狗豆豆是柯基").
_HAN_NAME = lazy_pattern(
    r"(?:叫|名叫|取名|起名|名字是|\bname\s+is\s+|\bnamed\s+(?:him|her|it|them)?\s*|\bcalled\s+)([\u4e00-\u9fff]{2,3}?)(?=[，。！？,.!?\s(（]|是|的|$)"
    r"|(?:猫|狗|猫咪|狗狗|男朋友|女朋友|男友|女友|老公|老婆)([\u4e00-\u9fff]{2})(?=[，。！？,.!?\s(（]|是|$)",
    re.IGNORECASE,
)


def names_in(text: str) -> frozenset[str]:
    """The names a statement gives someone or something, as found in text (Latin ones as written, word by word:
    "Quit the Ruderverein" ends "the Leipziger Ruderverein")."""
    said = simplified(text)
    latin = {said[start:end] for start, end in latin_names(said)}
    han = {next(name for name in found.groups() if name) for found in _HAN_NAME.finditer(said)}
    return frozenset(latin | han)


def things_named(text: str) -> int:
    """How many things a statement names: capitalised words side by side are one ("Tanjong Pagar", "Wei Lan")."""
    said = simplified(text)
    spans = latin_names(said)
    runs = sum(1 for n, (start, _) in enumerate(spans) if n == 0 or said[spans[n - 1][1] : start] != " ")
    return runs + len(_HAN_NAME.findall(said))


# 35 us a text, asked of the same candidates by several steps of a search and across searches
@lru_cache(maxsize=32_768)
def latin_names(said: str) -> tuple[tuple[int, int], ...]:
    spans, position = [], 0
    for sentence in sentences(said):
        offset = said.find(sentence, position)
        position = offset + len(sentence)
        for found in _CAPITALISED.finditer(sentence):
            word = found.group()
            opening = not sentence[: found.start()].strip()
            # a word that itself ends is no name: "Cancelled 超级猩猩" was "ended" by "Cancelled the villa"
            ending = ENDING_WORDS.fullmatch(word) or NEGATED.fullmatch(word)
            if not _NOT_NAMES.fullmatch(word) and not ending and not (opening and is_common_word(word)):
                spans.append((offset + found.start(), offset + found.end()))
    return tuple(spans)


_LATIN = r"[A-Za-z\u00c0-\u024f]"
_HAN_WORD = lazy_pattern(r"[\u4e00-\u9fff]{2,4}")
# A Chinese name opening a turn that goes on in English: "林晓 started eating fish again"
_HAN_NAME_THEN_ENGLISH = lazy_pattern(r"[\u4e00-\u9fff]{2,3}(?=\s+[a-z])")


def opening_name(text: str) -> str | None:
    """The name ``text`` opens with: a capitalised word English writes rarely ("Dana", not "Started"), a pet name of
    one character said twice (朵朵), or a Chinese name before English words ("林晓 started eating fish again")."""
    first = next(iter(clauses(text)), "")
    opening = len(first) - len(first.lstrip())
    spans = latin_names(first)
    if spans and spans[0][0] == opening:
        return first[spans[0][0] : spans[0][1]]
    doubled = doubled_names(first[opening : opening + 2])
    if doubled:
        return doubled[0]
    han = _HAN_NAME_THEN_ENGLISH.match(first, opening)
    return han.group() if han else None


def named_in_other_script(han_words: frozenset[str], *texts: str) -> bool:
    """Whether a Latin name one of ``texts`` says is the pinyin of one of ``han_words`` (Chinese words, from any text):
    "用户成都的行程取消了" calls off "User booked flights to Chengdu for April" (a user trial); 林晓 is Lin Xiao."""
    latin = {said[start:end] for said in texts for start, end in latin_names(said)}
    return any(transliterates(han, name) for han in han_words if _HAN_WORD.fullmatch(han) for name in latin)


def name_pattern(name: str, flags: int = 0) -> re.Pattern[str]:
    """A name as a whole word; a Latin one may touch Chinese ("Leo是做什么的", where ``\\b`` finds no edge)."""
    return re.compile(re.escape(name) if has_han(name) else rf"(?<!{_LATIN}){re.escape(name)}(?!{_LATIN})", flags)


# A child's or a pet's pet name is often one character said twice (朵朵, 豆豆, 乐乐), which the segmenter tags as
# anything but a name; these doubled words are adverbs, verbs tried once ("帮我看看"), or greetings and laughter.
_DOUBLED = lazy_pattern(r"([\u4e00-\u9fff])\1")
_DOUBLED_WORDS = lazy_pattern(
    r"天天|常常|刚刚|慢慢|好好|渐渐|偏偏|往往|明明|个个|人人|悄悄|稍稍|仅仅|早早|白白|匆匆|默默|轻轻|久久|处处|时时"
    r"|样样|年年|月月|日日|每每|统统|通通|足足|整整|连连|频频|纷纷|暗暗|深深|紧紧|牢牢|远远|大大|快快|乖乖|哈哈|呵呵"
    r"|嘿嘿|看看|想想|试试|等等|听听|问问|说说|聊聊|找找|查查|算算|写写|走走|玩玩|尝尝|谈谈|讲讲|猜猜|逛逛|歇歇|坐坐"
    r"|练练|学学|读读|翻翻|比比|帮帮|谢谢|星星|拜拜"
)


def doubled_names(text: str) -> list[str]:
    """The doubled-character pet names ``text`` says: "朵朵几岁了？" asks about 朵朵."""
    said = simplified(text)
    return list(
        dict.fromkeys(found.group() for found in _DOUBLED.finditer(said) if not _DOUBLED_WORDS.fullmatch(found.group()))
    )


@lru_cache(maxsize=4096)  # asked of the same pairs of hits by several steps of a search (a glossary lookup a word)
def named_in_both(text: str, other: str) -> bool:
    """Whether one text's Chinese place names what the other names in English (the glossary): 日本 of "用户不再去日本"
    is the Japan of "Planning a trip to Japan next April" (the bundled model wrote the call-off down so, and it called
    nothing off; a user trial). Only a name counts on the English side (:func:`latin_names`: "User" opening a
    model's fact is no name for 用户), and only a place on the Chinese one (:func:`_a_place`)."""
    for han_side, latin_side in ((text, other), (other, text)):
        names = {latin_side[start:end].lower() for start, end in latin_names(latin_side)}
        if not names or not has_han(han_side):
            continue
        words = (word for word in dict.fromkeys(keyword_tokens(simplified(han_side))) if has_han(word))
        if any(names.intersection(other_words(word)) for word in words if translatable(word) and _a_place(word)):
            return True
    return False


@lru_cache(maxsize=4096)  # the names of the hits followed, search after search
def in_other_script(name: str) -> str | None:
    """The place as the other language writes it, where the glossary knows it (its first sense only): Japan is 日本,
    京都 is Kyoto. A person's name stays as it is: "Lily" is also 百合, the flower (:func:`_a_place`)."""
    if has_han(name):
        found = next(iter(other_words(name)), None) if _a_place(name) else None
        return found.capitalize() if found is not None and not has_han(found) else None
    found = next(iter(other_words(name.lower())), None)
    return found if found is not None and has_han(found) and len(found) >= 2 and _a_place(found) else None


def _a_place(han: str) -> bool:
    """The segmenter tags the word as one place name (ns): 日本, 京都, 成都; not 百合 (a lily), 山姆 (Sam)."""
    tagged = list(jieba().tag(han))
    return len(tagged) == 1 and tagged[0][1] == "ns"

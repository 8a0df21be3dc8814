"""Keyword tokens for Chinese, English and mixed text.

:func:`keyword_tokens` gives the words of a text: Chinese runs are segmented with rjieba in search mode
(which also emits the shorter words inside long ones: 北京市 -> 北京, 北京市), Latin text is lower-cased word
by word (an irregular form as its base word: bought -> buy), and stop words in both languages are dropped:
words such as 用户 / 的 / the appear in nearly every memory and only add noise and cost to BM25. The stop-word
and irregular-form lists are package data (``memstrata/data/*.txt``).

:func:`search_terms` is what the keyword index holds and a keyword query asks for: the words, plus the
characters of each Chinese word. jieba glues a one-character noun to its neighbour (我的猫叫团子 -> 猫叫,
团子), and a question that names the noun alone (猫的名字 -> 猫) must still find it. Index and query both go
through it, so they always agree; :data:`SEARCH_TERMS_VERSION` names it, so a keyword index built by an
earlier version is rebuilt (``storage/sql/store.py``).

Emoji are words too ("I love 🍕", "最喜欢🍓"), but FTS5 splits text on them like on punctuation: each one is
spelled as a term of letters and digits (🍕 -> ``emoji1f355``), so a query of emoji alone finds its memories.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from importlib.resources import files
from types import ModuleType

from memstrata.han import HAN_RANGES, HAN_RUN, simplified
from memstrata.patterns import lazy_pattern

_HAN = HAN_RANGES
_WORD = rf"[^\W_{_HAN}]+"
_EMOJI = r"\u2600-\u27bf\U0001f000-\U0001faff"  # the symbols, dingbats and pictographs blocks
_TOKEN = lazy_pattern(rf"[{_HAN}]+|[{_EMOJI}]|{_WORD}(?:[.+#'-]{_WORD})*", re.UNICODE)
_EMOJI_CHARACTER = lazy_pattern(rf"[{_EMOJI}]")
# An English clitic glued to its word: "dog's", "what's", "don't", "I'm", "we'll". Kept on, "dog's" was a term of its
# own, searched as the phrase "dog s", and "What's my dog's name?" did not find "My dog Rex...".
_CLITIC = lazy_pattern(r"(?:n't|'(?:s|t|m|d|ll|re|ve))$")
_HAN_RUN = HAN_RUN


def _word_list(name: str) -> frozenset[str]:
    """A packaged word list (``memstrata/data/<name>``): one word per line, ``#`` starts a comment."""
    text = files("memstrata").joinpath("data", name).read_text(encoding="utf-8")
    return frozenset(word for line in text.splitlines() if (word := line.split("#", 1)[0].strip()))


def _base_forms(name: str) -> dict[str, str]:
    """A packaged "form base" list (``memstrata/data/<name>``)."""
    text = files("memstrata").joinpath("data", name).read_text(encoding="utf-8")
    pairs = (line.split("#", 1)[0].split() for line in text.splitlines())
    return {pair[0]: pair[1] for pair in pairs if len(pair) == 2}


def _expansions(name: str) -> dict[str, tuple[str, ...]]:
    """A packaged "short word [word ...]" list (``memstrata/data/<name>``)."""
    text = files("memstrata").joinpath("data", name).read_text(encoding="utf-8")
    rows = (line.split("#", 1)[0].split() for line in text.splitlines())
    return {row[0]: tuple(row[1:]) for row in rows if len(row) > 1}


ENGLISH_STOP_WORDS = _word_list("stopwords_en.txt")
IRREGULAR_FORMS = _base_forms("irregular_en.txt")  # bought -> buy: porter stemming folds regular endings only
ABBREVIATIONS = _expansions("abbreviations_en.txt")  # bf -> bf boyfriend: said both ways in chat
CHINESE_STOP_WORDS = _word_list("stopwords_zh.txt")
STOP_WORDS = ENGLISH_STOP_WORDS | CHINESE_STOP_WORDS


@lru_cache(maxsize=1)
def jieba() -> ModuleType:
    """rjieba, imported on the first Chinese text: loading its dictionary is ~0.1 s of every command's start-up."""
    import rjieba

    return rjieba


# Characters jieba's guesser glues to an unknown name: 林浩在 / 林浩是 / 林浩说 / 问林浩. Such a word is in no
# dictionary, so "林浩是谁？" (林浩是) and "我弟弟林浩在深圳" (林浩在) shared no word and the name found nothing.
_GLUED_AFTER = frozenset("在是去说来要会也就都和跟与给对把被了过着的得吗呢吧啊呀还又才")
_GLUED_BEFORE = frozenset("问叫让给跟和对把被是在找请")


# A pronoun jieba's guesser glues to the verb after it: "我住哪里？" is 我住 / 哪里 and "我养了什么？" 我养 / 了, a
# word no statement of the user's says ("我现在住在西溪" is 我 / 现在 / 住 / 在), weighed as a rare word the answer
# lacks: with half its words unmatched, "我住哪里？" found nothing above the cutoff (a user trial).
_GLUED_PRONOUNS = frozenset("我你您他她它咱")


def _unglued(word: str) -> tuple[str, ...]:
    """``word``, or for a word of three or more characters the dictionary does not know, the name inside it and the
    function character glued at either end, as two words (kept glued, the question's 林浩是 weighed as a rare word
    the memory lacks); a pronoun glued to a one-character verb likewise."""
    if len(word) == 2 and word[0] in _GLUED_PRONOUNS and not jieba().has_word(word):
        return (word[0], word[1])
    if len(word) < 3 or jieba().has_word(word):
        return (word,)
    if word[-1] in _GLUED_AFTER:
        return (word[:-1], word[-1])
    if word[0] in _GLUED_BEFORE:
        return (word[0], word[1:])
    return (word,)


@lru_cache(maxsize=65536)
def _segment_han(run: str) -> tuple[str, ...]:
    return tuple(part for word in jieba().cut_for_search(run) for part in _unglued(word))


def folded(text: str) -> str:
    """The text as the keyword index reads it: NFKC (full-width "ＡＢＣ１２３" is "abc123", compatibility
    ideographs are the unified ones), Traditional characters as Simplified (過敏 is 过敏) and lower case, so a query
    finds a memory however it is written."""
    return simplified(unicodedata.normalize("NFKC", text)).lower()


# A name whose capitals join words: "iPhone", "MacBook", "AirPods", "WeChat", "PlayStation".
_JOINED = lazy_pattern(r"(?<![A-Za-z])(?:[a-z]+|[A-Z][a-z]+)(?:[A-Z][a-z]+)+(?![A-Za-z])")  # also beside Chinese
_JOINED_PART = lazy_pattern(r"[A-Z]?[a-z]+")


def _joined_words(text: str) -> dict[str, list[str]]:
    """Each name of joined words in ``text`` (lower case) with the words it joins, three letters or more and not stop
    words: "What phone do I use?" shares no word with "I use an iPhone" unless "iphone" also says "phone"."""
    if not any(character.isupper() for character in text):
        return {}
    joined = {}
    for found in _JOINED.finditer(unicodedata.normalize("NFKC", text)):
        parts = [part.lower() for part in _JOINED_PART.findall(found.group())]
        kept = [part for part in parts if len(part) > 2 and part not in STOP_WORDS]
        if kept:
            joined[found.group().lower()] = kept
    return joined


# Letters joined by hyphens: a word spelled with and without them ("check-up" / "checkups", "T-shirt" / "tshirt",
# "co-worker" / "coworker"). Numbers and dates keep theirs ("2022-03").
_HYPHENATED = lazy_pattern(r"[^\W\d_]+(?:-[^\W\d_]+)+")


def keyword_tokens(text: str) -> list[str]:
    """Tokens for keyword search, in text order, stop words removed, duplicates kept; a name of joined words is
    followed by the words it joins ("iphone phone"), a hyphenated word by its letters joined ("check-up checkup"), a
    chat abbreviation by its words ("bf boyfriend")."""
    tokens: list[str] = []
    joined = _joined_words(text)
    for match in _TOKEN.finditer(folded(text)):
        piece = match.group()
        if _HAN_RUN.fullmatch(piece):
            tokens.extend(word for word in _segment_han(piece) if word not in STOP_WORDS)
        elif _EMOJI_CHARACTER.fullmatch(piece):
            if unicodedata.category(piece) == "So":  # a pictograph; skin tones and other modifiers add nothing
                tokens.append(f"emoji{ord(piece):x}")
        elif (word := _CLITIC.sub("", piece)) not in STOP_WORDS:
            tokens.append(IRREGULAR_FORMS.get(word, word))
            tokens.extend(ABBREVIATIONS.get(word, ()))
            tokens.extend(joined.get(word, ()))
            if _HYPHENATED.fullmatch(word):  # "check-up" is also "checkup", as "checkups" and "e-mail"/"email" are
                tokens.append(word.replace("-", ""))
    return tokens


# 1: words only; 2: words, then the characters of each Chinese word; 3: emoji spelled as terms; 4: NFKC folded;
# 5: English clitics dropped ("dog's" is "dog"), indefinite pronouns and "now" are stop words; 6: irregular English
# forms read as their base word ("bought" is "buy"); 7: a statement of change indexed with the words of the questions
# it answers (answers.change_answers: "moved to" with "live"), and 现在/目前/哪里 are stop words as now/where are;
# 8: so are the user's own breakup, divorce and a habit given up ("我和阿杰分手了" with "boyfriend 男朋友 …");
# 9: statements of where someone lives or works with the words asked in both languages (answers.answer_words);
# 10: a plan in one clause no longer keeps the next clause's change from counting; joining, transfers, settling in;
# 11: a new home said without "move" ("got the keys to our place", "新家") is a move; 12: facts written of "User" /
# "用户" read as the user's own, and "换到…工作" is a new job; 13: a new partner or a wedding of the user's own is a
# change, and so is a job left or a business of one's own; "I work as a nurse" says where one works; 14: the user's
# own plan of change is indexed with the words of what it will answer once done (indexing.keyword_text); 15: a name
# of joined words is followed by the words it joins ("iPhone": "iphone phone"); 16: a statement naming an instance of
# a category is followed by the category's words ("beagle puppy": "pet pets 宠物", memstrata.categories); 17: a
# hyphenated word is followed by its letters joined ("check-up checkup"); 18: a name jieba glued to a function character
# is also a word of its own (林浩在: 林浩, 在), 时候 (of 什么时候, "when") is a stop word, and a relative named in a
# text of both languages is also named in the other one ("My 表弟 Jason": "cousin", memstrata.categories); a
# promotion at a company says where one works, and a dog or cat breed names a dog or a cat; 19: Traditional characters
# are read as Simplified (過敏 is 过敏), in the words and in the word lists (categories, relatives, plans); "I start at
# Alibaba", "I quit Alibaba" and "去一家公司当…" are statements of a new job; a car is also a vehicle (交通工具, 座驾);
# 20: what one says of oneself is also said in the other language's word (生日 birthday, 手机 phone, 大学 university,
# 职位 title, 地址 address, 邮箱 email; memstrata.categories); a car bought, a pet taken in and a promotion are
# statements of change (the car driven, the pets had and the title held now); 21: where one works named in Latin
# letters inside Chinese ("在 Zalando 做 engineer") says where one works, and a change with a state says both; 22: a
# favourite (最爱, fav), one's partner ("Got engaged to Ana", "seeing Ana") and a pastime taken up name their category,
# and a favourite said to be new ("最近最爱吃的是日料") and a subjectless "Got engaged" are statements of change; a chat
# abbreviation is followed by its words ("bf boyfriend", data/abbreviations_en.txt); 23: a favourite food names food
# in both languages (食物 菜 吃 food dish meal), and "go-to" is a favourite; 24: pescatarian, keto, "no meat" and
# 戒糖 / 生酮 / 全素 / 纯素 name a diet, and "ph", "tel", "dob" are chat abbreviations; 25: whom one reports to names
# a manager (boss, 老板, 领导), "Promoted!" is a new title, and 累成狗 / 单身狗 name no pet; 26: a gym named by its
# chain or class (pilates, 超级猩猩), and 理想L6 / 问界 / 极氪 are cars ("Bought a 理想L6" is the car driven now); 27: a
# new manager is a change ("My new boss is Marta", "换了个上司", "From next month I report directly to the CTO"); 28:
# what one earns names pay (265k base, 月薪), a new number, pay, diet or go-to (最常去) is a change, renting somewhere
# is where one lives and "a Stripe employee" where one works, and a studio's move, a move not made (不搬来) or 搬家前
# are no move of the user's; 29: a change or a state inside quotes is someone's words, not the speaker's; 30: "going
# fully vegetarian", "not strictly veggie anymore", 回到全素 are changes of diet; 31: the vegetarian category adds
# "vegetarian 吃素" alone; 32: a cat or a dog named in one language is indexed with its word in the other; 33: "so I
# report to Dr. 周慧 now" is a new manager (a title's period ends no sentence); 34: "Married!", "Engaged!" and "I
# proposed to Jing" name one's partner; 35: another's engagement as they told it ("佳佳說她跟男友訂婚了") names no
# partner of the user's, and a date ("third date", 约会) names one's partner; 36: one's own wedding names one's
# partner ("Hannah and I got married"), and 谁 is a stop word as "who" is; 37: a street address
# names an address, and a lease signed, keys collected or a first proper night somewhere are a move; 主管 is a
# manager, "Reporting to Isla" said first a new one, and a first week at a firm a new job; 38: a Chinese address
# (2号楼801) or a street written whole (Vijverhofstraat 41), 房子在, 第一天去…上班, "New UK mobile:", a club joined by
# name, a sum in k (£88k) as pay; 39: a proposal to the user (跟我求婚), one's wedding held (办完婚礼) and "I asked
# Yvonne to marry me" name one's partner and are a change; 40: a gym joined is a change ("Joined Leith Links Leisure");
# 41: a German street (Osterstraße, Karl-Heine-Straße) is an address, 和…在一起 names a partner, 钥匙拿到了 is a
# move and a move argued over (谁搬去谁那边) none; 42: a fact (not a raw turn) names a partner in the other script
# too ("User's boyfriend is a firefighter": 男朋友 男友), and "I've been dating …" names a partner; 43: the age
# someone turns ("She turns 6 in July", "满5岁") answers when their birthday is; 44: a role begun ("starting May 5 as a
# staff engineer", a plan until the day it names) or an offer accepted is a new job; 45: a child's school (幼儿园,
# 小学, 上学) is a school, rent or a mortgage (房租, 租金) what a home costs, "moving in with" a planned move, and a
# later clause that turns to someone named ("Also Arjun got a job") no change of the speaker's; a dose or a common
# medicine (850mg, 二甲双胍, amlodipine) names a medication, and a dose raised or lowered is a change; 46: days of the
# week a thing recurs on (每周二, Thursday to Sunday) are a schedule, programming languages a category, and "allergic"
# is read as "allergy" (diabetic, asthmatic, pregnancy likewise); 47: a pronoun glued to a verb is two words (我住 is
# 我 住)
SEARCH_TERMS_VERSION = "47"


@lru_cache(maxsize=65536)
def _han_characters(run: str) -> tuple[str, ...]:
    return tuple(
        character
        for word in jieba().cut(run)
        if len(word) > 1 and word not in STOP_WORDS
        for character in word
        if character not in STOP_WORDS
    )


def search_terms(text: str) -> list[str]:
    words = keyword_tokens(text)
    if not has_han(text):
        return words
    return words + [character for run in _HAN_RUN.findall(folded(text)) for character in _han_characters(run)]


def index_document(text: str) -> str:
    """The space-joined terms stored in the keyword index."""
    return " ".join(search_terms(text))


def has_han(text: str) -> bool:
    return _HAN_RUN.search(text) is not None


FTS_TOKENIZE = "porter unicode61 remove_diacritics 2"  # memory_fts's tokenizer (SQLite schema step 1)


class TermSplitter:
    """Each space-separated token of a keyword document, as the FTS5 terms it becomes (cached per token)."""

    def __init__(self, tokenize: str = FTS_TOKENIZE) -> None:
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        self._conn.execute(f"CREATE VIRTUAL TABLE scratch USING fts5 (x, tokenize = '{tokenize}')")
        self._conn.execute("CREATE VIRTUAL TABLE scratch_terms USING fts5vocab (scratch, instance)")
        self._known: dict[str, tuple[str, ...]] = {}
        self._lock = threading.Lock()

    def terms(self, tokens: Sequence[str]) -> list[tuple[str, ...]]:
        missing = [token for token in dict.fromkeys(tokens) if token not in self._known]
        if missing:
            with self._lock:
                self._split(missing)
        return [self._known[token] for token in tokens]

    def _split(self, tokens: list[str]) -> None:
        self._conn.executemany("INSERT INTO scratch (rowid, x) VALUES (?, ?)", enumerate(tokens, start=1))
        found: dict[int, list[str]] = {}
        for doc, term in self._conn.execute("SELECT doc, term FROM scratch_terms ORDER BY doc, offset"):
            found.setdefault(doc, []).append(term)
        self._conn.execute("DELETE FROM scratch")
        for number, token in enumerate(tokens, start=1):
            self._known[token] = tuple(found.get(number, ()))


_FTS_TERMS = TermSplitter()  # shared by ranking evidence and the PostgreSQL keyword index (one cache)


def fts_terms(tokens: Sequence[str]) -> list[tuple[str, ...]]:
    """Each token as the terms SQLite's FTS5 index makes of it (porter stemming, case and diacritics folded)."""
    return _FTS_TERMS.terms(tokens)

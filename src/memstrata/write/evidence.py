"""What ties a new fact to a stored memory, independent of any model: close meaning, a shared name or word,
or a shared everyday topic (where someone lives, works, what they drink, their pet, their car ...).

The bundled 1.5B model, asked about two Chinese facts on different topics ("用户下周去成都出差" / "用户喜欢喝乌龙茶"),
sometimes answers "contradicts". A memory is therefore only ever closed when the engine sees its own evidence
that the two are about the same thing; without it the pair is not even asked about.
"""

from __future__ import annotations

import re
from functools import cache

from memstrata.lexical import keyword_tokens
from memstrata.patterns import lazy_pattern
from memstrata.read.evidence import memory_terms

# Everyday topics people update. Over-inclusive on purpose: a topic only allows a question, the judge answers it.
_TOPICS: dict[str, re.Pattern[str]] = {
    name: lazy_pattern(pattern, re.I)
    for name, pattern in {
        "home": r"住|搬|老家|房子|公寓|定居|"
        r"\b(live[sd]?|living|mov(e|ed|ing)|relocat\w*|apartment|house|home|based in)\b",
        "work": r"工作|上班|公司|跳槽|离职|入职|辞职|任职|退休|实习|岗位|职位|开发|工程师|程序员|设计师|经理|运营|"
        r"销售|老师|医生|护士|律师|会计|科学家|分析师|研究员|架构师|"
        r"\b(jobs?|work(s|ed|ing)?|employ\w*|company|hired|career|quit|retired?|scientist|analyst|researcher|"
        r"position|intern\w*|engineer|developer|designer|manager|nurse|teacher|doctor|lawyer|accountant)\b",
        "drink": r"喝|茶|咖啡|酒|饮料|\b(drinks?|drinking|tea|coffee|beer|wine|water|juice|latte|espresso)\b",
        # not 素 alone: 青霉素 (penicillin) is no diet
        "diet": r"吃|素食|肉|辣|香菜|饮食|"
        r"\b(eats?|eating|vegan|vegetarian|meat|steak|fish|spicy|food|diet|coriander)\b",
        "health": r"过敏|烟|酒|病|药|\b(allerg\w*|smok\w*|cigarettes?|vap\w*|sick|illness|medication)\b",
        "pet": r"猫|狗|宠物|\b(cats?|dogs?|pets?|pupp(y|ies)|kittens?)\b",
        "vehicle": r"车|特斯拉|比亚迪|摩托|\b(cars?|driv\w*|tesla|bmw|toyota|honda|motorbike|scooter|bike)\b",
        "exercise": r"健身|跑步|游泳|运动|瑜伽|爬山|\b(gym|run(s|ning)?|swim\w*|workout|yoga|hik\w*|marathon)\b",
        "partner": r"男朋友|女朋友|老公|老婆|丈夫|妻子|结婚|离婚|分手|恋爱|单身|\b(single|married|boyfriend|girlfriend|"
        r"husband|wife|divorc\w*|dating|broke up|engaged)\b",
        "device": r"手机|电脑|笔记本|\b(phones?|iphone|android|pixel|laptop|computer|macbook|thinkpad)\b",
        "season": r"冬天|夏天|春天|秋天|\b(winter|summer|spring|autumn)\b",
        # "用户换号码了，新号码是…" changes "用户手机号是…", with no word in common (号码 / 手机号; a user trial)
        "contact": r"号码|电话|手机号|微信号?|邮箱|\b(phone|mobile|cell|telephone|e-?mail|wechat|whatsapp)\b",
        "travel": r"旅游|旅行|出差|度假|机票|签证|\b(trips?|travel\w*|vacation|holidays?|flights?|visa|tour(s|ing)?)\b",
        "name": r"叫|名字|\b(name[sd]?|called)\b",
        "study": r"学习|上学|课程|学校|大学|专业|考试|幼儿园|小学|中学|年级|大班|中班|小班|"
        r"\b(stud(y|ies|ying)|course|class(es)?|school|university|degree|kindergarten|grade)\b",
        # "User corrected the age of 朵朵 to 5" is no change of "朵朵在上海的星光幼儿园上大班" (a user trial)
        "age": r"\d\s*岁|几岁|年龄|多大|\b(ages?|aged|\d+\s+years?\s+old|turns? \d+)\b",
    }.items()
}

# Words every fact shares: they tie nothing together.
# "no longer" / "不再" say that something changed, not what: "User no longer drinks oolong tea" is no change of
# "User no longer eats meat".
# Nor does a verb of liking: "User loves coffee" was closed by "User's golden retriever Biscuit loves the snow".
_GENERIC = frozenset({"user", "user's", "用户", "助手", "assistant", "now", "现在", "also", "还", "很", "喜欢", "like",
                      "likes", "love", "loves", "loved", "enjoy", "enjoys", "prefer", "prefers", "really", "爱", "热爱",
                      "喜爱", "一个", "一只", "longer", "anymore", "不再", "已经", "再也",
                      # when, how much, with whom: "之前" tied "用户之前是误诊" to an unrelated memory, which it closed
                      "之前", "以前", "以后", "最近", "一直", "所有", "一起", "计划", "打算", "准备",
                      # "last" tied "User's cat 团子 died last week" to "User moved … last month", and closed the home
                      "last", "next", "week", "weeks", "month", "months", "year", "years", "day", "days", "ago",
                      "yesterday", "today", "tomorrow", "tonight", "weekend", "recently", "news", "sad"})  # fmt: skip
# Topics a person holds several of at once: allergies and illnesses, pets, drinks, foods, sports, studies, trips. A
# second one is no change of the first ("I'm allergic to penicillin too" closed the peanut allergy, "我不再吃素了" the
# favourite ramen: a user trial).
MANY_VALUED = frozenset({"health", "pet", "drink", "exercise", "study", "season", "diet", "travel"})


def content_words(text: str) -> set[str]:
    """Keyword tokens (stop words removed) of two characters or more, without the words every fact shares."""
    return {t for t in keyword_tokens(text) if len(t) > 1 and t not in _GENERIC}


def shared_words(a: str, b: str) -> set[str]:
    return content_words(a) & content_words(b)


def topics_of(text: str) -> set[str]:
    return {name for name, pattern in _TOPICS.items() if pattern.search(text)}


def shared_topics(a: str, b: str) -> set[str]:
    return topics_of(a) & topics_of(b)


# Words that name a kind of thing, not the thing: two allergies share "allergic", two drinks "drinks".
_KIND_WORDS = frozenset({"allergic", "allergy", "allergies", "过敏", "drink", "drinks", "drinking", "eat", "eats",
                         "pet", "pets", "宠物", "study", "studies", "学习", "play", "plays", "has", "have", "own",
                         "owns", "named", "called"})  # fmt: skip


@cache
def _not_a_thing() -> frozenset[str]:
    """The match forms of those words: read on first use, since segmenting the Chinese ones loads jieba's
    dictionary (~0.17 s of every command's start-up otherwise)."""
    return frozenset(memory_terms(" ".join(_GENERIC | _KIND_WORDS)))


# One thing said in words that share no match form, in either language: a diet of no meat is "吃素", "素食者", "全素",
# "vegetarian" ("用户不再吃素" did not end "用户是素食者", nor "User is vegetarian": a user trial).
_ONE_THING = ((lazy_pattern(r"吃素|素食|全素|\b(?:vegetarian|vegan|veggie)\b", re.I), "·vegetarian"),)


def same_things(a: str, b: str) -> set[str]:
    """The match forms both share besides those naming a kind ("allergic", "drinks") or saying when: what says the
    two are about one thing ("smoke" of "quit smoking" and "smokes five a day", "咖啡"), not two of one kind."""
    shared = {term for term in memory_terms(a) & memory_terms(b) if len(term) > 1 and term not in _not_a_thing()}
    return shared | {thing for pattern, thing in _ONE_THING if pattern.search(a) and pattern.search(b)}


def evidence(new: str, old: str, similarity: float, close: float) -> str | None:
    """Why the two may be about the same thing, or None: similarity at least ``close``, a shared word or name,
    or a shared topic."""
    if similarity >= close:
        return f"similar ({similarity:.2f})"
    words = shared_words(new, old)
    if words:
        return "shared words: " + ", ".join(sorted(words))
    topics = shared_topics(new, old)
    if topics:
        return "shared topic: " + ", ".join(sorted(topics))
    return None

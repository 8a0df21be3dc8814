"""Whose statement a memory is, and whom a question asks about: the user, someone else, or not told.

Ranking puts the user's own statements first for a question about the user (read/own_first.py), keeps another's
news from replacing the user's state (read/takes_back.py, read/newer.py) and shows only the user's own word in the
context's profile (deep/profile.py). Read from the start of a statement: its subject ("我妈住在成都", "Tom's
car…", "朵朵的芒果过敏好像好了"), after the words that open a turn ("Also", "对了") and a short answer ("About two.").
"""

from __future__ import annotations

import re
from functools import lru_cache

from memstrata.graph.vocabulary import EN_FAMILY, FAMILY, SHORT_KIN
from memstrata.han import simplified
from memstrata.indexing import states_for_the_user
from memstrata.lexical import has_han, jieba
from memstrata.patterns import lazy_pattern
from memstrata.read.names import doubled_names, opening_name
from memstrata.read.spelling import is_common_word
from memstrata.types import MemoryItem

# People a speaker names by their relation: the relatives and contacts the graph knows (graph/vocabulary.py), and
# others it gives no relation of its own.
_RELATION_EN = "|".join(
    [
        rf"(?:{'|'.join(EN_FAMILY.values())})s?",
        r"buddy|buddies|pals?|bestie|bff|roomies?|roommates?|co-?workers?|siblings?|mum|parents|children",
        r"boyfriend|girlfriend|fianc[eé]e?|neighbou?rs?|cousins?|aunt|uncle|grand(?:ma|mother|pa|father|parents)",
        r"teachers?|classmates?|teammates?|family|partners?|spouses?|significant\s+other",
        r"grand(?:sons?|daughters?|child(?:ren)?|kids?)|(?:daughters?|sons?)-in-law|in-laws",
    ]
)
_RELATION_ZH = "|".join(
    [
        *FAMILY.values(),
        "好友|闺蜜|哥们|发小|同学|姐妹|兄弟|爸妈|父母|对象|男朋友|女朋友|邻居|室友|老师|家人|另一半|爱人",
        "表哥|表姐|表弟|表妹|堂哥|堂姐|叔叔|阿姨|舅舅|姑姑|奶奶|爷爷|外婆|外公",
        "嫂子|姐夫|妹夫|弟媳|公公|婆婆|岳父|岳母|侄子|侄女|外甥",
        # a grandchild's allergy was shown as the user's own ("用户孙子对花生过敏", a user trial)
        "孙子|孙女|外孙女?|孙辈|儿媳妇?|女婿",
    ]
)
# The one-character forms after 我 (graph/vocabulary.SHORT_KIN): "我哥…" was read as the user's own news.
_MY_SHORT_RELATION_ZH = f"我(?:的|家)?{SHORT_KIN}"
# A name in the question ("Where does Tom live?", "Tom的生日"): the question may be about them.
# A capitalised word inside the sentence names someone, unless it names a time: "Where did I work in June 2023?"
# was read as a question about June, and the user's employer key did not answer it. A weekday or a holiday is always
# a time; a month (May, June and April are names too) where a time is said: "in June", "last May", "June 2023".
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December|Sept?|Jan|Feb|Mar|" \
    "Apr|Jun|Jul|Aug|Oct|Nov|Dec"  # fmt: skip
ALWAYS_TIMES = lazy_pattern(
    r"\b(?:(?:Mon|Tues?|Wednes|Thu(?:rs)?|Fri|Satur|Sun)day|Christmas(?:\s+Eve)?|Easter|Thanksgiving|Halloween"
    r"|New\s+Year(?:'s)?(?:\s+(?:Eve|Day))?)\b"
)
# A name a time is told by, not whom the question asks about: "What was my job before Stripe?" asks of the user, and
# put what was said of Stripe above the job it asks for (a user trial).
NAMED_AS_A_TIME = lazy_pattern(r"\b(?:before|after|since|until|till)\s+(?-i:[A-Z])[\w&.-]*", re.IGNORECASE)
MONTH_AS_TIME = lazy_pattern(
    rf"\b(?:in|on|at|last|this|next|since|until|till|by|of|during|early|late|mid|before|after|from|through)"
    rf"(?:\s+(?:early|late|mid))?[\s-]+(?:{_MONTHS})\b|\b(?:{_MONTHS})\.?\s+\d",
    re.IGNORECASE,
)
CAPITALISED = lazy_pattern(r"(?<![.!?]\s)(?<!^)\b(?!I\b)[A-Z][a-z]+\b|[A-Za-z]+的")


def _names_someone(query: str) -> bool:
    """A capitalised word inside the sentence that is no time, or a Latin word before 的."""
    return CAPITALISED.search(MONTH_AS_TIME.sub(" ", ALWAYS_TIMES.sub(" ", query))) is not None


_NAMES_ANOTHER = lazy_pattern(
    rf"\b(?:{_RELATION_EN})\b|{_RELATION_ZH}|{_MY_SHORT_RELATION_ZH}|\b(?:he|she|they|him|her|them)\b|他|她", re.I
)
# A subject at the start of the statement (after a speaker, "Lin: "): who the statement is about.
_ABOUT_ANOTHER = lazy_pattern(
    rf"^(?:(?:my|our|user's)\s+(?:\w+\s+)?(?:{_RELATION_EN})\b|(?:he|she|they|his|her|their)\b"
    rf"|(?!user's)[A-Z][a-z]+'s\b|(?:我的?|我们的?|用户的?)?(?:{_RELATION_ZH})|{_MY_SHORT_RELATION_ZH}|他|她"
    rf"|(?!user的)[A-Za-z]+的)",
    re.IGNORECASE,
)
# Someone and the user together at the start are the user's news too: "My girlfriend Mei and I did dim sum" answers
# "Who was I dating in 2021?", and was passed as another's statement by the user's "Telling my manager…" (0.12).
_WITH_THE_USER = lazy_pattern(
    r"^(?:(?:[Mm]y|[Oo]ur)\s+\w+\s+)?(?:[A-Z][\w-]*\s*(?:\([^)]{0,20}\)\s*)?)+and\s+(?:I|me)\b"  # "Hannah and I"
    r"|^(?:[Mm]y|[Oo]ur)\s+\w+\s+and\s+I\b"  # "My wife and I"
    r"|^(?:(?![说想要会让叫给告问])[^，。！？；：\s]){1,6}?(?:和|跟|与)我(?!的)"
)
# A fact the model wrote is about "User" / "用户" (prompts/extract_facts.py).
_ABOUT_THE_USER = lazy_pattern(r"^(?:i\b|i'm\b|i've\b|i'd\b|my\b|me\b|user\b|我(?!们)|用户)", re.IGNORECASE)
FIRST_PERSON = lazy_pattern(r"\b(?:i|my|me|mine|i'm|i've)\b|我", re.IGNORECASE)


# A question about what the assistant said ("What did you recommend for my trip?") asks for a reply.
ASKS_THE_REPLY = lazy_pattern(
    r"\byou\s+(?:said|say|suggest|recommend|told|tell|mention)|[你您](?:说|建议|推荐|提到)", re.IGNORECASE
)


@lru_cache(maxsize=1024)  # asked once per key among a search's candidates, and by several steps of one search
def asks_about_the_user(query: str) -> bool:
    """A question in the first person that names no one else ("What am I allergic to?", "我住在哪里？")."""
    return (
        bool(FIRST_PERSON.search(query))
        and not _NAMES_ANOTHER.search(query)
        and not _names_someone(query)
        and not ASKS_THE_REPLY.search(query)
    )


# "my" / "我" before a relation says whose relative, not that the question is also about the speaker.
_MY_RELATION = lazy_pattern(
    rf"\b(?:my|our)\s+(?:\w+\s+)?(?:{_RELATION_EN})\b|我(?:的|们的?|家的?)?(?:{_RELATION_ZH})|{_MY_SHORT_RELATION_ZH}",
    re.IGNORECASE,
)


def asks_only_about_another(query: str) -> bool:
    """A question about someone else, by relation or pronoun, and not about the user as well: "My mom lives in which
    city?", "她住在哪？"; not "Does my mom live near me?" or "Where do I live?". A name may be the user's own (an
    agent asks "Where does Alice live?" of user "u42"), so a name alone does not tell."""
    if not _NAMES_ANOTHER.search(query):
        return False
    return not FIRST_PERSON.search(_MY_RELATION.sub(" ", query))


# A statement that opens with a quote is the news of whoever said it: "“I finally moved to Dubai,” Karim said on the
# phone" ranked among the user's homes for "Where do I live?" (a held-out trial).
_QUOTE_FIRST = lazy_pattern(
    r"^[“\"「『][^”\"」』]{1,200}[”\"」』]\s*[,，:：]?\s*(?:—\s*)?(?P<who>[^,，.。!！?？\s](?:[^,，.。!！?？]{0,30}?))\s*"
    r"(?:said|says|told|wrote|texted|messaged|说|讲|告诉|写)",
    re.IGNORECASE,
)


# Someone's life event said first by their name is theirs: "阿梨生了个儿子" (a friend's baby, read as the user's news
# for "我有孩子吗？" in a held-out trial), "Mia had a baby girl"; not the household's ("女儿出生了", "老婆怀孕了").
ANOTHERS_EVENT = lazy_pattern(
    r"^\s*(?!女儿|儿子|孩子|宝宝|老婆|老公|媳妇)(?:(?!我)[^，。！？,.!?\s]){1,4}?(?<!出)(?:生了|怀孕|订婚|结婚|领证)"
    r"|^\s*(?-i:[A-Z][a-z]+)\s+(?:had\s+(?:a|her|his|their)\s+(?:baby|son|daughter)|(?:is|got)\s+(?:pregnant|engaged|married))",
    re.IGNORECASE,
)


# Words that open a turn before its subject: "Also my mom moved back to Edison" is the mother's news, and it passed the
# assistant's "Noted: hard cheese is fine, still no milk." for "Can I drink milk?" as the user's own (a user trial).
_OPENING_WORDS = lazy_pattern(
    r"^(?:(?:also|and|plus|oh|btw|by\s+the\s+way|anyway|ok(?:ay)?|well|(?:quick\s+)?update)\b(?!-)[\s,:;!.]*)+"
    r"|^(?:另外|还有|对了|而且|顺便说一下|哦|噢)[\s，,：:]*",
    re.IGNORECASE,
)


# A short answer to the assistant's question that opens a turn before its news: "About two. Also my mom is moving in
# with us next month" (the dog's age asked) is the mother's news (a user trial). An answer word or a number opens it:
# news without a subject ("Got promoted! My boss …", "搬家了！我妈来帮忙") is the speaker's own.
_SHORT_ANSWER = lazy_pattern(
    r"^(?:(?:yes|yeah|yep|yup|no|nope|sure|maybe|about|around|probably|roughly|thanks|haha|lol)\b|\d)"
    r"[\w'’-]*(?:\s+[\w'’-]+){0,2}\s*[.!,]\s*(?=\S)"
    r"|^(?:好的|好|是的|是|对|嗯|没有|不是|还行|谢谢)[。！，,]\s*(?=\S)",
    re.IGNORECASE,
)


@lru_cache(maxsize=32_768)  # 50 us a text; the same candidates come back across searches (10k-memory bench: 6 times)
def subject(text: str) -> str | None:
    """ "user", "another", or None when the statement's start does not tell (read as Simplified: "我媽…"); the words
    that open a turn before its subject ("Also", "对了"), and a short answer that says none ("About two."), are
    passed over."""
    said = _OPENING_WORDS.sub("", simplified(text).strip())
    found = _subject_at_the_start(said)
    if found is None and _SHORT_ANSWER.match(said):
        found = _subject_at_the_start(_OPENING_WORDS.sub("", _SHORT_ANSWER.sub("", said, count=1)))
    return found


def _subject_at_the_start(said: str) -> str | None:
    quoted = _QUOTE_FIRST.match(said)
    if quoted:
        return "user" if quoted.group("who").lower() in ("i", "我") else "another"
    if _WITH_THE_USER.match(said):
        return "user"
    if ANOTHERS_EVENT.match(said):
        return "another"
    another = _ABOUT_ANOTHER.match(said)
    if (another and not _a_things(another.group())) or _named_first(said) or _named_then_their_pronoun(said):
        return "another"
    if _han_name_first(said):
        return "another"
    if _ABOUT_THE_USER.match(said):
        return "user"
    return None


# Someone named first, then where they work or live: "Lily works at Alibaba" tied with the user's own job for "Where
# do I work?" and, newer, came first (a user trial). No one says "works" of themselves; "moved" or "joined" after a
# name no dictionary holds ("Anna moved to Paris"; not "Finally moved to Berlin"). Other news of someone named may
# be the user's too ("Sophie is leaving. From next month I report to the CTO").
_NAME_THEN_VERB = lazy_pattern(
    r"^(?P<name>[A-Z][a-z]+)(?:\s+[A-Z][a-z]+)?\s+(?:(?P<theirs>works|lives|teaches|studies|stays)|moved|joined)\b"
)


# Someone named first, then called she or he: "林晓 started eating fish again, she says she's pescatarian now" was read
# as the user's own diet, and "可乐 ate a sock … He's fine now" as the user's mishap (a user trial).
_THIRD_PERSON = lazy_pattern(r"\b(?:she|he|her|his|him)\b|[他她它]", re.IGNORECASE)


def _named_then_their_pronoun(said: str) -> bool:
    return opening_name(said) is not None and _THIRD_PERSON.search(said) is not None


def _named_first(said: str) -> bool:
    found = _NAME_THEN_VERB.match(said)
    return found is not None and (found.group("theirs") is not None or not is_common_word(found.group("name").lower()))


def _han_name_first(said: str) -> bool:
    """A Chinese name opening the statement as its subject: a pet name said twice before what they did or have
    ("朵朵的芒果过敏好像好了", "豆豆对芒果过敏"), or a name the segmenter knows before 的 ("张伟的车坏了").
    "朵朵的芒果过敏好像好了" ranked as the user's own above the user's "我有高血压" for "我有什么病？" (a user trial);
    Latin names before 的 were read already (_ABOUT_ANOTHER)."""
    if not has_han(said[:1]) or said.startswith(("我", "用户")):
        return False
    if doubled_names(said[:2]) and _SAYS_MORE.match(said, 2):
        return True
    first = next(iter(jieba().tag(said[:12])), None)  # 12 characters: enough for a name and what follows
    return first is not None and first[1] == "nr" and said[len(first[0]) : len(first[0]) + 1] == "的"


_SAYS_MORE = lazy_pattern(r"[^\s，。！？,.!?：:、]")


def _a_things(opening: str) -> bool:
    """ "Number's" in "Number's 720-555-0172 now" (the user's number): a common word's 's that names no relative
    is no one's ("Mom's", "Yvonne's" are)."""
    if not opening.endswith("'s"):
        return False
    word = opening[:-2]
    return _RELATIVE_WORD.fullmatch(word) is None and is_common_word(word)


_RELATIVE_WORD = lazy_pattern(rf"{_RELATION_EN}|mom|dad|mama|papa", re.IGNORECASE)


def whose(item: MemoryItem) -> str | None:
    """:func:`subject` of a memory; a user's own turn that names no one else is about the user, as speakers leave
    themselves out ("开始在蔚来做战略了", "Started at Loomly today"). A reply is the assistant's word, not what the
    user said of themselves: "下次再去京都吧！" and "Nice car!" carry the user's turn as context and tied it."""
    if not states_for_the_user(item):
        return "another"
    found = subject(item.text)
    if found is None and item.kind == "episode" and item.metadata.get("role") == "user":
        return "user"
    if found is None and _extracted(item):
        # the model copied the turn's words and left the speaker out as the turn did: "医生说优甲乐加到75微克了"
        # replaced the 50 µg of "医生让我每天吃一片优甲乐" and lost its place to that turn, the user's own (a trial)
        return "user"
    return found


# The kinds the write path gives what it takes from a conversation (write/facts.kind_of); a summary of a session is
# none of them.
_EXTRACTED_KINDS = frozenset({"fact", "preference", "event", "relationship", "plan", "procedure"})


def _extracted(item: MemoryItem) -> bool:
    """A fact the write path took from the conversation (not a summary of it, nor a memory added as given)."""
    return item.kind in _EXTRACTED_KINDS and item.provenance.source == "messages"

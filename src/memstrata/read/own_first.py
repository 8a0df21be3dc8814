"""A question about the user answered by what the user said of themselves before what they said of others.

"What am I allergic to?" matched "My colleague Anna is allergic to shellfish" on every word and "我对花生过敏" on
meaning alone, so the colleague's allergy came first; "我住在哪里？" found "我妹妹住在成都" above "I live in Hangzhou".
A question in the first person that names nobody else asks about the user: a statement about the user ranking close
below a statement about someone else (a relative, a friend, a colleague; "Tom's ...", "他...") moves above it, the
way read/newer.py moves a later statement up. Close: within ``MARGIN`` of its score (a statement of change: within
half, read/move_up.py), or as close in meaning (the other's lead is then words both share). A clearly better match
about someone else keeps its place, and a memory whose subject cannot be told (an extracted fact, a plain
sentence) is neither. Pets are not "someone else": "我的猫叫团子" is the user's answer to "我养了什么宠物？".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from functools import lru_cache
from itertools import groupby

from memstrata.graph.vocabulary import EN_FAMILY, FAMILY, SHORT_KIN
from memstrata.han import simplified
from memstrata.indexing import category_text, own_index_text, states_for_the_user
from memstrata.lexical import has_han, jieba
from memstrata.lifecycle.decay import said_at
from memstrata.modality import ends_or_corrects
from memstrata.patterns import lazy_pattern
from memstrata.read.evidence import memory_terms, query_terms
from memstrata.read.move_up import means_as_much, move_up, within_reach
from memstrata.read.names import doubled_names, named_in_other_script, opening_name
from memstrata.read.spelling import is_common_word
from memstrata.types import MemoryItem, SearchHit

MARGIN = 0.25  # a statement about the user at most this share below one about someone else answers first
# A statement naming the one a question asks about, below one of the user's own that does not name them: the user's
# own matches on the topic's words alone ("Bought a car finally" for "What car does Feng drive?", 0.33 to 0.21).
THEIRS_MARGIN = 0.5

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
_ALWAYS_TIMES = lazy_pattern(
    r"\b(?:(?:Mon|Tues?|Wednes|Thu(?:rs)?|Fri|Satur|Sun)day|Christmas(?:\s+Eve)?|Easter|Thanksgiving|Halloween"
    r"|New\s+Year(?:'s)?(?:\s+(?:Eve|Day))?)\b"
)
# A name a time is told by, not whom the question asks about: "What was my job before Stripe?" asks of the user, and
# put what was said of Stripe above the job it asks for (a user trial).
_NAMED_AS_A_TIME = lazy_pattern(r"\b(?:before|after|since|until|till)\s+(?-i:[A-Z])[\w&.-]*", re.IGNORECASE)
_MONTH_AS_TIME = lazy_pattern(
    rf"\b(?:in|on|at|last|this|next|since|until|till|by|of|during|early|late|mid|before|after|from|through)"
    rf"(?:\s+(?:early|late|mid))?[\s-]+(?:{_MONTHS})\b|\b(?:{_MONTHS})\.?\s+\d",
    re.IGNORECASE,
)
_CAPITALISED = lazy_pattern(r"(?<![.!?]\s)(?<!^)\b(?!I\b)[A-Z][a-z]+\b|[A-Za-z]+的")


def _names_someone(query: str) -> bool:
    """A capitalised word inside the sentence that is no time, or a Latin word before 的."""
    return _CAPITALISED.search(_MONTH_AS_TIME.sub(" ", _ALWAYS_TIMES.sub(" ", query))) is not None


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
_ASKS_THE_REPLY = lazy_pattern(
    r"\byou\s+(?:said|say|suggest|recommend|told|tell|mention)|[你您](?:说|建议|推荐|提到)", re.IGNORECASE
)


@lru_cache(maxsize=1024)  # asked once per key among a search's candidates, and by several steps of one search
def asks_about_the_user(query: str) -> bool:
    """A question in the first person that names no one else ("What am I allergic to?", "我住在哪里？")."""
    return (
        bool(FIRST_PERSON.search(query))
        and not _NAMES_ANOTHER.search(query)
        and not _names_someone(query)
        and not _ASKS_THE_REPLY.search(query)
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


def own_before_others(hits: Sequence[SearchHit], query_text: str, *, margin: float = MARGIN) -> list[SearchHit]:
    if not asks_about_the_user(query_text):
        return list(hits)

    asked = frozenset(query_terms(query_text))

    def answers_instead(hit: SearchHit, above: SearchHit) -> bool:
        if whose(above.memory) != "another" or whose(hit.memory) != "user":
            return False
        if within_reach(hit, above, margin) or means_as_much(hit, above):
            return True
        # The other's matches the question only on its category's words, and the user's own on those too: its lead
        # is its length (BM25), not a better match. "朵朵的芒果过敏好像好了" led "用户的高血压…" for "我有什么病？",
        # both matching on 病 alone (the health category's word), 0.38 to 0.20 (a user trial).
        theirs = asked & memory_terms(category_text(above.memory))
        if not theirs or asked & memory_terms(own_index_text(above.memory)):
            return False
        return theirs <= _words_asked(hit.memory, asked) and within_reach(hit, above, THEIRS_MARGIN)

    return move_up(hits, answers_instead, best=lambda hit: hit.score)


def _words_asked(item: MemoryItem, asked: frozenset[str]) -> frozenset[str]:
    return asked & memory_terms(f"{own_index_text(item)} {category_text(item)}")


def theirs_before_own(
    hits: Sequence[SearchHit], query_text: str, *, margin: float = THEIRS_MARGIN, names: tuple[str, ...] = ()
) -> list[SearchHit]:
    """The mirror of :func:`own_before_others`: a question about someone named ("What car does Feng drive?", "我哥住在
    哪？") answered by what was said of them before what the user said of themselves. "Bought a car finally — a used
    Corolla" matched on "car" and led "My brother Feng … now drives a Polestar 2" (found by a user trial). Close as
    there: within ``margin``, or as close in meaning. ``names``: those the scope gives the relatives asked about
    (read/relatives.py: "Correction: Emma is a nurse" is about "my sister")."""
    named = people_named(query_text, names)
    if not named:
        return list(hits)

    def answers_instead(hit: SearchHit, above: SearchHit) -> bool:
        if whose(above.memory) != "user" or _has_a_speaker(above):
            return False
        if mentions(named, above, query_text) or not mentions(named, hit, query_text):
            return False
        if not states_for_the_user(hit.memory):  # a reply echoes the user: "Lucky you, a chef boyfriend!" above
            return False  # "my bf 阿杰 is a chef" for "Who was my boyfriend in 2022?" (a user trial)
        if said_at(above.memory) > said_at(hit.memory) and ends_or_corrects(above.memory.text):
            # the user's later ending or call-off is not passed by what it may end: "Planning a trip to Japan …,
            # probably Kyoto" names the Kyoto of "Are we still going to Kyoto?" (read as someone named) and passed
            # "用户不再去日本" (a user trial)
            return False
        return within_reach(hit, above, margin) or means_as_much(hit, above)

    return move_up(hits, answers_instead, best=lambda hit: hit.score)


def named_first(hits: Sequence[SearchHit], query_text: str, *, margin: float = MARGIN) -> list[SearchHit]:
    """A "who" question about the user's people ("Who is my girlfriend?", "我女朋友是谁？") asks for a name: a hit that
    names someone (a capitalised Latin word inside the sentence, or a Chinese name jieba tags as one: 阿杰) answers
    before one that does not, where the two are within ``margin``. "lol my gf just beat me at mario kart AGAIN" led
    "Who was my girlfriend in 2021?" over "我女朋友Priya下周生日" once "gf" was read as girlfriend (a held-out user
    trial)."""
    if not (_WHO.search(query_text) and FIRST_PERSON.search(query_text)):
        return list(hits)

    def answers_instead(hit: SearchHit, above: SearchHit) -> bool:
        named, unnamed = _gives_a_name(hit.memory.text), _gives_a_name(above.memory.text)
        return named and not unnamed and within_reach(hit, above, margin)

    return move_up(hits, answers_instead, best=lambda hit: hit.score)


_WHO = lazy_pattern(r"^\s*(?:who|whom)\b|是谁|谁是", re.IGNORECASE)
# A capitalised Latin word inside a sentence, Chinese beside it or not ("我女朋友Priya下周生日"), that is no time.
_LATIN_NAME = lazy_pattern(r"(?<![A-Za-z])(?<!^)(?<![.!?]\s)(?!I\b)[A-Z][a-z]{1,20}(?![A-Za-z])")


def _gives_a_name(text: str) -> bool:
    if _LATIN_NAME.search(_MONTH_AS_TIME.sub(" ", _ALWAYS_TIMES.sub(" ", text))):
        return True
    return has_han(text) and any(tag == "nr" for _, tag in jieba().tag(text))


def _has_a_speaker(hit: SearchHit) -> bool:
    """A turn of a transcript between named people (LoCoMo's Caroline and Melanie) is its speaker's, not the user's
    own: nothing tells which speaker the user is. There, a question about Melanie answered by what Melanie said
    before what Caroline said cost LoCoMo's questions that ask one speaker about what the other did (adversarial
    nDCG@10 0.697 -> 0.550)."""
    return bool(hit.memory.metadata.get("speaker"))


def mentions(named: re.Pattern[str], hit: SearchHit, question: str = "") -> bool:
    """The memory names them, or they said it (a turn by Caroline is hers though it does not say her name), or it
    names one by the category's words ("so I report to the CEO, Sarah Kim" names the user's manager:
    indexing.category_text). With the ``question`` that named them, also in the other script: "用户成都的行程取消了"
    names what "Are we going to Chengdu?" asks about (read/names.named_in_other_script; a user trial)."""
    item = hit.memory
    if named.search(own_index_text(item)) is not None or named.search(category_text(item)) is not None:
        return True
    return bool(question) and named_in_other_script(frozenset(memory_terms(item.text)), question)


@lru_cache(maxsize=1024)
def topic_terms(query: str) -> tuple[str, ...]:
    """The question's words less those naming the people it asks about: what it asks of them. "我哥哥住在哪個城市？"
    asks where he lives; "我哥去年年底结婚了" and "我哥养了一只金毛" share only 哥 with it and, as that matched
    both alike, the later one moved up as if it answered for the same reasons (read/newer.py). A partner's or a
    boss's word stays: the role's holder may change."""
    named = people_named(query)
    # "us" is the speaker's household, not what is asked: "Does my mom live with us?" asks where she lives, and
    # "my mom is moving in with us" matched it on "us" where her later "moved back to Edison" did not (a user trial)
    passed = _ASPECT if _THE_US.search(query) else _ASPECT | {"us"}
    return tuple(
        term
        for term in query_terms(query)
        if term not in passed and (named is None or not named.search(term) or _ROLE.search(term))
    )


_THE_US = lazy_pattern(r"\b(?:US|U\.S\.?|USA)\b")


# Words of whether a state goes on, not of the state: "Am I still vegetarian?" asks of the diet, and "Honestly great.
# Still eat eggs and cheese." matched it on "still" alone, so the later "back to eating chicken and fish" did not
# answer for the same reasons and stayed below it.
_ASPECT = frozenset({"still", "anymore", "currently", "again"})


# A partner or a boss is whoever holds the role now: "认识了一个新男朋友" answers "我男朋友是做什么的？" instead of
# the one before, for the word the question names him by; "My manager is Sophie Wu" (2023) answers "Who is my boss?"
# instead of the manager of 2021, which led on its words alone.
_ROLE = lazy_pattern(
    r"男朋友|女朋友|对象|老婆|老公|妻子|丈夫|太太|爱人|另一半|老板|领导|上司|经理"
    r"|\b(?:boyfriend|girlfriend|wife|husband|partner|spouse|boss|manager|supervisor)s?\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=1024)
def people_named(query: str, names: tuple[str, ...] = ()) -> re.Pattern[str] | None:
    """What a memory about the people a question asks of says: their names (also ``names``, those the scope gives
    the relatives it asks about), or their relation to the user in either language ("my brother": brother, 哥哥,
    我哥…); None for a question about the user or about no one."""
    if asks_about_the_user(query) or _ASKS_THE_REPLY.search(query):
        return None
    timeless = _NAMED_AS_A_TIME.sub(" ", _MONTH_AS_TIME.sub(" ", _ALWAYS_TIMES.sub(" ", query)))
    said = [match.group().removesuffix("的") for match in _CAPITALISED.finditer(timeless)]
    said += doubled_names(timeless)  # "朵朵几岁了？" asks of 朵朵: the name is whom it asks about, not what (a trial)
    # a name as a whole word: "Tom" is not in "tomorrow"
    words = [_as_word(name) for name in [*said, *names] if name.lower() not in _NOT_NAMES]
    words += [said_so for asked, said_so in _KIN if asked.search(query)]
    return re.compile("|".join(words), re.IGNORECASE) if words else None


# Relatives and others by their words in both languages and the one character said after 我: the one a question asks
# about, not any relative ("我妈以前是做什么的？" took "我妹去成都了…" for a statement about the mother, and it
# answered above hers).
def _kin(english: str, chinese: str, short: str = "") -> str:
    return "|".join([rf"\b(?:{english})s?\b", chinese, *([f"我(?:的|家)?[{short}]"] if short else [])])


_SPLIT = ("sibling_of", "child_of")  # the graph's groups, asked of one by one here
# A boyfriend or girlfriend is asked about as a spouse is: "What does my boyfriend do?" was read as a question about
# no one, "我男朋友是做什么的？" as one about a friend, and the user's own job answered them (a user trial).
_DATING = _kin("boyfriend|girlfriend|bf|gf", "男朋友|女朋友|男友|女友|我的?对象")  # not "Python 对象"
_ONE_BY_ONE = (
    _kin("brother", "哥哥|弟弟", "哥弟"),
    _kin("sister", "姐姐|妹妹", "姐妹"),
    _kin("father|dad", "父亲|爸爸|老爸", "爸"),
    _kin("mother|mom|mum", "母亲|妈妈|老妈", "妈"),
    _DATING,
    *(_kin(english, FAMILY[relation]) for relation, english in EN_FAMILY.items() if relation not in _SPLIT),
)
# (what asks about them, what says them): parents are either
_KIN = (
    *((lazy_pattern(said, re.IGNORECASE), said) for said in _ONE_BY_ONE),
    (lazy_pattern(r"\bparents\b|爸妈|父母", re.IGNORECASE), "|".join([r"\bparents\b|爸妈|父母", *_ONE_BY_ONE[2:4]])),
)


def _as_word(name: str) -> str:
    return rf"\b{re.escape(name)}\b" if name.isascii() else re.escape(name)


_NOT_NAMES = frozenset({"what", "where", "who", "when", "which", "how", "why", "does", "did", "is", "are", "was"})


def later_of_equals_first(hits: Sequence[SearchHit], query_text: str, names: tuple[str, ...] = ()) -> list[SearchHit]:
    """Hits of one score, the later said first (the user's own first, for a question about the user). A hit moved up
    takes the score of the one it passes (read/move_up.py), so hits that each answer instead of the same one tie
    with it, in the order they were moved: an imported history answered "我的手机号是多少？" with the number of
    2023 above the one of 2025 that replaced it (0.385 each). For a question about someone named or a relative,
    what names them first (``names`` as in :func:`theirs_before_own`)."""
    about_the_user = asks_about_the_user(query_text)
    named = people_named(query_text, names)

    def order(hit: SearchHit) -> tuple[bool, datetime]:
        own = about_the_user and whose(hit.memory) == "user"
        return own or (named is not None and mentions(named, hit, query_text)), said_at(hit.memory)

    ordered: list[SearchHit] = []
    for _, tied in groupby(hits, key=lambda hit: hit.score):
        ordered.extend(sorted(tied, key=order, reverse=True))
    return ordered

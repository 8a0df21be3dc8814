"""The user's standing facts for a context: what holds now of the things most tasks depend on.

A task shares no word with the facts it needs: "Book a table for dinner Friday" with "我对花生过敏" or "I'm vegan
now", "Draft an email to my manager" with "I report to Sarah Kim", "Plan a family weekend" with the children's
names. Searched on the task's words alone, these scored about 0 and a context of 600 tokens held 250, filled with
chatter (a user trial with 56 agent tasks: 0.63 of the facts each task needed). So ``context`` also asks the
scope a few standing questions, one search each through the one search path (newer statements first, the relevance
cutoff, time travel as the request's), and shows the user's own answers in a profile block, after what the task
matched and within a share of the budget (deep/assemble.py).

Only the user's own word counts: not a reply, not a turn of a transcript between named speakers. Of the user's
family (partner, children, pets) a statement about them does ("Our daughter Sofia turned 5"), not one about someone
else's ("過年回嘉義，我媽養了一隻柴犬叫阿福", "阿梨生了个儿子", "佳佳說她跟男友訂婚了") nor a family only imagined
("要是生的是女儿的话就叫小满"), and none that later news ended (read/endings.py: "We had to put Biscuit down",
"Anna and I broke up"); of the user's own state
(allergies, diet, home, work) only one that says it of the user in a first-person word ("I", "my", 我, 用户), or a
change the user tells without one ("Unpacked the last box in Denver"):
- not someone else's news ("我姐对芒果过敏");
- not one without a first-person word ("晓雯 is allergic to mango" was shown as the user's allergy in a held-out
  trial), nor one that opens with a name ("Yvonne asked where to live in 上海, I said anywhere near line 9" was
  shown as the user's home);
- not another's words the user quotes ("Yvonne: 「我對蝦子過敏」").

The block holds a fifth of the budget, four or five facts at 600 tokens, so the questions are asked in the order the
task needs them: allergies first (a meal goes wrong without them), then the rest by how close in meaning each
question is to the task ("帮我订迪士尼的家庭套票，全家都去" asks for the partner and the children before the home).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from memstrata.answers import change_answers, unquoted
from memstrata.categories import ILLNESS_WORDS, kinds_named
from memstrata.errors import ProviderError
from memstrata.han import simplified
from memstrata.indexing import states_for_the_user
from memstrata.lexical import has_han
from memstrata.lifecycle.decay import said_at
from memstrata.modality import CONDITIONAL, ENDED_WORDS
from memstrata.patterns import lazy_pattern
from memstrata.providers.protocol import Embedder
from memstrata.query import SearchQuery
from memstrata.read.evidence import says_a_word_of
from memstrata.read.named_keys import asks_for_key
from memstrata.read.newer import replacement
from memstrata.read.spelling import is_common_word
from memstrata.read.takes_back import ends_or_corrects_it
from memstrata.read.whose import ANOTHERS_EVENT, FIRST_PERSON, whose
from memstrata.types import MemoryItem, SearchHit


@dataclass(frozen=True)
class Standing:
    english: str
    chinese: str
    most: int  # answers kept: one where a newer one replaces the older (a home), more where they add up (allergies)
    family: bool = False  # about the user's family: a statement about them counts, not only one about the user
    # asked in both languages: "用户也对芒果过敏" was not among the first answers to "What am I allergic to?" (a
    # turn of thanks indexed beside the allergy was), and an English task's context left the mango allergy out
    both_languages: bool = False
    # what stays true however long ago it was said (a child, a chronic illness): its answers need relevance, not a
    # score that decay has lowered (see MIN_SCORE); the family's are so too
    lasting: bool = False
    # words by which a task names what the question is about: such a task needs its answer before the others
    named_by: str = ""


_FAMILY_WORDS = r"family|families|household|全家|家人|家庭|一家|几口人"
STANDING = (
    Standing("What am I allergic to?", "我对什么过敏？", 3, both_languages=True),  # a meal goes wrong on one left out
    Standing(
        "What is my diet?",
        "我的饮食有什么忌口？",
        1,
        named_by=r"dinner|lunch|breakfast|meals?|restaurants?|food|recipes?|cook|餐厅|饭店|吃饭|晚饭|午饭|菜谱|做饭|外卖",
    ),
    # an exercise plan, a trip or a doctor's visit goes wrong on a condition left out: "Suggest an exercise routine
    # that is safe for me" showed neither the asthma nor the neck trouble of the user's history (a user trial)
    Standing(
        "What health conditions do I have?",
        "我有什么健康问题？",
        3,
        lasting=True,
        named_by=r"exercise|workout|gym|fitness|doctor|hospital|health|运动|锻炼|健身|医院|医生|看病|体检|健康",
    ),
    Standing("Where do I live now?", "我现在住在哪里？", 1, named_by=r"near\s+(?:me|home)|nearby|附近|家门口"),
    Standing(
        "Where do I work now?",
        "我现在在哪里工作？",
        1,
        named_by=r"boss|manager|colleagues?|coworkers?|office|领导|老板|上司|同事|公司|请假",
    ),
    Standing(
        "Who is my partner?",
        "我另一半是谁？",
        1,
        family=True,
        named_by=rf"wife|husband|girlfriend|boyfriend|partner|anniversary|老婆|老公|妻子|丈夫|女朋友|男朋友|对象|纪念日|{_FAMILY_WORDS}",
    ),
    Standing(
        "Do I have kids?",
        "我的孩子",
        2,
        family=True,
        named_by=rf"kids?|children|child|sons?|daughters?|孩子|儿子|女儿|小孩|{_FAMILY_WORDS}",
    ),
    Standing(
        "What pets do I have?", "我养了什么宠物？", 2, family=True, named_by=r"pets?|dogs?|cats?|vet|宠物|狗|猫|兽医"
    ),
)
ANSWERS_SEARCHED = 5  # hits asked of each question: the user's own answer may follow another's
# An answer scores at least this ("我的孩子" found "儿童节快乐，我也是宝宝" at 0.19; answers scored 0.24-0.63 in a
# trial). Of the family, its relevance does: a child or a partner named long ago still is one ("Our son Theo started
# first grade", relevance 0.21, score 0.15, was left out of a family task), while a home or a job said long ago has
# likely changed, and the decay that lowers its score keeps it out.
MIN_SCORE = 0.2
# The family's floor, on relevance: "女儿出生了！六斤八两，大名骆知夏" (a long turn) scored 0.18 for "Do I have kids?"
# and was left out while a friend's baby passed; the family filter (_anothers_family) now keeps others' news out.
FAMILY_MIN = 0.15


def standing_facts(
    search: Callable[[SearchQuery], list[SearchHit]],
    query: SearchQuery,
    shown: Iterable[str] = (),
    embedder: Embedder | None = None,
    ended: Callable[[MemoryItem], bool] = lambda item: False,
    keys: Sequence[MemoryItem] = (),
) -> list[SearchHit]:
    """The user's own answers to :data:`STANDING`, asked in the request's language (category words are indexed in
    both), in the request's scope, filters and time; none already ``shown`` (memory ids), each once, none that
    later news has ``ended`` (read/endings.py: a dog put down, a partner left). With an ``embedder``, in the order
    the task needs them (:func:`by_need`). ``keys``: the key facts the context shows; one the question names is the
    user's current value and takes an answer's place ("tom:employer: Fernwood Labs": "I live in Boston and work …
    at Acme Corp.", said years before, was shown beside it as the user's job in a user trial)."""
    seen = set(shown)
    turns: set[str] = set()  # the turns the kept answers were said in
    found = []
    chinese = has_han(query.text)
    for standing in STANDING if embedder is None else by_need(embedder, query.text, chinese=chinese):
        text = standing.chinese if chinese else standing.english
        asked = [text, standing.english if chinese else standing.chinese] if standing.both_languages else [text]
        found_by: dict[str, tuple[SearchHit, str]] = {}  # each hit as the question that scored it best found it
        for question in asked:  # relevance is calibrated: the lists merge on their scores
            for hit in search(
                query.model_copy(update={"text": question, "limit": ANSWERS_SEARCHED, "threshold": None})
            ):
                if hit.id not in found_by or hit.score > found_by[hit.id][0].score:
                    found_by[hit.id] = (hit, question)
        hits = sorted((hit for hit, _ in found_by.values()), key=lambda hit: -hit.score)
        # the first answers, shown already or not: where one replaces another, the next one is the older value
        answers = [hit for hit in hits if _enough(hit, standing) and _answers(hit.memory, standing)]
        answers = [hit for hit in answers if not _borrowed(hit, found_by[hit.id][1]) and not _gone(hit, standing)]
        if standing is STANDING[0]:
            answers = [hit for hit in answers if not _another_condition(hit.memory.text)]
        answers = _still_held(answers, hits, text)
        # a condition over ("湿疹终于好了") ends what it was said of, from anywhere in the list
        answers = [hit for hit in answers if not _ended_later(hit, hits)]
        kept: list[SearchHit] = []
        most = standing.most - sum(asks_for_key(text, item.key or "", query.scope.user_id) for item in keys)
        for hit in answers:
            # a fact drawn from a turn says what the turn says: a re-trial showed "我还对芒果过敏。" and
            # "用户对芒果过敏" both, and the two places held for allergies left the peanut allergy out
            said = set(hit.memory.provenance.message_ids)
            if len(kept) >= most or ended(hit.memory) or (said and said <= turns):
                continue
            kept.append(hit)
            turns |= said
        found += [hit for hit in kept if hit.id not in seen]
        seen |= {hit.id for hit in kept}
    return found


def _still_held(answers: list[SearchHit], hits: list[SearchHit], question: str) -> list[SearchHit]:
    """The answers, each that a later hit of the question takes back (read/newer.py) in the place of the one that
    does: "我对花生过敏" was shown as the user's allergy after "其实我不是对花生过敏，医生说我是对芒果过敏", and "I'm
    allergic to shellfish" after "Actually 不是 shellfish allergy，是 crab 过敏" (a user trial), where the search had
    ranked the correction first but the profile kept up to three allergies."""
    held: list[SearchHit] = []
    for hit in answers:
        instead = replacement(hit, hits, question)
        if instead is None:
            held.append(hit)
        elif instead not in held and whose(instead.memory) != "another" and states_for_the_user(instead.memory):
            held.append(instead)
    return held


_ALLERGY = lazy_pattern(r"allerg|过敏", re.IGNORECASE)


def _another_condition(text: str) -> bool:
    """A health condition that says no allergy is no answer to "What am I allergic to?": "我有哮喘，换季的时候容易犯"
    came first in a profile as the user's allergy, on meaning alone (a user trial). A reaction said without the word
    ("海鲜不能吃，吃了会起疹子") names no condition and stays."""
    return ILLNESS_WORDS in kinds_named(text) and _ALLERGY.search(text) is None


def _ended_later(hit: SearchHit, hits: list[SearchHit]) -> bool:
    """Whether the same question found a later ending of it: "湿疹终于好了，医生说不用再涂药了" after "我有湿疹，冬天
    特别严重", "Gastritis is gone, doctor cleared me" after "My gastritis is back" (a user trial showed both
    conditions in the profile)."""
    return any(
        said_at(other.memory) > said_at(hit.memory)
        and ENDED_WORDS.search(other.memory.text) is not None
        and ends_or_corrects_it(other.memory, hit.memory, by_category=False)  # not "Gastritis is gone" of an allergy
        for other in hits
        if other is not hit
    )


def _gone(hit: SearchHit, standing: Standing) -> bool:
    """A family member's end is no standing fact: a re-trial showed "Sad news: my cat 团子 died last week." as the
    user's pet; nor is an illness over ("我的湿疹终于好了"). (Of the user's own state an ending often says the new one:
    "我现在不吃鱼了，回到全素".)"""
    return (standing.family or standing.lasting) and ENDED_WORDS.search(hit.memory.text) is not None


def _borrowed(hit: SearchHit, question: str) -> bool:
    """Whether the hit matched the question's words only through the turns indexed beside it (read/memory units):
    "I drive a blue Tesla Model 3." answered "What am I allergic to?" (0.31) on the allergy said the turn before, and
    was shown as a fact about the user for a dinner order (a user trial)."""
    breakdown = hit.breakdown
    if breakdown.cross_script or not breakdown.keyword_match:
        return False
    return not says_a_word_of(hit.memory.text, question)


def _enough(hit: SearchHit, standing: Standing) -> bool:
    return hit.breakdown.relevance >= FAMILY_MIN if standing.family or standing.lasting else hit.score >= MIN_SCORE


def by_need(embedder: Embedder, task: str, *, chinese: bool) -> list[Standing]:
    """:data:`STANDING` with allergies first and the rest by the cosine of each question with ``task``; as given
    where the task cannot be embedded. The questions are the same on every call: the query embedder keeps their
    vectors (providers/recent_vectors.py), as it keeps the task's for the search that follows."""
    asked = [standing.chinese if chinese else standing.english for standing in STANDING]
    try:
        vectors = np.asarray(embedder.embed_batch([task, *asked]), dtype=np.float32)
    except ProviderError:  # an outage of the embedder leaves the order as given, never the context
        return list(STANDING)
    task_vector, questions = vectors[0], vectors[1:]
    closeness = questions @ task_vector / (np.linalg.norm(questions, axis=1) * np.linalg.norm(task_vector) + 1e-9)
    first, *rest = range(len(STANDING))
    # the questions the task names by their words come first: the embedder's closeness put work sixth of seven for
    # "帮我写一封邮件给我领导" and the children last for "我们家有几口人？" (a user trial)
    named = [_names_it(task, STANDING[i]) for i in range(len(STANDING))]
    return [STANDING[first], *(STANDING[i] for i in sorted(rest, key=lambda i: (not named[i], -closeness[i])))]


def _names_it(task: str, standing: Standing) -> bool:
    return bool(standing.named_by) and _task_words(standing.named_by).search(task) is not None


@cache  # one pattern per standing question, compiled once
def _task_words(words: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![a-z])(?:{words})(?![a-z])", re.IGNORECASE)


# the user's own word, and the framing extracted facts use ("User …", "用户…")
_OF_THE_USER = lazy_pattern(rf"{FIRST_PERSON.pattern}|\b(?:myself|user)\b|用户", re.IGNORECASE)


def _answers(item: MemoryItem, standing: Standing) -> bool:
    """Words quoted are the quoted person's ("Yvonne: 「我下個月調到上海辦公室！我對蝦子過敏喔」 so she's moving here").
    The user's own state is said in a first-person word, or as a change the user tells without one, as speakers do
    ("Unpacked the last box in Denver", "终于在杭州安顿下来了": the home of 2021 answered in their place)."""
    if item.metadata.get("speaker") or not states_for_the_user(item):
        return False
    said = unquoted(item.text)
    if standing.family:
        return not _anothers_family(said)
    own = _OF_THE_USER.search(said) is not None or bool(change_answers(said))
    return whose(item) == "user" and own and not _opens_with_a_name(said)


# Relatives and others outside the user's household: their pets, partners and children are theirs ("過年回嘉義，我媽養了
# 一隻柴犬叫阿福" was shown as the user's pet, "My sister has two kids now" would be the user's children).
_OUTSIDE_EN = (
    r"mom|mum|mother|dad|father|parents|sister|brother|sis|bro|grand(?:ma|pa|mother|father|parents)|aunt|uncle"
    r"|cousin|friend|buddy|bestie|neighbou?r|colleague|co-?worker|roommate|boss|manager|in-laws?"
)
_OUTSIDE_ZH = (
    "妈|爸|姐|哥|妹|弟|父母|爸妈|奶奶|爷爷|外婆|外公|姑姑|阿姨|舅舅|叔叔|朋友|闺蜜|邻居|同事|室友|同学|老板|领导"
    "|婆婆|公公|岳父|岳母"
)
_THEIRS = lazy_pattern(
    rf"\b(?:my|our)\s+(?:(?:older|younger|big|little|best|elder|baby)\s+)?(?:{_OUTSIDE_EN})(?:\s+[A-Z][a-z]+)?"
    r"(?:'s\b|’s\b|\s+(?:has|had|have|got|adopted|keeps|owns|just\s+had|is\s+(?:having|expecting|engaged|dating|pregnant)"
    r"|married)\b)"
    rf"|我的?(?:{_OUTSIDE_ZH})(?:家的?|的|养|有|生了|订婚|结婚|怀孕)",
    re.IGNORECASE,
)
# The user's own word, "we" and "our" included: a family's news is often said as theirs together.
_OURS = lazy_pattern(rf"{FIRST_PERSON.pattern}|\b(?:we|our|us|ours|we're|we've)\b", re.IGNORECASE)
_SOMEONE = lazy_pattern(r"\b(?:he|she|they|his|her|their)\b|他|她", re.IGNORECASE)


# News of someone outside the household said first: "我姐顾晓芸又搬家了，说是孩子…", "阿梨生了个儿子" (a held-out
# trial showed both as the user's family), "Mia had a baby girl"
_OPENS_WITH_THEIRS = lazy_pattern(
    rf"^\s*(?:(?:my|our)\s+(?:\w+\s+)?(?:{_OUTSIDE_EN})\b|我的?(?:{_OUTSIDE_ZH}))|{ANOTHERS_EVENT.pattern}",
    re.IGNORECASE,
)
# A family only imagined: "要是生的是女儿的话就叫小满" was shown as the user's child
_IMAGINED = lazy_pattern(rf"^[^，。！？,.!?]*?(?:{CONDITIONAL})", re.IGNORECASE)


def _anothers_family(said: str) -> bool:
    """Someone else's pet, partner or children: kept by a relative or a friend, another's news said first or without
    the user ("佳佳說她跟男友訂婚了，「我們明年結婚！」" was shown as the user's partner), or one only imagined."""
    said = simplified(said)
    if _THEIRS.search(said) or _OPENS_WITH_THEIRS.search(said) or _IMAGINED.search(said):
        return True
    return _OURS.search(said) is None and _SOMEONE.search(said) is not None


_OPENING_WORD = lazy_pattern(r"\s*([A-Z][a-z]+)\b")


def _opens_with_a_name(text: str) -> bool:
    """ "Yvonne asked where to live in 上海, I said…" is Yvonne's news: a capitalised first word English rarely
    writes (Yvonne 490 in the spelling dictionary's counts; "Quick", "Met", "Started" above 90,000)."""
    opening = _OPENING_WORD.match(text)
    if opening is None or opening.group(1) in ("I", "My", "Me"):
        return False
    return not is_common_word(opening.group(1))

"""A question's idioms said plainly, before it is searched: "What do I do for a living?" asks about work, "How many
countries have I lived in?" where one lived, "Am I seeing anyone?" for a partner. The words a statement is indexed with
are memstrata.categories' (what a statement names an instance of); these are the question's side."""

from __future__ import annotations

import re

from memstrata.patterns import lazy_pattern


# Idioms whose words mean something else alone: "What do I do for a living?" asks about work, and its "living"
# (match form "live") found where the user lives instead.
# "Any food I should avoid?" asks for a diet or an allergy in none of their words (an allergy to shellfish was not
# found at all): said with those words too.
def _idiom(pattern: str, plain: str) -> tuple[re.Pattern[str], str]:
    return lazy_pattern(pattern, re.IGNORECASE), plain


_IDIOMS = (
    _idiom(r"\bfor\s+a\s+living\b", "for work, my job"),
    # "How many countries have I lived in?", "我待過幾家公司？": the places and the firms are what no statement calls so
    # (a word no memory says weighs most, and nothing was returned; a held-out trial): asked by where one lived or
    # worked
    _idiom(
        r"\bhow\s+many\s+(?:countries|cities|towns|places|homes|flats|apartments)\s+(?:have\s+I|did\s+I|I'?ve)\s+"
        r"(?:lived|live)\s+in\b",
        "where have I lived (live 住)",
    ),
    _idiom(
        r"\bhow\s+many\s+(?:companies|employers|firms|jobs)\s+(?:have\s+I|did\s+I|I'?ve)\s+(?:worked|work|had)"
        r"(?:\s+(?:at|for))?",
        "where have I worked (work job 工作)",
    ),
    _idiom(r"(?:住过|待过|呆过|生活过)(?:几个|多少个?)(?:地方|城市|国家)", "住过哪里 (live 住)"),
    _idiom(r"(?:待过|呆过|做过|干过|换过|工作过|上过班的?)(?:几家|多少家)(?:公司)?", "在哪里工作过 (work job 工作)"),
    # One's employer asked for by the word "company" or "employer", which work statements seldom say ("Which company
    # am I at now?", "Who is my employer?" found nothing; a user trial): asked by where one works
    _idiom(
        r"\b(?:which|what)\s+(?:company|firm|employer)\b|\bmy\s+(?:current\s+)?(?:employer|company)\b"
        r"|\b(?:company|firm)\s+(?:do|did)\s+(?:i|you)\s+work\b",
        r"\g<0> (work job 工作)",
    ),
    _idiom(r"(?:哪|那)(?:家|个)(?:公司|单位)|(?:我的?|现在的?)(?:公司|单位|雇主)是", r"\g<0> (工作 上班 work)"),
    # "What does my sister do?" (the whole question: "What do I do on weekends?" asks something else; and of someone by
    # relation or pronoun: "What does Anja do?" of a name the scope does not hold answered with everyone's jobs)
    _idiom(
        r"^\s*what\s+(?:does|do)\s+(?:(?:my|our|your)\s+[\w'’]+(?:\s+[\w'’]+)?|i|you|he|she|they)\s+do"
        r"(?:\s+(?:now|these\s+days|nowadays))?(?=\s*\??\s*$)",
        r"\g<0> (work, job)",
    ),
    # "我对象是做什么的？" asks for a job in none of its words ("I've been seeing Ana, she's a nurse" was not found)
    _idiom(r"(?:做|干)(?:什么|啥)(?:的|工作)|干嘛的|从事什么", r"\g<0> (工作 职业)"),
    # a pastime or a partner asked for in none of their words: "What do I do for fun these days?", "Am I seeing
    # anyone?" (nothing was returned; found by a user trial)
    _idiom(r"\bfor\s+fun\b|\bfree\s+time\b|\bspare\s+time\b|业余时间|闲暇", r"\g<0> (hobby 爱好)"),
    _idiom(
        r"\b(?:seeing|dating)\s+(?:anyone|anybody|someone|somebody)\b|\b(?:am\s+i|still)\s+single\b|有对象|脱单"
        r"|单身",  # "我现在单身吗？" found nothing (a user trial)
        r"\g<0> (partner boyfriend girlfriend 对象)",
    ),
    _idiom(
        r"\b(?:foods?|eat|eating|drinks?)\b[^.?!]{0,30}\bavoid\b|\bavoid\s+(?:eating|drinking)\b"
        r"|\b(?:can'?t|cannot|shouldn'?t)\s+(?:i\s+)?eat\b|不能吃|不可以吃|有什么忌口|要忌口",
        r"\g<0> (diet, allergic 饮食 过敏)",
    ),
    # what one earns, in none of its words: "How much do I make now?", "我现在赚多少？"
    _idiom(
        r"\bhow\s+much\s+(?:do|did|does)\s+(?:i|my\s+\w+)\s+(?:make|earn|get\s+paid)\b|(?:赚|挣)(?:多少|几)|收入多少",
        r"\g<0> (salary pay 工资 薪水)",
    ),
    # "these days" asks for now, not for a day: "What's my diet these days?" led with "day 1 at Lumen Health!"; and
    # "right now" for now, not for a side ("Do I have a cat right now?" asked of "right" too)
    _idiom(r"\bthese\s+days\b|\bright\s+now\b", "now"),
    # Moves counted or listed are the places one lived: "我搬过几次家？" / "How many times have I moved?" found one or
    # two of four moves ("Finally got the keys to our place", "搬到杭州了" are indexed with "live 住": answers.py)
    _idiom(
        r"\bhow\s+(?:many\s+times|often)\b[^.?!]{0,20}\bmoved?\b|\bwhen\s+did\s+(?:i|we)\s+move\b|\bmy\s+moves\b"
        r"|搬(?:过|了)(?:几|多少)次家|搬过(?:几次|多少次)?家|(?:几|多少)次家",
        r"\g<0> (live 住)",
    ),
    # One's partner by a word no statement uses: "我另一半从事什么行业？" / "Who is my significant other?" found
    # nothing, or the user's own job, not "男朋友叫阿杰，是建筑设计师" (found by a user trial). "my partner" is left as
    # said: statements use that word, and more words only thin out the ones that match.
    _idiom(r"另一半", r"\g<0> (男朋友 女朋友 老公 老婆 对象)"),
    _idiom(r"\bsignificant\s+other\b", r"\g<0> (partner boyfriend girlfriend husband wife)"),
    # One's partner by a word of one language, said in the other: "Who was my boyfriend?" and "男朋友阿哲說週末…"
    # share no word (nothing was returned; a held-out trial). Every statement of one's partner holds the category's
    # words in both languages (partner, 对象), so the question asks with the one of the other language.
    _idiom(
        r"\b(?:my|our)\s+(?:ex-?)?(?:boyfriend|girlfriend|bf|gf|husband|wife|fianc[ée]e?|spouse)s?\b", r"\g<0> (对象)"
    ),
    _idiom(
        r"我的?(?:前)?(?:男朋友|女朋友|男友|女友|老公|老婆|丈夫|妻子|太太|先生|爱人|未婚夫|未婚妻)", r"\g<0> (partner)"
    ),
    # "What's my go-to meal?": a favourite in none of its words
    _idiom(r"\bgo-to\b", r"\g<0> (favourite)"),
)


def plain_question(text: str) -> str:
    """``text`` with its idioms said plainly (``_IDIOMS``)."""
    for pattern, plain in _IDIOMS:
        text = pattern.sub(plain, text)
    return text

"""Words that make a statement something other than how things are: a hedge ("我可能…", "maybe") or a plan
("打算", "going to"). The write path files a plan as a plan and gives a hedged fact less confidence; the graph
makes no edge of a maybe or a plan ("我可能下个月搬去深圳" is not where the speaker lives).

Also the words by which a statement ends, corrects or calls off an earlier one (read/newer.py puts it first), and
the clause a plan counts in: a plan in one clause does not undo the next ("跳槽了，去了深圳腾讯，下周搬去深圳南山")."""

from __future__ import annotations

import re
from functools import lru_cache

from memstrata.han import simplified
from memstrata.patterns import lazy_pattern

# A maybe is not how things are ("我可能下个月搬去深圳"); a "seems" is a softer fact ("王总好像喜欢红酒": the graph
# keeps that edge), so it only lowers a fact's confidence.
# A hypothetical is a maybe too: "If we moved to Shenzhen instead it'd be cheaper... but no" and "要是搬去东京的话…"
# were read as moves (a held-out trial).
CONDITIONAL = r"要是|如果|假如|假设|万一|\bif\b"
MAYBE = rf"可能|也许|或许|大概|说不定|{CONDITIONAL}|\b(?:maybe|might|probably|perhaps)\b"
HEDGE = rf"{MAYBE}|好像|似乎|\b(?:not sure|i think|i guess)\b"
PLAN = (r"打算|计划|准备|将要|要去|想去|下周|下个?月|明天|明年|下次|后天|即将|"
        r"\b(?:will|going to|plans?|planning|intends?|next (?:week|month|year)|tomorrow|upcoming)\b")  # fmt: skip

HEDGED = lazy_pattern(HEDGE, re.IGNORECASE)
PLANNED = lazy_pattern(PLAN, re.IGNORECASE)
# What is not (yet) how things are, for the graph's edges and the words a statement of change is indexed with
# (answers.change_answers): a maybe, a plan, and the softer intentions ("考虑", "thinking of", "we'll").
NOT_YET = lazy_pattern(
    rf"{MAYBE}|{PLAN}|考虑|想要去|以后|试着|尝试|想戒|正在戒|努力戒"
    r"|(?-i:\bmay\b)|\b(?:plan to|thinking (?:of|about)|considering|try(?:ing)? to)\b|'ll\b"
    # a start on a day named: "starting May 5 as a staff engineer" is a plan until May 5
    r"|\bstart(?:s|ing)\s+(?:on\s+)?(?:(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}"
    r"(?:st|nd|rd|th)?\b|(?:mon|tues|wednes|thurs|fri|satur|sun)day\b)",
    re.IGNORECASE,
)

# Words by which a statement ends or corrects what was said before (read/newer.py lets it answer instead of the
# earlier statement it shares a subject with): a correction ("其实豆豆是柴犬不是柯基", "Sorry, I misspoke: I work at
# Meta, not Google"), a habit given up ("我已经戒掉咖啡了", "I don't smoke anymore") and an ending ("我和阿杰分手了",
# "Anna and I broke up"). "Actually" alone is chatter ("Actually the concert was too loud"): a contrast is a
# correction only with a negation beside it.
_CORRECTED = (  # "不是柯基，是柴犬": not A, B
    r"更正|纠正|说错|搞错|记错|弄错|打错|搞混|弄混|口误|误诊|\bmisdiagnos\w*|(?:^|[，。！？,.!?\s])不是[^，。！？,.!?]{1,16}[，,]\s*(?:而|其实|应该)?是"
    r"|\b(?:correction|misspoke|i meant|my mistake|i was wrong|mixed (?:it|them) up)\b"
)
_CONTRAST = r"其实|实际上|\b(?:actually|in fact)\b"
_NEGATION = r"不是|并非|\b(?:not|isn't|wasn't|aren't)\b"
_GIVEN_UP = (  # "我不喝咖啡了": 不 … 了 is "no longer"
    r"戒[掉了烟酒]|不再|再也不|不[^，。！？,.!?\s]{1,3}了|暂停了"  # "石榴健身的卡暂停了": a membership paused
    r"|(?:课|班|训练|卡|会员)(?:已经|也|都)?停(?:了|掉了)"  # "游泳課停了，改成週六去爬大坑步道" (a user trial)
    r"|放弃(?:了|[^，。！？,.!?]{1,16}?了)"  # "放弃 keto 了，现在正常吃饭" (a user trial), not "不会放弃的"
    r"|\b(?:quit|stopped|gave up|given up|no longer|any ?more|paused)\b(?! by)"
)
# An ending: a relationship, a job, a life, and a thing of one's own let go ("Sold the Seal" after "Bought a car! BYD
# Seal"; "卖掉了车")
_ENDED = (
    r"分手|离婚|离职|辞职|退休|去世|过世|离世|卖掉|转手|把[^，。！？,.!?]{1,8}卖了|卖给[^，。！？,.!?]{1,8}了"
    r"|去喵星|去汪星|彩虹桥|安乐死|走了(?=[，。！？,.!?\s]|$)"  # a pet's death, as owners say it ("小汤圆走了")
    # a pet given a new home: "Our neighbour Joost has taken Pim", "豆豆送人了"
    r"|送人了|送走了|送给[^，。！？,.!?]{1,8}了|\brehomed\b|\bhas\s+taken\s+(?-i:[A-Z])"
    # an illness over: "湿疹终于好了" after "我有湿疹", "Gastritis is gone, doctor cleared me" (a user trial: the
    # context's profile showed both as the user's conditions)
    r"|痊愈|康复了|治好了|(?:终于|已经|彻底|全都?)好了|好利索了"
    r"|\b(?:(?:is|are)\s+gone|cleared\s+up|(?:fully\s+)?recovered\s+from|(?:is|was|got)\s+cured|in\s+remission)\b"
    # a place of one's own that is no more: "小杨生煎 on Huanghe Road closed down last week" (a user trial)
    r"|关门了|倒闭|停业了|歇业了|\b(?:closed down|shut down|closed for good|went out of business)\b"
    r"|\b(?:broke up|split up|divorced|resigned|retired|died|passed away|sold (?:the|my|our|it|them)"
    r"|crossed the rainbow bridge|put (?:him|her|(?-i:[A-Z][a-z]+)|(?:our|my|the) (?:old )?(?:dog|cat)) down(?! for)"
    r"|had to put (?:him|her|(?-i:[A-Z][a-z]+)|(?:our|my|the) (?:old )?(?:dog|cat)) to sleep)\b"
)
# What holds now in place of what held: "My favourite food is now sushi, not ramen", "现在最喜欢寿司了，不是拉面",
# "I used to love coffee but now I only drink tea", "我以前喜欢喝咖啡，现在只喝茶".
_REPLACED = (
    r"\bnow\s+[^.!?,;]{1,40},\s*(?:not|no longer)\b|现在[^，。！？,.!?]{1,16}[，,]\s*(?:已经)?不(?:是|再)"
    r"|\bused to\b[^.!?]{1,60}\bbut\b[^.!?]{0,20}\bnow\b|(?:以前|原来|之前)[^。！？.!?]{1,30}[，,]\s*(?:但是?|可)?现在"
)
# A plan called off says what did not happen, often beside what may happen instead ("Japan is off … Maybe next
# year", "Shanghai trip postponed to next year"): no plan or maybe makes it less so.
# "西藏也不去了", "冰岛去不成了", "Iceland's off" (a held-out trial: every plan called off so stayed above its ending)
_CALLED_OFF = (
    r"没去成|没能去|没去了|取消了|泡汤|推迟|延期|改期|不去了|去不成|去不了了"
    # as the bundled model writes a call-off down: "用户不再去日本" of "日本不去了，改成四月去首尔" (a user trial)
    r"|不再去|不打算去了"
    r"|\b(?:is off|are off|called off|cancell?ed|postponed|fell through|didn't go|did not go|never went)\b"
    r"|\b(?:no longer going|not going (?:\w+ )?any ?more)\b"
    r"|(?-i:\b[A-Z][\w-]*)'s off\b(?!\s+(?:the|to|for|work))"
)
ENDS_OR_CORRECTS_WORDS = lazy_pattern(
    rf"{_CORRECTED}|{_GIVEN_UP}|{_ENDED}|{_REPLACED}|{_CALLED_OFF}|{_CONTRAST}|{_NEGATION}", re.IGNORECASE
)
_FIRM = lazy_pattern(rf"{_CORRECTED}|{_GIVEN_UP}|{_ENDED}|{_REPLACED}", re.IGNORECASE)
# The words that end a state outright ("died", "不再", "quit"): such a statement is news of an end, no standing fact.
ENDED_WORDS = lazy_pattern(rf"{_GIVEN_UP}|{_ENDED}", re.IGNORECASE)
# The words that end (or call off), to find what a clause ends by where it says so (read/endings.py).
ENDING_WORDS = lazy_pattern(rf"{_GIVEN_UP}|{_ENDED}|{_REPLACED}|{_CALLED_OFF}", re.IGNORECASE)
_CALLED_OFF_WORDS = lazy_pattern(_CALLED_OFF, re.IGNORECASE)
_CORRECTED_WORDS = lazy_pattern(_CORRECTED, re.IGNORECASE)
_CONTRASTED = lazy_pattern(_CONTRAST, re.IGNORECASE)
NEGATED = lazy_pattern(_NEGATION, re.IGNORECASE)
_CLAUSE_END = lazy_pattern(r"[，。！？；,.!?;\n]")
_SENTENCE_END = lazy_pattern(r"[。！？；.!?;\n]")


def clause_at(text: str, position: int) -> str:
    """The clause of ``text`` holding ``position``: a plan in one clause is not a plan in the next ("跳槽了，去了深圳
    腾讯，下周搬去深圳南山" changed jobs; only the move is still to come)."""
    return _piece_at(text, position, _CLAUSE_END)


def sentence_at(text: str, position: int) -> str:
    """The sentence of ``text`` holding ``position``, its commas included ("10月的时候，我去了日本": the tense of a
    time named in one comma clause is often said in the next)."""
    return _piece_at(text, position, _SENTENCE_END)


def clauses(text: str) -> list[str]:
    """The clauses of ``text``, as :func:`clause_at` cuts them, empty ones left out."""
    return [piece for piece in _CLAUSE_END.split(text) if piece]


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, as :func:`sentence_at` cuts them, empty ones left out."""
    return [piece for piece in _SENTENCE_END.split(text) if piece]


def _piece_at(text: str, position: int, ends: re.Pattern[str]) -> str:
    starts = [found.end() for found in ends.finditer(text, 0, position)]
    end = ends.search(text, position)
    return text[starts[-1] if starts else 0 : end.start() if end else len(text)]


def said_as_so(pattern: re.Pattern[str], text: str) -> bool:
    """Whether ``pattern`` matches in a clause of ``text`` that is not a maybe, a plan or an attempt."""
    return any(not NOT_YET.search(clause_at(text, found.start())) for found in pattern.finditer(text))


@lru_cache(maxsize=65_536)  # asked of each hit near the top for each one above it
def corrects(text: str) -> bool:
    """Whether ``text`` corrects what was said ("更正一下…", "Sorry I meant…", "其实…不是…")."""
    text = simplified(text)  # the word lists are Simplified (as every one that reads Chinese here)
    return bool(_CORRECTED_WORDS.search(text) or (_CONTRASTED.search(text) and NEGATED.search(text)))


def calls_off(text: str) -> bool:
    """Whether ``text`` says a plan was called off ("Japan is off", "清迈最后没去成", "postponed to next year")."""
    text = simplified(text)
    return bool(_CALLED_OFF_WORDS.search(text))


@lru_cache(maxsize=65_536)  # read of every hit near the top of every search
def ends_or_corrects(text: str) -> bool:
    """Whether ``text`` ends or corrects an earlier statement (see ``ENDS_OR_CORRECTS_WORDS``); a plan or an
    attempt does not ("I'm trying to quit smoking", "我打算辞职"), and a plan called off does."""
    text = simplified(text)
    if _CALLED_OFF_WORDS.search(text) or said_as_so(_FIRM, text):
        return True
    return bool(_CONTRASTED.search(text) and NEGATED.search(text)) and not NOT_YET.search(text)

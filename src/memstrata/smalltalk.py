"""Whole turns of small talk: greetings, thanks, farewells, acknowledgements ("记下了。", "Noted!"), laughter,
weather remarks, also said to someone by name ("Thanks, Evan! Take care!"). They hold nothing to remember (the write
path shows them to no model) and answer no question (search does not return an acknowledgement for the fact said
before it)."""

from __future__ import annotations

import re

from memstrata.patterns import lazy_pattern

_PHRASE = (
    r"(?:hi|hello|hey|yo|good (?:morning|afternoon|evening|night)|thanks?(?: you)?(?: so much| a lot)?|ok(?:ay)?|"
    r"cool|great|nice|sure|got it|noted|will do|sounds good|no problem|no worries|you're welcome|bye|you too|"
    r"see you(?: soon| later| around| then| tomorrow)?|same to you|take care|talk (?:to you )?(?:soon|later)|"
    r"catch you later|have a (?:good|great|nice|wonderful) (?:day|one|night|weekend)|cheers|sure thing|bye for now|"
    r"(?:let me know|keep me posted on) how it (?:goes|went)|keep me (?:posted|updated)|"
    r"i'?ll (?:definitely |make sure to )?keep you (?:posted|updated)|good luck|best of luck|"
    r"(?:thanks for|appreciate) (?:the|your) support|your support means (?:a lot|so much|the world)(?: to me)?|"
    r"(?:i )?(?:really )?appreciate (?:it|that)|"
    r"lol|haha+|hmm+|how are you(?: doing)?(?: today)?|"
    # "Nice to meet you, Daniel!" was the first memory of a context for cooking for Daniel (a user trial)
    r"(?:it'?s )?(?:nice|great|good|lovely|a pleasure) to meet you(?: too)?|很高兴认识你|认识你(?:很|真)?高兴|幸会|"
    r"thanks?(?: you)?(?: so much)? for (?:remembering|reminding me|your help|the help|helping(?: me)?|"
    r"keeping track)(?: (?:all )?(?:this|that|these|those|of (?:it|this|that|everything)))?|"
    r"thanks?(?: you)?(?: so much)? for (?:chatting|the chat|talking(?: (?:to|with) me)?|listening)|"
    r"(?:谢谢|感谢)(?:你|您)?陪我(?:聊天|聊|说话)了?|"
    r"(?:it'?s )?(?:a )?(?:nice|lovely|beautiful|great) (?:weather|day)(?: today)?(?:,? isn'?t it)?|"
    r"that'?s (?:funny|great|nice|cool)|"
    r"(?:谢谢|感谢)(?:你|您)?(?:一直|还|都)?(?:记得|记住|提醒我|帮忙|的帮助)(?:这些|这个|这件事|我说的)?|"
    r"你好呀?|您好|嗨|哈喽|早上好|晚上好|晚安|谢谢(?:你|您|啦)?|谢了|谢啦|多谢|好的|好吧|好嘞|嗯+|哦+|哈哈+|再见|拜拜|收到|明白了?|"
    # "好的，我记下了。" and "太好了！" took lines of a context (a user trial): a reply that says only that it heard
    r"(?:好的[,，]?)?我?(?:记下了|记住了|知道了)|了解|没问题|不客气|太好了|太棒了|好极了|"
    r"今天天气(?:真|很|挺|特别)?(?:不错|好|很好|晴朗)(?:啊|呀|呢)?|天气(?:真|很)?(?:不错|好)|你(?:今天)?(?:怎么样|好吗))"
)
# Said to someone by name: "Bye Nate!", "Thanks, Evan!" (a capitalised word right after the phrase)
_ADDRESSED = r"(?:,?\s+(?-i:[A-Z][a-z]{1,15}))?"
_SMALL_TALK = lazy_pattern(rf"^\s*(?:{_PHRASE}{_ADDRESSED}[\s,，.。!！?？~～]*)+$", re.IGNORECASE)


def is_small_talk(text: str) -> bool:
    return bool(_SMALL_TALK.match(text))

"""Whole turns of small talk: greetings, thanks, acknowledgements ("记下了。", "Noted!"), laughter, weather
remarks. They hold nothing to remember (the write path shows them to no model) and answer no question (search
does not return an acknowledgement for the fact said before it)."""

from __future__ import annotations

import re

_PHRASE = (
    r"(?:hi|hello|hey|yo|good (?:morning|afternoon|evening|night)|thanks?(?: you)?(?: so much| a lot)?|ok(?:ay)?|"
    r"cool|great|nice|sure|got it|noted|will do|sounds good|no problem|you're welcome|bye|see you|you too|same to you|"
    r"lol|haha+|hmm+|how are you(?: doing)?(?: today)?|"
    r"thanks?(?: you)?(?: so much)? for (?:remembering|reminding me|your help|the help|helping(?: me)?|"
    r"keeping track)(?: (?:all )?(?:this|that|these|those|of (?:it|this|that|everything)))?|"
    r"(?:it'?s )?(?:a )?(?:nice|lovely|beautiful|great) (?:weather|day)(?: today)?(?:,? isn'?t it)?|"
    r"that'?s (?:funny|great|nice|cool)|"
    r"(?:谢谢|感谢)(?:你|您)?(?:一直|还|都)?(?:记得|记住|提醒我|帮忙|的帮助)(?:这些|这个|这件事|我说的)?|"
    r"你好呀?|您好|嗨|哈喽|早上好|晚上好|晚安|谢谢(?:你|您)?|多谢|好的|好吧|好嘞|嗯+|哦+|哈哈+|再见|拜拜|收到|明白了?|"
    r"(?:好的[,，]?)?(?:记下了|记住了|知道了)|了解|没问题|不客气|"
    r"今天天气(?:真|很|挺|特别)?(?:不错|好|很好|晴朗)(?:啊|呀|呢)?|天气(?:真|很)?(?:不错|好)|你(?:今天)?(?:怎么样|好吗))"
)
_SMALL_TALK = re.compile(rf"^\s*(?:{_PHRASE}[\s,，.。!！?？~～]*)+$", re.IGNORECASE)


def is_small_talk(text: str) -> bool:
    return bool(_SMALL_TALK.match(text))

"""Turns that are only small talk never reach a model: they hold nothing to remember, and a small model
asked about "今天天气不错" sometimes invents a fact from it. Only whole turns made of greetings, thanks,
acknowledgements, laughter or weather remarks match; anything else goes to extraction."""

from __future__ import annotations

import re

_PHRASE = (
    r"(?:hi|hello|hey|yo|good (?:morning|afternoon|evening|night)|thanks?(?: you)?(?: so much| a lot)?|ok(?:ay)?|"
    r"cool|great|nice|sure|got it|bye|see you|you too|same to you|lol|haha+|hmm+|how are you(?: doing)?(?: today)?|"
    r"(?:it'?s )?(?:a )?(?:nice|lovely|beautiful|great) (?:weather|day)(?: today)?(?:,? isn'?t it)?|"
    r"that'?s (?:funny|great|nice|cool)|"
    r"你好呀?|您好|嗨|哈喽|早上好|晚上好|晚安|谢谢(?:你|您)?|多谢|好的|好吧|嗯+|哦+|哈哈+|再见|拜拜|收到|明白了?|"
    r"今天天气(?:真|很|挺|特别)?(?:不错|好|很好|晴朗)(?:啊|呀|呢)?|天气(?:真|很)?(?:不错|好)|你(?:今天)?(?:怎么样|好吗))"
)
_SMALL_TALK = re.compile(rf"^\s*(?:{_PHRASE}[\s,，.。!！?？~～]*)+$", re.IGNORECASE)


def is_small_talk(text: str) -> bool:
    return bool(_SMALL_TALK.match(text))

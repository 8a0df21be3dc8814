"""Offline query understanding: what deep search does with no model, or when the model fails.

- :func:`strip_chatter` finds the ask buried in small talk ("哎呀最近好忙……对了，我想问一下……",
  "ugh, long week. anyway, quick question: ..."): the text after the last ask marker, else the
  question sentences, else the message without its filler clauses.
- :func:`find_entities` picks capitalised names (English), person / place / organisation words
  (jieba's part-of-speech tags, Chinese) and quoted titles.
- :func:`split_questions` cuts a compound question into its parts ("When did X ..., and what did Y ...?").
- :func:`keyword_query` keeps a question's content words: a keyword sub-query, and the no-model stand-in
  for a hypothetical answer (a statement shares the content words of the question it answers).

Nothing here translates: every output is cut from the query's own text.
"""

from __future__ import annotations

import logging
import re
from functools import cache
from typing import Literal

from memstrata.lexical import STOP_WORDS, has_han, keyword_tokens
from memstrata.patterns import lazy_pattern

Language = Literal["zh", "en"]

# The ask usually follows one of these; what comes before is small talk.
_ASK_MARKERS = lazy_pattern(
    r"(对了|话说|说起来|顺便问一下|顺便问|顺便|我想问一下|我想问问|我想问|想问一下|想问问|问一下|问你个事|请问|"
    r"我想知道|帮我查一下|帮我查|帮我看看|"
    r"\bby the way\b|\bbtw\b|\banyway(?:s)?\b|\bquick question\b|\bi (?:wanted|want|need) to ask\b|"
    r"\bi was wondering\b|\bcan you (?:tell me|remind me|check)\b|\bcould you (?:tell me|remind me|check)\b|"
    r"\bremind me\b|\bone question\b)[\s,，:：]*",
    re.IGNORECASE,
)
_SENTENCE = lazy_pattern(r"[^。！？!?；;\n]+[。！？!?；;]*")
_CLAUSE = lazy_pattern(r"[^，,。！？!?；;\n]+[，,。！？!?；;]*")
_ZH_QUESTION = lazy_pattern(r"什么|啥|哪|谁|几|多少|怎么|怎样|为什么|为啥|吗|呢|是否|有没有|是不是|何时|多久|多大|如何")
_EN_QUESTION = lazy_pattern(
    r"^\s*(what|when|where|who|whom|whose|which|why|how|do|does|did|is|are|was|were|can|could|should|would|will|"
    r"have|has|had)\b",
    re.IGNORECASE,
)
_FILLER = lazy_pattern(
    r"^[\s,，。！!.~～…]*(哎呀|哎|唉|嗨|嗯+|啊+|哈+|呵呵|嘿|"
    r"hi|hello|hey|ugh|oh|well|so|ok|okay|lol|haha|thanks|thank you|"
    r"谢谢|你好|您好|最近(?:好|太|真|有点)?(?:忙|累)[^，,。！？!?]*|(?:好|太|真)(?:忙|累)[^，,。！？!?]*|累死了)"
    r"[\s,，。！!.~～…]*$",
    re.IGNORECASE,
)
_EN_NAME = lazy_pattern(r"\b[A-Z][\w'’\-]*(?:\s+(?:[A-Z][\w'’\-]*|of|de|van|von))*(?<!\s(?:of|de))")
_QUOTED = lazy_pattern(r"[《“\"「『]([^》”\"」』]{1,40})[》”\"」』]")
# Capitalised only because they start a sentence or are the speaker: never entities on their own.
_NOT_NAMES = frozenset(
    [
        "i",
        "i'm",
        "i've",
        "i'd",
        "i'll",
        "what",
        "when",
        "where",
        "who",
        "whom",
        "whose",
        "which",
        "why",
        "how",
        "do",
        "does",
        "did",
        "is",
        "are",
        "was",
        "were",
        "can",
        "could",
        "should",
        "would",
        "will",
        "have",
        "has",
        "had",
        "the",
        "a",
        "an",
        "my",
        "your",
        "our",
        "their",
        "his",
        "her",
        "its",
        "this",
        "that",
        "these",
        "those",
        "and",
        "or",
        "but",
        "so",
        "if",
        "then",
        "hi",
        "hello",
        "hey",
        "ok",
        "okay",
        "yes",
        "no",
        "please",
        "thanks",
        "anyway",
        "btw",
        "by",
        "also",
        "remind",
        "tell",
    ]
)
_EN_COMPOUND = lazy_pattern(r",?\s+(?:and|also|plus)\s+(?=(?:what|when|where|who|which|why|how|did|does|do|is|are)\b)",
                          re.IGNORECASE)  # fmt: skip
_ZH_COMPOUND = lazy_pattern(r"[，,；;]\s*(?:还有|以及|另外|并且|而且|那)")
_ZH_LEADING = lazy_pattern(r"^(?:还有|以及|另外|并且|而且|那么|那)[\s,，、]*")
_POS_ENTITY = {"nr", "nrfg", "nrt", "ns", "nt"}
# Tagged as places by jieba but common nouns: never the entity a question is about.
_ZH_GENERIC = frozenset(
    [
        "城市",
        "国家",
        "地方",
        "地区",
        "世界",
        "全国",
        "家乡",
        "老家",
        "外地",
        "本地",
        "当地",
        "国外",
        "海外",
        "首都",
        "省会",
        "市区",
        "郊区",
    ]
)


def language_of(text: str) -> Language:
    """ "zh" for any text with Chinese characters, else "en": prompts and checks follow the query's language."""
    return "zh" if has_han(text) else "en"


def is_question(sentence: str) -> bool:
    stripped = sentence.strip()
    if not stripped:
        return False
    if stripped.endswith(("?", "？")):
        return True
    return bool(_ZH_QUESTION.search(stripped)) if has_han(stripped) else bool(_EN_QUESTION.match(stripped))


def _is_filler(clause: str) -> bool:
    return bool(_FILLER.match(clause)) or not keyword_tokens(clause)


def _after_last_marker(text: str) -> str | None:
    found = list(_ASK_MARKERS.finditer(text))
    for match in reversed(found):
        rest = text[match.end() :].strip()
        if keyword_tokens(rest):
            return rest
    return None


# A line that opens with a speaker's tag: "<Bart>: ...", "Assistant: ...", "用户：..."
_SPEAKER_LINE = lazy_pattern(r"^\s*(?:<[^<>\n]{1,40}>|[^\s:：<>][^:：<>\n]{0,30})\s*[:：]", re.MULTILINE)


def is_transcript(text: str) -> bool:
    """True for a conversation pasted as it went (two or more lines opening with a speaker's tag): what it needs
    from memory is everything its turns touch, not its question sentences (often the other speaker's)."""
    return len(_SPEAKER_LINE.findall(text)) >= 2


def strip_chatter(text: str) -> str:
    """The ask inside ``text``, cut from its own words (never rewritten); ``text`` itself when nothing is
    recognisably small talk."""
    text = text.strip()
    asked = _after_last_marker(text)
    if asked is not None:
        text = asked
    sentences = [s.strip() for s in _SENTENCE.findall(text) if s.strip()]
    questions = [s for s in sentences if is_question(s)]
    if questions:
        kept = questions
    else:
        kept = [s for s in sentences if not _is_filler(s)] or sentences
    clauses = [c.strip() for c in _CLAUSE.findall(" ".join(kept)) if c.strip()]
    useful = [c for c in clauses if not _is_filler(c)]
    result = "".join(useful) if has_han(text) else " ".join(useful)
    return result.strip() or text


@cache
def _posseg() -> object:
    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.ERROR)  # it prints its dictionary loading to stderr
    return jieba.posseg


def _zh_entities(text: str) -> list[str]:
    words = _posseg().cut(text)  # type: ignore[attr-defined]
    return [w.word for w in words if w.flag in _POS_ENTITY and len(w.word) >= 2 and w.word not in _ZH_GENERIC]


def find_entities(text: str) -> list[str]:
    """Names the text mentions, in order, each once: quoted titles, capitalised English names (not a
    sentence's first word unless it recurs or is a known non-word), Chinese person / place / organisation
    words."""
    found: list[str] = [match.group(1).strip() for match in _QUOTED.finditer(text)]
    for match in _EN_NAME.finditer(text):
        name = match.group().strip()
        words = name.split()
        while words and words[0].lower().strip("'’") in _NOT_NAMES:
            words = words[1:]
        if words:
            found.append(" ".join(words))
    if has_han(text):
        found.extend(_zh_entities(text))
    return list(dict.fromkeys(name for name in found if name and name.lower() not in STOP_WORDS))


def split_questions(text: str) -> list[str]:
    """The parts of a compound question, each a question of its own; [] when it asks one thing."""
    sentences = [_ZH_LEADING.sub("", s.strip()).strip(" ,，、") for s in _SENTENCE.findall(text) if is_question(s)]
    if len(sentences) > 1:
        return sentences
    pattern = _ZH_COMPOUND if has_han(text) else _EN_COMPOUND
    parts = [part.strip(" ,，;；") for part in pattern.split(text)]
    parts = [part for part in parts if keyword_tokens(part)]
    if len(parts) < 2:
        return []
    if not has_han(text):
        parts = [part[0].upper() + part[1:] if part else part for part in parts]
    return parts


def keyword_query(text: str) -> str:
    """The content words of ``text`` in their order (stop words and question words dropped), or ""."""
    return " ".join(dict.fromkeys(keyword_tokens(text)))

"""Keyword tokens for Chinese, English and mixed text.

Both the index and the query go through :func:`keyword_tokens`, so they always agree. Chinese
runs are segmented with rjieba in search mode (which also emits the shorter words inside long
ones: 北京市 -> 北京, 北京市), Latin text is lower-cased word by word, and stop words in both
languages are dropped: words such as 用户 / 的 / the appear in nearly every memory and only add
noise and cost to BM25.
"""

from __future__ import annotations

import re
from functools import lru_cache

import rjieba

_HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD = rf"[^\W_{_HAN}]+"
_TOKEN = re.compile(rf"[{_HAN}]+|{_WORD}(?:[.+#'-]{_WORD})*", re.UNICODE)
_HAN_RUN = re.compile(rf"[{_HAN}]+")

ENGLISH_STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "s",
        "t",
        "d",
        "ll",
        "m",
        "re",
        "ve",
    ]
)

CHINESE_STOP_WORDS = frozenset(
    [
        "的",
        "了",
        "和",
        "是",
        "在",
        "我",
        "你",
        "他",
        "她",
        "它",
        "我们",
        "你们",
        "他们",
        "她们",
        "这",
        "那",
        "这个",
        "那个",
        "就",
        "也",
        "都",
        "而",
        "及",
        "与",
        "着",
        "或",
        "一个",
        "没有",
        "有",
        "吗",
        "呢",
        "吧",
        "啊",
        "呀",
        "哦",
        "嗯",
        "很",
        "还",
        "又",
        "被",
        "把",
        "让",
        "给",
        "从",
        "到",
        "对",
        "于",
        "为",
        "以",
        "之",
        "其",
        "所",
        "等",
        "用户",
        "助手",
        "一下",
        "一些",
        "什么",
        "怎么",
        "怎样",
        "哪些",
        "哪个",
        "这些",
        "那些",
        "已经",
        "可以",
        "因为",
        "所以",
        "但是",
        "如果",
        "然后",
        "还是",
        "就是",
        "不是",
        "自己",
        "个",
        "会",
        "要",
        "说",
        "去",
        "来",
        "上",
        "下",
        "中",
        "里",
        "后",
        "前",
        "得",
        "地",
        "过",
        "能",
        "想",
        "么",
    ]
)

STOP_WORDS = ENGLISH_STOP_WORDS | CHINESE_STOP_WORDS


@lru_cache(maxsize=65536)
def _segment_han(run: str) -> tuple[str, ...]:
    return tuple(rjieba.cut_for_search(run))


def keyword_tokens(text: str) -> list[str]:
    """Tokens for keyword search, in text order, stop words removed, duplicates kept."""
    tokens: list[str] = []
    for match in _TOKEN.finditer(text.lower()):
        piece = match.group()
        if _HAN_RUN.fullmatch(piece):
            tokens.extend(word for word in _segment_han(piece) if word not in STOP_WORDS)
        elif piece not in STOP_WORDS:
            tokens.append(piece)
    return tokens


def index_document(text: str) -> str:
    """The space-joined token string stored in the keyword index."""
    return " ".join(keyword_tokens(text))


def has_han(text: str) -> bool:
    return _HAN_RUN.search(text) is not None

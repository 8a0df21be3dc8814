"""Entity names: the normal form used for equality, and the cues that suggest a type."""

from __future__ import annotations

import re
import unicodedata

from memstrata.graph.vocabulary import EN_FAMILY, FAMILY
from memstrata.lexical import has_han
from memstrata.patterns import lazy_pattern

# The node that stands for the user of a scope: "我", "I", "用户" and "the user" all mean it, and so does "we": the
# model wrote ["We", "lives_in", "Denver"] for "We moved to Denver last week", and "We" became a person of its own.
USER_NAME = "user"
USER_ALIASES = ("我", "用户", "本人", "i", "me", "myself", "the user", "we", "us", "我们", "咱们")

_SPACE_OR_PUNCT = lazy_pattern(r"[\s\-_·.,'\"“”‘’()（）]+")

_TYPE_SUFFIXES: list[tuple[str, tuple[str, ...]]] = [
    ("person", ("先生", "女士", "小姐", "总", "工", "老师", "教授", "博士", "经理", "医生", "阿姨", "叔叔", "同学")),
    ("location", ("市", "区", "省", "县", "镇", "村", "路", "街", "国", "州", "岛")),
    ("organization", ("公司", "集团", "大学", "学院", "银行", "医院", "研究院", "研究所", "实验室", "团队", "部门")),
    ("project", ("项目", "系统", "服务", "平台", "开发", "模块", "接口", "API", "api", "app", "App")),
    ("profession", ("工程师", "设计师", "程序员", "研究员", "律师", "会计", "护士", "记者", "作家")),
]
_EN_PERSON = lazy_pattern(r"^(mr|mrs|ms|dr|prof)\.?\s", re.I)
_EN_ORG = lazy_pattern(r"\b(inc|corp|ltd|llc|gmbh|university|bank|company)\b\.?$", re.I)


# Words a model leaves in an entity's name that are not part of it: a time ("Hangzhou last month" from "I moved
# to Hangzhou last month") and the speaker's possessive before a relative ("我妹妹", "my sister": the user's).
_TIME_WORDS = lazy_pattern(
    r"\b(?:(?:last|this|next)\s+(?:week|month|year)|yesterday|today|tomorrow|\d+\s+(?:day|week|month|year)s?\s+ago)\b"
    r"|去年|今年|明年|前年|上个?月|这个?月|下个?月|上周|本周|下周|昨天|今天|明天|前天",
)  # lowercase only: "Today Show" is a name
_RELATIVES = "|".join([*FAMILY.values(), *EN_FAMILY.values(), "男朋友|女朋友"])
_POSSESSIVE = lazy_pattern(rf"^(?:我的?|my\s+)(?=(?:{_RELATIVES})(?![a-z]))", re.I)


def clean_name(name: str) -> str:
    """``name`` without the time words, the speaker's possessive and a leading particle 了 left in it; unchanged
    when nothing would be left."""
    cleaned = " ".join(_POSSESSIVE.sub("", _TIME_WORDS.sub(" ", name)).split()).strip(" 的,，.。")
    if len(cleaned) > 2 and cleaned[0] == "了" and has_han(cleaned[1]):  # "搬到了杭州" read as a move to "了杭州"
        cleaned = cleaned[1:]
    return cleaned or name


def normalize(name: str) -> str:
    """Case, width and spacing do not make two names different ('后端 API' == '后端api')."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return _SPACE_OR_PUNCT.sub("", folded)


def is_user(name: str) -> bool:
    return normalize(name) in {normalize(alias) for alias in (USER_NAME, *USER_ALIASES)}


def type_from_name(name: str) -> str | None:
    """A type suggested by the name alone (suffixes like 女士 / 公司 / 区, titles like 'Dr.'), or None."""
    stripped = name.strip()
    if is_user(stripped):
        return "person"
    for kind, suffixes in _TYPE_SUFFIXES:
        if stripped.endswith(suffixes) and len(stripped) > 1:
            return kind
    if not has_han(stripped):
        if _EN_PERSON.match(stripped):
            return "person"
        if _EN_ORG.search(stripped):
            return "organization"
    return None


def is_abbreviation(short: str, long: str) -> bool:
    """'字节' of '字节跳动', 'MS' of 'Microsoft'? The short name's characters appear in order in the long one,
    starting with the same character. '张工' vs '张三' and '前端开发' vs '后端开发' are not."""
    a, b = normalize(short), normalize(long)
    if not a or len(a) >= len(b) or a[0] != b[0]:
        return False
    position = 0
    for char in a:
        position = b.find(char, position)
        if position < 0:
            return False
        position += 1
    return True


def is_sub_place(short: str, long: str) -> bool:
    """'北京' and '北京市朝阳区' are different places (the second lies inside the first); '北京' and '北京市' are
    the same one. True when ``long`` extends ``short`` by more than one administrative suffix."""
    a, b = normalize(short), normalize(long)
    if not b.startswith(a):
        return False
    rest = b[len(a) :]
    return bool(rest) and rest not in ("市", "省", "区", "县", "city", "province")

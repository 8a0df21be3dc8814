"""Extract durable facts from conversation turns, in the language they were said in.

One system prompt per language (user and assistant turns alike), fixed, so the bundled model keeps its
evaluation in its prompt cache and every call after the first pays only for the turns. The answer is
compact on purpose (turn number and text; no kind, confidence or date per fact): output tokens are the
slowest part of a local model's call (~10 tokens/s on two cores), and the engine derives kind, confidence
and event time from the text and the turn's timestamp instead (``write/facts.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from memstrata.han import writes_chinese
from memstrata.providers.llm import ChatMessage
from memstrata.types import Message


def _turn_first(schema: dict[str, Any]) -> None:
    # Constrained decoding (llama.cpp's schema grammar) leaves optional fields out, so the schema the model sees
    # requires the turn; validation still accepts an answer without one (a server that ignores the schema).
    schema["required"] = ["turn", "text"]


class ExtractedFact(BaseModel):
    model_config = ConfigDict(json_schema_extra=_turn_first)

    turn: int = Field(default=0, description="number of the turn the fact was said in; 0: one of them")
    text: str = Field(max_length=600, description="one self-contained fact, in the language of its turn")


class FactList(BaseModel):
    facts: list[ExtractedFact] = Field(max_length=60)


# [subject, relation, object] or [subject, relation, object, "ended"]; types are inferred from the names.
CompactTriple = Annotated[list[Annotated[str, Field(max_length=200)]], Field(min_length=3, max_length=4)]


class ExtractedRelation(BaseModel):
    """The long form some servers (and older prompts) answer with; accepted beside the compact one."""

    subject: str = Field(min_length=1, max_length=200)
    subject_type: str | None = None
    relation: str = Field(min_length=1, max_length=64)
    object: str = Field(min_length=1, max_length=200)
    object_type: str | None = None
    ended: bool = False


class FactsAndRelations(FactList):
    """Facts and graph triples from the same call: one prompt, one decode. The prompt asks for the compact
    form (a third of the tokens); the long form is accepted too."""

    relations: list[CompactTriple | ExtractedRelation] = Field(default_factory=list, max_length=60)


_EN = """You extract long-term memories from an English conversation. Turns are numbered.
For every clause that states a fact, output one self-contained fact in English with the number of its turn:
- about the user: identity, home, work, family, health, likes and dislikes, habits, plans, events, changes;
- about people the user mentions (sister, colleague, manager, friend): keep their names and relation to the user;
- a change or an ending is a fact: "User no longer drinks coffee", "User sold their bike";
- keep time words as said ("last month", "in May");
- from assistant turns only concrete commitments or settings made for the user.
Write facts as "User ...". Only what the turns say; never translate names. Greetings, thanks, small talk,
questions and weather give no facts.

Example 1
[1] user: hey there!
[2] assistant: Hi! How can I help?
[3] user: I gave away my old piano last week. My manager Ines prefers short updates, and I'm off to Lisbon in June.
{"facts": [{"turn": 3, "text": "User gave away their old piano last week"},
 {"turn": 3, "text": "User's manager is Ines"}, {"turn": 3, "text": "User's manager Ines prefers short updates"},
 {"turn": 3, "text": "User is going to Lisbon in June"}]}

Example 2
[1] user: I don't eat pork anymore. My brother Omar just started at Siemens.
[2] assistant: Noted, I'll leave pork out of your recipes from now on.
{"facts": [{"turn": 1, "text": "User no longer eats pork"}, {"turn": 1, "text": "User has a brother named Omar"},
 {"turn": 1, "text": "User's brother Omar started working at Siemens"},
 {"turn": 2, "text": "Assistant will leave pork out of the user's recipes"}]}

Example 3
[1] user: nice weather today, how are you?
{"facts": []}"""

_ZH = """你从中文对话中提取长期记忆。每轮对话有编号。
对话里每个陈述事实的分句，都写成一条完整、独立的记忆，并标出它来自哪一轮：
- 关于用户：身份、住处、工作、家人、健康、喜好和厌恶、习惯、计划、经历、变化；
- 关于用户提到的人（妹妹、同事、领导、朋友）：保留名字和与用户的关系；
- 变化和结束也是事实："用户不再吃猪肉"、"用户把自行车卖了"；
- 时间词照原话保留（"上个月"、"下周"）；
- 助手的话只记录为用户做出的具体承诺或设置。
用中文写，以"用户"开头；句子里原本是英文的部分保持英文，名字不翻译。只写对话里说过的内容。
寒暄、感谢、闲聊、提问、天气不产生记忆。

示例 1
[1] user: 我前天把旧钢琴送人了。我领导周敏喜欢简短的汇报，六月我要去里斯本。
{"facts": [{"turn": 1, "text": "用户前天把旧钢琴送人了"}, {"turn": 1, "text": "用户的领导叫周敏"},
 {"turn": 1, "text": "用户的领导周敏喜欢简短的汇报"}, {"turn": 1, "text": "用户六月要去里斯本"}]}

示例 2
[1] user: 我不吃猪肉了。我哥哥王磊刚入职西门子, he works on trains.
[2] assistant: 好的，以后给你的菜谱我会去掉猪肉。
{"facts": [{"turn": 1, "text": "用户不再吃猪肉"}, {"turn": 1, "text": "用户的哥哥叫王磊"},
 {"turn": 1, "text": "用户的哥哥王磊刚入职西门子"}, {"turn": 1, "text": "用户的哥哥王磊 works on trains"},
 {"turn": 2, "text": "助手承诺给用户的菜谱去掉猪肉"}]}

示例 3
[1] user: 今天天气不错，你好吗？
{"facts": []}"""

_GRAPH_EN = """

Also list relations between named entities as [subject, relation, object], or [subject, relation, object,
"ended"] when the turn says it is over. The user is "I"; names stay as said. relation is snake_case: lives_in,
works_at, sibling_of, spouse_of, friend_of, colleague_of, reports_to, likes, has_profession, studies_at,
depends_on, responsible_for.
For example 2 also: "relations": [["Omar", "sibling_of", "I"], ["Omar", "works_at", "Siemens"]]"""

_GRAPH_ZH = """

同时列出实体之间的关系 relations，每条写成 [主体, 关系, 客体]；关系已经结束时写 [主体, 关系, 客体, "ended"]。
用户本人写"我"，名字保持原文。关系用英文 snake_case：lives_in, works_at, sibling_of, spouse_of, friend_of,
colleague_of, reports_to, likes, has_profession, studies_at, depends_on, responsible_for。
示例 2 还应输出："relations": [["王磊", "sibling_of", "我"], ["王磊", "works_at", "西门子"]]"""


def render_turns(turns: Sequence[Message]) -> str:
    lines = []
    for number, turn in enumerate(turns, start=1):
        speaker = f"{turn.role} ({turn.name})" if turn.name else turn.role
        lines.append(f"[{number}] {speaker}: {turn.content}")
    return "\n".join(lines)


def extraction_prompt(turns: Sequence[Message], *, graph: bool = False) -> list[ChatMessage]:
    """The prompt's own language follows the turns': asked in English about Chinese turns (or the reverse), the
    bundled model translates the facts, and copies details from examples of the other language. Each of the
    (at most four) system prompts is fixed and comes first, so its evaluation is cached; only the turns change.
    No date is given: time words stay as said and are resolved against each turn's own timestamp."""
    chinese = any(writes_chinese(turn.content) for turn in turns)  # not a name alone ("I moved from 北京 to 上海")
    system = (_ZH + (_GRAPH_ZH if graph else "")) if chinese else (_EN + (_GRAPH_EN if graph else ""))
    return [ChatMessage("system", system), ChatMessage("user", render_turns(turns))]


def correction_note(
    translated: Sequence[int],
    redated: Sequence[int] = (),
    altered: Mapping[int, Sequence[str]] | None = None,
    denied: Mapping[int, Sequence[str]] | None = None,
    reversed_now: Mapping[int, Sequence[str]] | None = None,
    wished: Mapping[int, Sequence[str]] | None = None,
    reassigned: Mapping[int, Sequence[str]] | None = None,
    to_the_user: Mapping[int, Sequence[str]] | None = None,
    related: Mapping[int, Sequence[str]] | None = None,
) -> ChatMessage:
    """Asked once when facts come back translated, naming a time their turn does not say, changing a name or
    dropping a negation or adding one to what holds now (a small model's habits: "I moved here last month" written
    as "用户去年搬到这里", 团子 written as 团队, "其实我不对花生过敏，是对虾过敏" as "用户对花生过敏，不对虾过敏",
    "我现在对头孢过敏" as "用户不再对头孢过敏", "我下个月要去东京出差" as "用户下个月想去东京出差")."""
    asks = []
    if translated:
        asks.append(f"Facts {_numbers(translated)} are not in the language of their turn: write each in the language "
                    "its turn was said in. Never translate.")  # fmt: skip
    if redated:
        asks.append(f"Facts {_numbers(redated)} name a time their turn does not say: keep the turn's own time words "
                    "(\"last month\" stays \"last month\", \"上个月\" stays \"上个月\").")  # fmt: skip
    for index, words in sorted((altered or {}).items()):
        asks.append(f"Fact {index + 1} writes {'、'.join(words)}, which its turn does not say: copy every name "
                    "exactly as the turn writes it.")  # fmt: skip
    for index, words in sorted((denied or {}).items()):
        asks.append(f"Fact {index + 1} says {'、'.join(words)} as so, but its turn says not: keep every negation "
                    "of the turn (不, 没, not, never) where the turn puts it.")  # fmt: skip
    for index, words in sorted((reversed_now or {}).items()):
        asks.append(f"Fact {index + 1} says {'、'.join(words)} as not so, but its turn says it is so now: write what "
                    "the turn says holds now as it says it, without a negation.")  # fmt: skip
    for index, words in sorted((wished or {}).items()):
        asks.append(f"Fact {index + 1} writes {'、'.join(words)}, but its turn says no wish: write what the user will "
                    "do or does as the turn says it (要去 stays 要去, \"I'm flying\" stays a plan).")  # fmt: skip
    for index, words in sorted((reassigned or {}).items()):
        asks.append(f"Fact {index + 1} says of the user's {'、'.join(words)} what its turn says of the user: write "
                    "each fact about the one the turn says it of (我… is the user).")  # fmt: skip
    for index, words in sorted((to_the_user or {}).items()):
        asks.append(f"Fact {index + 1} says of the user what its turn says of {'、'.join(words)}: write it about "
                    f"{'、'.join(words)}, by name, as the turn does.")  # fmt: skip
    for index, words in sorted((related or {}).items()):
        asks.append(f"Fact {index + 1} calls someone the user's {'、'.join(words)}, which the turns do not say: name "
                    "them as the turns do, without a relation they do not give.")  # fmt: skip
    return ChatMessage("user", " ".join([*asks, "Answer again with the same facts."]))


def _numbers(indexes: Sequence[int]) -> str:
    return ", ".join(str(i + 1) for i in indexes)

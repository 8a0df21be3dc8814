"""Ask how a new fact relates to one stored memory: the same, in conflict, or compatible (both can be true).

The question is small and local on purpose. A 1.5B model asked to reconcile a list of memories at once
deleted unrelated facts and "updated" facts to identical text; asked about one pair, with a three-word answer
it cannot step outside of (the JSON schema constrains decoding), it answers well. Measured on 28 labelled
bilingual pairs, "compatible: both can be true at the same time" was judged far better than "unrelated"
(which the model read as "a different topic" and answered "contradicts" for half of the unrelated pairs).
The engine, not the model, then decides what to write (``write/decide.py``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from memstrata.providers.llm import ChatMessage

Relation = Literal["same", "refines", "contradicts", "unrelated"]  # what the engine reasons with
Answer = Literal["compatible", "conflict", "same"]  # what the model is asked for

_EXAMPLES = [
    ("User drinks green tea every morning", "User now drinks only water", "conflict"),
    ("用户住在南京", "用户的同事小刘住在南京", "compatible"),
    ("用户叫陈静", "User's name is Chen Jing", "same"),
    ("用户喜欢喝乌龙茶", "用户下周去广州出差", "compatible"),
    ("用户不喜欢夏天", "用户现在喜欢夏天了", "conflict"),
    ("User lives in Madrid", "User is learning Spanish", "compatible"),
    ("User drives a Tesla Model 3", "用户把车卖了", "conflict"),
    ("用户喜欢吃甜食", "用户不吃葱", "compatible"),
    ("User works at Stripe", "User started a job at Shopify", "conflict"),
    ("用户前年去过韩国", "用户明年要去韩国旅游", "compatible"),
    ("用户养了一只猫", "User has a cat named Momo", "compatible"),
    ("User is allergic to mangoes", "用户对芒果过敏", "same"),
    ("User likes classical music", "User's wife likes jazz", "compatible"),
    ("用户住在上海", "用户搬到了苏州", "conflict"),
    ("User has two kids", "User is the parent of two children", "same"),
    ("用户是素食者", "用户不吃肉", "same"),
]

_SYSTEM = (
    "Two statements about a user: OLD was stored earlier, NEW was just said. Answer with one word:\n"
    "conflict: NEW shows that OLD is no longer true (it changed, ended, or is now the opposite).\n"
    "compatible: both can be true at the same time and NEW adds something (another topic, another person, "
    "more detail).\n"
    "same: NEW adds nothing: it says what OLD says, in other words or another language.\n\n"
    + "\n".join(f'OLD: {old}\nNEW: {new}\n{{"answer": "{answer}"}}\n' for old, new, answer in _EXAMPLES)
)


_RELATION: dict[Answer, Relation] = {"conflict": "contradicts", "compatible": "unrelated", "same": "same"}


class Verdict(BaseModel):
    answer: Answer

    def relation(self) -> Relation:
        return _RELATION[self.answer]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def compare_prompt(new: str, old: str) -> list[ChatMessage]:
    """The fixed system prompt (cached by a local model) and one pair."""
    return [ChatMessage("system", _SYSTEM), ChatMessage("user", f"OLD: {_one_line(old)}\nNEW: {_one_line(new)}")]

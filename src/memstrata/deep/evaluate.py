"""The skeptical evaluator (seed 002): are these memories enough to answer, what is missing, what to search next.

The model is asked to doubt: "sufficient" only when the memories state the answer. Its verdict is checked
(a "not sufficient" needs a next query in the question's language) and replaced by the offline verdict
when it fails or answers garbage, which the trace records. The offline evaluator counts coverage: every
part of the question (its sub-questions, else the question) needs a hit of its own with relevance at least
``COVERED``, and every entity the question names must appear in some top hit; the first gap becomes the next
query (its content words, so the next round searches differently from the first).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from memstrata.deep.asking import ask
from memstrata.deep.heuristics import keyword_query
from memstrata.deep.trace import StepTrace, Understanding, Verdict
from memstrata.deep.understand import same_language
from memstrata.providers.llm import ChatMessage, ChatModel
from memstrata.types import SearchHit

COVERED = 0.35  # calibrated relevance from which a hit is taken to answer a part of the question
SHOWN_CHARS = 200  # each memory is cut to this many characters in the evaluator's prompt


class VerdictReply(BaseModel):
    sufficient: bool
    missing: str = Field(default="", max_length=300)
    next_query: str = Field(default="", max_length=300)


_SYSTEM = {
    "en": "You check whether retrieved memories answer a question. Be skeptical: say sufficient only if the "
    "memories state the answer. Answer in JSON, in English.",
    "zh": "你检查检索到的记忆能否回答问题。要保持怀疑：只有记忆里明确写着答案时才算 sufficient。"
    "用 JSON 回答，内容用中文。",
}
_ASK = {
    "en": "Question: {question}\nMemories:\n{memories}\nsufficient: true or false\nmissing: what is not "
    "found yet (short)\nnext_query: a search query for what is missing",
    "zh": "问题：{question}\n记忆：\n{memories}\nsufficient：true 或 false\nmissing：还缺什么（简短）\n"
    "next_query：为找到缺少的内容而写的检索语句",
}


def _shown(hit: SearchHit) -> str:
    when = hit.memory.event_time or hit.memory.created_at
    text = " ".join(hit.memory.text.split())
    text = text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "…"
    return f"({when.date().isoformat()}) {text}"


def evaluator_messages(understanding: Understanding, hits: Sequence[SearchHit]) -> list[ChatMessage]:
    language = understanding.language
    memories = "\n".join(f"{n}. {_shown(hit)}" for n, hit in enumerate(hits, start=1)) or "(none)"
    prompt = _ASK[language].format(question=understanding.question, memories=memories)
    return [ChatMessage("system", _SYSTEM[language]), ChatMessage("user", prompt)]


def _echoes_instructions(text: str) -> bool:
    """Small models fill fields with the prompt's own descriptions ("a search query for what is missing")."""
    said = text.strip().lower().rstrip(".。")
    return len(said) >= 6 and any(said in prompt.lower() for prompt in _ASK.values())


def check_verdict(reply: VerdictReply, understanding: Understanding) -> VerdictReply:
    if _echoes_instructions(reply.next_query) or _echoes_instructions(reply.missing):
        raise ValueError("the verdict repeats the instructions instead of judging the memories")
    if reply.sufficient:
        return reply
    next_query = reply.next_query.strip()
    if not next_query or not keyword_query(next_query):
        raise ValueError("'not sufficient' came without a next query")
    if not same_language(next_query, understanding.language):
        raise ValueError(f"the next query {next_query!r} is not in the question's language")
    return reply


def heuristic_verdict(
    understanding: Understanding, hits: Sequence[SearchHit], best_by_query: Mapping[str, float], searched: set[str]
) -> Verdict:
    """Coverage of the question's parts and entities by the top hits (see the module docstring)."""
    parts = understanding.sub_questions or (understanding.question,)
    gaps = [part for part in parts if best_by_query.get(part, 0.0) < COVERED]
    shown = " ".join(hit.memory.text.lower() for hit in hits)
    gaps += [name for name in understanding.entities if name.lower() not in shown]
    if not gaps:
        return Verdict(sufficient=True, source="heuristic")
    for gap in gaps:
        for candidate in (keyword_query(gap), gap):
            if candidate and candidate not in searched:
                return Verdict(sufficient=False, missing=gap, next_query=candidate, source="heuristic")
    return Verdict(sufficient=False, missing=gaps[0], next_query="", source="heuristic")


def evaluate(
    understanding: Understanding,
    hits: Sequence[SearchHit],
    model: ChatModel | None,
    *,
    round_number: int,
    max_tokens: int,
    best_by_query: Mapping[str, float],
    searched: set[str],
) -> tuple[Verdict, StepTrace]:
    asked = ask(model, evaluator_messages(understanding, hits), VerdictReply, max_tokens=max_tokens,
                check=lambda reply: check_verdict(reply, understanding))  # fmt: skip
    if asked.data is not None:
        reply = asked.data
        verdict = Verdict(sufficient=reply.sufficient, missing=reply.missing.strip(),
                          next_query=reply.next_query.strip(), source="model")  # fmt: skip
    else:
        verdict = heuristic_verdict(understanding, hits, best_by_query, searched)
    said = "sufficient" if verdict.sufficient else f"missing: {verdict.missing} | next: {verdict.next_query}"
    return verdict, asked.step("evaluate", round_number, [said])

"""Extraction: raw turns in, candidate facts out. A model does it, or the rules fallback does."""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar

from memstrata.graph.extracted import Triple
from memstrata.graph.names import is_user
from memstrata.graph.rules import mention
from memstrata.graph.vocabulary import canonical_relation
from memstrata.han import HAN_CHAR, mostly_chinese, speaks_chinese, writes_chinese
from memstrata.lexical import has_han
from memstrata.patterns import lazy_pattern
from memstrata.prompts.extract_facts import (
    ExtractedRelation,
    FactList,
    FactsAndRelations,
    correction_note,
    extraction_prompt,
)
from memstrata.providers.llm import ChatMessage, ChatModel, ModelOutputError, StructuredResult
from memstrata.read.evidence import memory_terms
from memstrata.types import Message
from memstrata.write.decisions import Extraction, NewFact
from memstrata.write.facts import make_fact, time_supported
from memstrata.write.fidelity import altered_names, invented_relations, invented_wishes
from memstrata.write.polarity import denied_now, dropped_denials
from memstrata.write.reassigned import given_to_another, given_to_the_user
from memstrata.write.script import in_the_turns_script
from memstrata.write.smalltalk import select_turns
from memstrata.write.turn_batches import input_budget, turn_batches

# A fact that still alters a name of its turn or drops one of its negations after the retry: below the pending
# gate (0.5), so it waits for review instead of being trusted (write/fidelity.py, write/polarity.py).
ALTERED_CONFIDENCE = 0.4


@dataclass
class CallStats:
    """Model cost of one job, recorded in its result so it can be observed and benchmarked."""

    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attempts: int = 0
    seconds: float = 0.0
    raw_outputs: list[str] = field(default_factory=list)
    stages: dict[str, dict[str, float]] = field(default_factory=dict)  # per stage: calls, tokens, seconds

    def record(self, result: StructuredResult[Any], stage: str = "extract") -> None:
        self.model_calls += 1
        self.attempts += result.attempts
        self.prompt_tokens += result.usage.prompt_tokens
        self.completion_tokens += result.usage.completion_tokens
        self.seconds += result.latency_s
        self.raw_outputs.append(result.raw)
        row = self.stages.setdefault(stage, {"model_calls": 0, "prompt_tokens": 0, "completion_tokens": 0})
        row["model_calls"] += 1
        row["prompt_tokens"] += result.usage.prompt_tokens
        row["completion_tokens"] += result.usage.completion_tokens
        if result.cut_off:  # only its whole items were kept: the job result says so
            row["cut_off"] = row.get("cut_off", 0) + 1

    def record_failure(self, raw_outputs: list[str], stage: str) -> None:
        """A call whose output never validated: counted, its raw output kept for the job result."""
        self.model_calls += 1
        self.raw_outputs += raw_outputs
        row = self.stages.setdefault(stage, {"model_calls": 0, "prompt_tokens": 0, "completion_tokens": 0})
        row["model_calls"] += 1
        row["invalid"] = row.get("invalid", 0) + 1

    def timed(self, stage: str, started: float) -> None:
        """Add the wall time since ``started`` (perf_counter) to ``stage``."""
        row = self.stages.setdefault(stage, {"model_calls": 0, "prompt_tokens": 0, "completion_tokens": 0})
        row["seconds"] = round(row.get("seconds", 0.0) + time.perf_counter() - started, 3)


class Extractor(Protocol):
    name: str

    def extract(self, turns: Sequence[Message], *, stats: CallStats) -> Extraction:
        """Facts (and, if it can, relation triples) said in ``turns`` (any roles), in their own language."""
        ...


class LLMExtractor:
    """``graph=True`` asks the same call for relation triples too, as compact [subject, relation, object] lists."""

    def __init__(self, model: ChatModel, *, max_tokens: int = 500, graph: bool = True, n_ctx: int = 4096) -> None:
        self.model = model
        self.name = f"llm:{model.model_id}"
        self.graph = graph
        self._max_tokens = max_tokens
        # turns per call, so that no request exceeds the model's context (write/turn_batches.py)
        self._input_tokens = input_budget(n_ctx, max_tokens * 2 if graph else max_tokens)

    def extract(self, turns: Sequence[Message], *, stats: CallStats) -> Extraction:
        """One call per language present: a small model given Chinese and English turns together tends to
        write every fact in one language, so each language gets its own call (same cached system prompt), and
        more calls where the turns would not fit the model's context (long ones in pieces). Small talk and bare
        acknowledgements never reach the model."""
        worth = select_turns(turns)
        chinese = [turn for turn in worth if writes_chinese(turn.content)]
        other = [turn for turn in worth if not writes_chinese(turn.content)]
        found = Extraction()
        for group in (chinese, other):
            for batch in turn_batches(group, self._input_tokens):
                found += self._extract_or_split(batch, stats)
        return found

    def _extract_or_split(self, turns: Sequence[Message], stats: CallStats) -> Extraction:
        """One call for the turns; if its output never validates, one call per turn. The bundled model looped on one
        of three mixed-language turns until its token limit, every attempt, and the job lost the facts of all three;
        a retry met the same loop. A turn that fails alone still fails the job (its raw turns are kept)."""
        try:
            return self._extract(turns, stats)
        except ModelOutputError as failure:
            if len(turns) < 2:
                raise
            stats.record_failure(failure.raw_outputs, "extract")
        found = Extraction()
        for turn in turns:
            found += self._extract([turn], stats)
        return found

    def _extract(self, turns: Sequence[Message], stats: CallStats) -> Extraction:
        graph = self.graph and any(turn.role == "user" for turn in turns)
        schema: type[FactList] = FactsAndRelations if graph else FactList
        max_tokens = self._max_tokens * 2 if graph else self._max_tokens
        messages = extraction_prompt(turns, graph=graph)
        result = _as_written(self.model.complete_structured(messages, schema, max_tokens=max_tokens), turns)
        stats.record(result, "extract")
        faults = _faults(result.data, turns)
        if faults.count:
            # Small models sometimes translate, change a time ("last month" -> "去年") or a name (团子 -> 团队),
            # drop a negation ("不对花生过敏" -> "对花生过敏") or make a plan a wish (要去 -> 想去). Ask once to
            # restore the turn's words; if the second answer is no better, keep the first: a fact with a wrong word
            # is still better than a lost one (a time its turn does not say dates nothing: write/facts.py; a fact
            # still altering a name or a plan, or dropping a negation, waits for review as pending:
            # write/fidelity.py, write/polarity.py).
            note = correction_note(
                faults.translated,
                faults.redated,
                faults.altered,
                faults.denied,
                faults.reversed,
                faults.wished,
                faults.reassigned,
                faults.to_the_user,
                faults.related,
            )
            retry = [*messages, ChatMessage("assistant", result.raw), note]
            second = _as_written(self.model.complete_structured(retry, schema, max_tokens=max_tokens), turns)
            stats.record(second, "extract")
            again = _faults(second.data, turns)
            if again.count < faults.count and (result.cut_off or not second.cut_off):
                result, faults = second, again
        # A fact still altering a name or a plan, dropping a negation or translated is kept, but waits for review
        # (Chinese stays Chinese).
        facts = _facts(result.data, turns, faults.untrusted)
        if result.cut_off and not facts:
            # The answer looped or ran out of tokens before its first fact: nothing says these turns hold none.
            raise ModelOutputError(
                f"{self.model.model_id} was cut off before its first fact (a loop, or max_tokens); the turns are kept: "
                "retry the job ('memstrata jobs --retry <id>'), or configure a larger model (llm.*)",
                raw_outputs=[result.raw],
                last_error="cut off (a loop, or max_tokens)",
            )
        relations = result.data.relations if isinstance(result.data, FactsAndRelations) else []
        found = Extraction(facts, [t for r in relations if (t := _triple(r, turns, self.name)) is not None])
        return found + self._uncovered(turns, facts, stats)

    def _uncovered(self, turns: Sequence[Message], facts: list[NewFact], stats: CallStats) -> Extraction:
        """The user's turns no fact came from, asked about alone, when the call found facts in others: given four
        turns, the bundled model wrote facts of two and said nothing of "我对花生过敏。", and the job ended done
        with the allergy lost. Alone, a turn is rarely skipped; one with nothing to keep costs a short call."""
        if len(turns) < 2 or not facts:
            return Extraction()
        covered = {message_id for fact in facts for message_id in fact.message_ids}
        found = Extraction()
        for turn in turns:
            if turn.role == "user" and turn.id not in covered:
                found += self._extract([turn], stats)
        return found


F = TypeVar("F", bound=FactList)


def _as_written(result: StructuredResult[F], turns: Sequence[Message]) -> StructuredResult[F]:
    """The answer with each fact in its turn's script (write/script.py): Traditional turns came back Simplified; and
    with the user as the one who said it where its turn is the user's."""
    facts = []
    for fact in result.data.facts:
        source = _source(fact.turn, turns, fact.text)
        said = " ".join(turn.content for turn in source)
        text = in_the_turns_script(fact.text, said)
        opening = _ASSISTANT_OPENING.match(text)
        if opening and len(source) == 1 and source[0].role == "user" and text[opening.end() :] in said:
            text = ("用户" if opening.group(1) else "User ") + text[opening.end() :]
        facts.append(fact.model_copy(update={"text": text}))
    return replace(result, data=result.data.model_copy(update={"facts": facts}))


# The model gave a user's turn to the assistant: "就在杭州周边转转吧。还有，医生把二甲双胍加到 850mg 了" came back as
# "助手还有，医生把二甲双胍加到 850mg 了" (a user trial), and the dose the user said was read as the assistant's word.
# Only the turn's own words after it: "Assistant suggested Kyoto" of "Thanks for suggesting Kyoto!" is the assistant's.
_ASSISTANT_OPENING = lazy_pattern(r"^\s*(?:(助手)|(?:the\s+)?assistant\s+)", re.IGNORECASE)


def _source(number: int, turns: Sequence[Message], text: str = "") -> list[Message]:
    """The turn a fact names; a missing or impossible number means "one of these turns": all of them."""
    number = _turn_of(text, number, turns)
    return [turns[number - 1]] if 1 <= number <= len(turns) else list(turns)


_COMMON_HAN = frozenset("用户我的是了在有一他她你们")


def _turn_of(text: str, number: int, turns: Sequence[Message]) -> int:
    """The turn a fact came from: the one the model names, unless another turn says clearly more of the fact's words.
    The bundled model numbered every fact of a four-turn call 1, so the cat of turn 4 cited turn 1 and took its time
    (and a turn with no fact of its own looked covered)."""
    if not text or not 1 <= number <= len(turns) or len(turns) == 1:
        return number
    said = [_shared(text, turn.content) for turn in turns]
    best = max(range(len(turns)), key=said.__getitem__)
    return best + 1 if said[best] > 2 * said[number - 1] else number


def _shared(text: str, said: str) -> float:
    """How much of a fact a turn says: the words both hold, and half a point per Chinese character both hold."""
    words = memory_terms(text) & memory_terms(said)
    characters = (set(HAN_CHAR.findall(text)) & set(HAN_CHAR.findall(said))) - _COMMON_HAN
    return len(words) + 0.5 * len(characters)


def _facts(found: FactList, turns: Sequence[Message], altered: set[int]) -> list[NewFact]:
    """The extracted facts; those at ``altered`` (a name or plan of their turn changed, a negation dropped, or
    translated) are kept but not trusted."""
    numbers = [_turn_of(fact.text, fact.turn, turns) for fact in found.facts]
    per_turn = Counter(numbers)
    facts = []
    for index, (extracted, number) in enumerate(zip(found.facts, numbers, strict=True)):
        source = _source(number, turns)
        fact = make_fact(extracted.text, source, only_fact_of_turn=per_turn[number] == 1)
        if fact is not None and index in altered:  # kept, but not trusted: it waits in the review queue
            fact = replace(fact, confidence=min(fact.confidence, ALTERED_CONFIDENCE))
        if fact is not None:
            facts.append(fact)
    return facts


def _triple(found: list[str] | ExtractedRelation, turns: Sequence[Message], origin: str) -> Triple | None:
    if isinstance(found, ExtractedRelation):
        parts = [found.subject, found.relation, found.object]
        ended = found.ended
        types: tuple[str | None, str | None] = (found.subject_type, found.object_type)
    else:
        parts = found[:3]
        ended = len(found) > 3 and found[3].strip().lower() in ("ended", "end", "true", "结束")
        types = (None, None)
    subject, relation, target = (" ".join(part.split()) for part in parts)
    if not subject or not target or not relation:
        return None
    source_mention, target_mention = mention(subject), mention(target)
    if types[0] and not source_mention.speaker:
        source_mention = replace(source_mention, type=source_mention.type or types[0])
    if types[1] and not target_mention.speaker:
        target_mention = replace(target_mention, type=target_mention.type or types[1])
    return Triple(
        source_mention,
        canonical_relation(relation),
        target_mention,
        0.8,
        _mentioning(turns, subject, target),
        ended=ended,
        origin=origin,
    )


def _mentioning(turns: Sequence[Message], *names: str) -> tuple[str, ...]:
    """The turns a compact triple came from (it carries no turn number): user turns naming one of its ends,
    else every user turn of the call. Its valid time is the earliest of their timestamps."""
    folded = [name.casefold() for name in names if not is_user(name)]
    users = [turn for turn in turns if turn.role == "user"] or list(turns)
    naming = [turn for turn in users if any(name in turn.content.casefold() for name in folded)]
    return tuple(turn.id for turn in naming or users)


@dataclass(frozen=True)
class _Faults:
    """What a model's facts got wrong about their turns, by fact index."""

    translated: list[int]
    redated: list[int]
    altered: dict[int, list[str]]  # a name of the turn changed (write/fidelity.py): the nouns written instead
    denied: dict[int, list[str]]  # a negation of the turn dropped (write/polarity.py): the words it denied
    reversed: dict[int, list[str]]  # what the turn says holds now, denied (polarity.denied_now): those words
    wished: dict[int, list[str]]  # a wish the turn does not say (fidelity.invented_wishes): the wish words
    # what the turn says of the speaker, given to a relative (reassigned.given_to_another): the relation words
    reassigned: dict[int, list[str]]
    # what a turn says only of someone it names, given to the user (reassigned.given_to_the_user): that name
    to_the_user: dict[int, list[str]]
    # a relation no turn of the call gives the one a fact names (fidelity.invented_relations): the relation word
    related: dict[int, list[str]]

    @property
    def _by_fact(self) -> tuple[dict[int, list[str]], ...]:
        return self.altered, self.denied, self.reversed, self.wished, self.reassigned, self.to_the_user, self.related

    @property
    def count(self) -> int:
        return len(self.translated) + len(self.redated) + sum(len(by_fact) for by_fact in self._by_fact)

    @property
    def untrusted(self) -> set[int]:
        return set(self.translated).union(*self._by_fact)


def _faults(found: FactList, turns: Sequence[Message]) -> _Faults:
    return _Faults(
        _translated(found, turns),
        _redated(found, turns),
        _per_fact(found, turns, altered_names),
        _per_fact(found, turns, dropped_denials),
        _per_fact(found, turns, denied_now),
        _per_fact(found, turns, invented_wishes),
        _per_fact(found, turns, given_to_another),
        _per_fact(found, turns, given_to_the_user),
        _per_fact(found, turns, invented_relations, whole_call=True),
    )


def _redated(found: FactList, turns: Sequence[Message]) -> list[int]:
    """Indexes of facts naming a time that no time of their source turns overlaps (each read against the turn's
    own timestamp)."""
    return [index for index, fact in enumerate(found.facts)
            if not time_supported(fact.text, _source(fact.turn, turns, fact.text))]  # fmt: skip


def _per_fact(
    found: FactList, turns: Sequence[Message], check: Callable[[str, str], list[str]], *, whole_call: bool = False
) -> dict[int, list[str]]:
    """Facts for which ``check(fact, its turns' text)`` finds words (``whole_call``: every turn of the call, where
    what the fact may know was said in another turn of it): index -> words."""
    flagged = {}
    for index, fact in enumerate(found.facts):
        said = turns if whole_call else _source(fact.turn, turns, fact.text)
        source = " ".join(turn.content for turn in said)
        if words := check(fact.text, source):
            flagged[index] = words
    return flagged


def _translated(found: FactList, turns: Sequence[Message]) -> list[int]:
    """Indexes of facts not in the language of their turns:
    - Chinese although the source holds no Chinese, or only names in Chinese ("My sister's clinic is called 微笑正畸 in
      成都" became "用户妹妹的诊所叫 微笑正畸 in 成都"); a turn that speaks Chinese too may give a Chinese fact ("我住在
      深圳, and I work at DJI": "用户在 DJI 做无人机工程师");
    - for a source mostly in Chinese, a fact without Chinese that says words the source does not ("我喜欢 hiking，周末
      常去爬山" became "User likes hiking and often climbs mountains").
    A fact restating the English of a mixed turn in its own words ("User is learning Rust" of "I started learning
    Rust. 我还报了一个日语班。") is no translation."""
    flagged = []
    for index, fact in enumerate(found.facts):
        said = " ".join(turn.content for turn in _source(fact.turn, turns, fact.text))
        if has_han(fact.text):
            translated = not has_han(said) or (not speaks_chinese(said) and len(_new_han(fact.text, said)) >= 2)
        else:
            translated = mostly_chinese(said) and not memory_terms(fact.text) - {"user"} <= memory_terms(said)
        if translated:
            flagged.append(index)
    return flagged


def _new_han(fact: str, said: str) -> set[str]:
    """Chinese characters of a fact that its source never uses, past the framing and the commonest function words."""
    return set(HAN_CHAR.findall(fact)) - set(HAN_CHAR.findall(said)) - _COMMON_HAN

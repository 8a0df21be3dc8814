"""Session summaries: one memory that holds the gist of a whole session, linked to every turn in it.

A fact spread over a session ("she adopted... the agency said... next month") is in no single turn;
a summary gives search one place where the session's main words sit together. Pure: this builds
the memory; the write path stores it (with its vector) at the end of a session.

- Extractive (offline, always available): the session's most central sentences, in their order,
  with who said them. A sentence is central when its words recur across the session (the session's
  topics), discounted by length; near-repeats of a chosen sentence are skipped. Chinese stays
  Chinese: sentences are copied verbatim, never translated or rewritten.
- Model-written: when a model is configured, ``write`` (a callable taking the transcript and
  returning a summary) is tried first; its text is kept only if it is non-empty, within the length
  limit and shares words with the session. Otherwise the extractive summary is used and the
  metadata says why, so a model that answers garbage never loses the summary.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel

from memstrata.errors import ProviderError
from memstrata.lexical import keyword_tokens
from memstrata.patterns import lazy_pattern
from memstrata.providers.llm import ChatMessage, ChatModel
from memstrata.smalltalk import is_small_talk
from memstrata.types import JsonDict, MemoryItem, Message, Provenance, Scope
from memstrata.write.ingest import new_memory, turn_label

SUMMARY_KIND = "summary"
MAX_SUMMARY_CHARS = 600
MAX_SENTENCES = 6
# Chinese sentence ends end a sentence where they stand; Latin ones only before a space ("Version 3.5", "e.g.x")
# and not after a title ("Dr. Smith").
_SENTENCE_END = lazy_pattern(
    r"(?<=[。！？；])\s*|(?<=[!?;])(?=[\u4e00-\u9fff])"
    r"|(?<=[.!?;])(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bSt\.)(?<!\bNo\.)\s+|\n+"
)
_REDUNDANT = 0.6  # share of a sentence's words already chosen at which it is skipped

SummaryWriter = Callable[[str], str]


@dataclass(frozen=True)
class Sentence:
    speaker: str
    text: str
    position: int
    terms: frozenset[str]


_QUESTION = lazy_pattern(r"[?？]\s*$")


def _sentences(turns: Sequence[Message]) -> list[Sentence]:
    """The sentences worth summarising: not small talk, nor an assistant's question ("好的，预算多少？" took a place
    in a trip's summary and the flight booked at its end was left out: a user trial)."""
    out: list[Sentence] = []
    for turn in turns:
        for piece in _SENTENCE_END.split(turn.content):
            text = piece.strip()
            terms = frozenset(keyword_tokens(text))
            if not text or not terms or is_small_talk(text) or (turn.role == "assistant" and _QUESTION.search(text)):
                continue
            out.append(Sentence(turn.name or turn.role, text, len(out), terms))
    return out


def extractive_summary(
    turns: Sequence[Message], *, max_chars: int = MAX_SUMMARY_CHARS, max_sentences: int = MAX_SENTENCES
) -> str:
    """The session's most central sentences, in session order, as ``speaker: sentence`` lines."""
    sentences = _sentences(turns)
    # How many sentences each word appears in: words the session keeps coming back to are its topics.
    spread = Counter(term for sentence in sentences for term in sentence.terms)
    ranked = sorted(
        sentences,
        key=lambda s: sum(spread[term] - 1 for term in s.terms) / (len(s.terms) ** 0.5),
        reverse=True,
    )
    # Where a session ends up is part of its gist, though its words are said once: the most central sentence of
    # its last third is considered first (a trip's summary held its opening and left the booked flight out).
    late = [sentence for sentence in ranked if sentence.position >= len(sentences) * 2 // 3]
    if late and len(sentences) > max_sentences:
        ranked = [late[0], *(sentence for sentence in ranked if sentence is not late[0])]
    chosen: list[Sentence] = []
    covered: set[str] = set()
    used = 0
    for sentence in ranked:
        if len(chosen) >= max_sentences:
            break
        if len(sentence.terms & covered) >= _REDUNDANT * len(sentence.terms):
            continue
        line = f"{sentence.speaker}: {sentence.text}"
        if used + len(line) + 1 > max_chars:
            continue
        chosen.append(sentence)
        covered |= sentence.terms
        used += len(line) + 1
    if not chosen and ranked:  # every sentence is longer than the summary may be: the most central one, cut
        return f"{ranked[0].speaker}: {ranked[0].text}"[: max_chars - 1].rstrip() + "…"
    return "\n".join(f"{s.speaker}: {s.text}" for s in sorted(chosen, key=lambda s: s.position))


def transcript(turns: Sequence[Message]) -> str:
    """The session as a model reads it: one ``speaker: text`` line per turn."""
    return "\n".join(turn_label(turn) for turn in turns)


class SummaryReply(BaseModel):
    summary: str


SUMMARY_INSTRUCTIONS = (
    "Summarise the conversation below for a long-term memory in at most {max_chars} characters: who did "
    "what, when, where, and what was decided or planned. Keep names, dates, places and numbers exactly. "
    "Write in the conversation's own language and never translate (中文对话用中文总结). "
    'Answer with JSON: {{"summary": "..."}}'
)


def model_writer(chat: ChatModel, *, max_chars: int = MAX_SUMMARY_CHARS) -> SummaryWriter:
    """A summary writer backed by a chat model (the prompt may move to prompts/ when wired)."""

    def write(text: str) -> str:
        messages = [
            ChatMessage("system", SUMMARY_INSTRUCTIONS.format(max_chars=max_chars)),
            ChatMessage("user", text),
        ]
        return chat.complete_structured(messages, SummaryReply, max_tokens=max_chars // 2).data.summary

    return write


def _usable(text: str, session_terms: set[str], max_chars: int) -> str | None:
    """Why a model's summary is refused, or None when it can be kept."""
    if not text.strip():
        return "empty"
    if len(text) > max_chars:
        return f"longer than {max_chars} characters"
    if not set(keyword_tokens(text)) & session_terms:
        return "shares no word with the session"
    return None


def _model_summary(turns: Sequence[Message], write: SummaryWriter, details: JsonDict, max_chars: int) -> str | None:
    """The model's summary if it is usable; otherwise None, with the reason in ``details``."""
    try:
        candidate = write(transcript(turns)).strip()
    except ProviderError as exc:  # the extractive summary stands in; the metadata says why
        details["model_refused"] = f"model failed: {exc}"
        return None
    refused = _usable(candidate, {t for turn in turns for t in keyword_tokens(turn.content)}, max_chars)
    if refused is not None:
        details["model_refused"] = refused
        return None
    details["method"] = "model"
    return candidate


def session_summary(
    turns: Sequence[Message],
    scope: Scope,
    *,
    now: datetime,
    write: SummaryWriter | None = None,
    metadata: JsonDict | None = None,
    max_chars: int = MAX_SUMMARY_CHARS,
) -> MemoryItem | None:
    """A ``summary`` memory for a session's turns (None when the session has nothing to summarise).

    Its provenance lists every turn of the session, so a hit can be expanded to them
    (read/expand.py); its event time is the session's first turn.
    """
    if not turns or not _sentences(turns):
        return None
    details: JsonDict = {**(metadata or {}), "turns": len(turns)}
    text = _model_summary(turns, write, details, max_chars) if write is not None else None
    if text is None:
        text, details["method"] = extractive_summary(turns, max_chars=max_chars), "extractive"
    if not text.strip():
        return None
    return new_memory(
        scope,
        text,
        now=now,
        kind=SUMMARY_KIND,
        metadata=details,
        provenance=Provenance(source="messages", message_ids=tuple(turn.id for turn in turns)),
        event_time=min(turn.timestamp for turn in turns),
    )

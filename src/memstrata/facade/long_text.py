"""Texts longer than ``limits.max_text_chars``: kept, in parts that each fit the indexes.

One memory's text is what its vector and keyword entry describe, and an embedding of 100k characters
says little about any of them (and takes seconds), so a long text is not refused but cut into
consecutive parts at the strongest break near the limit (paragraph, line, sentence, clause, space). The
parts cover the text exactly: joined in order they give it back. A long conversation turn stays whole
as its raw message; its episodes are the parts, each pointing back at the turn with its character span.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from memstrata.facade.core import MemoryCore
from memstrata.sentences import split_spans
from memstrata.types import JsonDict, MemoryItem, Message, Scope
from memstrata.validation import is_blank
from memstrata.write import ingest
from memstrata.write.ingest import episode_memories


def part_label(number: int, total: int) -> str:
    return f"{number}/{total}"


def preceding_turns(core: MemoryCore, scope: Scope) -> list[Message]:
    """The latest turns stored under exactly this scope, oldest first: what a new turn is indexed with (turns
    often arrive one ``add()`` at a time, so the turn before is usually already stored). A user's scope also
    reads every session's turns; a turn without a session was indexed with the words of another session."""
    if not ingest.CONTEXT_TURNS:  # read at call time: the ranking bench measures other values
        return []
    latest = core.store.messages(scope, ingest.CONTEXT_TURNS * 4, latest=True)
    return [stored.message for stored in latest if stored.scope == scope][-ingest.CONTEXT_TURNS :]


def turn_episodes(
    messages: Sequence[Message],
    scope: Scope,
    metadata: JsonDict,
    now: datetime,
    *,
    max_chars: int,
    previous: Sequence[Message] = (),
) -> list[MemoryItem]:
    """Episodes of the turns: one per turn, or one per part of a long turn; none for an empty turn (a tool call or
    an image with no text is still kept as a raw turn). ``previous``: the scope's turns just before these, oldest
    first; each episode is indexed with the turn before it (see ``episode_memories``)."""
    episodes: list[MemoryItem] = []
    earlier = list(previous)
    for message in messages:
        if is_blank(message.content):
            continue
        spans = split_spans(message.content, max_chars)
        context = earlier[-ingest.CONTEXT_TURNS :] if ingest.CONTEXT_TURNS else []
        earlier.append(message)
        if len(spans) == 1:
            episodes.extend(episode_memories([message], scope, metadata, now, previous=context))
            continue
        for number, (start, end) in enumerate(spans, start=1):
            part = message.model_copy(update={"content": message.content[start:end]})
            (episode,) = episode_memories([part], scope, metadata, now, previous=context)
            episodes.append(
                episode.model_copy(
                    update={
                        "metadata": {**episode.metadata, "part": part_label(number, len(spans))},
                        "provenance": episode.provenance.model_copy(update={"span": (start, end)}),
                    }
                )
            )
    return episodes

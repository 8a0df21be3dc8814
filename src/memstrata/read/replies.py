"""The assistant's replies in a conversation imported whole: a question it asks states nothing, and a reply that
echoes the user's turn answers after that turn (read/pipeline.py applies :func:`turns_before_their_replies` last)."""

from __future__ import annotations

from collections.abc import Sequence

from memstrata.indexing import states_for_the_user
from memstrata.patterns import lazy_pattern
from memstrata.read.move_up import means_as_much, move_up, within_reach
from memstrata.read.own_first import MARGIN
from memstrata.types import MemoryItem, SearchHit

# The user's turn that tells something, below the assistant's reply to it: the reply's own words are few ("好的，祝手术
# 顺利。") and a short text is the embedder's favourite, so it scores well above the turn it only echoes.
TOLD_MARGIN = 0.5


# A turn that ends asking: the assistant's question holds the topic's words and no answer.
_ASKED = lazy_pattern(r"[?？]\s*$|[吗呢]\s*$")


def assistant_asks(item: MemoryItem) -> bool:
    """An assistant's turn that ends in a question ("Does that change which nights you cook?"): it states nothing."""
    return not states_for_the_user(item) and bool(_ASKED.search(item.text))


def turns_before_their_replies(
    hits: Sequence[SearchHit], *, margin: float = MARGIN, told_margin: float = TOLD_MARGIN
) -> list[SearchHit]:
    """The user's turn before the assistant's reply to it: a reply echoes the turn ("Lucky you, a chef boyfriend!"
    after "my bf 阿杰 is a chef"), and the turn's words count for it too (``search.reply_context_weight``), so it led
    "Who was my boyfriend in 2022?" (0.86 to 0.70; found by a user trial). And before the assistant's question it
    answers: "Does that change which nights you cook?" led "Which nights can I cook?" above the user's "Yes, I can
    cook Thursday to Sunday now" (another trial). What the user said answers, where it is close: within ``margin``,
    or as close in meaning. A turn that tells something rather than asks is within ``told_margin`` of the reply to
    it: "好的，祝手术顺利。" (0.40, short, the embedder's favourite) led "我的手术是哪天？" above the turn it wished
    luck to, "12月20号要去省人民医院做膝盖手术。" (0.28; a trial). A reply to a question may hold its answer, so
    there the margin stays."""

    def answers_instead(hit: SearchHit, above: SearchHit) -> bool:
        if states_for_the_user(above.memory) or not states_for_the_user(hit.memory):
            return False
        replied_to = str(above.memory.metadata.get("preceding_turns", "")).rstrip()
        asked_first = str(hit.memory.metadata.get("preceding_turns", "")).rstrip()
        answered = assistant_asks(above.memory) and asked_first.endswith(above.memory.text.strip())
        if not (replied_to.endswith(hit.memory.text.strip()) or answered):
            return False
        reach = margin if _ASKED.search(hit.memory.text) else told_margin
        return within_reach(hit, above, reach) or means_as_much(hit, above)

    return move_up(hits, answers_instead, best=lambda hit: hit.score)

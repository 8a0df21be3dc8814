"""Words that make a statement something other than how things are: a hedge ("我可能…", "maybe") or a plan
("打算", "going to"). The write path files a plan as a plan and gives a hedged fact less confidence; the graph
makes no edge of a maybe or a plan ("我可能下个月搬去深圳" is not where the speaker lives)."""

from __future__ import annotations

import re

# A maybe is not how things are ("我可能下个月搬去深圳"); a "seems" is a softer fact ("王总好像喜欢红酒": the graph
# keeps that edge), so it only lowers a fact's confidence.
MAYBE = r"可能|也许|或许|大概|说不定|\b(?:maybe|might|probably|perhaps)\b"
HEDGE = rf"{MAYBE}|好像|似乎|\b(?:not sure|i think|i guess)\b"
PLAN = (r"打算|计划|准备|将要|要去|想去|下周|下个?月|明天|明年|下次|后天|即将|"
        r"\b(?:will|going to|plans?|planning|intends?|next (?:week|month|year)|tomorrow|upcoming)\b")  # fmt: skip

HEDGED = re.compile(HEDGE, re.IGNORECASE)
PLANNED = re.compile(PLAN, re.IGNORECASE)
# What is not (yet) how things are, for the graph's edges and the words a statement of change is indexed with
# (indexing.change_answers): a maybe, a plan, and the softer intentions ("考虑", "thinking of", "we'll").
NOT_YET = re.compile(
    rf"{MAYBE}|{PLAN}|考虑|想要去|以后|\b(?:may|plan to|thinking (?:of|about)|considering)\b|'ll\b", re.IGNORECASE
)

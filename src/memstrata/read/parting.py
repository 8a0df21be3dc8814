"""A parting ends a relationship, not the one parted from.

A user trial: "My boyfriend Leo is a pastry chef, he makes amazing croissants", and months later "Leo and I broke up
last week". "What did Leo do for a living?" got the breakup first, as later news that ends what the first statement
names (read/endings.py) and as a later statement of change (read/newer.py). The breakup says nothing of what Leo does:
it answers instead only for a question about the relationship ("Who is my boyfriend?", "Is Leo still my
boyfriend?"), or for one that does not name him.
"""

from __future__ import annotations

import re

from memstrata.han import simplified
from memstrata.patterns import lazy_pattern
from memstrata.read.names import name_pattern, names_in
from memstrata.types import MemoryItem

_PARTING = lazy_pattern(r"分手|离婚|分开了|\b(?:broke up|split up|divorced|separated)\b", re.IGNORECASE)
_OF_A_RELATIONSHIP = lazy_pattern(
    r"男朋友|女朋友|男友|女友|老公|老婆|丈夫|妻子|对象|前任|恋爱|在一起|单身|分手|离婚|结婚|约会"
    r"|\b(?:boyfriends?|girlfriends?|partners?|husband|wife|spouse|fianc\w*|ex|dating|together|relationship|single"
    r"|married|broke up|break up|split up|divorced?|separated)\b",
    re.IGNORECASE,
)


def asks_past_the_parting(query_text: str, earlier: MemoryItem, later: MemoryItem) -> bool:
    """Whether ``later`` is a parting from someone ``earlier`` names and the question asks about by name, and the
    question says nothing of the relationship: it asks what that one does or is ("Leo是做什么工作的？"), which the
    parting leaves as it was. "Who is my boyfriend?" and "Is Leo still my boyfriend?" still get the parting first."""
    parted = simplified(later.text)
    if not _PARTING.search(parted) or _OF_A_RELATIONSHIP.search(query_text):
        return False
    return any(
        name_pattern(name, re.IGNORECASE).search(query_text) and name_pattern(name).search(parted)
        for name in names_in(earlier.text)
    )

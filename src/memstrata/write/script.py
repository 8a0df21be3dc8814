"""A fact in the script its turn was written in.

The bundled model often answers a turn in Traditional Chinese with facts in Simplified: "其實我不是對貓毛過敏，醫生說是
塵蟎。" became "用户不是对猫毛过敏" and "医生说是尘蟎" (a user trial). Chinese stays as the user wrote it, and the
fidelity checks then read a changed name in every changed character, so both facts waited for review. Each piece of a
fact that its turn says, read as Simplified (han.simplified), is given back in the turn's own characters; the words
the fact adds ("用户") stay as the model wrote them.
"""

from __future__ import annotations

from memstrata.han import simplified
from memstrata.lexical import has_han


def in_the_turns_script(fact: str, said: str) -> str:
    """``fact`` with each piece ``said`` holds (read as Simplified) in ``said``'s own characters; ``fact`` unchanged
    when ``said`` is written in Simplified, or reads as Simplified in another length (a phrase converted whole)."""
    read = simplified(said)
    if read == said or len(read) != len(said) or not has_han(fact):
        return fact
    pieces, start = [], 0
    while start < len(fact):
        end = len(fact)
        while end > start + 1 and fact[start:end] not in read:  # the longest piece the turn says
            end -= 1
        at = read.find(fact[start:end])
        pieces.append(said[at : at + end - start] if at >= 0 else fact[start:end])
        start = end
    return "".join(pieces)

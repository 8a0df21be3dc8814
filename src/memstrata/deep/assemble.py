"""Packing what an agent should read into a token budget: rules, key facts, the user's profile, memories, the
session.

Every piece (a key fact, a memory with its source turns, a session turn) comes as a ladder of renderings,
richest first: a memory with two source turns, with one, alone, cut short. Breadth first: in order of
need, each piece gets its barest rendering while the budget lasts; then depth: in the same order, each is
raised to the richest rendering that still fits. Need: key facts the query names (always in; the budget
must hold them), then memories by rank (a session turn the search found among them, at its rank), then the
session's other turns (newest first, at most ``SESSION_SHARE`` of the budget), then the user's standing facts
(deep/profile.py, at most ``PROFILE_SHARE``), then other key facts (at most ``FACTS_SHARE``). The text keeps the
reading order: rules, key facts, profile, memories, session. Rules are verbatim and first; a budget that cannot
hold them is refused.

Tokens are counted with the project's estimator (``estimate_tokens``: one per Chinese character, one
per four other characters); the whole text never exceeds the budget by that count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from memstrata.errors import InvalidInputError
from memstrata.lifecycle.session import estimate_tokens
from memstrata.sentences import cut_to_budget

Section = Literal["facts", "profile", "memories", "session"]
HEADERS: dict[Section, str] = {"facts": "## Key facts", "profile": "## About the user", "memories": "## Memories",
                               "session": "## This session"}  # fmt: skip
RULES_HEADER = "## Rules"
SESSION_SHARE = 0.3
PROFILE_SHARE = 0.2
FACTS_SHARE = 0.15


@dataclass(frozen=True)
class Piece:
    section: Section
    rungs: tuple[str, ...]  # richest first; the last is the barest
    order: int  # position in its section's reading order
    required: bool = False  # a key fact the query names: in, or the budget is refused
    # a key fact that answers the query (its relevance clears the cutoff): as needed as a memory, and not held to
    # the share kept for profile facts (the current phone number lost to an old one under a small budget)
    relevant: bool = False
    memory_id: str | None = None
    # a session turn the search found: needed as the memory at this rank would be, shown in the session block
    rank: int | None = None

    def cost(self, rung: int) -> int:
        return estimate_tokens(self.rungs[rung]) + 1  # +1: its line break


def _cost_of_section(section: str) -> int:
    return estimate_tokens(section) + 2  # the header line and the blank line before it


@dataclass(frozen=True)
class Packed:
    text: str
    tokens: int
    kept: tuple[tuple[Piece, int], ...]  # each kept piece (in the order given) and the rendering chosen
    dropped: tuple[Piece, ...]


def _need(piece: Piece) -> tuple[int, float]:
    if piece.rank is not None:
        return (1, piece.rank - 0.5)  # just before the memory ranked after it
    rank = 1 if piece.relevant else {"memories": 1, "session": 2, "profile": 3, "facts": 4}[piece.section]
    return (0 if piece.required else rank, piece.order if piece.section != "session" else -piece.order)


class _Budget:
    def __init__(self, total: int, used: int) -> None:
        self.total, self.used = total, used
        self.by_section: dict[Section, int] = {}
        shares: dict[Section, float] = {"session": SESSION_SHARE, "profile": PROFILE_SHARE, "facts": FACTS_SHARE}
        self.caps = {section: int(total * share) for section, share in shares.items()}

    def fits(self, piece: Piece, extra: int) -> bool:
        opening = 0 if piece.section in self.by_section else _cost_of_section(HEADERS[piece.section])
        if self.used + opening + extra > self.total:
            return False
        cap = None if piece.required or piece.relevant or piece.rank is not None else self.caps.get(piece.section)
        return cap is None or self.by_section.get(piece.section, 0) + extra <= cap

    def take(self, piece: Piece, extra: int) -> None:
        if piece.section not in self.by_section:
            self.used += _cost_of_section(HEADERS[piece.section])
            self.by_section[piece.section] = 0
        self.used += extra
        self.by_section[piece.section] += extra


def rules_cost(rules: str) -> int:
    return _cost_of_section(RULES_HEADER) + estimate_tokens(rules) + 1 if rules else 0


def pack(rules: str, pieces: Sequence[Piece], budget_tokens: int) -> Packed:
    """Choose one rendering per piece that fits (see the module docstring) and lay the text out."""
    budget = _Budget(budget_tokens, rules_cost(rules))
    if budget.used > budget_tokens:
        raise InvalidInputError(
            f"the rules layer alone needs {budget.used} tokens and budget_tokens is {budget_tokens}; "
            "raise budget_tokens (rules are always given whole)"
        )
    by_need = sorted(pieces, key=_need)
    chosen: dict[int, int] = {}  # id(piece) -> rung
    for piece in by_need:  # breadth: the barest rendering of each, while it fits
        barest = len(piece.rungs) - 1
        if budget.fits(piece, piece.cost(barest)):
            budget.take(piece, piece.cost(barest))
            chosen[id(piece)] = barest
        elif piece.required:
            raise InvalidInputError(
                f"budget_tokens={budget_tokens} cannot hold the rules and the key facts the query names "
                f"(about {budget.used + piece.cost(barest) + 4} tokens); raise budget_tokens"
            )
    for piece in by_need:  # depth: the richest rendering that still fits
        current = chosen.get(id(piece))
        if current is None:
            continue
        for rung in range(current):
            extra = piece.cost(rung) - piece.cost(current)
            if budget.fits(piece, extra):
                budget.take(piece, extra)
                chosen[id(piece)] = rung
                break
    kept = [piece for piece in pieces if id(piece) in chosen]
    text = _layout(rules, kept, chosen)
    return Packed(text=text, tokens=estimate_tokens(text), kept=tuple((p, chosen[id(p)]) for p in kept),
                  dropped=tuple(piece for piece in pieces if id(piece) not in chosen))  # fmt: skip


def _layout(rules: str, kept: list[Piece], chosen: dict[int, int]) -> str:
    blocks = [f"{RULES_HEADER}\n{rules}"] if rules else []
    for section in ("facts", "profile", "memories", "session"):
        mine = sorted((p for p in kept if p.section == section), key=lambda p: (not p.required, p.order))
        if section == "session":
            mine.sort(key=lambda p: p.order)
        if mine:
            blocks.append("\n".join([HEADERS[section], *(p.rungs[chosen[id(p)]] for p in mine)]))
    return "\n\n".join(blocks)


def ladder(head: str, body: str, extras: Sequence[str], *, rich: int, bare: int) -> tuple[str, ...]:
    """Renderings of one piece, richest first: ``head`` + ``body`` (cut to ``rich`` tokens) with all of
    ``extras`` (source turns), then with fewer, then the body alone cut to ``bare`` tokens."""
    full = f"{head}{cut_to_budget(body, rich)}"
    rungs = [full + "".join(f"\n{extra}" for extra in extras[:n]) for n in range(len(extras), -1, -1)]
    short = f"{head}{cut_to_budget(body, bare)}"
    if short != full:
        rungs.append(short)
    return tuple(rungs)

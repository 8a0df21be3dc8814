"""``domain_context``: a domain's memory for a prompt, in seed 000's order, under a token budget.

1. basic context: basic_info.md, taxonomy.md
2. cognition: main_challenge.md, network.md, then every survey note, shallow (headings + 1 sentence)
3. alignment: human_preference.md
4. atomic knowledge: nothing by default (the agent searches by category and concept); with a query,
   the best-matching sections.

Every piece comes as a ladder of renderings, richest first. Breadth first: each piece gets its outline
(H2, one sentence) while the budget lasts; then depth: each is raised to the richest rendering that
still fits. The text keeps the seed's order, but when the budget is short the pieces are served
in order of need: basic context, the human's preferences, the sections that answer the query (what
was asked), then cognition, then the surveys. Measured in bench/vault_bench.py: with the budget
spent in reading order, a domain with many surveys left no room for the query's answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from memstrata.sentences import estimate_tokens, first_sentences
from memstrata.vault.markdown import Note
from memstrata.vault.models import ContextPiece, DomainContext, VaultHit
from memstrata.vault.progressive import LADDER, render

SURVEY_DETAIL = (2, 1)  # surveys load shallow: their design philosophy, not their body


@dataclass(frozen=True)
class Rung:
    text: str
    depth: int
    sentences: int | None

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)


@dataclass(frozen=True)
class Piece:
    path: str
    layer: str
    rungs: tuple[Rung, ...]  # richest first; the last is the barest
    need: int = 0  # budget priority: lower is served first (see NEED)
    outline: int | None = None  # the rung every piece gets before any gets more; default: H2, one sentence


# Who gets the budget first; the text itself keeps the seed's reading order.
NEED = {"basic": 0, "alignment": 1, "query": 2, "cognition": 3, "survey": 4}


def note_piece(
    path: str, layer: str, note: Note, *, richest: tuple[int, int | None] = (6, None), need: str | None = None
) -> Piece:
    header = f"<!-- {path} -->\n"
    rungs: list[Rung] = []
    for depth, sentences in LADDER:
        if depth > richest[0] or (richest[1] is not None and (sentences is None or sentences > richest[1])):
            continue
        text = header + render(note, depth, sentences).text
        if not rungs or rungs[-1].text != text:
            rungs.append(Rung(text, depth, sentences))
    return Piece(path, layer, tuple(rungs), NEED[need or layer])


def hit_piece(hit: VaultHit) -> Piece | None:
    """One matching section of an atomic note: whole, then its first sentences, then its heading line.
    None for a heading with no text under it (a title match adds nothing the agent can use)."""
    header = f"<!-- {hit.path} § {hit.heading or hit.title} -->\n"
    crumb, _, body = hit.text.partition("\n")
    if not body.strip():
        return None
    rungs = [Rung(f"{header}**{crumb}**\n{body}".rstrip(), 6, None)]
    for k in (3, 1):
        shown, cut = first_sentences(body, k)
        if cut:
            rungs.append(Rung(f"{header}**{crumb}**\n{shown} …", 6, k))
    rungs.append(Rung(f"{header}**{crumb}**", 0, 0))
    # A matching section is already the small unit: whole is its outline (the answer may be its last sentence).
    return Piece(hit.path, "atomic", tuple(rungs), NEED["query"], outline=0)


def _shallow(piece: Piece) -> int:
    """The first rung no deeper than H2 with at most one sentence a section: every piece's outline."""
    if piece.outline is not None:
        return piece.outline
    return next(
        (n for n, r in enumerate(piece.rungs) if r.depth <= 2 and r.sentences is not None and r.sentences <= 1),
        len(piece.rungs) - 1,
    )


def assemble(domain: str, pieces: list[Piece], budget_tokens: int) -> DomainContext:
    """Pick one rung per piece. Breadth first: most needed first, each piece gets its outline (H2, one
    sentence), or a barer rung, or nothing when even its barest no longer fits; then depth: most needed
    first again, each is raised to the richest rung that fits what is left."""
    by_need = sorted(range(len(pieces)), key=lambda i: (pieces[i].need, i))
    chosen: dict[int, int] = {}

    def cost() -> int:
        return sum(pieces[i].rungs[rung].tokens + 2 for i, rung in chosen.items())  # +2: the blank line between

    for i in by_need:
        spare = budget_tokens - cost() - 2
        rungs = pieces[i].rungs
        fitting = next((n for n in range(_shallow(pieces[i]), len(rungs)) if rungs[n].tokens <= spare), None)
        if fitting is not None:
            chosen[i] = fitting
    for i in (i for i in by_need if i in chosen):
        rungs = pieces[i].rungs
        spare = budget_tokens - cost() + rungs[chosen[i]].tokens
        chosen[i] = next((n for n in range(chosen[i]) if rungs[n].tokens <= spare), chosen[i])
    kept = [pieces[i] for i in sorted(chosen)]
    parts = [pieces[i].rungs[chosen[i]] for i in sorted(chosen)]
    text = "\n\n".join(part.text for part in parts)
    return DomainContext(
        domain=domain,
        text=text,
        tokens=estimate_tokens(text),
        budget_tokens=budget_tokens,
        pieces=tuple(
            ContextPiece(path=piece.path, layer=piece.layer, depth=part.depth, sentences=part.sentences,
                         tokens=part.tokens)
            for piece, part in zip(kept, parts, strict=True)
        ),
    )  # fmt: skip

"""``domain_context``: a domain's memory for a prompt, in seed 000's order, under a token budget.

1. basic context: basic_info.md, taxonomy.md
2. cognition: main_challenge.md, network.md, then every survey note, shallow (headings + 1 sentence)
3. alignment: human_preference.md
4. atomic knowledge: nothing by default (the agent searches by category and concept); with a query,
   the best-matching sections.

Every piece comes as a ladder of renderings, richest first. All pieces start at their barest (so
the agent sees every file exists); then, in the order above, each is raised to the richest rendering
that still fits. Earlier layers win the budget, as the seed orders them.
"""

from __future__ import annotations

from dataclasses import dataclass

from memstrata.vault.markdown import Note
from memstrata.vault.models import ContextPiece, DomainContext, VaultHit
from memstrata.vault.progressive import LADDER, render
from memstrata.vault.sentences import estimate_tokens, first_sentences

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


def note_piece(path: str, layer: str, note: Note, *, richest: tuple[int, int | None] = (6, None)) -> Piece:
    header = f"<!-- {path} -->\n"
    rungs: list[Rung] = []
    for depth, sentences in LADDER:
        if depth > richest[0] or (richest[1] is not None and (sentences is None or sentences > richest[1])):
            continue
        text = header + render(note, depth, sentences).text
        if not rungs or rungs[-1].text != text:
            rungs.append(Rung(text, depth, sentences))
    return Piece(path, layer, tuple(rungs))


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
    return Piece(hit.path, "atomic", tuple(rungs))


def _shallow(piece: Piece) -> int:
    """The first rung no deeper than H2 with at most one sentence a section: every piece's outline."""
    return next(
        (n for n, r in enumerate(piece.rungs) if r.depth <= 2 and r.sentences is not None and r.sentences <= 1),
        len(piece.rungs) - 1,
    )


def assemble(domain: str, pieces: list[Piece], budget_tokens: int) -> DomainContext:
    """Pick one rung per piece: all barest first (dropping pieces from the end if even that is too much);
    then, in order, each raised to its outline (H2, one sentence) if it fits; then, in order again, each
    raised to the richest rung that fits what is left."""
    kept = list(pieces)
    chosen = [len(piece.rungs) - 1 for piece in kept]

    def cost() -> int:
        return sum(piece.rungs[rung].tokens for piece, rung in zip(kept, chosen, strict=True)) + 2 * len(kept)

    while kept and cost() > budget_tokens:
        kept.pop()
        chosen.pop()
    for richest in (_shallow, lambda piece: 0):
        for index, piece in enumerate(kept):
            spare = budget_tokens - cost() + piece.rungs[chosen[index]].tokens
            fitting = (n for n in range(richest(piece), chosen[index]) if piece.rungs[n].tokens <= spare)
            chosen[index] = next(fitting, chosen[index])
    parts = [piece.rungs[rung] for piece, rung in zip(kept, chosen, strict=True)]
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

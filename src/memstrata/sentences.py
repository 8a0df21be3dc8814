"""Sentences of a section body, Chinese and English punctuation alike, for "the first k sentences".

A body is first cut into blocks: paragraphs, each list item, each table row, each code fence whole.
Paragraphs are then cut after 。！？；… (Chinese needs no space after them) and after . ! ? ; when
whitespace follows, keeping closing quotes and brackets with their sentence. Abbreviations such as
"e.g." and decimals such as 3.5 do not end a sentence.
"""

from __future__ import annotations

import re

from memstrata.lifecycle.session import estimate_tokens
from memstrata.patterns import lazy_pattern

__all__ = ["cut_to_budget", "estimate_tokens", "first_sentences", "is_item_line", "sentences"]

_CLOSERS = "”’」』）)]\"'》"
_CJK_END = lazy_pattern(rf"[。！？；…]+[{re.escape(_CLOSERS)}]*")
_LATIN_END = lazy_pattern(rf"[.!?;]+[{re.escape(_CLOSERS)}]*(?=\s|$)")
_ABBREVIATIONS = frozenset({"e.g.", "i.e.", "etc.", "vs.", "mr.", "mrs.", "ms.", "dr.", "prof.", "fig.", "no.", "al."})
_LIST_ITEM = lazy_pattern(r"^\s*(?:[-*+]|\d+[.)])\s+")
_FENCE = lazy_pattern(r"^\s*(```|~~~)")


def is_item_line(line: str) -> bool:
    """A list item or a table row: a block of its own (and an item appended after one joins its list tight)."""
    return _LIST_ITEM.match(line) is not None or line.lstrip().startswith("|")


def _blocks(body: str) -> list[str]:
    blocks: list[str] = []
    current: list[str] = []
    fence: str | None = None

    def close() -> None:
        if current:
            blocks.append("\n".join(current))
            current.clear()

    for line in body.split("\n"):
        opened = _FENCE.match(line)
        if fence is not None:
            current.append(line)
            if opened and opened.group(1) == fence:
                fence = None
                close()
            continue
        if opened:
            close()
            fence = opened.group(1)
            current.append(line)
        elif not line.strip():
            close()
        elif is_item_line(line):
            close()
            current.append(line)
        else:
            current.append(line)
    close()
    return blocks


def _split_paragraph(text: str) -> list[str]:
    cuts: list[int] = []
    for match in _CJK_END.finditer(text):
        cuts.append(match.end())
    for match in _LATIN_END.finditer(text):
        word = text[: match.end()].rsplit(None, 1)[-1].lower()
        if word in _ABBREVIATIONS or re.fullmatch(r"[a-z]\.", word):
            continue
        cuts.append(match.end())
    pieces: list[str] = []
    start = 0
    for cut in sorted(set(cuts)):
        piece = text[start:cut].strip()
        if piece:
            pieces.append(piece)
        start = cut
    rest = text[start:].strip()
    if rest:
        pieces.append(rest)
    return pieces


def sentences(body: str) -> list[list[str]]:
    """The body's blocks, each a list of its sentences (code fences and table rows stay whole)."""
    return [_block_sentences(block) for block in _blocks(body)]


def _block_sentences(block: str) -> list[str]:
    return [block] if _FENCE.match(block) or block.lstrip().startswith("|") else _split_paragraph(block)


def _kept(block: str, parts: list[str], k: int) -> str:
    """The block up to the end of its ``k``-th sentence, as written: sentences were rejoined with a guessed space,
    and "（召回 0.98）；M=48" came back as "（召回 0.98）； M=48"."""
    if k >= len(parts):
        return block.strip()
    end = 0
    for part in parts[:k]:
        end = block.index(part, end) + len(part)
    return block[:end].strip()


def first_sentences(body: str, k: int | None) -> tuple[str, bool]:
    """The first ``k`` sentences of a body (all when None), blocks kept on their own lines and sentences as written;
    and whether anything was left out."""
    if k is None:
        return body.strip(), False
    kept: list[str] = []
    left, total = k, 0
    for block in _blocks(body):
        parts = _block_sentences(block)
        total += len(parts)
        if left > 0:
            kept.append(_kept(block, parts, left))
            left -= min(left, len(parts))
    return "\n".join(kept), k < total


def cut_to_budget(text: str, budget_tokens: int) -> str:
    """The longest prefix of ``text`` within the budget, cut at a line or sentence end where possible."""
    if estimate_tokens(text) <= budget_tokens:
        return text
    low, high = 0, len(text)
    while low < high:  # binary search on the prefix length: estimate_tokens grows with it
        middle = (low + high + 1) // 2
        if estimate_tokens(text[:middle]) + 1 <= budget_tokens:
            low = middle
        else:
            high = middle - 1
    prefix = text[:low]
    for stop in ("\n", "。", ". ", "！", "？"):
        at = prefix.rfind(stop)
        if at > len(prefix) // 2:
            return prefix[: at + len(stop)].rstrip() + "…"
    return prefix.rstrip() + "…" if prefix else ""


# Strongest first; a cut is made just after the mark, so a part ends with its sentence's punctuation.
BREAKS = ("\n\n", "\n", "。", "！", "？", ". ", "! ", "? ", "；", "; ", "，", ", ", " ")


def split_spans(text: str, max_chars: int) -> list[tuple[int, int]]:
    """Consecutive ``[start, end)`` spans covering ``text``, each at most ``max_chars`` long. A cut is searched
    for in the last quarter of each window, so no part is shorter than three quarters of the limit but the last."""
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    spans: list[tuple[int, int]] = []
    start = 0
    while len(text) - start > max_chars:
        end = start + max_chars
        floor = start + max(1, max_chars * 3 // 4)
        cut = end
        for mark in BREAKS:
            found = text.rfind(mark, floor, end)
            if found != -1:
                cut = found + len(mark)
                break
        spans.append((start, cut))
        start = cut
    spans.append((start, len(text)))
    return spans

"""The offline chunkers on real bilingual Markdown: coverage (no text is ever dropped), size in tokens,
Chinese sentence boundaries, sections kept whole with their heading path, overlap, and semantic
breakpoints from the bundled embedder."""

from __future__ import annotations

import itertools

import pytest

from memstrata.errors import InvalidInputError
from memstrata.knowledge.chunking import CHUNKER_NAMES, ChunkSize, make_chunker
from memstrata.knowledge.chunking.base import Piece
from memstrata.knowledge.markdown import HeadingIndex
from memstrata.knowledge.records import body_start
from memstrata.knowledge.tokens import count_tokens
from memstrata.providers.use_embedder import UniversalSentenceEncoder

ZH_PARAGRAPH = (
    "短期记忆利用大模型的上下文窗口，将最近的几轮对话直接放入提示词中。"
    "一旦对话过长，旧的信息就会被挤出。这部分数据可以存储在内存中，配合过期机制自动清理。"
    "长期记忆相当于人类的经验仓库，可以存储海量信息并在需要时检索。"
)
EN_PARAGRAPH = (
    "Recursive chunking looks for separators in priority order. It first tries paragraphs, then lines, "
    "then sentences. Semantic chunking compares the embeddings of adjacent sentences instead. "
    "Agentic chunking asks a language model where the topic changes."
)
MARKDOWN = "\n\n".join(
    [
        "# 记忆系统",
        "## 短期记忆",
        ZH_PARAGRAPH * 3,
        "## Chunking strategies",
        EN_PARAGRAPH * 3,
        "### 小结",
        "固定长度切分成本最低。递归结构切分是通用场景的首选。",
    ]
)


def _covered(text: str, pieces: list[Piece]) -> bool:
    covered = [False] * len(text)
    for piece in pieces:
        for position in range(piece.start, piece.end):
            covered[position] = True
    return all(covered[i] or char.isspace() for i, char in enumerate(text))


@pytest.mark.parametrize("name", ["fixed", "recursive", "structure"])
@pytest.mark.parametrize("size", [24, 64, 200])
def test_offline_chunkers_cover_everything_within_the_size(name: str, size: int) -> None:
    chunker = make_chunker(name, ChunkSize(size=size, overlap=0))
    pieces = chunker.split(MARKDOWN).pieces
    assert pieces and _covered(MARKDOWN, pieces)
    assert all(count_tokens(MARKDOWN[p.start : p.end]) <= size for p in pieces)
    assert all(p.start < p.end and not MARKDOWN[p.start].isspace() for p in pieces)
    assert [p.start for p in pieces] == sorted(p.start for p in pieces)


def test_recursive_cuts_chinese_after_sentence_punctuation() -> None:
    pieces = make_chunker("recursive", ChunkSize(size=40, overlap=0)).split(ZH_PARAGRAPH).pieces
    assert len(pieces) > 1
    for piece in pieces:
        assert ZH_PARAGRAPH[piece.end - 1] in "。，", ZH_PARAGRAPH[piece.start : piece.end]


def test_fixed_is_the_blind_baseline() -> None:
    pieces = make_chunker("fixed", ChunkSize(size=40, overlap=0)).split(ZH_PARAGRAPH).pieces
    assert any(ZH_PARAGRAPH[p.end - 1] not in "。，" for p in pieces[:-1])  # it cuts mid-sentence


def test_structure_never_mixes_sections_and_keeps_the_heading_path() -> None:
    chunker = make_chunker("structure", ChunkSize(size=120, overlap=16))
    pieces = chunker.split(MARKDOWN).pieces
    index = HeadingIndex(MARKDOWN)
    headings = [h.offset for h in index.headings]
    for piece in pieces:
        body = body_start(MARKDOWN, piece.start, piece.end)  # after the heading lines that open the chunk
        inside = [offset for offset in headings if body < offset < piece.end]
        assert not inside, MARKDOWN[piece.start : piece.end]  # no later heading starts inside a chunk
        lines = MARKDOWN[piece.start : piece.end].splitlines()
        assert any(line.strip() and not line.startswith("#") for line in lines)  # and no chunk is headings alone
    english = next(p for p in pieces if "Semantic chunking" in MARKDOWN[p.start : p.end])
    assert index.path_at(english.start) == ("记忆系统", "Chunking strategies")
    summary = next(p for p in pieces if "固定长度" in MARKDOWN[p.start : p.end])
    assert index.path_at(summary.start) == ("记忆系统", "Chunking strategies", "小结")


def test_overlap_repeats_the_end_of_the_previous_chunk() -> None:
    without = make_chunker("recursive", ChunkSize(size=60, overlap=0)).split(ZH_PARAGRAPH * 2).pieces
    with_overlap = make_chunker("recursive", ChunkSize(size=60, overlap=20)).split(ZH_PARAGRAPH * 2).pieces
    assert [p.end for p in with_overlap] == [p.end for p in without]
    assert any(b.start < a.end for a, b in itertools.pairwise(with_overlap))
    assert all(b.start >= a.start for a, b in itertools.pairwise(with_overlap))


def test_sizes_and_names_are_validated() -> None:
    with pytest.raises(ValueError, match="overlap"):
        ChunkSize(size=64, overlap=40)
    with pytest.raises(InvalidInputError, match="unknown chunker"):
        make_chunker("magic")
    with pytest.raises(InvalidInputError, match="needs a chat model"):
        make_chunker("agentic")
    assert set(CHUNKER_NAMES) == {"fixed", "recursive", "structure", "semantic", "agentic"}


def test_semantic_cuts_where_the_topic_changes(embedder: UniversalSentenceEncoder) -> None:
    cooking = [
        "把番茄切块，鸡蛋打散备用。", "锅里放油，先炒鸡蛋再盛出。", "番茄炒出汁后加入鸡蛋。", "最后加一点盐和糖调味。",
        "这道番茄炒蛋十分钟就能做好。", "配一碗米饭就是一顿家常晚餐。",
    ]  # fmt: skip
    football = [
        "The striker scored twice in the first half.", "The goalkeeper saved a penalty before halftime.",
        "The coach changed the formation after the break.", "The home team won the match three to one.",
        "Fans celebrated in the stadium long after the final whistle.", "The league table now has them in first place.",
    ]  # fmt: skip
    text = "".join(cooking) + "\n" + " ".join(football)
    result = make_chunker("semantic", ChunkSize(size=400, overlap=0), embedder=embedder).split(text)
    assert _covered(text, result.pieces)
    assert result.embedded_texts > 0
    boundary = text.index("The striker")
    assert any(abs(p.start - boundary) <= 1 for p in result.pieces), [text[p.start : p.end] for p in result.pieces]
    assert not any(p.start < boundary - 1 and p.end > boundary + 1 for p in result.pieces)

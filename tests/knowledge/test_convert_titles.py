"""Document titles: a Markdown file's frontmatter title, else its first line of text."""

from __future__ import annotations

import pytest

from memstrata.knowledge.convert import title_of


@pytest.mark.parametrize(
    ("markdown", "title"),
    [("---\ntitle: Real Title\n---\n# Heading One\nbody", "Real Title"),
     ("---\ntags: [a]\n---\n# Heading One\nbody", "Heading One"),
     ("---\n\nsome text", "some text"),
     ("# 中文标题\n正文", "中文标题"),
     ("***\n", "fallback")],
)  # fmt: skip
def test_a_file_with_frontmatter_is_not_titled_with_its_fence(markdown: str, title: str) -> None:
    assert title_of(markdown, "fallback") == title

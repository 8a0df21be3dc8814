"""The offline fallbacks deep search runs with no model (or when the model fails): cut from the query's own
words, never translated."""

from __future__ import annotations

from datetime import UTC, datetime

from memstrata.deep.expand import statement_form
from memstrata.deep.heuristics import find_entities, keyword_query, split_questions, strip_chatter
from memstrata.deep.understand import heuristic_understanding

NOW = datetime(2026, 1, 10, tzinfo=UTC)


def test_chinese_chatter_is_stripped_to_the_question() -> None:
    query = "哎呀最近好忙，累死了。对了，我想问一下，我女儿学钢琴的老师叫什么名字？"
    assert strip_chatter(query) == "我女儿学钢琴的老师叫什么名字？"


def test_english_chatter_is_stripped_to_the_question() -> None:
    query = "ugh, long week. anyway, quick question: what did Caroline say about the adoption agency?"
    assert strip_chatter(query) == "what did Caroline say about the adoption agency?"


def test_text_without_chatter_is_kept_whole() -> None:
    assert strip_chatter("Where does Bob work?") == "Where does Bob work?"


def test_entities_in_both_languages() -> None:
    assert find_entities("When did Melanie go camping with Caroline?") == ["Melanie", "Caroline"]
    assert find_entities("我和张伟在北京吃了什么？") == ["张伟", "北京"]
    assert "三体" in find_entities("你推荐过《三体》吗？")


def test_compound_questions_split_in_both_languages() -> None:
    assert split_questions("When did Melanie go camping, and what did Caroline paint?") == [
        "When did Melanie go camping",
        "What did Caroline paint?",
    ]
    assert split_questions("上周我和张伟在北京吃了什么？还有，王芳的生日是哪天？") == [
        "上周我和张伟在北京吃了什么？",
        "王芳的生日是哪天？",
    ]
    assert split_questions("What does Bob do?") == []


def test_keyword_query_keeps_content_words() -> None:
    assert keyword_query("what did Caroline say about the adoption agency?") == "caroline say adoption agency"
    assert "钢琴" in keyword_query("我女儿学钢琴的老师叫什么名字？")


def test_statement_form_drops_question_words() -> None:
    assert statement_form("王芳的生日是哪天？") == "王芳的生日是"
    assert statement_form("What did Caroline paint?") == "Caroline paint"


def test_heuristic_understanding_resolves_time_with_the_engine_parser() -> None:
    understood = heuristic_understanding("上周我和张伟在北京吃了什么？", NOW)
    assert understood.language == "zh"
    assert understood.source == "heuristic"
    assert understood.time_range is not None and understood.time_range.expression == "上周"
    assert understood.time_range.start < understood.time_range.end <= NOW

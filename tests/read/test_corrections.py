"""A later correction answers in place of what it corrects (read/newer.py), and only for what it corrects, with the
real store and embedder. The case comes from a user trial of a life imported from old chats."""

from __future__ import annotations

from datetime import UTC, datetime

from memstrata import Memory
from memstrata.lifecycle.timeparse import find_time_span
from memstrata.modality import ends_or_corrects
from memstrata.read.retrieve import time_it_names
from memstrata.topics import topics_of
from memstrata.types import MemoryItem, Provenance, Scope
from support.turns import first_answers, say


def test_a_correction_of_one_topic_does_not_answer_for_another_topic_of_the_statement(memory: Memory) -> None:
    """ "Correction: 朵朵 is 5, not 6" corrects the age of a statement that also names the kindergarten: it answers how
    old she is, and it led "Which school does my daughter go to?" above the kindergarten."""
    say(memory, "mei", [("2025-01-12", "我女儿朵朵今年6岁，在上海的星光幼儿园上大班。"),
                        ("2025-03-02", "Correction: 朵朵 is 5, not 6. She turns 6 in July."),
                        ("2025-04-20", "周末带朵朵去了迪士尼，排队排了两个小时")])  # fmt: skip
    first_answers(memory, "mei", {"Which school does my daughter go to?": "我女儿朵朵今年6岁",
                                  "朵朵在哪个幼儿园？": "我女儿朵朵今年6岁",
                                  "How old is my daughter?": "Correction", "朵朵几岁了？": "Correction"})  # fmt: skip
    assert topics_of("How old is my daughter?") == {"age"} and topics_of("朵朵几岁了？") == {"age"}


def test_a_correction_of_a_topic_the_question_does_not_ask_answers_nothing_of_it(memory: Memory) -> None:
    """A user trial: "我记错了，朵朵过敏的是菠萝" takes back an allergy, and led "朵朵在哪上学？" over "朵朵上小学了"
    and "我女儿多大？" over "我们女儿朵朵今年五岁" on the name alone ("五岁" was no age then, nor "我们女儿" a
    daughter)."""
    say(memory, "jing", [("2025-02-14", "我们女儿朵朵今年五岁，在徐汇的一家幼儿园上学。"),
                         ("2025-06-18", "朵朵对芒果过敏，吃了脸会肿。"),
                         ("2026-05-09", "朵朵上小学了，学校是莘庄实验小学。"),
                         ("2026-09-03", "我记错了，朵朵过敏的是菠萝，芒果没事。")])  # fmt: skip
    expected = {"朵朵在哪上学？": "朵朵上小学了", "What school does my daughter go to?": "朵朵上小学了",
                "我女儿多大？": "我们女儿朵朵今年五岁", "朵朵对什么过敏？": "我记错了"}  # fmt: skip
    first_answers(memory, "jing", expected)
    assert topics_of("我们女儿朵朵今年五岁") >= {"age"}


def test_a_plan_called_off_answers_only_what_asks_of_the_plan(memory: Memory) -> None:
    """A user trial: "西安去不成了" led "我儿子喜欢玩什么？" above "星球大战系列。另外我们国庆打算带他去西安玩" (the
    son's Lego series, matched on 玩 too) though it shares nothing of what is asked; it still answers the trip."""
    say(memory, "wang", [("2025-06-05", "儿子小宇今年上三年级了，最近迷上了乐高。"),
                         ("2025-06-06", "星球大战系列。另外我们国庆打算带他去西安玩。"),
                         ("2025-09-20", "西安去不成了，小宇学校国庆要补课。")])  # fmt: skip
    found = memory.search("我儿子喜欢玩什么？", user_id="wang")
    assert found and not found[0].text.startswith("西安去不成了"), [hit.text for hit in found]
    first_answers(memory, "wang", {"国庆去西安吗？": "西安去不成了", "Are we going to Xi'an?": "西安去不成了"})


def test_a_correction_naming_no_topic_still_answers_for_what_it_corrects(memory: Memory) -> None:
    """A correction that names none of the everyday topics may correct anything the earlier statement says."""
    say(memory, "kai", [("2024-02-01", "I live in Beijing and work at a bank"),
                        ("2024-02-03", "Sorry, I meant Shanghai, not Beijing."),
                        ("2024-03-01", "Went hiking at the weekend")])  # fmt: skip
    found = memory.search("Where do I live?", user_id="kai")
    assert found and found[0].text.startswith("Sorry, I meant Shanghai"), [hit.text for hit in found]


def test_traditional_chinese_history_reads_its_times_topics_and_corrections(memory: Memory) -> None:
    """A user trial of a life written in Traditional Chinese (Taiwan): "下個月要搬到台中了" named no month, so the
    move never came due and 內湖 answered "我住在哪里？"; "其實我不是對貓毛過敏" led "我的猫叫什么？" on the word 貓,
    though it takes back an allergy and says nothing of the name; "游泳課停了" ended nothing."""
    say(memory, "wen", [("2024-03-02", "我在台北的聯發科當工程師，住在內湖。"),
                        ("2024-05-10", "我養了一隻貓叫小橘，是橘貓。"),
                        ("2024-08-15", "我對貓毛有點過敏，但還是很愛小橘。"),
                        ("2024-11-01", "下個月要搬到台中了，公司要我去台中的新辦公室。"),
                        ("2025-03-08", "最近開始學游泳，每週六早上在北屯運動中心。"),
                        ("2025-09-02", "游泳課停了，改成週六去爬大坑步道。"),
                        ("2025-12-05", "其實我不是對貓毛過敏，醫生說是塵蟎。")])  # fmt: skip
    expected = {"我住在哪里？": "下個月要搬到台中了", "Where do I live?": "下個月要搬到台中了",
                "我的猫叫什么？": "我養了一隻貓叫小橘", "我对什么过敏？": "其實我不是對貓毛過敏",
                "Do I still swim?": "游泳課停了"}  # fmt: skip
    first_answers(memory, "wen", expected)
    assert topics_of("我養了一隻貓叫小橘") >= {"pet", "name"} and ends_or_corrects("游泳課停了")


def test_an_imported_fact_names_its_time_from_when_it_was_said() -> None:
    """ "用户下个月要搬到台中", drawn from a turn of November 2024 and imported in 2026, named January 2027: its time
    was read from the day it was stored."""
    stored, said = datetime(2026, 12, 7, tzinfo=UTC), datetime(2024, 11, 1, 11, tzinfo=UTC)
    fact = MemoryItem(id="f", scope=Scope(user_id="wen"), kind="plan", text="用户下个月要搬到台中",
                      provenance=Provenance(source="messages", message_ids=("t",), said_at=said),
                      created_at=stored, updated_at=stored, valid_from=said)  # fmt: skip
    named = time_it_names(fact, UTC)
    assert named is not None and named.start == datetime(2024, 12, 1, tzinfo=UTC), named
    assert find_time_span("下個月要搬到台中了", said) == find_time_span("下个月要搬到台中了", said)


def test_an_ending_takes_back_a_state_not_what_someone_said(memory: Memory) -> None:
    """A held-out trial (t13): "Tofu passed away this morning" led "What did the vet say about Tofu?" above the vet's
    diet, which the death ends as a state while what the vet said stays said. The death still answers how Tofu is."""
    say(memory, "emma", [("2025-05-20", "My cat Tofu has kidney disease, the vet put her on a special diet."),
                         ("2025-11-12", "Tofu passed away this morning.")])  # fmt: skip
    memory.add(["My cat Mochi has kidney disease as well."], user_id="other")
    first_answers(memory, "emma", {"What did the vet say about Tofu?": "My cat Tofu has kidney disease",
                                   "How is my cat Tofu doing?": "Tofu passed away"})  # fmt: skip

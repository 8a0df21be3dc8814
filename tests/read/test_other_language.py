"""A question's words that no memory says, asked by the other language's words that some memory says
(memstrata.glossary, read/other_language.py), with the real store, embedder and CC-CEDICT."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.glossary import load
from memstrata.lexical import search_terms
from memstrata.query import SearchQuery
from memstrata.read.other_language import asked_in_other_language
from memstrata.read.spelling import corrected_spelling
from memstrata.types import Scope

NOW = datetime(2026, 12, 7, tzinfo=UTC)
# A user trial (t12): a PhD student who writes Chinese with English terms, and a look-alike second user.
CHEN = [
    "开学了，我是浙大计算机学院的博士一年级，导师是刘建国教授。",
    "最近腰疼得厉害，医院说是腰椎间盘突出，要每周三下午去做理疗。",
    "刘老师要去北京了，我换导师了，研究方向也转成 LLM agent 的长期记忆。",
    "我每周六上午去琴行上吉他课，老师姓何。",
    "Resubmitted the graph memory paper to ICLR 2026, and it got accepted!! 中了！",
    "博士答辩定在2026年5月。",
    "我现在住在西溪校区的研究生宿舍，每个月补助 3500。",
]


def test_the_glossary_knows_common_words_both_ways_the_commoner_sense_first(tmp_path: Path) -> None:
    words = load(tmp_path)
    assert list(tmp_path.glob("glossary-*.sqlite")), "derived once, kept in the cache directory"
    assert load(tmp_path).translations("research") == words.translations("research")  # read back
    (tmp_path / "a-file").write_text("")
    unwritable = load(tmp_path / "a-file" / "cache")  # no directory can be made under a file: kept in memory
    assert unwritable.translations("论文") == words.translations("论文")
    assert words.translations("research")[0] == "研究"
    assert words.translations("job")[0] == "工作"  # 工作's third gloss, but a thousand times commoner than 营生
    assert words.translations("company")[0] == "公司"  # "/company; firm; corporation/": one gloss, three meanings
    assert "导师" in words.translations("advisor")  # "academic advisor": a two-word gloss names its last word
    assert words.translations("weekends")[0] == "周末"  # a plural as its singular
    assert words.translations("dorm") == ["宿舍"]  # "dorm room": the first of two words names it too
    assert words.translations("论文")[:3] == ["paper", "treatise", "thesis"]
    assert words.translations("xylograph-nonsense") == []


def test_an_english_question_finds_what_the_user_wrote_in_chinese_by_the_dictionary(memory: Memory) -> None:
    """Before, "What's my research area?" returned nothing: no memory says "research" or "area", and the embedder puts
    the answer at cosine 0.12."""
    memory.add(CHEN, user_id="chen")
    memory.add(
        ["我的研究方向是计算机视觉。", "我每周五去做理疗。"], user_id="wei"
    )  # the look-alike's, never the user's
    expected = {"What is my research direction?": "刘老师要去北京了", "When is my physiotherapy?": "最近腰疼得厉害",
                "Where is my dormitory?": "我现在住在西溪校区",
                # misspelt: read as the English word one edit away whose Chinese word the scope holds (宿舍)
                "Where is my dormitry?": "我现在住在西溪校区"}  # fmt: skip
    for question, answer in expected.items():
        found = memory.search(question, user_id="chen")
        assert found and found[0].text.startswith(answer), (question, [hit.text for hit in found])
        assert all(hit.memory.scope.user_id == "chen" for hit in found)
    paper = memory.search("我的论文中了吗？", user_id="chen")  # 论文 is "paper"
    assert paper and paper[0].text.startswith("Resubmitted the graph memory paper"), [hit.text for hit in paper]


def test_a_store_in_one_language_is_asked_as_before(memory: Memory) -> None:
    """Only words the scope holds are added: a store that holds no Chinese is asked the English question alone."""
    memory.add(["I switched my research to agent memory", "My advisor is Professor Zhang"], user_id="en")
    memory.add(CHEN, user_id="chen")
    store = memory.store

    def asked(text: str, user: str) -> str:
        return asked_in_other_language(store, SearchQuery(text=text, scope=Scope(user_id=user), now=NOW), text)

    assert asked("research area", "en") == "research area"
    off = Memory(
        store,
        memory.embedder,
        settings=load_settings({"search": {"translate_words": False}, "write": {"background": False}}),
    )
    assert not off.search("What is my research direction?", user_id="chen"), "search.translate_words = false"
    assert asked("research area", "chen") == "research area 研究"
    # "daughter" is asked by the names the user gave her (read/relatives.py), not as 女儿 beside them
    assert asked("daughter school", "chen") == "daughter school"


def test_a_pronoun_glued_to_a_verb_is_two_words(memory: Memory) -> None:
    """jieba reads "我住哪里？" as 我住 / 哪里: a word no statement says, so half the question went unmatched and
    "我住哪里？" found nothing (a user trial)."""
    assert "我住" not in search_terms("我住哪里？") and "住" in search_terms("我住哪里？")
    assert "我养" not in search_terms("我养了什么宠物？")
    assert "你好" in search_terms("你好")  # a word the dictionary knows stays whole
    memory.add(CHEN, user_id="chen")
    found = memory.search("我住哪里？", user_id="chen")
    assert found and found[0].text.startswith("我现在住在西溪校区"), [hit.text for hit in found]


def test_a_chinese_word_is_held_as_a_word_not_by_the_characters_of_a_category_word(memory: Memory) -> None:
    """An English statement is indexed with its categories' words in both languages ("birthday" with 生日). A
    translation found only by a character of those (节日 by 日) is no word the scope holds: "fesetival" stays as
    typed in an English store, where "festival" is said nowhere."""
    memory.add(["Last night was amazing! We celebrated my daughter's birthday with a big cake."], user_id="mel")
    asked = "When did we go to a pride fesetival?"
    query = SearchQuery(text=asked, scope=Scope(user_id="mel"), now=NOW)
    assert corrected_spelling(memory.store, query) == asked

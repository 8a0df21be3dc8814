"""read/endings.py: the names a memory gives, and the later sentences that end the one named."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata import Memory
from memstrata.query import Filters
from memstrata.read.endings import LaterNews, ends, names_in
from memstrata.types import MemoryItem, Scope


def _said(text: str, role: str = "user") -> MemoryItem:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return MemoryItem(id="m", scope=Scope(user_id="u"), kind="episode", text=text, metadata={"role": role},
                      created_at=now, updated_at=now, valid_from=now)  # fmt: skip


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Our golden retriever Biscuit is 9 now, slowing down a bit on walks.", {"Biscuit"}),
        ("我的猫叫团子，三岁了", {"团子"}),
        ("過年回嘉義，我媽養了一隻柴犬叫阿福，超胖。", {"阿福"}),  # read as Simplified
        ("我家狗豆豆是柯基", {"豆豆"}),
        ("Adopted a cat, we named her 饺子.", {"饺子"}),
        ("Quick note: I moved to 上海 in May.", set()),  # an opening word English writes, a month
        ("Keys to the Tanjong Pagar place! My partner Wei Lan loves it.", {"Tanjong", "Pagar", "Wei", "Lan"}),
        ("Cancelled 超级猩猩, can't do HIIT. Switched to Form Studio.", {"Form", "Studio"}),
        # how extracted facts name the user: "User quit Alibaba" ended every fact of the user (a user trial)
        ("User is Daniel Wu", {"Daniel", "Wu"}),
        ("User's girlfriend Mei is a nurse", {"Mei"}),
    ],
)
def test_names_in(text: str, names: set[str]) -> None:
    assert names_in(text) == names


def test_an_ending_names_the_one_it_ends() -> None:
    assert ends(_said("We had to put Biscuit down this morning. Adam held his paw."), "Biscuit")
    assert not ends(_said("We had to put Biscuit down this morning. Adam held his paw."), "Adam")  # another sentence
    assert ends(_said("Anna and I broke up last month"), "Anna")
    assert ends(_said("团子昨天去喵星了"), "团子") and ends(_said("小汤圆走了，肠胃停滞，才一岁多。"), "小汤圆")
    assert ends(_said("Our neighbour Joost has taken Pim, he's got a garden."), "Pim")  # a new home
    assert not ends(_said("Anna's dog died last week"), "Anna")  # whose, not who
    assert ends(_said("我说错了，是 Tiong Bahru 不是 Tanjong Pagar"), "Tanjong Pagar")
    # a place of one's own closed down ends it (a user trial: the favourite restaurant answered as the favourite)
    assert ends(_said("Little Yang closed down last week, so sad."), "Yang")
    assert ends(_said("楼下的阿香米线关门了，以后只能点外卖。"), "阿香米线") and not ends(
        _said("Yang's closes at nine"), "Yang"
    )


@pytest.mark.parametrize(
    "text",
    [
        "The amusement park event that Lisa was eagerly looking forward to was canceled due to the rain.",
        "Bart was very disappointed as the summer swimming event he was looking forward to was canceled.",
        "Lisa thought the test was on Monday, but actually the teacher said it was not until Friday.",
    ],
)
def test_someone_in_the_news_is_not_what_it_ends(text: str) -> None:
    """A dialogue set's users named in every memory: each was "ended" by any later plan called off around the name."""
    assert not ends(_said(text), "Lisa") and not ends(_said(text), "Bart")
    assert not ends(_said("Biscuit loves the beach"), "Biscuit")  # no ending
    assert not ends(_said("Sorry to hear Biscuit died", role="assistant"), "Biscuit")  # a reply states nothing
    assert not ends(_said("Put Adam down for a nap at two"), "Adam")
    assert ends(
        _said("不好意思，我说错了，是 Tiong Bahru 不是 Tanjong Pagar。"), "Tanjong"
    )  # the correction said before
    assert not ends(_said("Snap Fitness in Sai Kung now, cancelled Anytime."), "Sai")  # another one ended beside it


def _history(memory: Memory, user: str, *said: tuple[str, datetime]) -> dict[str, str]:
    ids = {}
    for text, when in said:
        ids[text] = memory.add(text, user_id=user, event_time=when, infer=False).results[0].id
    return ids


def test_search_puts_a_correction_before_the_place_it_takes_back(memory: Memory) -> None:
    """The correction shares no word with the question; it was never a candidate, and the place taken back
    answered alone (a held-out user trial)."""
    keys, fix = (
        "Keys to the Tanjong Pagar place! Moving in on Saturday.",
        "不好意思，我说错了，是 Tiong Bahru 不是 Tanjong Pagar",
    )
    ids = _history(
        memory, "mei", (keys, datetime(2025, 3, 1, 10, tzinfo=UTC)), (fix, datetime(2025, 3, 1, 10, 5, tzinfo=UTC))
    )
    hits = memory.search("Where do I live now?", user_id="mei")
    assert [hit.text for hit in hits[:2]] == [fix, keys]
    assert hits[0].breakdown.later_news_of == ids[keys] and hits[0].score == hits[1].score
    before = memory.search("Where do I live now?", user_id="mei", as_of=datetime(2025, 3, 1, 10, 2, tzinfo=UTC))
    assert before[0].text == keys and fix not in [hit.text for hit in before]  # not yet said then


def test_search_puts_a_pets_death_before_the_pet(memory: Memory) -> None:
    dog, gone = (
        "Our golden retriever Biscuit is 9 now, slowing down on walks.",
        "We had to put Biscuit down this morning.",
    )
    _history(memory, "sam", (dog, datetime(2024, 5, 1, tzinfo=UTC)), (gone, datetime(2025, 9, 1, tzinfo=UTC)))
    _history(memory, "kim", ("My dog Rex loves the beach", datetime(2024, 1, 1, tzinfo=UTC)))
    texts = [hit.text for hit in memory.search("What pets do I have?", user_id="sam")]
    assert texts.index(gone) < texts.index(dog)
    # another user's news of a dog never reaches this scope, nor does this one's reach kim
    assert all("Biscuit" not in hit.text for hit in memory.search("What pets do I have?", user_id="kim"))


def test_search_leaves_a_key_fact_and_another_speakers_news_alone(memory: Memory) -> None:
    """A key's value is its current one, found by the key or by a question's words; and only the user's own word ends
    what the user said (in a transcript, another speaker's cat of the same name is another cat)."""
    memory.add("Tanjong Pagar", key="mei:home:area", user_id="mei")
    _history(memory, "mei", ("我说错了，是 Tiong Bahru 不是 Tanjong Pagar", datetime(2025, 3, 2, tzinfo=UTC)))
    for question in ("mei:home:area", "What is my home area?"):
        assert memory.search(question, user_id="mei")[0].text == "Tanjong Pagar", question
    mine = "Our cat Mochi turned 3 today"
    memory.add([{"role": "user", "content": mine, "timestamp": "2024-01-01T10:00:00Z"},
                {"role": "user", "name": "Caroline", "content": "My cat Mochi died last week",
                 "timestamp": "2024-06-01T10:00:00Z"}], user_id="lin")  # fmt: skip
    cat = next(item for item in memory.get_all(user_id="lin") if item.text == mine)
    news = LaterNews(memory.store, Scope(user_id="lin"), Filters(), datetime(2025, 1, 1, tzinfo=UTC))
    assert news.ending(cat) is None


def test_search_finds_the_news_of_a_name_given_later_in_the_statement(memory: Memory) -> None:
    """Search looks up what a hit is about: its first clause, and any name the statement gives."""
    cat, gone = "Adopted a cat last spring, we named her 饺子.", "饺子走了，肾衰竭，才四岁。"
    _history(memory, "ann", (cat, datetime(2024, 4, 1, tzinfo=UTC)), (gone, datetime(2025, 2, 1, tzinfo=UTC)))
    texts = [hit.text for hit in memory.search("Do I have a cat?", user_id="ann")]
    assert texts.index(gone) < texts.index(cat)

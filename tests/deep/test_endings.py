"""deep/endings.py: the names a memory gives, and the later sentences that end the one named."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata.deep.endings import ends, names_in
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
    assert not ends(_said("Biscuit loves the beach"), "Biscuit")  # no ending
    assert not ends(_said("Sorry to hear Biscuit died", role="assistant"), "Biscuit")  # a reply states nothing
    assert not ends(_said("Put Adam down for a nap at two"), "Adam")
    assert ends(
        _said("不好意思，我说错了，是 Tiong Bahru 不是 Tanjong Pagar。"), "Tanjong"
    )  # the correction said before
    assert not ends(_said("Snap Fitness in Sai Kung now, cancelled Anytime."), "Sai")  # another one ended beside it

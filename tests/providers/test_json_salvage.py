"""Reading JSON as it is written: loops are spotted by repeated list items, a cut-off answer keeps its whole items."""

from __future__ import annotations

import json

from memstrata.providers.json_salvage import JsonItems, whole_items

# The bundled model's answer to a mixed-language turn about a husband (a user trial): one true fact, then a cycle of
# invented relation facts until max_tokens.
HUSBAND = '{"turn": 1, "text": "用户老公叫 Mark, 他在 Google 上班"}'
CYCLE = [f'{{"turn": 1, "text": "用户和 Mark 的关系是 {r}"}}' for r in ("colleague_of", "reports_to", "lives_in")]
LOOPING = '{"facts": [' + HUSBAND + ", " + ",\n ".join(CYCLE * 4) + ", " + CYCLE[0][:20]


def test_a_cycle_of_items_is_a_loop_that_began_at_its_first_copy() -> None:
    items = JsonItems()
    for start in range(0, len(LOOPING), 7):  # fed in small chunks, as streamed
        items.feed(LOOPING[start : start + 7])
        if items.looping:
            break
    assert items.looping
    assert items.loop_start == LOOPING.index(CYCLE[0])
    assert len(items.text) < LOOPING.index(CYCLE[0]) + 3 * len(",\n ".join(CYCLE)), "stopped at the second cycle"


def test_the_same_item_three_times_is_a_loop() -> None:
    triple = '["芒果", "depends_on", "土壤"]'
    items = JsonItems()
    items.feed('{"relations": [' + ", ".join([triple] * 2))
    assert not items.looping
    items.feed(", " + triple)
    assert items.looping


def test_a_long_answer_of_different_items_is_no_loop() -> None:
    facts = [{"turn": n % 4 + 1, "text": f"用户喜欢第{n}种茶", "kind": "preference"} for n in range(40)]
    relations = [["user", "likes", f"茶{n}"] for n in range(40)]
    items = JsonItems()
    items.feed(json.dumps({"facts": facts, "relations": relations}, ensure_ascii=False))
    assert not items.looping
    assert items.end_of_last_item > 0


def test_whole_items_drops_the_loop_and_closes_the_rest() -> None:
    kept = whole_items(LOOPING)
    assert kept is not None
    assert json.loads(kept) == {"facts": [{"turn": 1, "text": "用户老公叫 Mark, 他在 Google 上班"}]}


def test_an_answer_cut_off_mid_item_keeps_its_whole_items() -> None:
    cut = '{"facts": [{"text": "我住在杭州"}, {"text": "我对花生过'
    assert json.loads(whole_items(cut) or "") == {"facts": [{"text": "我住在杭州"}]}
    nested = '{"facts": [{"text": "a"}], "relations": [["user", "lives_in", "杭州"], ["user", "li'
    expected = {"facts": [{"text": "a"}], "relations": [["user", "lives_in", "杭州"]]}
    assert json.loads(whole_items(nested) or "") == expected


def test_an_answer_cut_off_before_any_whole_item_keeps_nothing() -> None:
    assert whole_items('{"facts": [{"text": "我住在') is None
    assert whole_items("") is None

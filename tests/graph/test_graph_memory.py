"""Graph memory end to end without a model (rules fallback), on every backend: the issue's must-hold cases."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from graph.conftest import say
from memstrata import Memory, NotFoundError
from memstrata.types import HistoryAction


def texts(memory: Memory, query: str, user: str = "u1", limit: int = 5, graph: bool = True) -> list[str]:
    return [hit.text for hit in memory.search(query, user_id=user, limit=limit, graph=graph)]


def test_gift_for_mrs_lis_husband_reaches_red_wine_through_the_spouse_edge(rules_memory: Memory) -> None:
    distractors = ["我下周要去杭州出差", "今天天气不错", "李女士的生日礼物我还没想好", "女儿想要一个新书包",
                   "丈夫节是哪天来着", "周末想去买点水果"]  # fmt: skip
    say(rules_memory, "u1", "王总的太太是李女士", "王总喜欢红酒", *distractors)
    query = "送什么礼物给李女士的丈夫比较好？"
    hits = rules_memory.search(query, user_id="u1", limit=5)
    wine = next(hit for hit in hits if hit.text == "王总喜欢红酒")
    assert wine.breakdown.graph_hop == 2 and wine.breakdown.graph_relation == "王总 likes 红酒"
    # Without the graph list it falls out of the top five: the spouse edge is what brings it in.
    assert "王总喜欢红酒" not in texts(rules_memory, query, limit=5, graph=False)


def test_my_sister_and_my_wife_are_reached_through_the_users_own_edges(rules_memory: Memory) -> None:
    """ "我妹妹在哪家公司上班?" names no entity: the user is a hub the walk never starts at, and "我妹妹叫林小雨" gave
    no edge at all, so the sister's employer was never found (two hops: user -> 林小雨 -> 字节跳动)."""
    say(rules_memory, "u1", "我妹妹叫林小雨", "林小雨在字节跳动工作", "我在腾讯工作", "王总在阿里巴巴工作",
        "我的老婆是李娜", "李娜喜欢郁金香", "我喜欢玫瑰")  # fmt: skip
    employer = next(hit for hit in rules_memory.search("我妹妹在哪家公司上班？", user_id="u1", limit=2)
                    if hit.text == "林小雨在字节跳动工作")  # fmt: skip
    assert employer.breakdown.graph_relation == "林小雨 works_at 字节跳动"
    assert texts(rules_memory, "我老婆喜欢什么花？", limit=1) == ["李娜喜欢郁金香"]
    # Without the graph list the read path finds the wife's flowers too: the relatives step searches her name, and a
    # statement naming her answers before "我喜欢玫瑰", the user's own (read/own_first.theirs_before_own).
    # The sister's employer is found through that step too.
    assert texts(rules_memory, "我老婆喜欢什么花？", limit=1, graph=False) == ["李娜喜欢郁金香"]
    assert "林小雨在字节跳动工作" in texts(rules_memory, "我妹妹在哪家公司上班？", limit=2, graph=False)


def test_who_is_blocked_when_zhang_is_away(rules_memory: Memory) -> None:
    say(rules_memory, "u1", "前端开发依赖后端 API", "张工负责后端 API", "李工负责测试环境", "我喜欢喝咖啡")
    found = texts(rules_memory, "张工请假会影响什么?", limit=3)
    assert "张工负责后端 API" in found and "前端开发依赖后端 API" in found
    affected = rules_memory.graph.neighbors("张工", hops=2, user_id="u1")
    assert {entity.name for entity in affected.entities} == {"张工", "后端 API", "前端开发"}


def test_moving_closes_the_old_home_and_an_alias_joins_the_company(rules_memory: Memory) -> None:
    say(rules_memory, "u1", "我在字节跳动做后端，住在北京")
    say(rules_memory, "u1", "我现在在字节工作，搬到北京市朝阳区了", session="s2")
    companies = [e for e in rules_memory.graph.entities(user_id="u1") if e.type == "organization"]
    assert [(c.name, c.aliases) for c in companies] == [("字节跳动", ("字节",))]
    assert rules_memory.graph.entity("字节", user_id="u1").id == companies[0].id
    homes = rules_memory.graph.relation_history("我", "lives_in", user_id="u1")
    assert [(edge.target, edge.record.current) for edge in homes] == [("北京", False), ("北京市朝阳区", True)]
    assert "朝阳区" in homes[1].target
    closed = rules_memory.graph.history(homes[0].record.id, user_id="u1")
    assert [event.action for event in closed] == [HistoryAction.ADD, HistoryAction.CLOSE]
    assert closed[1].old_text == "user lives_in 北京"
    jobs = [job.result["graph"] for job in rules_memory.list_jobs(user_id="u1")]
    assert {"relations_closed": 1, "aliases_added": 1, "relations_reinforced": 1}.items() <= jobs[-1].items()
    works = rules_memory.graph.relation_history("user", "works_at", user_id="u1")
    assert len(works) == 1 and works[0].record.current and len(works[0].record.message_ids) == 2


def test_a_city_and_its_district_said_in_one_turn_are_both_current(rules_memory: Memory) -> None:
    """The district closed the city the moment both opened: the graph said the user no longer lived in Shanghai."""
    say(rules_memory, "u1", "我住在杭州西湖区。")
    say(rules_memory, "u1", "我搬到上海了，现在住在静安区。", session="s2")
    homes = rules_memory.graph.relation_history("我", "lives_in", user_id="u1")
    assert sorted((edge.target, edge.record.current) for edge in homes) == [
        ("上海", True),
        ("杭州西湖区", False),
        ("静安区", True),
    ]


def test_a_relative_named_by_her_given_name_is_one_person_and_her_pet_is_two_hops_away(rules_memory: Memory) -> None:
    """ "我妹妹的猫叫什么？" found the user's own cat: "小雨" and "林小雨" stayed two people and "养了一只布偶猫"
    made no edge, so the sister's cat was never reached."""
    say(rules_memory, "u1", "我妹妹叫林小雨", "我养了一只猫，叫团子", "小雨养了一只布偶猫，叫Mochi", "今天天气不错")
    sister = rules_memory.graph.entity("小雨", user_id="u1")
    assert sister.name == "林小雨" and "小雨" in sister.aliases
    hits = rules_memory.search("我妹妹的猫叫什么？", user_id="u1", limit=2)
    assert "小雨养了一只布偶猫，叫Mochi" in [hit.text for hit in hits], [hit.text for hit in hits]
    assert any(hit.breakdown.graph_relation == "林小雨 has_pet 布偶猫" for hit in hits)
    say(rules_memory, "u2", "我同事叫王小雨", "我妹妹叫林小雨", "小雨养了一只狗")  # two people fit: no guess
    assert rules_memory.graph.entity("小雨", user_id="u2").name == "小雨"


def test_a_maybe_or_a_plan_makes_no_edge(rules_memory: Memory) -> None:
    """ "我可能下个月搬去深圳" made an entity "我可能" living in 深圳, current from then."""
    say(rules_memory, "u1", "我可能下个月搬去深圳。", "maybe I will move to Berlin", "我打算加入腾讯", "我在杭州工作",
        "我明天搬到苏州", "I might live in Paris one day")  # fmt: skip
    names = {entity.name for entity in rules_memory.graph.entities(user_id="u1")}
    assert not names & {"我可能", "深圳", "Berlin", "腾讯", "苏州", "Paris"}, names
    assert "杭州" in names


def test_names_that_only_look_alike_stay_apart(rules_memory: Memory) -> None:
    say(rules_memory, "u1", "张工负责后端开发", "张三负责前端开发")
    names = sorted(entity.name for entity in rules_memory.graph.entities(user_id="u1"))
    assert names == ["前端开发", "后端开发", "张三", "张工"]


def test_a_turn_that_ends_a_relation_closes_it(rules_memory: Memory) -> None:
    say(rules_memory, "u1", "I work at Globex and I live in Boston")
    say(rules_memory, "u1", "I quit Globex")
    (edge,) = rules_memory.graph.relation_history("I", "works_at", user_id="u1")
    assert edge.target == "Globex" and not edge.record.current
    assert [e.target for e in rules_memory.graph.neighbors("user", user_id="u1").edges()] == ["Boston"]
    # "left" ends a home or a job: read as a move out of a company, the ending was refused and the job stayed open
    say(rules_memory, "u2", "Tom works at Google.")
    say(rules_memory, "u2", "Tom left Google last month.")
    (job,) = rules_memory.graph.relation_history("Tom", "works_at", user_id="u2")
    assert job.target == "Google" and not job.record.current
    say(rules_memory, "u2", "Tom is married to Anna.")  # no edge before (a user trial)
    (marriage,) = rules_memory.graph.relation_history("Tom", "spouse_of", user_id="u2")
    assert marriage.target == "Anna" and marriage.record.current
    say(rules_memory, "u2", "Tom divorced Anna.")
    assert not rules_memory.graph.relation_history("Tom", "spouse_of", user_id="u2")[0].record.current


def test_path_subgraph_and_exports(rules_memory: Memory) -> None:
    say(rules_memory, "u1", "王总的太太是李女士", "王总喜欢红酒", "李女士负责市场部")
    chain = rules_memory.graph.path("红酒", "市场部", user_id="u1")
    assert chain is not None and [edge.relation for edge in chain] == ["likes", "spouse_of", "responsible_for"]
    assert rules_memory.graph.path("红酒", "王总", max_hops=1, user_id="u1") is not None
    graph = rules_memory.graph.subgraph(user_id="u1")
    assert len(graph.entities) == 4 and len(graph.relations) == 3
    exported = json.loads(rules_memory.graph.export("json", user_id="u1"))
    assert {e["name"] for e in exported["entities"]} == {"王总", "李女士", "红酒", "市场部"}
    graphml = ET.fromstring(rules_memory.graph.export("graphml", user_id="u1"))
    namespace = "{http://graphml.graphdrawing.org/xmlns}"
    assert len(graphml.findall(f"{namespace}graph/{namespace}edge")) == 3
    mermaid = rules_memory.graph.export("mermaid", user_id="u1")
    assert mermaid.startswith("graph LR") and "|spouse_of|" in mermaid and "王总" in mermaid


def test_merge_moves_relations_and_keeps_the_name_as_alias(rules_memory: Memory) -> None:
    say(rules_memory, "u1", "老王喜欢钓鱼", "王总喜欢红酒", "王总的老板是老王")
    merged = rules_memory.graph.merge("王总", "老王", user_id="u1")
    assert merged.aliases == ("老王",)
    assert {e.target for e in rules_memory.graph.neighbors("老王", user_id="u1").edges()} == {"钓鱼", "红酒"}
    (loop,) = [e for e in rules_memory.graph.relation_history("王总", "reports_to", user_id="u1")]
    assert not loop.record.current  # "王总 reports to 老王" became a loop on one node: closed, kept as history
    assert [e.name for e in rules_memory.graph.entities(user_id="u1")].count("老王") == 0


def test_graph_calls_are_scoped_and_name_unknown_entities(rules_memory: Memory) -> None:
    say(rules_memory, "u1", "王总喜欢红酒")
    say(rules_memory, "u2", "王总喜欢白酒")
    assert [e.target for e in rules_memory.graph.neighbors("王总", user_id="u2").edges()] == ["白酒"]
    with pytest.raises(NotFoundError, match="no entity named"):
        rules_memory.graph.neighbors("红酒", user_id="u2")
    assert "王总喜欢红酒" not in texts(rules_memory, "王总喜欢什么?", user="u2")

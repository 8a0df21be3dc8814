# ruff: noqa: E501  (the pattern table reads best one case per line)
"""The offline parts of graph memory: patterns, name rules, resolution guards (no store, no model)."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from memstrata.graph.extracted import Mention, Triple
from memstrata.graph.names import is_abbreviation, is_sub_place, normalize, type_from_name
from memstrata.graph.plan import fitting_triples
from memstrata.graph.resolve import EntityResolver
from memstrata.graph.rules import RulesGraphExtractor, mention
from memstrata.graph.vocabulary import canonical_relation
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.records.graph import Entity
from memstrata.types import Message, Scope


def triples(text: str, role: str = "user") -> list[tuple[str, str, str, bool]]:
    found = RulesGraphExtractor().extract([Message(role=role, content=text)])  # type: ignore[arg-type]
    return [(t.source.name, t.relation, t.target.name, t.ended) for t in found]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("王总的太太是李女士", [("王总", "spouse_of", "李女士", False)]),
        ("李女士是王总的太太", [("王总", "spouse_of", "李女士", False)]),
        ("王总喜欢红酒", [("王总", "likes", "红酒", False)]),
        ("前端开发依赖后端 API", [("前端开发", "depends_on", "后端 API", False)]),
        ("张工负责后端 API", [("张工", "responsible_for", "后端 API", False)]),
        ("我在字节跳动做后端，住在北京", [("user", "works_at", "字节跳动", False), ("user", "lives_in", "北京", False)]),
        ("我现在在字节工作，搬到北京市朝阳区了", [("user", "works_at", "字节", False), ("user", "lives_in", "北京市朝阳区", False)]),
        ("我从腾讯离职了", [("user", "works_at", "腾讯", True)]),
        ("我不喜欢香菜", [("user", "dislikes", "香菜", False)]),
        ("I live in Berlin and I work at Acme Corp.", [("user", "lives_in", "Berlin", False), ("user", "works_at", "Acme Corp", False)]),
        ("Wang's wife is Li Na", [("Wang", "spouse_of", "Li Na", False)]),
        ("The checkout service depends on the payments API", [("checkout service", "depends_on", "payments API", False)]),
        ("I quit Google", [("user", "works_at", "Google", True)]),
        # a time or an adverb before the verb is no subject: "上周" lived in 上海, "现在我们只" kept a dog
        ("上周搬到上海了", [("user", "lives_in", "上海", False)]),
        ("现在我们只养狗", [("user", "has_pet", "狗", False)]),
        # "领养" whole, and the household's pet the user's: "我们又领" was made a person (a user trial)
        ("我们又领养了一只狗", [("user", "has_pet", "狗", False)]),
        ("我们家养了一只猫", [("user", "has_pet", "猫", False)]),
        ("我养了一只猫叫团子", [("user", "has_pet", "团子", False)]),  # the pet by its name, not "猫叫团子"
        ("我们又领养了一只狗叫 Mochi", [("user", "has_pet", "Mochi", False)]),
        ("去年我妹妹住在成都", [("妹妹", "lives_in", "成都", False)]),
        # a clause without its subject after one about a relative is the relative's: the brother's job was the
        # user's, and closed the user's own employer (found with an imported history)
        ("我哥也搬家了，今年初去了柏林，在 Zalando 做 embedded engineer。", []),
        ("我哥搬家了，我在阿里工作", [("user", "works_at", "阿里", False)]),
    ],
)  # fmt: skip
def test_patterns(text: str, expected: list[tuple[str, str, str, bool]]) -> None:
    assert triples(text) == expected


@pytest.mark.parametrize("text", ["今天天气不错", "张工请假会影响什么?", "Where do you live?", "你好呀", "ok thanks"])
def test_questions_and_small_talk_give_nothing(text: str) -> None:
    assert triples(text) == []


def test_assistant_turns_are_left_to_models() -> None:
    assert triples("王总喜欢红酒", role="assistant") == []


def test_names() -> None:
    assert normalize("后端 API") == normalize("后端API") == normalize("后端api")
    assert is_abbreviation("字节", "字节跳动") and is_abbreviation("MS", "Microsoft")
    assert not is_abbreviation("张工", "张三") and not is_abbreviation("前端开发", "后端开发")
    assert is_sub_place("北京", "北京市朝阳区") and not is_sub_place("北京", "北京市")
    assert type_from_name("李女士") == "person" and type_from_name("朝阳区") == "location"
    assert type_from_name("Acme Corp") == "organization" and type_from_name("红酒") is None
    assert canonical_relation("Works For") == "works_at" and canonical_relation("依赖") == "related_to"


@pytest.fixture
def resolver(embedder: UniversalSentenceEncoder) -> EntityResolver:
    def embed(names: object) -> list[np.ndarray]:
        return list(embedder.embed_batch(list(names)))  # type: ignore[call-overload]

    return EntityResolver(
        scope=Scope(user_id="u"), entities={}, vectors={}, embed=embed, threshold=0.7,
        now=datetime(2025, 1, 1, tzinfo=UTC), actor="test",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("said", "name"),
    [
        ("Hangzhou last month", "Hangzhou"),  # the bundled model's object for "I moved to Hangzhou last month"
        ("去年的杭州", "杭州"),
        ("我妹妹", "妹妹"),  # the same node as "妹妹", which the model also wrote for the same sister
        ("我的老婆", "老婆"),
        ("my sister", "sister"),
        ("Today Show", "Today Show"),  # capitalised: a name, not a time
        ("我爱罗", "我爱罗"),  # not a possessive
        ("了杭州", "杭州"),  # "我上个月搬到了杭州", as the bundled model and the rules read it
        ("last month", "last month"),  # nothing would be left
    ],
)
def test_time_words_and_the_speakers_possessive_leave_entity_names(said: str, name: str) -> None:
    assert mention(said).name == name


def test_resolution_joins_abbreviations_and_keeps_lookalikes_apart(resolver: EntityResolver) -> None:
    bytedance = resolver.resolve("字节跳动", "organization", ("m1",))
    assert resolver.resolve("字节", "organization", ("m2",)).id == bytedance.id
    assert resolver.entities[bytedance.id].aliases == ("字节",)
    assert resolver.resolve("字节", "person", ("m3",)).id != bytedance.id  # a person is not a company
    zhang = resolver.resolve("张工", "person", ("m1",))
    assert resolver.resolve("张三", "person", ("m1",)).id != zhang.id  # embeddings 0.81 alike, names are not
    beijing = resolver.resolve("北京", "location", ("m1",))
    assert resolver.resolve("北京市朝阳区", "location", ("m2",)).id != beijing.id
    assert resolver.resolve("北京市", "location", ("m3",)).id == beijing.id
    assert resolver.resolve("I", "person", ("m1",)).id == resolver.resolve("我", "person", ("m2",)).id


def test_resolution_threshold_is_configurable(resolver: EntityResolver) -> None:
    bytedance = resolver.resolve("字节跳动", "organization", ("m1",))
    resolver.threshold = 0.95  # "字节" is ~0.73 similar: below a strict threshold it is a new node
    assert resolver.resolve("字节", "organization", ("m2",)).id != bytedance.id


def test_one_place_or_person_named_in_both_scripts_is_one_node(resolver: EntityResolver) -> None:
    """'Hangzhou' and '杭州' were two location nodes, so a question in one language missed the other's facts."""
    weiming = resolver.resolve("张伟明", "person", ("m0",))  # 0.89 similar to 'Zhang Wei', another person
    assert resolver.resolve("Zhang Wei", "person", ("m0",)).id != weiming.id
    hangzhou = resolver.resolve("杭州", "location", ("m1",))
    assert resolver.resolve("Hangzhou", "location", ("m2",)).id == hangzhou.id  # pinyin
    assert resolver.resolve("Hangzhou", "thing", ("m3",)).id == hangzhou.id  # an untyped mention too
    lin = resolver.resolve("林晓", "person", ("m4",))
    assert resolver.resolve("Lin Xiao", "person", ("m5",)).id == lin.id
    liu = resolver.resolve("Fang Liu", "person", ("m6",))
    assert resolver.resolve("刘芳", "person", ("m7",)).id == liu.id  # surname last in English
    microsoft = resolver.resolve("微软", "organization", ("m8",))
    assert resolver.resolve("Microsoft", "organization", ("m9",)).id == microsoft.id  # translation: 0.83
    paris = resolver.resolve("Paris", "location", ("m10",))
    assert resolver.resolve("巴黎", "location", ("m11",)).id == paris.id
    # Kept apart: nearby places, a place within, a concept and its opposite.
    assert resolver.resolve("上海", "location", ("m13",)).id not in {hangzhou.id, paris.id}
    assert resolver.resolve("杭州西湖", "location", ("m14",)).id != hangzhou.id
    frontend = resolver.resolve("frontend development", "concept", ("m15",))
    assert resolver.resolve("后端开发", "concept", ("m16",)).id != frontend.id
    assert resolver.entities[hangzhou.id].aliases == ("Hangzhou",)


def test_a_relation_whose_end_is_plainly_another_type_is_not_applied() -> None:
    """A model read a trip to Shanghai as 'user works_at 上海' and a job title as 'works_at 产品经理'; applied, each
    created an 'organization' of that name and closed the user's true works_at edge."""

    def said(relation: str, target: str, kind: str | None = None) -> Triple:
        return Triple(Mention("user", "person", speaker=True), relation, Mention(target, kind), 0.8, ("m1",))

    shanghai = Entity(id="e1", scope=Scope(user_id="u"), name="上海", type="location",
                      created_at=datetime(2025, 1, 1, tzinfo=UTC), updated_at=datetime(2025, 1, 1, tzinfo=UTC))  # fmt: skip
    sent = [
        said("works_at", "腾讯", "organization"),  # fits
        said("works_at", "上海", "organization"),  # the model's type, but 上海 is a known place: works_in it
        said("works_at", "产品经理"),  # a job title (its name says person): not an employer
        said("lives_in", "王总"),  # a person is not a place
        said("likes", "penicillin"),  # a relation without usual types: not judged here
    ]
    kept, refused = fitting_triples(sent, [shanghai])
    assert [(t.relation, t.target.name) for t in kept] == [
        ("works_at", "腾讯"),
        ("works_in", "上海"),
        ("likes", "penicillin"),
    ]
    assert refused == 2
    profession = fitting_triples([said("has_profession", "产品经理")], [])  # 经理 reads as a person: no clash
    assert [t.target.name for t in profession[0]] == ["产品经理"]


@pytest.mark.parametrize(
    ("said", "relation", "target"),
    [("I live in New York with my wife.", "lives_in", "New York"),
     ("I live in Beijing with my cat 团子.", "lives_in", "Beijing"),
     ("I moved to San Francisco in 2020.", "lives_in", "San Francisco"),
     ("I work at Bank of America since 2019.", "works_at", "Bank of America"),
     ("I live in Beijing and work at Baidu.", "lives_in", "Beijing"),
     ("I work at Johnson and Johnson.", "works_at", "Johnson and Johnson"),
     ("I live in New York City now", "lives_in", "New York City"),
     ("I work at Google these days.", "works_at", "Google"),
     ("I'm working at Google these days", "works_at", "Google"),
     ("I live in 深圳 since 2020", "lives_in", "深圳")],
)  # fmt: skip
def test_an_english_object_ends_where_another_phrase_begins(said: str, relation: str, target: str) -> None:
    """'New York with my wife', 'New York City now' and '深圳 since 2020' became places; 'I'm working at' gave none."""
    triple = RulesGraphExtractor().extract([Message(role="user", content=said)])[0]
    assert (triple.relation, triple.target.name) == (relation, target)


@pytest.mark.parametrize(
    ("said", "expected"),
    [("I live in Beijing and work at Baidu.", [("user", "lives_in", "Beijing"), ("user", "works_at", "Baidu")]),
     ("Alice lives in Paris and works at Google.", [("Alice", "lives_in", "Paris"), ("Alice", "works_at", "Google")]),
     ("I moved to San Francisco, and now work at Stripe.",
      [("user", "lives_in", "San Francisco"), ("user", "works_at", "Stripe")]),
     # a relative named with the kinship word: her edges, and the kinship (it went to the user: "user lives_in
     # Shenzhen", or made a node "妹妹林小雨")
     ("My sister Lily works at Tencent and lives in Shenzhen.",
      [("user", "sibling_of", "Lily"), ("Lily", "works_at", "Tencent"), ("Lily", "lives_in", "Shenzhen")]),
     ("我妹妹林小雨在腾讯工作，住在深圳。",
      [("user", "sibling_of", "林小雨"), ("林小雨", "works_at", "腾讯"), ("林小雨", "lives_in", "深圳")]),
     # a clause not understood gives its verb to nobody
     ("Our neighbours' dog barks and lives in Shenzhen.", [])],
)  # fmt: skip
def test_a_second_verb_after_and_is_a_clause_of_the_same_subject(said: str, expected: list[tuple[str, ...]]) -> None:
    """Only the first clause was read: Baidu, Google and Stripe were never in the graph."""
    found = RulesGraphExtractor().extract([Message(role="user", content=said)])
    assert [(t.source.name, t.relation, t.target.name) for t in found] == expected


def test_chinese_life_and_work_clauses_of_a_named_subject() -> None:
    """'Alice在巴黎生活，在谷歌上班' gave nothing: no pattern for 在X生活, and 谷歌 (tagged a person name by jieba)
    made the employer edge a refused triple; 阿里巴巴 the same."""
    found = RulesGraphExtractor().extract([Message(role="user", content="Alice在巴黎生活，在谷歌上班。")])
    assert [(t.source.name, t.relation, t.target.name, t.target.type) for t in found] == [
        ("Alice", "lives_in", "巴黎", "location"), ("Alice", "works_at", "谷歌", None)]  # fmt: skip
    [boss] = RulesGraphExtractor().extract([Message(role="user", content="王总在阿里巴巴上班")])
    assert (boss.target.name, boss.target.type) == ("阿里巴巴", None)  # the relation's type (organization) applies

"""Keyword terms on every backend: a Chinese noun jieba glued to its neighbour is still found, and a keyword index an
earlier tokenizer built is rebuilt (on open when small, by ``memstrata reindex`` when large)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import pytest

from memstrata.lexical import keyword_tokens, search_terms
from memstrata.query import Filters
from memstrata.storage.protocol import Store, WriteBatch
from memstrata.storage.sql import store as sql_store
from memstrata.types import MemoryItem, Scope, new_id

T0 = datetime(2025, 1, 1, 9, 0, tzinfo=UTC)
LIN = Scope(user_id="lin")


def put(store: Store, text: str) -> MemoryItem:
    memory = MemoryItem(id=new_id(), scope=LIN, kind="fact", text=text, created_at=T0, updated_at=T0, valid_from=T0)
    store.write(WriteBatch(inserts=[memory]))
    return memory


def found(store: Store, query: str) -> list[str]:
    return [hit.memory_id for hit in store.keyword_search(LIN, search_terms(query), Filters(), 10)]


def reopen(store: Store) -> Store:
    store.close()
    location = getattr(store, "url", None) or store.path  # type: ignore[attr-defined]
    return type(store)(location)  # type: ignore[call-arg]


def test_terms_are_the_words_then_the_characters_of_each_chinese_word() -> None:
    assert keyword_tokens("我的猫叫团子") == ["猫叫", "团子"]  # jieba's words, for every other consumer
    assert search_terms("我的猫叫团子") == ["猫叫", "团子", "猫", "叫", "团", "子"]
    assert search_terms("猫的名字") == ["猫", "名字", "名", "字"]
    assert search_terms("I adopted a cat") == keyword_tokens("I adopted a cat")  # Latin text is unchanged


def test_a_noun_glued_to_its_neighbour_is_found_by_keyword(store: Store) -> None:
    cat = put(store, "我的猫叫团子")
    put(store, "我对花生过敏")
    assert found(store, "猫的名字") == [cat.id]


def test_a_name_glued_to_a_function_character_is_found_by_itself(store: Store) -> None:
    """jieba's guesser glues an unknown name to the character after or before it (林浩在, 林浩是, 问林浩): the
    memory and the question then shared no word, and "林浩是谁？" found nothing."""
    assert keyword_tokens("我弟弟林浩在深圳") == ["弟弟", "林浩", "深圳"]
    assert keyword_tokens("我问林浩了") == ["问", "林浩"]
    assert keyword_tokens("我什么时候换的工作？") == ["换", "工作"]  # 什么时候 asks "when": no topic word
    brother = put(store, "我弟弟林浩在深圳的腾讯做产品经理。")
    put(store, "我老婆叫陈静，是一名小学语文老师。")
    assert found(store, "林浩是谁？") == [brother.id]
    assert found(store, "Who is 林浩?") == [brother.id]


def test_both_backends_match_words_as_fts5_stems_them(store: Store) -> None:
    """PostgreSQL stored tokens as they were, so 'order' never found 'ordering' there while SQLite's FTS5 (porter)
    did; both now match FTS5's terms, and a token of several terms is still a phrase."""
    ordering = put(store, "Noted: no peanuts when ordering.")
    weekends = put(store, "I go climbing on weekends, 周末爬山")
    email = put(store, "send the e-mail to Café Lumière")
    put(store, "mail the letter")
    assert found(store, "order") == [ordering.id]
    assert found(store, "weekend") == [weekends.id] and found(store, "周末") == [weekends.id]
    assert found(store, "e-mail") == [email.id] and found(store, "cafe") == [email.id]


def test_a_possessive_or_contraction_finds_the_bare_word(store: Store) -> None:
    """ "dog's" was a term of its own, searched as the phrase "dog s": "What's my dog's name?" missed "My dog Rex"
    and matched "what's a good podcast" on "what's" instead."""
    assert search_terms("What's my dog's name? I won't say, I can't") == ["dog", "name", "say"]
    assert search_terms("O'Brien at 9 o'clock") == ["o'brien", "9", "o'clock"]  # a name is not a clitic
    dog = put(store, "My dog Rex has been limping")
    put(store, "what's a good podcast to listen to?")
    assert found(store, "What's my dog's name?") == [dog.id]


def test_an_irregular_form_finds_its_base_word(store: Store) -> None:
    """Porter stemming folds -ed and -s only: "What did I buy?" missed "I bought a laptop" on keywords."""
    assert search_terms("I bought it, she went home, the children ate") == ["buy", "go", "home", "child", "eat"]
    laptop = put(store, "Today I bought a new laptop")
    pizza = put(store, "The children ate pizza")
    assert found(store, "what did I buy?") == [laptop.id]
    assert found(store, "what did my child eat?") == [pizza.id]


def test_an_adjective_finds_its_noun(store: Store) -> None:
    """A user trial: "Am I allergic to anything?" found nothing in "我对虾过敏 (shrimp allergy)": porter stems
    "allergic" and "allergy" apart."""
    allergy = put(store, "我对虾过敏 (shrimp allergy)，订餐的时候帮我留意一下。")
    put(store, "My girlfriend and I adopted a ragdoll cat")
    assert found(store, "Am I allergic to anything?") == [allergy.id]
    assert search_terms("diabetic, asthmatic") == search_terms("diabetes, asthma")


def test_a_chat_abbreviation_finds_its_words_and_they_find_it(store: Store) -> None:
    """ "Who was my boyfriend in 2022?" shared no word with "my bf 阿杰 is a chef" (a user trial)."""
    assert keyword_tokens("my bf is a chef, fav food hotpot") == ["bf", "boyfriend", "chef", "fav", "favorite",
                                                                  "food", "hotpot"]  # fmt: skip
    chef = put(store, "my bf 阿杰 is a chef lol")
    daniel = put(store, "My boyfriend Daniel is a data scientist")
    assert set(found(store, "Who was my boyfriend in 2022?")) == {chef.id, daniel.id}
    assert set(found(store, "whos my bf")) == {chef.id, daniel.id}
    phone = put(store, "My phone number is 415-555-0199")
    assert found(store, "my ph # pls") == [phone.id]  # a user trial's question, which found nothing


def test_a_name_of_joined_words_is_found_by_each_word(store: Store) -> None:
    """ "Which phone do I use?" shared no keyword with "I use an iPhone", and the Pixel phone it had replaced answered
    on "phone"; "iphone" now also says "phone", "AirPods" "air pods", beside Chinese too."""
    assert search_terms("I use an iPhone") == ["use", "iphone", "phone"]
    assert keyword_tokens("新买了AirPods耳机") == ["新买", "airpods", "air", "pods", "耳机"]
    assert keyword_tokens("WeChat me at McDonald's") == ["wechat", "chat", "mcdonald", "donald"]
    assert keyword_tokens("ALL CAPS and lower case") == keyword_tokens("all caps and lower case")
    iphone = put(store, "I use an iPhone.")
    pods = put(store, "新买了AirPods耳机")
    put(store, "I called my mother")
    assert found(store, "Which phone do I use?") == [iphone.id]
    assert found(store, "my pods") == [pods.id]


def test_a_hyphenated_word_is_found_without_its_hyphens(store: Store) -> None:
    """ "How often do I get checkups?" shared no keyword with "Had a check-up with my doctor": the hyphenated word was
    one term, searched as the phrase "check up". Its letters joined are a term too; numbers keep their hyphens."""
    assert keyword_tokens("a check-up, an e-mail, my T-shirt") == ["check-up", "checkup", "e-mail", "email", "t-shirt",
                                                                 "tshirt"]  # fmt: skip
    assert keyword_tokens("the 2022-03 report") == ["2022-03", "report"]
    checkup = put(store, "Had a check-up with my doctor last week")
    mail = put(store, "I sent the landlord an email about the heater")
    put(store, "I check the weather every morning")
    assert found(store, "How often do I get checkups?") == [checkup.id]
    assert found(store, "Which e-mail did I send?") == [mail.id]


def test_emoji_are_terms_and_an_emoji_query_finds_its_memory(store: Store) -> None:
    assert keyword_tokens("I love 🍕 and ☕, 👍🏽") == ["love", "emoji1f355", "emoji2615", "emoji1f44d"]
    pizza, strawberry = put(store, "I love 🍕 on Fridays"), put(store, "我最喜欢的水果是🍓")
    assert found(store, "🍕") == [pizza.id]
    assert found(store, "🍓?") == [strawberry.id]


def test_an_index_built_by_an_earlier_tokenizer_is_rebuilt(
    store: Store, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def words_only(text: str) -> str:  # what memstrata before search terms version 2 indexed
        return " ".join(keyword_tokens(text))

    for module in ("memstrata.storage.sqlite.dialect", "memstrata.storage.postgres.dialect"):
        monkeypatch.setattr(f"{module}.index_document", words_only)
    # no category of the user's: a cat of their own is indexed with 猫 itself (memstrata.categories)
    cat = put(store, "动物园的熊猫叫团团")
    monkeypatch.undo()
    store.dialect.transaction(lambda tx: tx.execute("DELETE FROM meta WHERE key = 'search_terms'"))  # type: ignore[attr-defined]
    assert found(store, "熊的名字") == []  # the old terms hold 熊猫, not 熊

    monkeypatch.setattr(sql_store, "AUTO_KEYWORD_REBUILD_ROWS", 0)  # as if the store were large
    with caplog.at_level(logging.WARNING, logger="memstrata.storage.sql.store"):
        store = reopen(store)
    assert "memstrata reindex" in caplog.text and not store.keyword_index_current()
    assert found(store, "熊的名字") == []  # searches go on with the old terms meanwhile
    assert sum(store.rebuild_keyword_index(batch_size=1)) == 1
    assert store.keyword_index_current() and found(store, "熊的名字") == [cat.id]

    store.dialect.transaction(lambda tx: tx.execute("DELETE FROM meta WHERE key = 'search_terms'"))  # type: ignore[attr-defined]
    monkeypatch.undo()
    store = reopen(store)  # small: rebuilt on open
    try:
        assert store.keyword_index_current() and found(store, "熊的名字") == [cat.id]
    finally:
        store.close()

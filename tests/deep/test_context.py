"""memory.context(): rules first and verbatim, key facts (always those the query names), the user's standing facts,
relevant memories with their source turns and dates, the session's recent turns; never over the budget; cited;
counted as used."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.deep.conftest import MakeDeep

from memstrata import Memory
from memstrata.deep.context_model import MemoryContext
from memstrata.errors import InvalidInputError
from memstrata.facade import context as context_module
from memstrata.lifecycle.session import estimate_tokens
from memstrata.storage.protocol import WriteBatch

RULES = "# Team rules\nAlways answer in the user's language.\n回答要简洁。\n"
KEYS = {
    "project:db:engine": "We use PostgreSQL 16 with pgvector.",
    "user:health:allergy": "The user is allergic to peanuts.",
    "用户:饮食:口味": "用户喜欢吃辣，尤其是川菜。",
    "project:deploy:region": "Production runs in eu-west-1.",
}


def seeded(make_deep: MakeDeep, tmp_path: Path) -> Memory:
    rules = tmp_path / "AGENTS.md"
    rules.write_text(RULES, encoding="utf-8")
    memory = make_deep(None, vault={"rules_files": [str(rules)]})
    for key, text in KEYS.items():
        memory.add(text, key=key, kind="fact", user_id="u1")
    memory.add(
        [
            {"role": "user", "content": "I painted a sunset over the lake last weekend, it took me six hours."},
            {"role": "assistant", "content": "That sounds lovely! What colours did you use?"},
            {"role": "user", "content": "我周末去杭州爬山了，西湖边的风景特别好。" * 3},
        ],
        user_id="u1",
    )
    memory.add([f"Note {n}: the team discussed topic number {n} about painting and lakes." for n in range(12)],
               user_id="u1")  # fmt: skip
    memory.add([{"role": "user", "content": "Let's plan the release for Friday."},
                {"role": "assistant", "content": "OK, Friday it is."}], user_id="u1", session_id="s1")  # fmt: skip
    return memory


def check_budget(context: MemoryContext) -> None:
    assert context.tokens == estimate_tokens(context.text) <= context.budget_tokens


def test_context_reads_in_order_and_cites(make_deep: MakeDeep, tmp_path: Path) -> None:
    memory = seeded(make_deep, tmp_path)
    context = memory.context("Which db engine do we use, and what did I paint?", user_id="u1", session_id="s1")
    check_budget(context)
    text = context.text
    assert text.startswith("## Rules\n") and RULES.strip() in text  # verbatim, first
    heads = [text.index(head) for head in ("## Rules", "## Key facts", "## Memories", "## This session")]
    assert heads == sorted(heads)
    named = [fact for fact in context.facts if fact.named]
    assert [fact.key for fact in named] == ["project:db:engine"]
    assert KEYS["project:db:engine"] in text
    memories = text.split("## Memories")[1].split("## This session")[0]
    assert "I painted a sunset" in memories  # the episode itself, or the turn before the reply found
    assert all(f"[{m.ref}] {m.date.date().isoformat()}" in memories for m in context.memories)  # dated, cited
    assert "Friday" in text.split("## This session")[1] and context.session
    assert set(context.citations) == {m.memory_id for m in [*context.facts, *context.profile, *context.memories]}
    assert len(context.citations) == len(set(context.citations))  # deduplicated
    memory._core.access.flush()  # the access log is batched off the read path; make it land now
    assert memory.get(named[0].memory_id, user_id="u1").access_count == 1


def test_context_is_scoped(make_deep: MakeDeep, tmp_path: Path) -> None:
    memory = seeded(make_deep, tmp_path)
    memory.add("Mallory's db engine is Oracle.", key="project:db:engine", user_id="u2")
    context = memory.context("which db engine?", user_id="u1", mode="deep")
    assert "Oracle" not in context.text and context.trace is not None


def test_an_agent_reads_the_users_long_term_memory(make_deep: MakeDeep, tmp_path: Path) -> None:
    """An agent passing its agent_id got none of the user's facts, not even the key its question named."""
    memory = seeded(make_deep, tmp_path)
    memory.add("Researcher's own note: the benchmark uses HNSW with M=32.", user_id="u1", agent_id="researcher")
    memory.add("Mallory's db engine is Oracle.", key="project:db:engine", user_id="u2", agent_id="researcher")
    context = memory.context("project:db:engine and the HNSW M?", user_id="u1", agent_id="researcher")
    assert KEYS["project:db:engine"] in context.text and "M=32" in context.text
    assert "Oracle" not in context.text  # never another user's
    bound = memory.scoped(user_id="u1", agent_id="researcher")  # a view bound to the agent stays bound
    assert KEYS["project:db:engine"] not in bound.context("project:db:engine", budget_tokens=500).text


def test_a_budget_too_small_for_rules_is_refused(make_deep: MakeDeep, tmp_path: Path) -> None:
    memory = seeded(make_deep, tmp_path)
    (tmp_path / "AGENTS.md").write_text(RULES * 10, encoding="utf-8")  # re-read: it changed
    with pytest.raises(InvalidInputError, match="raise budget_tokens"):
        memory.context("anything", user_id="u1", budget_tokens=100)
    with pytest.raises(InvalidInputError, match="mode"):
        memory.context("anything", user_id="u1", mode="slow")  # type: ignore[arg-type]


QUERIES = ["what is {k}?", "remind me about {k} please", "{k}", "我想问一下{k}是什么？", "{k} and the sunset"]
NAMES = {  # how a query may name each key: the key itself, or its last part's words
    "project:db:engine": ["project:db:engine", "db engine"],
    "user:health:allergy": ["allergy", "user:health:allergy"],
    "用户:饮食:口味": ["口味"],
    "project:deploy:region": ["region"],
}


def test_context_never_exceeds_the_budget(make_deep: MakeDeep, tmp_path: Path) -> None:
    memory = seeded(make_deep, tmp_path)

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(
        budget=st.integers(min_value=40, max_value=3000),
        key=st.sampled_from(sorted(KEYS)),
        form=st.sampled_from(QUERIES),
        pick=st.integers(min_value=0, max_value=1),
        session=st.booleans(),
    )
    def prop(budget: int, key: str, form: str, pick: int, session: bool) -> None:
        name = NAMES[key][pick % len(NAMES[key])]
        query = form.format(k=name)
        try:
            context = memory.context(query, user_id="u1", budget_tokens=max(64, budget),
                                     session_id="s1" if session else None)  # fmt: skip
        except InvalidInputError as refused:  # only when the rules and the named fact cannot both fit
            assert "raise budget_tokens" in str(refused)
            assert budget < 200
            return
        check_budget(context)
        assert KEYS[key] in context.text  # a key fact the query names is always in
        assert any(fact.key == key and fact.named for fact in context.facts)

    prop()


def test_memories_from_imported_history_are_dated_when_they_were_said(make_deep: MakeDeep) -> None:
    """A memory drawn from a 2023 turn imported today read '[ref] <today>' beside '> 2023-03-01 user: ...'."""
    memory = make_deep(None)
    said = {"role": "user", "content": "I live in Beijing with my cat 团子.", "timestamp": "2023-03-01T10:01:00Z"}
    memory.add([said], user_id="lin", infer=True, wait=True)
    context = memory.context("where does lin live with the cat", user_id="lin")
    assert context.memories and {m.date.date().isoformat() for m in context.memories} == {"2023-03-01"}
    assert "] 2023-03-01 I live in Beijing" in context.text


def test_deep_search_travels_in_time(make_deep: MakeDeep) -> None:
    """Only search(mode="deep") took as_of; deep_search() and REST /v1/memories/search/deep refused it."""
    from datetime import UTC, datetime

    memory = make_deep(None)
    memory.add("住在杭州", user_id="w", key="me:home:city", event_time=datetime(2020, 1, 1, tzinfo=UTC))
    memory.add("住在深圳", user_id="w", key="me:home:city", event_time=datetime(2023, 6, 1, tzinfo=UTC))
    then = memory.deep_search("me:home:city", user_id="w", as_of=datetime(2021, 1, 1, tzinfo=UTC))
    now = memory.deep_search("me:home:city", user_id="w")
    assert then.hits[0].text == "住在杭州" and now.hits[0].text == "住在深圳"


def test_context_travels_in_time(memory: Memory) -> None:
    """context() took no as_of: what an agent read for "Where do I live?" as of 2024 was the home of today, and so
    were the key facts (found by a user trial of an imported history)."""
    history = [("2023-03-01T10:00:00+08:00", "I live in Beijing, 在朝阳区。"),
               ("2025-05-10T10:00:00+08:00", "上个月搬到上海了，住在浦东。")]  # fmt: skip
    memory.add([{"role": "user", "content": text, "timestamp": when} for when, text in history], user_id="lin")
    memory.add("北京", key="lin:home:city", user_id="lin", event_time=datetime(2023, 3, 1, tzinfo=UTC))
    memory.add("上海", key="lin:home:city", user_id="lin", event_time=datetime(2025, 4, 1, tzinfo=UTC))
    then = memory.context("Where do I live? lin:home:city", user_id="lin", as_of="2024-06-01")
    now = memory.context("Where do I live? lin:home:city", user_id="lin")
    assert "lin:home:city: 北京" in then.text and "lin:home:city: 上海" not in then.text
    assert "lin:home:city: 上海" in now.text
    first = {
        when: memory.get(built.memories[0].memory_id, user_id="lin").text
        for when, built in (("then", then), ("now", now))
    }
    assert first == {"then": "I live in Beijing, 在朝阳区。", "now": "上个月搬到上海了，住在浦东。"}


def test_a_key_fact_is_found_by_the_question_its_key_answers(memory: Memory) -> None:
    """A key's value alone ("上海", "139-2222-3333") says nothing of what it is: a natural question found no key
    fact, and under a small budget context() gave the old phone number and left the current key value out (the
    key facts' share went to profile facts). The value is indexed with its key's words, and a key fact that
    answers the question is packed like a memory."""
    memory.add("我的电话号码是 138 0000 1111", user_id="lin", event_time=datetime(2025, 6, 15, tzinfo=UTC))
    memory.add("139-2222-3333", key="lin:contact:phone", user_id="lin")
    memory.add("上海", key="lin:home:city", user_id="lin")
    memory.add("字节跳动", key="lin:work:employer", user_id="lin")
    assert memory.search("Where does Lin live?", user_id="lin")[0].text == "上海"
    assert "139-2222-3333" in [hit.text for hit in memory.search("What is my phone number?", user_id="lin")]
    assert memory.search("What is my current employer?", user_id="lin")[0].text == "字节跳动"
    built = memory.context("我的电话号码是多少？", user_id="lin", budget_tokens=64)
    assert "lin:contact:phone: 139-2222-3333" in built.text and built.tokens <= 64


def test_a_key_fact_said_before_many_other_facts_is_still_a_key_fact(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Key facts were looked for among the most recent facts of any kind (2,000, read and decoded on every call:
    40 % of a context's time at 2,000 facts), so one stored before them was never shown; now the keyed ones."""
    monkeypatch.setattr(context_module, "KEY_SCAN", 3)
    memory.add("字节跳动", key="lin:work:employer", user_id="lin")
    memory.add(["我喜欢爬山", "周末常去西湖", "我在学日语", "我养了一只猫"], user_id="lin", infer=False)
    built = memory.context("帮我写一段自我介绍", user_id="lin", budget_tokens=400)
    assert "lin:work:employer: 字节跳动" in built.text


def test_a_long_session_keeps_the_turns_that_answer_under_a_small_budget(memory: Memory) -> None:
    """An imported session's turns were left out of the memories (the session block shows them), and the session
    block kept only its newest turns: the Meituan turns that answer never reached the agent."""
    walk = "nothing special, went for a walk in the park."
    turns = [{"role": "user", "content": f"Day {day}: {walk}"} for day in range(30)]
    turns[3] = {"role": "user", "content": "I started a new job at Meituan as a backend engineer."}
    turns[5] = {"role": "user", "content": "My job at Meituan is stressful, lots of on-call weeks."}
    memory.add(turns, user_id="carol", session_id="imp")
    context = memory.context("What did I say about my job at Meituan?", user_id="carol", session_id="imp",
                             budget_tokens=400)  # fmt: skip
    assert context.tokens <= 400
    assert "new job at Meituan" in context.text and "Meituan is stressful" in context.text
    assert "Day 29" in context.text  # the newest turns still read as the session


def test_a_key_written_out_names_that_key_alone(memory: Memory) -> None:
    """Every "…:runtime:version" key was named by its last word and required: a budget of 200 was refused."""
    for n in range(25):
        memory.add(f"{n}.{n}.0", user_id="ops", key=f"svc{n}:runtime:version")
    context = memory.context("What is svc3:runtime:version?", user_id="ops", budget_tokens=200)
    assert [fact.key for fact in context.facts if fact.named] == ["svc3:runtime:version"]
    assert "3.3.0" in context.text and context.tokens <= 200
    words = memory.context("Which runtime version do we run?", user_id="ops", budget_tokens=200)
    assert words.tokens <= 200 and not any(fact.named for fact in words.facts)  # a word 25 keys share


# A task shares no word with the standing facts it needs (a user trial of 56 agent tasks over an imported history).
STANDING = [
    ("2022-01-07T10:00:00+08:00", "我对花生过敏，很严重的那种"),
    ("2023-03-01T10:00:00-08:00", "I'm pescatarian now, no meat"),
    ("2025-07-20T10:00:00+08:00", "我现在不吃鱼了，回到全素"),
    ("2024-05-01T10:00:00-08:00", "I live in Vancouver with my husband Marco"),
    ("2024-06-01T10:00:00-08:00", "Our daughter Sofia turned 5 today!"),
    ("2023-09-01T10:00:00+08:00", "我姐对芒果过敏"),
    ("2024-08-01T10:00:00+08:00", "周末好无聊，刷了一天小红书"),
    ("2024-03-01T10:00:00-08:00", "Valentine's dinner at Sakura Tei was amazing"),
]


def test_a_task_reads_the_users_standing_facts(memory: Memory) -> None:
    """ "Book a table for dinner Friday" matched chatter and left the peanut allergy and the diet out. The profile
    block holds the user's own current answers: the diet of now, not the one it replaced; not the sister's
    allergy; not another user's; within its share of the budget."""
    for when, text in STANDING:
        memory.add([{"role": "user", "content": text, "timestamp": when}], user_id="mei")
    memory.add("I'm allergic to shellfish", user_id="tom")
    for task in ("Book a table for dinner Friday, somewhere I'd like", "帮我订今晚的餐厅"):
        context = memory.context(task, user_id="mei", budget_tokens=600)
        check_budget(context)
        profile = context.text.split("## About the user\n")[1].split("\n\n")[0]
        assert "花生过敏" in profile and "Vancouver" in profile and "Sofia" in profile, profile
        assert "全素" in context.text and "pescatarian" not in context.text, context.text
        assert "芒果" not in profile and "shellfish" not in context.text
        assert {m.memory_id for m in context.profile} <= set(context.citations)
    small = memory.context("Book a table for dinner Friday", user_id="mei", budget_tokens=100)
    check_budget(small)
    block = small.text.split("## About the user\n")[1].split("\n\n")[0]
    assert small.profile and sum(estimate_tokens(line) + 1 for line in block.splitlines()) <= 100 * 0.2  # PROFILE_SHARE


def _tell(memory: Memory, user: str, said: list[tuple[str, str]]) -> None:
    for when, text in said:
        memory.add([{"role": "user", "content": text, "timestamp": when}], user_id=user)


def _profile_block(text: str) -> str:
    return text.split("## About the user\n")[1].split("\n\n")[0]


def test_the_profile_holds_no_one_elses_state(memory: Memory) -> None:
    """A held-out trial: "晓雯 is allergic to mango" was shown as the user's allergy in every context, "Yvonne asked
    where to live in 上海, I said…" as the user's home, and a colleague's quoted words would have been the user's."""
    said = [
        ("2021-06-09T10:00:00+08:00", "Quick note for the future: I'm allergic to cashews."),
        ("2024-05-01T10:00:00+08:00", "晓雯 is allergic to mango, never buy her mango cake"),
        ("2026-01-10T10:00:00+08:00", "Yvonne: 「我下個月調到上海辦公室！我對蝦子過敏喔」 so she's moving here"),
        ("2026-01-28T10:00:00+08:00", "Yvonne asked where to live in 上海, I said anywhere near line 9 lol"),
        ("2025-09-01T10:00:00+08:00", "Moved into our new flat in 徐汇 today, I live two blocks from the metro"),
    ]
    _tell(memory, "ravi", said)
    context = memory.context("Book a table for dinner Saturday", user_id="ravi", budget_tokens=600)
    profile = _profile_block(context.text)
    assert "cashews" in profile and "徐汇" in profile, profile
    assert "mango" not in profile and "蝦子" not in profile and "Yvonne" not in profile, profile


def test_a_grandchilds_allergy_is_not_the_users(memory: Memory) -> None:
    """A trial: "我孙子在二中上初一，对花生过敏。" (and the bundled model's "用户孙子对花生过敏") was read as the
    user's own statement (the user's allergy in the profile); a grandchild, like a child, is someone else."""
    said = [("2025-03-05T09:00:00+08:00", "我有高血压，每天吃硝苯地平。我对青霉素过敏。"),
            ("2025-06-20T09:00:00+08:00", "我孙子在二中上初一，对花生过敏。"),
            ("2025-06-21T09:00:00+08:00", "My granddaughter is allergic to shellfish.")]  # fmt: skip
    _tell(memory, "li", said)
    found = memory.search("我对什么过敏？", user_id="li")
    assert found and "青霉素" in found[0].text, [hit.text for hit in found]
    for task in ("帮我订周六晚上的饭店", "Book a table for dinner Saturday"):
        profile = _profile_block(memory.context(task, user_id="li", budget_tokens=600).text)
        assert "青霉素" in profile, (task, profile)  # a grandchild's allergy only in words that say whose it is
        assert all("孙子" in line or "granddaughter" in line for line in profile.splitlines()
                   if "花生" in line or "shellfish" in line), (task, profile)  # fmt: skip


def test_the_profile_holds_no_turn_that_matched_only_on_the_turn_before(memory: Memory) -> None:
    """A user trial: "I drive a blue Tesla Model 3." answered "What am I allergic to?" (0.31) on the allergy said the
    turn before it, indexed beside it, and was shown under "About the user" for a dinner order."""
    said = [
        ("2026-12-01T10:00:00+08:00", "你好！我叫林小雨，我养了一只猫叫团子。我对花生过敏。"),
        ("2026-12-01T10:01:00+08:00", "My favourite food is ramen, and I'm allergic to penicillin too."),
        ("2026-12-01T10:02:00+08:00", "I drive a blue Tesla Model 3."),
    ]
    _tell(memory, "lin", said)
    profile = _profile_block(memory.context("What should I order for dinner?", user_id="lin", budget_tokens=600).text)
    assert "penicillin" in profile and "花生" in profile and "Tesla" not in profile, profile


def test_the_profile_says_each_statement_once_and_holds_no_pet_that_died(memory: Memory) -> None:
    """A re-trial with the bundled model: "我还对芒果过敏。" and the fact drawn from it both took the two places held
    for allergies, and the peanut allergy was left out; "Sad news: my cat 团子 died last week." was shown as a pet."""
    said = [
        ("2026-11-01T10:00:00+08:00", "我对花生过敏。"),
        ("2026-12-01T10:00:00+08:00", "我还对芒果过敏。"),
        ("2026-12-02T10:00:00+08:00", "Sad news: my cat 团子 died last week."),
    ]
    _tell(memory, "lin", said)
    turns = {turn.message.content: turn.message.id for turn in memory.messages(user_id="lin")}
    memory.add("用户对芒果过敏", user_id="lin", kind="fact", event_time="2026-12-01T10:00:00+08:00")
    fact = memory.get_all(user_id="lin", filters={"kind": ["fact"]})[0]
    drawn = fact.provenance.model_copy(update={"message_ids": (turns["我还对芒果过敏。"],)})  # from that turn
    memory.store.write(WriteBatch(replacements=[(fact.model_copy(update={"provenance": drawn}), fact.updated_at)]))
    profile = _profile_block(memory.context("我晚饭该点什么？", user_id="lin", budget_tokens=600).text)
    assert "花生" in profile and profile.count("芒果") == 1 and "团子" not in profile, profile
    # a third allergy (a second re-trial: a correction took the second place and the peanut allergy was left out)
    _tell(memory, "lin", [("2026-12-03T10:00:00+08:00", "我对虾也过敏。")])
    profile = _profile_block(memory.context("我晚饭该点什么？", user_id="lin", budget_tokens=600).text)
    assert all(allergen in profile for allergen in ("花生", "芒果", "虾")), profile


def test_the_profile_reads_a_change_said_without_i_and_asks_what_the_task_needs_first(memory: Memory) -> None:
    """A trial of a life imported from old chats: "Unpacked the last box in Denver" says no "I", so the profile showed
    the home of 2021 ("living in Seattle") as the user's home; and the block, a fifth of 600 tokens, held the
    allergy, the diet and the home, asked first, so a family task never read the partner or the children."""
    said = [
        (
            "2021-01-17T10:00:00Z",
            "I'm Sam, software engineer at Amazon, living in Seattle, Capitol Hill. Coffee addict.",
        ),
        ("2021-06-09T10:00:00Z", "Quick note for the future: I'm allergic to cashews, found out at a wedding, hives."),
        ("2022-03-01T10:00:00Z", "I've been vegetarian for a month now, cooking a lot of tofu and lentils at home."),
        ("2024-09-07T10:00:00Z", "My wife Hannah and I finally got the keys to the car, a blue Rivian, so happy."),
        ("2025-06-01T10:00:00Z", "Unpacked the last box in Denver. Renting in Wash Park, close to the lake."),
        ("2026-09-02T10:00:00Z", "Our son Theo started first grade at Merrill Elementary, he loves his teacher."),
        ("2026-02-01T10:00:00Z", "Work is busy, I report to David Singh now, he is the CTO at Stripe."),
    ]
    _tell(memory, "sam", said)
    home = memory.context("Recommend a car-camping trip near where I live.", user_id="sam", budget_tokens=600)
    profile = _profile_block(home.text)
    assert "Denver" in home.text and "Seattle" not in profile, home.text
    family = memory.context("Plan a family weekend, something the kids will love.", user_id="sam", budget_tokens=600)
    check_budget(family)
    assert "Theo" in family.text and "Hannah" in family.text, family.text


def test_the_profile_holds_the_users_family_as_it_is_now(memory: Memory) -> None:
    """A held-out trial: a dog put down in 2022 and the mother's dog were shown as the user's pets, and a friend's
    engagement as the user's partner, in every context. The ending shares no word with the pets question, and any
    statement about a pet or a partner counted."""
    said = [
        ("2020-03-01T10:00:00+08:00", "Our golden retriever Biscuit is 9 now, slowing down a bit on walks."),
        ("2021-05-01T10:00:00+08:00", "My girlfriend Anna loves hiking, we did the Dragon's Back trail today."),
        ("2022-11-20T10:00:00+08:00", "We had to put Biscuit down this morning. He was 11. Adam held his paw."),
        ("2023-03-04T10:00:00+08:00", "Adopted a cat from the SPCA, grey tabby, we named her 饺子. Adam picked it."),
        ("2023-08-01T10:00:00+08:00", "Anna and I broke up last month, it was mutual."),
        ("2024-02-10T10:00:00+08:00", "過年回嘉義，我媽養了一隻柴犬叫阿福，超胖。"),
        ("2025-04-10T10:00:00+08:00", "佳佳說她跟男友訂婚了，「我們明年結婚！」她好開心"),
        ("2025-06-15T10:00:00+08:00", "My sister has two kids now, the twins were born in May."),
        # a second held-out trial: a friend's baby, a child only imagined, a sister's move, a cat rehomed
        ("2024-07-13T10:00:00+08:00", "Adopted a second cat, a ginger tom called Pim, to keep 饺子 company."),
        ("2025-01-25T10:00:00+08:00", "Pim and 饺子 just can't share a flat. Our neighbour Joost has taken Pim."),
        ("2026-03-28T10:00:00+08:00", "我姐顾晓芸又搬家了，这次从成都搬到杭州，说是孩子上学方便"),
        ("2026-05-01T10:00:00+08:00", "阿梨生了个儿子，七斤二两"),
        ("2026-08-02T10:00:00+08:00", "要是生的是女儿的话就叫小满，儿子的话还没想好。"),
        ("2026-09-01T10:00:00+08:00", "周航和我领证了！"),  # the user's own wedding: not another's news
    ]
    _tell(memory, "omar", said)
    for task in ("Find a vet near home for my pets", "Plan a family weekend for all of us", "帮我订周末的家庭晚餐"):
        context = memory.context(task, user_id="omar", budget_tokens=600)
        profile = _profile_block(context.text) if "## About the user" in context.text else ""
        for theirs in (
            "Biscuit is 9",
            "阿福",
            "girlfriend Anna",
            "佳佳",
            "twins",
            "called Pim",
            "顾晓芸",
            "阿梨",
            "小满",
        ):
            assert theirs not in profile, (task, profile)
        if "Biscuit is 9" in context.text:  # found by the task's words: shown with what came of it
            assert "  > later: 2022-11-20 We had to put Biscuit down" in context.text, context.text
    family = memory.context("Plan a family weekend for all of us", user_id="omar", budget_tokens=600)
    assert "周航和我领证了" in family.text, family.text
    pets = memory.context("Find a vet near home for my pets", user_id="omar", budget_tokens=600)
    assert "饺子" in pets.text, pets.text
    if "Biscuit is 9" in pets.text:  # what still holds is read first
        assert pets.text.index("饺子") < pets.text.index("Biscuit is 9"), pets.text
    alive = memory.context("Plan a family weekend for all of us", user_id="omar", budget_tokens=600,
                           as_of=datetime(2021, 1, 1, tzinfo=UTC))  # fmt: skip
    assert "Biscuit" in _profile_block(alive.text) and "put Biscuit down" not in alive.text, alive.text


def test_what_still_holds_is_read_before_what_ended(memory: Memory) -> None:
    """A trial: "Book a dinner for me and my wife" found "My girlfriend Mei…" (split up since) first. An ended memory
    follows the others, its ending beside it."""
    said = [("2021-04-10T10:00:00Z", "My girlfriend Mei loves xiaolongbao, Friday dinner at Din Tai Fung every week."),
            ("2022-04-24T10:00:00Z", "Mei and I split up. It's been coming for a while."),
            ("2024-02-01T10:00:00Z", "Bao Shop downtown has decent xiaolongbao.")]  # fmt: skip
    _tell(memory, "sam", said)
    text = memory.context("Find xiaolongbao for Friday dinner", user_id="sam", budget_tokens=600).text
    assert "girlfriend Mei" in text and "  > later: 2022-04-24 Mei and I split up" in text, text
    assert text.index("Bao Shop") < text.index("girlfriend Mei"), text


def test_a_transcript_between_speakers_has_no_profile(memory: Memory) -> None:
    """A turn by Caroline or Melanie is not the user's own word: no profile is made of it."""
    memory.add([{"role": "user", "content": "I'm allergic to cats and I live in Denver", "name": "Caroline"}],
               user_id="locomo")  # fmt: skip
    context = memory.context("Plan a weekend", user_id="locomo")
    assert not context.profile and "## About the user" not in context.text


def test_a_reply_does_not_repeat_a_turn_the_context_shows(memory: Memory) -> None:
    """A reply's "> before:" line repeated the user's turn shown as its own memory just above (a user trial)."""
    memory.add([{"role": "user", "content": "We booked Kyoto for April!", "timestamp": "2025-01-10T10:00:00Z"},
                {"role": "assistant", "content": "Kyoto in April sounds lovely, the cherry blossoms!",
                 "timestamp": "2025-01-10T10:01:00Z"}], user_id="kyo")  # fmt: skip
    context = memory.context("Are we still going to Kyoto in April?", user_id="kyo", budget_tokens=600)
    assert context.text.count("We booked Kyoto for April!") == 1, context.text
    assert "sounds lovely" in context.text
    alone = memory.context("cherry blossoms", user_id="kyo", budget_tokens=600, limit=1)
    assert "> before: user: We booked Kyoto for April!" in alone.text  # not shown otherwise: the reply keeps it


def test_the_profile_shows_a_correction_in_place_of_what_it_takes_back(memory: Memory) -> None:
    """A user trial: "About the user" kept "我对花生过敏" after "其实我不是对花生过敏，医生说我是对芒果过敏",
    and kept "I'm allergic to shellfish" while leaving out "Actually 不是 shellfish allergy，是 crab 过敏" (the search
    ranked each correction first, but the profile keeps up to three allergies). The memory the task matched points
    at it."""
    _tell(memory, "mei", [
        ("2023-03-05T12:10:00+08:00", "我对花生过敏，点外卖的时候提醒我一下。"),
        ("2025-04-09T13:00:00+08:00", "其实我不是对花生过敏，医生说我是对芒果过敏，之前搞错了。"),
    ])  # fmt: skip
    profile = _profile_block(memory.context("帮我点一份外卖", user_id="mei", budget_tokens=600).text)
    assert "芒果过敏" in profile and "点外卖的时候提醒我" not in profile, profile
    then = memory.context("帮我点一份外卖", user_id="mei", budget_tokens=600, as_of="2024-01-01")
    assert "我对花生过敏" in then.text and "芒果" not in then.text, then.text  # before the correction
    _tell(memory, "lin", [
        ("2023-09-09T10:00:00+08:00", "I'm allergic to shellfish，吃虾会起疹子。"),
        ("2026-06-18T20:00:00+08:00", "Actually 不是 shellfish allergy，是 crab 过敏，shrimp 没事，医生 retest 过了。"),
    ])  # fmt: skip
    context = memory.context("Order seafood dinner for me", user_id="lin", budget_tokens=600)
    assert "crab 过敏" in _profile_block(context.text), context.text
    if "I'm allergic to shellfish" in context.text:  # matched by the task: then it says where the correction is
        stale = context.text.split("I'm allergic to shellfish")[1].split("\n- ")[0]
        assert "> later: see [" in stale, context.text


def test_a_correction_of_one_allergy_leaves_the_other_in_the_profile(memory: Memory) -> None:
    """A user trial: "Turns out the penicillin allergy was a misdiagnosis" (tied to "我也对芒果过敏" by the allergy
    category alone, in the other script) took the mango allergy's place, and the context showed no allergy at all;
    and "I'm allergic to penicillin, and I'm vegetarian." stayed after both had changed."""
    _tell(memory, "dan", [
        ("2026-09-01T10:00:00+08:00", "I'm allergic to penicillin, and I'm vegetarian."),
        ("2026-09-20T10:00:00+08:00", "我也对芒果过敏。"),
        ("2026-11-01T10:00:00+08:00", "Turns out the penicillin allergy was a misdiagnosis, I'm not allergic to "
                                      "penicillin after all."),
        ("2026-11-05T10:00:00+08:00", "我不再吃素了，现在什么都吃。"),
    ])  # fmt: skip
    profile = _profile_block(memory.context("Plan a dinner for me this weekend", user_id="dan").text)
    assert "芒果过敏" in profile and "misdiagnosis" in profile and "不再吃素" in profile, profile
    assert "I'm vegetarian" not in profile, profile


def test_a_key_fact_is_the_answer_the_profile_would_repeat_from_years_ago(memory: Memory) -> None:
    """A user trial: under the key facts "tom:employer: Fernwood Labs" the profile showed "I live in Boston and work
    as a data engineer at Acme Corp." (2023) as the user's job."""
    _tell(memory, "tom", [("2023-01-15T18:00:00-05:00", "I live in Boston and work as a data engineer at Acme Corp.")])
    memory.add("Fernwood Labs", user_id="tom", key="tom:employer")
    memory.add("Austin", user_id="tom", key="tom:home:city")
    context = memory.context("Book a table for dinner Friday", user_id="tom", budget_tokens=600)
    assert "Fernwood Labs" in context.text and "Acme" not in context.text, context.text
    memory.add("I'm allergic to penicillin.", user_id="tom")  # the profile itself stays
    assert "penicillin" in _profile_block(memory.context("Book a table for dinner Friday", user_id="tom").text)


def test_allergies_are_asked_in_both_languages(memory: Memory) -> None:
    """A user trial: "用户也对芒果过敏" was not among the first answers to "What am I allergic to?" (a turn of thanks
    indexed beside the English allergy was), and an English task's context left the mango allergy out. Here the
    search stands in for one whose English list misses the Chinese answer; the profile asks in Chinese too."""
    from memstrata.deep.profile import standing_facts
    from memstrata.han import HAN_CHAR
    from memstrata.query import SearchQuery
    from memstrata.types import Scope

    _tell(memory, "dan", [("2026-09-05T10:00:00+00:00", "I'm allergic to penicillin."),
                          ("2026-10-10T10:00:00+00:00", "我也对芒果过敏。")])  # fmt: skip

    def search(query: SearchQuery) -> list:  # type: ignore[type-arg]
        hits = memory.search(query.text, user_id="dan", limit=query.limit)
        english = HAN_CHAR.search(query.text) is None
        return [hit for hit in hits if not (english and HAN_CHAR.search(hit.text))]

    task = SearchQuery(scope=Scope(user_id="dan"), text="Cook dinner for me tonight", now=datetime.now(UTC))
    said = {hit.text for hit in standing_facts(search, task)}
    assert {"I'm allergic to penicillin.", "我也对芒果过敏。"} <= said, said


def test_a_task_reads_the_users_health_conditions_said_long_ago(memory: Memory) -> None:
    """A user trial: "Suggest an exercise routine that is safe for me" showed neither the asthma said two years before
    nor the neck trouble of this spring; the profile asked nothing of health. A condition said long ago still holds
    (its relevance counts, not its decayed score); another's condition is not the user's."""
    said = [("2024-02-10T21:00:00+08:00", "我有哮喘，换季的时候容易犯，随身带着沙丁胺醇喷雾。"),
            ("2024-05-03T20:30:00+08:00", "My wife Lily is a dentist, she works at a clinic in Futian."),
            ("2025-10-12T21:30:00+08:00", "搬家了，现在住在宝安区，房租一个月7500。"),
            ("2026-03-18T22:00:00+08:00", "最近颈椎病犯了，医生让我少低头，每周去做两次理疗。"),
            ("2026-05-01T10:00:00+08:00", "我妈有糖尿病，每天打胰岛素。")]  # fmt: skip
    _tell(memory, "chen", said)
    context = memory.context("Suggest an exercise routine that is safe for me", user_id="chen", budget_tokens=600)
    check_budget(context)
    assert "哮喘" in context.text and "颈椎病" in context.text, context.text
    assert "糖尿病" not in _profile_block(context.text), context.text


def test_an_illness_over_is_no_condition_of_the_user(memory: Memory) -> None:
    """A trial of the profile's health question: "我有湿疹" and "My gastritis is back" were shown as the user's
    conditions after "湿疹终于好了" and "Gastritis is gone, doctor cleared me"; an illness over ends what was said of
    it, not another condition ("Gastritis is gone" keeps the peanut allergy)."""
    said = [("2023-01-10T10:00:00Z", "我有湿疹，冬天特别严重。"), ("2023-05-01T10:00:00Z", "I have a peanut allergy."),
            ("2024-03-01T10:00:00Z", "My gastritis is back, stomach hurts after coffee."),
            ("2025-06-01T10:00:00Z", "湿疹终于好了，医生说不用再涂药了。"),
            ("2025-09-01T10:00:00Z", "Gastritis is gone, doctor cleared me."),
            ("2026-01-01T10:00:00Z", "周末去爬山了")]  # fmt: skip
    _tell(memory, "u", said)
    context = memory.context("Suggest an exercise routine that is safe for me", user_id="u", budget_tokens=600)
    profile = _profile_block(context.text)
    assert "peanut" in profile and "湿疹" not in profile and "gastritis" not in profile.lower(), profile
    found = [hit.text for hit in memory.search("我还有湿疹吗？", user_id="u")]
    assert found[0].startswith("湿疹终于好了"), found


def test_a_task_that_names_what_it_needs_gets_that_first(memory: Memory) -> None:
    """A user trial: the profile asked its questions in the order of the embedder's closeness to the task, which put
    work sixth of seven for "帮我写一封邮件给我领导" and the children last for "我们家有几口人？", so the son no longer
    fit the profile's share once the health question came. A question the task names by its words comes first."""
    said = [("2024-02-10T21:00:00+08:00", "我有哮喘，换季的时候容易犯。"),
            ("2024-05-03T20:30:00+08:00", "My wife Lily is a dentist, she works at a clinic in Futian."),
            ("2024-05-03T20:40:00+08:00", "我乳糖不耐受，喝牛奶会肚子疼。"),
            ("2024-09-01T09:00:00+08:00", "儿子小宇今天第一天上幼儿园，在蛇口的育才幼儿园。"),
            ("2025-04-20T19:00:00+08:00", "离职了，下周一开始去腾讯上班，还是做产品。"),
            ("2025-10-12T21:30:00+08:00", "搬家了，现在住在宝安区。"),
            ("2026-03-18T22:00:00+08:00", "最近颈椎病犯了，医生让我少低头。")]  # fmt: skip
    _tell(memory, "chen", said)
    family = _profile_block(memory.context("我们家有几口人？", user_id="chen", budget_tokens=500).text)
    assert "小宇" in family and "Lily" in family, family
    boss = _profile_block(memory.context("帮我写一封邮件给我领导", user_id="chen", budget_tokens=500).text)
    assert "腾讯" in boss.splitlines()[0], boss  # and asthma, a condition that says no allergy, is no allergy first

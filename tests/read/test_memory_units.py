"""Memory units: each turn is indexed with the turn before it, so an answer is found by its question."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memstrata import Memory, Scope
from memstrata.answers import answer_words, change_answers, planned_change_answers
from memstrata.indexing import index_text, key_words, own_index_text
from memstrata.modality import ends_or_corrects
from memstrata.read.rank import MemoryText, Ranker, memory_text
from memstrata.read.retrieve import Retrieved
from memstrata.read.settings import ReadSettings
from memstrata.storage.protocol import ScoredId
from memstrata.types import Message
from memstrata.write import ingest
from memstrata.write.ingest import CONTEXT_MAX_CHARS, episode_memories

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SCOPE = Scope(user_id="u1")


def _turn(text: str, name: str, minutes: float = 0) -> Message:
    return Message(role="user", content=text, name=name, timestamp=NOW + timedelta(minutes=minutes))


def test_each_episode_carries_the_turn_before_it() -> None:
    question = _turn("How was the support group yesterday?", "Melanie")
    answer = _turn("It was great, I learned so much.", "Caroline", 1)
    first, second = episode_memories([question, answer], SCOPE, {"src": "chat"}, NOW)
    assert "preceding_turns" not in first.metadata
    assert second.metadata == {
        "src": "chat", "role": "user", "speaker": "Caroline",
        "preceding_turns": "Melanie: How was the support group yesterday?",
    }  # fmt: skip
    assert second.text == "It was great, I learned so much."  # the memory's text stays the turn's own
    assert (
        index_text(second)
        == "Caroline: It was great, I learned so much.\nMelanie: How was the support group yesterday?"
    )
    assert index_text(first) == "Melanie: How was the support group yesterday?"


def test_the_previous_stored_turn_is_used_when_turns_arrive_one_by_one() -> None:
    earlier = _turn("Any plans for the weekend?", "Melanie")
    (episode,) = episode_memories([_turn("Camping with the kids!", "Caroline", 2)], SCOPE, {}, NOW, previous=[earlier])
    assert episode.metadata["preceding_turns"] == "Melanie: Any plans for the weekend?"


def test_turns_of_another_conversation_are_not_context() -> None:
    old = _turn("Good night!", "Melanie")
    (episode,) = episode_memories([_turn("Morning! New day.", "Caroline", 60 * 24)], SCOPE, {}, NOW, previous=[old])
    assert "preceding_turns" not in episode.metadata


def test_context_is_bounded() -> None:
    long = _turn("x" * 5000, "Melanie")
    (episode,) = episode_memories([_turn("ok", "Caroline", 1)], SCOPE, {}, NOW, previous=[long])
    assert len(episode.metadata["preceding_turns"]) == CONTEXT_MAX_CHARS
    assert episode.metadata["preceding_turns"].endswith("…")


def test_more_context_turns_can_be_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    turns = [_turn(f"turn {i}", "A" if i % 2 else "B", i) for i in range(4)]
    monkeypatch.setattr(ingest, "CONTEXT_TURNS", 2)
    last = episode_memories(turns, SCOPE, {}, NOW)[-1]
    assert last.metadata["preceding_turns"] == "A: turn 1\nB: turn 2"  # oldest first


def _chat(memory: Memory, *turns: tuple[str, str]) -> None:
    memory.add([{"role": "user", "name": name, "content": text} for name, text in turns], user_id="u1")


def test_an_answer_is_found_by_the_words_of_its_question(memory: Memory) -> None:
    _chat(
        memory,
        ("Melanie", "Did you go to the pottery workshop on Friday?"),
        ("Caroline", "Yes! I made a little bowl, so proud of it."),
        ("Melanie", "Nice. My kids started swimming lessons."),
    )
    hits = memory.search("What did Caroline make at the pottery workshop?", user_id="u1", limit=2)
    assert "Yes! I made a little bowl, so proud of it." in [hit.text for hit in hits]


def test_words_only_the_earlier_turns_hold_count_less_than_the_turns_own() -> None:
    """The turn after an answer is indexed with the answer: with the same BM25 score and similarity, the answer's
    own turn ranks first (search.context_weight); at weight 1 the two would tie on keyword evidence."""
    answer = "Caroline: I adopted a greyhound called Pepper last month."
    follow_up = "Melanie: That's lovely! How is she settling in?\n" + answer
    texts = {
        "answer": MemoryText(answer, answer),
        "follow-up": MemoryText(follow_up, follow_up, own_indexed=follow_up.split("\n")[0]),
    }
    retrieved = Retrieved(
        keyword=[ScoredId("follow-up", 5.0), ScoredId("answer", 5.0)],
        dense=[ScoredId("follow-up", 0.4), ScoredId("answer", 0.4)],
        dense_limit=100,
    )
    query = "What is the name of the greyhound Caroline adopted?"
    weighted = Ranker(query, ReadSettings()).candidates(retrieved, texts)
    assert [c.memory_id for c in weighted] == ["answer", "follow-up"]
    assert weighted[1].keyword_match < 0.5 * weighted[0].keyword_match
    flat = Ranker(query, ReadSettings(context_weight=1.0)).candidates(retrieved, texts)
    assert flat[0].keyword_match == pytest.approx(flat[1].keyword_match)


def test_a_reply_to_a_question_counts_the_questions_words_more(memory: Memory) -> None:
    """ "Three times a week" answers "How often do you all do it?" in none of its words: a turn replying to a question
    another speaker just asked counts the words only the question holds at search.reply_context_weight (0.6), not
    context_weight (0.3), so it ranks beside the question instead of far below it (LoCoMo recall@10 0.789 -> 0.793)."""
    _chat(
        memory,
        ("John", "Work has been crazy this month, I stay late at the office most days."),
        ("Maria", "Sounds exhausting! Do you still get time with your family?"),
        ("John", "Yes, my family and I started working out together in the park."),
        ("Maria", "That's great, John! How often do you all do it?"),
        ("John", "Three times a week; it keeps us on track."),
        ("John", "I keep a log of it on my phone."),  # the same speaker again: no reply
        ("Maria", "你们周末一般做什么呢"),
        ("John", "去公园跑步。"),
    )
    read = {item.text: memory_text(item) for item in memory.get_all(user_id="u1")}
    assert read["Three times a week; it keeps us on track."].replies
    assert read["去公园跑步。"].replies
    assert not read["I keep a log of it on my phone."].replies
    assert not read["Sounds exhausting! Do you still get time with your family?"].replies  # after a statement
    hits = memory.search("How often does John work out with his family?", user_id="u1", limit=2)
    scores = {hit.text: hit.score for hit in hits}
    asked = scores["That's great, John! How often do you all do it?"]
    assert scores["Three times a week; it keeps us on track."] >= 0.9 * asked


def test_a_stored_episode_keeps_its_own_words_apart_for_ranking(memory: Memory) -> None:
    _chat(
        memory,
        ("Caroline", "I adopted a greyhound called Pepper last month."),
        ("Melanie", "That's lovely! How is she settling in?"),
        ("Caroline", "She sleeps on the sofa all day."),
    )
    (follow_up,) = [item for item in memory.get_all(user_id="u1") if item.text.startswith("That's lovely")]
    text = memory_text(follow_up)
    assert text.own_indexed == "Melanie: That's lovely! How is she settling in?"
    assert text.indexed == text.own_indexed + "\nCaroline: I adopted a greyhound called Pepper last month."
    hits = memory.search("What is the name of the greyhound Caroline adopted?", user_id="u1", limit=3)
    assert hits[0].text == "I adopted a greyhound called Pepper last month."


def test_a_turn_is_indexed_with_turns_of_its_own_session_only(memory: Memory) -> None:
    """A user's scope reads every session's turns: a turn imported without a session was indexed with the last
    turns of another session, and an unrelated turn then matched their words (score 0.3)."""
    memory.add([{"role": "user", "content": "Let's have hotpot tonight"}], user_id="lin", session_id="s1")
    memory.add([{"role": "user", "content": "naive ts"}], user_id="lin")
    memory.add([{"role": "user", "content": "What time is the film?"}], user_id="lin", session_id="s2")
    memory.add([{"role": "user", "content": "Around eight"}], user_id="lin", session_id="s2")
    episodes = {item.text: item for item in memory.get_all(user_id="lin")}
    assert "preceding_turns" not in episodes["naive ts"].metadata
    assert "preceding_turns" not in episodes["What time is the film?"].metadata
    assert episodes["Around eight"].metadata["preceding_turns"].endswith("What time is the film?")
    unrelated = [hit for hit in memory.search("hotpot", user_id="lin") if hit.text == "naive ts"]
    assert all(hit.breakdown.keyword_rank is None for hit in unrelated)  # another session's words are not its own


@pytest.mark.parametrize(
    ("text", "answers"),
    [
        ("I moved to Shanghai last month.", "live 住 move 搬"),
        ("We've finally moved into our new flat", "live 住 move 搬"),
        ("姐姐去年搬到了杭州", "live 住 move 搬"),
        ("上个月我跳槽到了腾讯。", "work job 工作 上班"),
        ("I started a new job at Meta", "work job 工作 上班"),
        ("Team meeting moved to Thursday", ""),  # not people moving
        ("我们公司搬到深圳了", ""),
        ("我可能下个月搬去深圳", ""),  # a maybe, a plan: not where anyone lives yet
        ("I'm moving to Berlin next month", ""),
        ("我打算跳槽", ""),
        ("搬到深圳南山区了，房子离公司很近", "live 住 move 搬"),  # the speaker leaves themselves out
        ("Moved into our new place in Portland, finally unpacked", "live 住 move 搬"),
        ("Started at Loomly today, I'm head of data now", "work job 工作 上班"),
        ("开始在蔚来做战略了", "work job 工作 上班"),
        ("我把沙发搬到客厅了", ""),  # furniture
        ("Moved the meeting to Friday", ""),
        ("started at 9 today", ""),
        ("开始在家做饭了", ""),
        ("I moved to Shanghai in May", "live 住 move 搬"),  # the month, not a maybe
        ("Anna and I broke up last week", "boyfriend girlfriend 男朋友 女朋友"),
        ("我和阿杰分手了，心情很差", "boyfriend girlfriend 男朋友 女朋友"),
        ("他们分手了", ""),  # someone else's ending
        ("Tom and Jane broke up", ""),
        ("我们离婚了", "husband wife married 老公 老婆 结婚"),
        ("戒烟成功了！I don't smoke anymore", "smoke smoking quit 抽烟 吸烟 戒烟"),
        ("I'm trying to quit smoking", ""),  # an attempt
        ("I quit drinking last month", "drink drinking alcohol quit 喝酒 戒酒"),
        # the move is a plan; the new job is not
        ("跳槽了，去了深圳腾讯，下周搬去深圳南山", "work job 工作 上班"),
        ("Joined Monzo as a senior risk analyst. Full-time again!", "work job 工作 上班"),
        ("Joined Sarah for dinner", ""),
        ("单位调岗了，从南山税务局调到福田区税务局", "work job 工作 上班"),
        ("Officially an Austin resident now. Rented a place in East Austin", "live 住 move 搬"),
        ("已经在深圳南山安顿好了", "live 住 move 搬"),
        ("Finally got the keys to our place in Denver!", "live 住 move 搬"),  # a new home said without "move"
        ("新家终于装修好了，周末请大家来玩", "live 住 move 搬"),
        ("User moved to Denver last week", "live 住 move 搬"),  # the facts a model writes, of "User" / "用户"
        ("用户换到字节跳动工作", "work job 工作 上班"),
        ("User and Anna broke up", "boyfriend girlfriend 男朋友 女朋友"),
        ("新房子拿到钥匙了，在蛇口", "live 住 move 搬"),
        ("Still counting myself a non-smoker.", "smoke smoking quit 抽烟 吸烟 戒烟"),
        ("认识了一个新男朋友，叫周航，是一名儿科医生。", "boyfriend girlfriend 男朋友 女朋友"),  # a new partner
        ("Met someone! Her name is Sofia", "boyfriend girlfriend 男朋友 女朋友"),
        # a relationship going on a while already (a user trial: "Am I single?" answered with the older breakup)
        ("I've been dating a guy named 陈宇 for a month, he's a firefighter.", "boyfriend girlfriend 男朋友 女朋友"),
        ("User has been dating a guy named 陈宇 for a month", "boyfriend girlfriend 男朋友 女朋友"),
        ("My sister has been dating Tom", ""),  # someone else's
        ("他交了个女朋友", ""),  # someone else's
        ("我们领证了", "husband wife married 老公 老婆 结婚"),
        ("We got married in June!", "husband wife married 老公 老婆 结婚"),
        ("我哥下个月结婚", ""),
        ("我辞职了，准备开一家金融科技公司", "work job 工作 上班"),  # a job left: the old one no longer answers
        ("I quit my job last month", "work job 工作 上班"),
        ("我打算辞职", ""),
        ("公司 layoff 了一批人，还好我没被裁。", ""),  # not laid off
        ("I left the party early", ""),
        # found with an imported history: "Where do I work?" answered with the first job of 2022
        ("I quit Alibaba last week.", "work job 工作 上班"),
        ("我已经去一家创业公司当技术负责人了", "work job 工作 上班"),
        ("I quit smoking", "smoke smoking quit 抽烟 吸烟 戒烟"),  # a habit, not a company
        # home from abroad for good is a move (a known gap: "我现在住哪？" found the old home abroad first)
        ("我去年从美国回国了", "live 住 move 搬"),
        ("毕业后回国工作了", "live 住 move 搬"),
        ("我春节回国了", ""),
        ("下周回国过年", ""),
        ("我回国玩了两周", ""),
    ],
)
def test_a_statement_of_change_is_indexed_with_the_words_of_the_questions_it_answers(text: str, answers: str) -> None:
    assert change_answers(text) == answers
    _assert_indexed_with(text, answers)


@pytest.mark.parametrize(
    ("text", "answers"),
    [
        # "Where do I work?" shared no word with it
        ("我在网易做产品经理，做游戏社区", "work job 工作 上班"),
        ("我妹妹林月在杭州阿里巴巴上班", "work job 工作 上班"),  # whoever works there
        ("I work at Google as a data scientist", "work job 工作 上班"),
        ("I now work as a school nurse", "work job 工作 上班"),
        ("I live in Hangzhou.", "live 住"),
        ("我住在北京朝阳区", "live 住"),
        # a user trial: "Where do I live?" as of 2023 found nothing, "Where do I work?" as of 2024 neither
        ("在北京朝阳区住，通勤一小时", "live 住"),
        ("我在 Singapore 的 Google 做 PM", "work job 工作 上班"),
        ("我在酒店住，明天回", ""),
        ("My sister lives in Boston", "live 住"),
        ("开始在家做饭了", ""),
        ("工作很累", ""),
        ("我可能去网易工作", ""),  # a maybe
    ],
)
def test_where_one_lives_or_works_is_indexed_with_the_words_asked_in_both_languages(text: str, answers: str) -> None:
    assert change_answers(text) == ""
    _assert_indexed_with(text, answers)


def _assert_indexed_with(text: str, answers: str) -> None:
    """The turn is indexed as said, then with each answer word it does not say already ("我住在北京" is not given a
    second "住": it outweighed a later move)."""
    item = episode_memories([Message(role="user", content=text)], SCOPE, {}, NOW)[0]
    said, _, added = index_text(item).partition("\n")
    assert said == text
    assert added.split() == [word for word in answers.split() if word not in text.lower()]


def test_a_promotion_says_where_one_works() -> None:
    """ "I got promoted to senior engineer at ByteDance" was the latest word on the job and not found for "我现在在哪
    工作？" (it said no word of work)."""
    both = "title position 职位 头衔 work job 工作 上班"  # the title held now, and where
    assert answer_words("I got promoted to senior engineer at ByteDance.") == both
    assert answer_words("我在字节升职了") == both
    assert answer_words("I was promoted") == ""  # where, it does not say
    # a name in Latin letters inside Chinese, written apart: where one works all the same
    assert answer_words("我哥去了柏林，在 Zalando 做 embedded engineer。") == "work job 工作 上班"
    assert answer_words("开始在 Google 做 PM 了") == "work job 工作 上班" and answer_words("我在家做饭") == ""


def test_a_reply_states_no_change_of_the_users() -> None:
    """The assistant's "新工作加油！" was indexed with "work job 工作 上班" like the user's new job, and answered
    "我现在在哪工作？" above the turn it replied to."""
    turns = [Message(role="user", content="开始在蔚来做战略了"), Message(role="assistant", content="新工作加油！")]
    told, reply = episode_memories(turns, SCOPE, {}, NOW)
    assert own_index_text(told) == "开始在蔚来做战略了\nwork job 工作 上班"
    assert own_index_text(reply) == "新工作加油！"


@pytest.mark.parametrize(
    ("text", "ends"),
    [
        ("其实豆豆是柴犬不是柯基，之前说错了", True),
        ("Sorry, I misspoke earlier: I work at Meta, not Google", True),
        ("不是柯基，是柴犬，我刚才打错了。", True),  # not A, B
        ("我不是很想去，是吧", False),
        ("我已经戒掉咖啡了", True),
        ("我不喝咖啡了，最近改喝茶", True),
        ("放弃 keto 了，现在正常吃饭，但是少糖。", True),  # a user trial: a diet given up
        ("User's penicillin allergy was a misdiagnosis", True),  # a user trial: shown as still held
        ("之前的青霉素过敏是误诊", True),
        ("我不会放弃的", False),
        ("Anna and I broke up last week", True),
        ("豆豆去世了，儿子哭了好久", True),  # a pet or a relative died: what was said of them is past
        ("Japan is off. Flights got crazy expensive. Maybe next year.", True),  # called off, whatever may come
        ("Shanghai trip postponed to next year", True),
        ("Actually the concert was too loud", False),  # "actually" alone is chatter
        ("I'm trying to quit smoking", False),  # an attempt
        ("我打算辞职", False),  # a plan
        ("I stopped by the store", False),
        ("我每天早上喝两杯咖啡", False),
        ("My favourite food is now sushi, not ramen.", True),  # what holds now in place of what held
        ("我现在最喜欢吃寿司了，不是拉面", True),
        ("Now, not later, is the time to go", False),
        ("I used to love coffee but now I only drink tea.", True),
        ("我以前喜欢喝咖啡，现在只喝茶", True),
        ("I used to live in Paris", False),  # what held, with nothing in its place
    ],
)
def test_what_ends_corrects_or_calls_off_an_earlier_statement(text: str, ends: bool) -> None:
    assert ends_or_corrects(text) is ends


def test_a_key_is_indexed_with_the_words_its_questions_ask_in_both_languages() -> None:
    assert key_words("lin:hr:employer", owner="lin").split() == ["hr", "employer", "work", "job", "company", "工作",
                                                                 "上班", "公司"]  # fmt: skip
    assert key_words("home:city").split() == ["home", "city", "live", "lives", "住", "住在", "家", "城市"]


def test_a_new_job_to_come_is_indexed_with_the_words_of_work_once_due() -> None:
    """ "I start at Alibaba next month!" and "下个月我去一家创业公司星河科技当技术负责人。" were never found for
    "Where do I work?" in an imported history: a plan of a job said neither "started at" nor "入职"."""
    assert planned_change_answers("Big news: I start at Alibaba next month!") == "work job 工作 上班"
    assert planned_change_answers("下个月我去一家创业公司星河科技 (Xinghe Tech) 当技术负责人。") == "work job 工作 上班"
    assert planned_change_answers("I start at 9 tomorrow") == ""

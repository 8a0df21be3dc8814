"""Whose state a statement tells, for ranking the user's own news first (read/own_first.py, read/newer.py,
answers.py), with the real store and embedder. Each case comes from a user trial of a life imported from old chats."""

from __future__ import annotations

from memstrata import Memory
from memstrata.answers import change_answers, planned_change_answers, unquoted
from memstrata.modality import NOT_YET, calls_off
from memstrata.read.names import in_other_script
from memstrata.read.whose import subject
from support.turns import first_answers, say


def test_a_move_quoted_from_someone_else_is_not_the_users(memory: Memory) -> None:
    """ "Leo 发朋友圈说“终于搬到大理了”" is Leo's move: read as the user's, it answered "我现在住在哪里？" above
    "终于在杭州安顿下来了"."""
    say(memory, "jia", [("2021-03-01", "我住在朝阳区望京，通勤一小时"), ("2022-05-02", "今天加班到很晚"),
                        ("2024-05-06", "终于在杭州安顿下来了，房子在西湖区文一西路"),
                        ("2025-02-01", "Leo 发朋友圈说“终于搬到大理了”，挺好的，祝他幸福。"),
                        ("2025-03-01", "周末去爬了莫干山")])  # fmt: skip
    for question in ("我现在住在哪里？", "Where do I live now?"):
        found = memory.search(question, user_id="jia")
        assert found and found[0].text.startswith("终于在杭州安顿下来了"), (question, [hit.text for hit in found])
    assert (
        change_answers(unquoted("Leo 发朋友圈说“终于搬到大理了”")) == ""
        and change_answers("终于搬到大理了") == "live 住 move 搬"
    )


def test_what_a_quote_says_answers_for_the_one_quoted_and_anothers_plan_replaces_nothing(memory: Memory) -> None:
    """A held-out trial: "Where does Karim live?" lost Karim's quoted "I finally moved to Dubai" once quotes were left
    out of the index; and "Adam starts at Clearwater Bay School next week" (the son's plan, its time come) passed the
    user's job for "Where do I work now?"."""
    say(memory, "omar", [("2022-03-01", "I work at HSBC in Central, long hours but ok"),
                         ("2023-01-10", "Karim texted: “I finally moved to Dubai, the flat is huge”"),
                         ("2023-05-01", "Karim is always travelling lol"),
                         ("2024-08-20", "Adam starts at Clearwater Bay School next week."),
                         ("2024-09-01", "周末去爬了狮子山")])  # fmt: skip
    found = memory.search("Where does Karim live?", user_id="omar")
    assert found and found[0].text.startswith("Karim texted"), [hit.text for hit in found]
    found = memory.search("Where do I work now?", user_id="omar")
    assert found and found[0].text.startswith("I work at HSBC"), [hit.text for hit in found]


def test_someone_and_the_user_together_is_the_users_news(memory: Memory) -> None:
    """ "My girlfriend Mei and I did dim sum" was read as another's statement, and the user's own "Telling my manager
    at Amazon on Monday" (relevance 0.12) answered "Who was I dating in 2021?" above it."""
    say(memory, "sam", [("2021-04-10", "My girlfriend Mei (林美) and I did dim sum at 鼎泰丰 in U Village."),
                        ("2021-06-01", "I'm allergic to cashews"),
                        ("2022-06-18", "Telling my manager at Amazon on Monday, nervous."),
                        ("2022-07-01", "Moving to Austin in August.")])  # fmt: skip
    found = memory.search("Who was I dating in 2021?", user_id="sam")
    assert found and found[0].text.startswith("My girlfriend Mei"), [hit.text for hit in found]
    assert subject("Hannah and I are engaged") == subject("My wife and I moved") == subject("周航和我领证了") == "user"
    assert subject("我妈说她想搬来杭州和我们一起住") == subject("My brother and his wife moved") == "another"
    assert subject("阿梨生了个儿子，七斤二两") == subject("Mia had a baby girl!") == "another"  # a friend's news
    assert subject("周航和我领证了") == "user" and subject("我们结婚了") is None


def test_a_plan_called_off_answers_before_the_assistants_reply_to_the_plan(memory: Memory) -> None:
    """The reply "Lisbon in October is lovely", indexed with the plan it answers, led "Am I still going to Lisbon in
    October?" (0.80) above "Lisbon's cancelled" (0.24): a plan called off passes a plan, not a reply to one."""
    memory.add([{"role": "user", "content": "Planning Lisbon for October, Hannah's never been to Europe.",
                 "timestamp": "2026-02-15T10:00:00Z"},
                {"role": "assistant", "content": "Lisbon in October is lovely, still warm.",
                 "timestamp": "2026-02-15T10:00:30Z"}], user_id="sam")  # fmt: skip
    say(memory, "sam", [("2026-03-01", "Happy Valentine's lol"), ("2026-05-01", "I'm allergic to cashews"),
                        ("2026-07-12", "Lisbon's cancelled, Hannah's pregnant, no long flights!")])  # fmt: skip
    found = memory.search("Am I still going to Lisbon in October?", user_id="sam")
    assert found and found[0].text.startswith("Lisbon's cancelled"), [hit.text for hit in found]


def test_still_asks_whether_the_state_goes_on_and_a_correction_in_the_other_language_corrects(memory: Memory) -> None:
    """ "Am I still vegetarian?" matched "Honestly great. Still eat eggs and cheese." on "still" alone, so the later
    change of diet did not answer for the same reasons; and "Correction on the allergy thing: it's actually
    pineapple, not kiwi" shares no word with "医生说我对猕猴桃过敏" (an allergy both), so it stayed below it."""
    memory.add([{"role": "assistant", "content": "How is the vegetarian thing going?",
                 "timestamp": "2024-05-19T10:00:00Z"},
                {"role": "user", "content": "Honestly great. Still eat eggs and cheese.",
                 "timestamp": "2024-05-19T10:01:00Z"}], user_id="sam")  # fmt: skip
    say(memory, "sam", [("2024-03-01", "Since March I'm cooking vegetarian. No meat for two months now."),
                        ("2024-09-03", "医生说我对猕猴桃过敏，难怪每次吃完嘴巴发麻。"),
                        ("2024-10-12", "Correction on the allergy thing: the allergist retested me, it's actually "
                                         "pineapple, not kiwi."),
                        ("2025-02-01", "周末去爬了莫干山"),
                        ("2026-11-01", "Diet update: back to eating chicken and fish, more protein.")])  # fmt: skip
    found = memory.search("Am I still vegetarian?", user_id="sam")
    assert found and found[0].text.startswith("Diet update"), [hit.text for hit in found]
    for question in ("我对什么过敏？", "What am I allergic to?"):
        found = memory.search(question, user_id="sam")
        assert found and found[0].text.startswith("Correction on the allergy"), (question, [h.text for h in found])


def test_the_news_of_a_wedding_or_a_proposal_names_the_partner(memory: Memory) -> None:
    """A held-out trial: "Who is my wife?" returned nothing although "Married! Jing wore a qipao…" and "I proposed to
    Jing…" were stored (relevance 0.09: neither says wife, husband or partner)."""
    say(memory, "omar", [("2020-02-10", "My emergency contact is my brother Karim, +962 79 555 0123."),
                         ("2024-12-24", "I proposed to Jing at Gardens by the Bay and she said yes!"),
                         ("2025-03-01", "My cousin got married last week, what a party"),
                         ("2025-09-14", "Married! Jing wore a qipao for the second half")])  # fmt: skip
    for question in ("Who is my wife?", "我老婆叫什么？"):
        found = memory.search(question, user_id="omar")
        assert found and "Jing" in found[0].text, (question, [hit.text for hit in found])
    assert change_answers("My cousin got married last week") == "" and change_answers("I was married once") == ""


def test_a_quote_said_first_a_hypothetical_and_a_home_said_without_move(memory: Memory) -> None:
    """A held-out trial, "Where do I live?" as of 2025: a friend's quoted move said first ("“I finally moved to
    Dubai,” Karim said") and a hypothetical ("If we moved to Shenzhen instead…") counted as the user's; "Keys to the
    Tanjong Pagar place today" and "First night in the new flat in Kowloon" were no moves."""
    say(memory, "omar", [("2020-02-10", "Hi! I'm Omar. I live in Shanghai, in Xuhui near 徐家汇."),
                         ("2021-07-01", "First night in the new flat in Kowloon, Mong Kok, 12th floor."),
                         ("2023-06-18", "“I finally moved to Dubai,” Karim said on the phone."),
                         ("2024-01-10", "If we moved to Shenzhen instead it'd be cheaper... but no."),
                         ("2024-03-01", "Keys to the Tanjong Pagar place today, finally.")])  # fmt: skip
    found = memory.search("Where do I live?", user_id="omar", as_of="2025-06-01")
    assert found and found[0].text.startswith("Keys to the Tanjong Pagar"), [hit.text for hit in found]
    found = memory.search("Where did I live in 2022?", user_id="omar")
    assert found and found[0].text.startswith("First night in the new flat"), [hit.text for hit in found]
    assert subject("“I finally moved to Dubai,” Karim said on the phone.") == "another"
    assert subject("「我搬到大理了」小王说") == "another" and subject("“We moved,” I told her") == "user"
    assert change_answers("要是搬去東京的話，我應該每天都會去吃拉麵吧") == ""
    assert change_answers("I locked the keys to the house inside lol") == ""


def test_a_plan_called_off_in_everyday_words_answers_first(memory: Memory) -> None:
    """A held-out trial: "西藏也不去了", "冰岛去不成了" and "Iceland's off" called nothing off, and each plan stayed
    above its ending for "Did I end up going…?"."""
    say(memory, "tang", [("2021-01-17", "计划五一和程牧去西藏，已经订了拉萨的青旅，想去看纳木错。"),
                         ("2021-02-01", "周末加班，好累"), ("2021-03-02", "西藏也不去了，拉萨的青旅已经退了。"),
                         ("2024-02-10", "订了三月去冰岛看极光，雷克雅未克的民宿都付了定金。"),
                         ("2024-03-01", "冰岛去不成了，签证续签卡住，定金也没退回来。")])  # fmt: skip
    say(memory, "rhys", [("2021-01-10", "Booked Iceland for June with Chloe — Reykjavik and the south coast."),
                         ("2021-02-01", "Quarterly close this week, long days"),
                         ("2021-02-20", "Iceland's off. Travel rules again, we got a voucher.")])  # fmt: skip
    asked = [("tang", "我去成西藏了吗？", "西藏也不去了"), ("tang", "我们去冰岛看到极光了吗？", "冰岛去不成了"),
             ("rhys", "Did we make it to Iceland?", "Iceland's off")]  # fmt: skip
    for user, question, answer in asked:
        found = memory.search(question, user_id=user)
        assert found and found[0].text.startswith(answer), (question, [hit.text for hit in found])


def test_a_past_time_is_answered_by_what_was_said_by_then(memory: Memory) -> None:
    """ "我去年的健身教练是谁？" was answered by "我的健身教练是王教练" said this month (教练 twice) above last year's
    "我的健身教练是小李", once 谁 no longer weighed on both alike; a statement said later that names the time asked
    keeps its place."""
    say(memory, "li", [("2025-03-01", "我的健身教练是小李。"), ("2025-06-01", "周末去爬山了"),
                       ("2026-11-20", "我的健身教练是王教练。")])  # fmt: skip
    found = memory.search("我去年的健身教练是谁？", user_id="li", as_of="2026-12-01")
    assert found and found[0].text == "我的健身教练是小李。", [hit.text for hit in found]
    found = memory.search("我的健身教练是谁？", user_id="li", as_of="2026-12-01")
    assert found and found[0].text == "我的健身教练是王教练。", [hit.text for hit in found]


def test_a_gym_joined_is_the_gym_now_and_work_as_a_time_is_not_the_job(memory: Memory) -> None:
    """A held-out trial: "Joined Leith Links Leisure for the pool" (2026) stayed below the gym joined in 2021 for
    "Which gym do I go to?"; once a change, its "before work" put it in place of the job for "Where do I work?"."""
    say(memory, "rhys", [("2021-08-09", "Joined Furnace Gym in Ancoats, £38 a month but it has a sauna."),
                         ("2026-03-23", "First week at Brackenridge. Reporting to Isla Murdoch, the COO."),
                         ("2024-05-01", "Yvonne's brother just moved to 高雄 for a job at the port."),
                         ("2025-01-01", "Left the choir, Cardiff every Thursday was never going to work."),
                         ("2026-11-07", "Joined Leith Links Leisure for the pool, £45 a month. "
                                          "Lane swimming before work three times a week.")])  # fmt: skip
    found = memory.search("Which gym do I go to?", user_id="rhys")
    assert found and found[0].text.startswith("Joined Leith Links"), [hit.text for hit in found]
    found = memory.search("Where do I work?", user_id="rhys")
    assert found and found[0].text.startswith("First week at Brackenridge"), [hit.text for hit in found]


def test_a_trip_called_off_does_not_call_off_another(memory: Memory) -> None:
    """A held-out trial: "原本计划六月去西藏自驾…取消了" (2026) answered "北海道的旅行后来去了吗？" above the
    Hokkaido trip's own ending: the two shared only 取消, a word of the ending."""
    say(memory, "qiao", [("2020-01-23", "本来春节后要和程凯去北海道滑雪，机票都订了，现在疫情这样只能取消了。"),
                         ("2023-05-01", "周末去西湖边跑步了"),
                         ("2026-04-02", "原本计划六月去西藏自驾，怀孕了去不了，取消了。")])  # fmt: skip
    found = memory.search("北海道的旅行后来去了吗？", user_id="qiao")
    assert found and found[0].text.startswith("本来春节后要和程凯去北海道"), [hit.text for hit in found]


def test_a_friends_job_said_by_name_or_in_a_later_clause_is_not_the_users(memory: Memory) -> None:
    """A user trial: "Lily works at Alibaba" and "Had dinner with Lily, she works at Alibaba" tied with the user's own
    job for "Where do I work?" and, newer, came first."""
    say(memory, "chen", [("2021-03-01", "I work at Baidu as an engineer."),
                         ("2024-03-01", "Lily works at Alibaba."),
                         ("2024-03-02", "Had dinner with Tom, he works at Tencent.")])  # fmt: skip
    for question in ("Where do I work?", "我在哪工作？"):
        found = memory.search(question, user_id="chen")
        assert found[0].text == "I work at Baidu as an engineer.", (question, [hit.text for hit in found])
    assert memory.search("Where does Lily work?", user_id="chen")[0].text == "Lily works at Alibaba."
    assert memory.search("Where does Tom work?", user_id="chen")[0].text.startswith("Had dinner with Tom")
    assert subject("Lily works at Alibaba.") == "another" and subject("Anna moved to Paris") == "another"
    assert subject("Finally moved to Berlin") != "another" and subject("Sophie is leaving, I report to the CTO") is None
    assert change_answers("Met Tom, he just moved to Berlin") == "" and change_answers("He moved to Berlin")


def test_leaving_a_job_named_beside_a_move_does_not_answer_where_the_user_lives(memory: Memory) -> None:
    """A user trial: "I quit Stripe" was later news of "Big change: moved to Dublin and joined Stripe" and came first
    for "Where do I live?"; and the move itself, after "Big change:", was no move."""
    say(memory, "chen", [("2021-03-01", "我在北京的百度做算法工程师，住在海淀。"),
                         ("2022-06-10", "Big change: moved to Dublin and joined Stripe as a backend engineer."),
                         ("2023-09-01", "I quit Stripe last week. Taking a break for a while.")])  # fmt: skip
    for question in ("Where do I live?", "我住在哪？"):
        found = memory.search(question, user_id="chen")
        assert found[0].text.startswith("Big change: moved to Dublin"), (question, [hit.text for hit in found])


def test_a_role_begun_on_a_day_named_is_the_job_from_that_day(memory: Memory) -> None:
    """ "I got an offer from Stripe, starting May 5 as a staff engineer" said in April 2025 is where the user works
    from May 5: asked later, Shopify answered first, and "What was my job before Stripe?" lost Shopify below the
    cutoff and then behind what was said of Stripe, read as a person asked about (a user trial)."""
    say(memory, "sam", [("2024-11-03", "I'm Sam, backend engineer at Shopify, working remotely from Toronto."),
                        ("2025-01-08", "我们养了一只狗叫可乐，是金毛。"),
                        ("2025-04-10", "I got an offer from Stripe, starting May 5 as a staff engineer."),
                        ("2025-06-30", "Went hiking in the Rockies last weekend")])  # fmt: skip
    for question in ("Where do I work?", "我在哪个公司上班？"):
        found = memory.search(question, user_id="sam")
        assert found and "Stripe" in found[0].text, (question, [hit.text for hit in found])
    found = memory.search("What was my job before Stripe?", user_id="sam")
    assert found and "Shopify" in found[0].text, [hit.text for hit in found]
    said_on = "I got an offer from Stripe, starting May 5 as a staff engineer."
    assert change_answers(said_on) == "" and planned_change_answers(said_on) == "work job 工作 上班"
    assert change_answers("I accepted the offer from Stripe!") == "work job 工作 上班"
    assert NOT_YET.search("starting Monday as head of design") and not NOT_YET.search("starting Level 2 training")


def test_a_plan_called_off_in_the_other_script_is_called_off(memory: Memory) -> None:
    """ "成都的行程取消了" calls off "Booked flights to Chengdu for April": the two share the city only as 成都 and
    Chengdu (a user trial)."""
    say(memory, "sam", [("2025-02-14", "Booked flights to Chengdu for April to meet 林晓's parents."),
                        ("2025-03-02", "成都的行程取消了，林晓妈妈住院了。"),
                        ("2025-03-20", "周末在家做了麻婆豆腐")])  # fmt: skip
    first_answers(
        memory, "sam", {"Are we going to Chengdu?": "成都的行程取消了", "我们什么时候去成都？": "成都的行程取消了"}
    )


def test_someone_named_first_and_then_called_she_or_he_is_whom_it_is_about() -> None:
    """ "林晓 started eating fish again, she says she's pescatarian now" is the partner's diet, not the user's (a user
    trial); a doubled pet name in Chinese the same; the user's own statement stays theirs."""
    assert subject("林晓 started eating fish again, she says she's pescatarian now.") == "another"
    assert subject("可乐 ate a sock and we spent the night at the vet. He's fine now.") == "another"
    assert subject("朵朵今天开始上小学了，她很兴奋") == "another"
    assert subject("I started yoga, she said") == "user"
    assert subject("Booked flights to Chengdu, he said") is None


def test_a_chinese_name_opening_the_statement_makes_it_theirs() -> None:
    """A user trial: "朵朵的芒果过敏好像好了" (the granddaughter's) was read as the user's own and answered
    "我有什么病？". A pet name said twice, or a name the segmenter knows before 的, opens someone else's news;
    doubled adverbs, times and things do not."""
    assert subject("朵朵的芒果过敏好像好了") == subject("豆豆对芒果过敏") == subject("张伟的车坏了") == "another"
    assert subject("天天加班好累") is None and subject("今天的会议取消了") is None
    assert subject("高血压又犯了") is None and subject("看看明天天气") is None
    assert subject("我有高血压") == "user" and subject("用户的高血压") == "user"


def test_a_call_off_as_the_model_writes_it_down_answers_before_the_plan(memory: Memory) -> None:
    """A user trial with the bundled model: "日本不去了，改成四月去首尔" was written down as "用户不再去日本", which
    called nothing off, and "Are we still going to Kyoto?" found the Japan plan first."""
    say(memory, "chen", [("2025-08-08", "Planning a trip to Japan next April with Lily, probably Kyoto."),
                         ("2025-10-12", "搬家了，现在住在宝安区")])  # fmt: skip
    memory.add("用户不再去日本", user_id="chen", kind="fact", event_time="2026-01-05T12:00:00Z")
    found = memory.search("Are we still going to Kyoto?", user_id="chen", as_of="2026-02-01")
    assert found and found[0].text == "用户不再去日本", [hit.text for hit in found]
    assert calls_off("User is no longer going to Japan") and calls_off("We're not going anymore")


def test_later_news_in_the_other_language_is_shown_with_the_plan_it_calls_off(memory: Memory) -> None:
    """A user trial: the Chinese call-off ("用户不再去日本" there, "日本不去了…" here) shares no word with "What are my
    plans for April?", and the context showed the English plan for Japan it calls off alone. The plan's names are
    looked up as the other language writes them too (日本 for Japan, the glossary), and the call-off is shown as its
    later news."""
    say(memory, "chen", [("2025-08-08", "Planning a trip to Japan next April with Lily, probably Kyoto."),
                         ("2025-10-12", "搬家了，现在住在宝安区"),
                         ("2026-01-05", "日本不去了，签证没办下来。")])  # fmt: skip
    shown = memory.context("What are my plans for April?", user_id="chen", as_of="2026-02-01").text
    assert "Planning a trip to Japan" in shown and "日本不去了" in shown, shown
    assert in_other_script("Japan") == "日本" and in_other_script("京都") == "Kyoto"
    assert in_other_script("Lily") is None and in_other_script("Lin") is None  # a person, not 百合 the flower

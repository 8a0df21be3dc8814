"""Session summaries (extractive offline, model-written through an OpenAI-compatible endpoint) and
expanding a hit to its source turns (real store, real embedder; the model is scripted at HTTP)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memstrata import Memory, Scope
from memstrata.providers.openai_chat import OpenAICompatibleChat
from memstrata.read.expand import expand, source_turns
from memstrata.storage.protocol import WriteBatch
from memstrata.types import Message
from memstrata.write.session_summary import SUMMARY_KIND, extractive_summary, model_writer, session_summary
from support.scripted_llm import Reply, ScriptedServer, completion

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SCOPE = Scope(user_id="u1")
SESSION = [
    ("Melanie", "Hey Caroline! How did the adoption meeting go?"),
    ("Caroline", "It was great. The adoption agency said the home study starts next month."),
    ("Melanie", "That's huge! Are you nervous about the home study?"),
    ("Caroline", "A bit. The agency wants references, so I asked my pottery teacher."),
    ("Melanie", "Ha, nice. Anyway, my kids loved the beach yesterday."),
]
CHINESE = [
    ("小王", "我下周三去杭州出差，住在西湖边。"),
    ("小李", "杭州出差要带伞，下周三有雨。"),
    ("小王", "好的，谢谢提醒。"),
]


def _turns(pairs: list[tuple[str, str]]) -> list[Message]:
    return [
        Message(role="user", name=name, content=text, timestamp=NOW + timedelta(minutes=i))
        for i, (name, text) in enumerate(pairs)
    ]


def test_extractive_summary_keeps_the_central_sentences_in_order() -> None:
    summary = extractive_summary(_turns(SESSION), max_sentences=3)
    lines = summary.splitlines()
    assert len(lines) == 3 and all(": " in line for line in lines)
    assert "Caroline: It was great." not in lines  # chosen by its words, not by position
    assert any("adoption agency" in line for line in lines) and any("home study" in line for line in lines)
    assert not any("beach" in line for line in lines)  # the aside is not the session's topic
    positions = [next(i for i, (_, text) in enumerate(SESSION) if line.split(": ", 1)[1] in text) for line in lines]
    assert positions == sorted(positions)


def test_chinese_sessions_stay_chinese_and_every_turn_is_linked() -> None:
    turns = _turns(CHINESE)
    item = session_summary(turns, SCOPE, now=NOW)
    assert item is not None and item.kind == SUMMARY_KIND
    assert "杭州出差" in item.text and item.text.isascii() is False
    assert item.provenance.message_ids == tuple(turn.id for turn in turns)
    assert item.event_time == NOW and item.metadata == {"turns": 3, "method": "extractive"}
    assert session_summary([], SCOPE, now=NOW) is None


def test_model_summary_is_kept_when_usable_and_refused_when_not(server: ScriptedServer) -> None:
    chat = OpenAICompatibleChat(server.base_url, "scripted", timeout_s=2, max_attempts=1, transport_retries=0)
    write = model_writer(chat)
    turns = _turns(SESSION)
    summary = "Caroline's adoption home study starts next month; agency wants references."
    server.enqueue(completion({"summary": summary}))
    written = session_summary(turns, SCOPE, now=NOW, write=write)
    assert written is not None and written.metadata["method"] == "model" and written.text.startswith("Caroline's")
    assert "never translate" in server.requests[-1]["messages"][0]["content"]
    server.enqueue(completion({"summary": "Lorem ipsum dolor sit amet."}))
    garbage = session_summary(turns, SCOPE, now=NOW, write=write)
    assert garbage is not None and garbage.metadata["method"] == "extractive"
    assert garbage.metadata["model_refused"] == "shares no word with the session"
    server.enqueue(Reply(500, "down"))
    failed = session_summary(turns, SCOPE, now=NOW, write=write)
    assert failed is not None and failed.metadata["method"] == "extractive"
    assert str(failed.metadata["model_refused"]).startswith("model failed")


def test_a_summary_hit_expands_to_the_turns_that_answer(memory: Memory) -> None:
    added = memory.add([{"role": "user", "name": n, "content": t} for n, t in SESSION], user_id="u1")
    turns = [stored.message for stored in memory.store.messages_by_id(SCOPE, list(added.message_ids))]
    item = session_summary(turns, SCOPE, now=NOW)
    assert item is not None
    memory.store.write(WriteBatch(inserts=[item]))
    assert [t.message.id for t in source_turns(memory.store, SCOPE, item)] == list(added.message_ids)
    best = expand(memory.store, SCOPE, item, "When does Caroline's home study start?", limit=2)
    assert best[0].message.content == "It was great. The adoption agency said the home study starts next month."
    assert expand(memory.store, Scope(user_id="u2"), item, "home study") == []  # scope is enforced by the store


def test_a_session_of_one_sentence_longer_than_a_summary_is_summarised_by_it_cut() -> None:
    """Every sentence was over the limit, so the summary memory was stored with empty text."""
    turns = _turns([("user", "我" + "很喜欢吃四川火锅和重庆小面" * 60)])
    item = session_summary(turns, SCOPE, now=NOW, max_chars=200)
    assert item is not None and item.text.startswith("user: 我很喜欢吃四川火锅") and item.text.endswith("…")
    assert len(item.text) <= 200


def test_sentences_end_at_sentence_ends_not_at_every_dot() -> None:
    """'Version 3.5 of the app' was split into 'Version 3.' and '5 of the app crashed.'; 'Dr. Smith' likewise."""
    turns = _turns([("user", "Version 3.5 of the app crashed. Dr. Smith fixed it!我很高兴。")])
    summary = extractive_summary(turns, max_sentences=10)
    assert summary.splitlines() == ["user: Version 3.5 of the app crashed.", "user: Dr. Smith fixed it!",
                                    "user: 我很高兴。"]  # fmt: skip


def test_a_summary_keeps_where_the_session_ended_up_and_no_assistant_question() -> None:
    """A user trial: an 8-turn trip session's summary held its opening and "assistant: 好的，预算多少？", and left out
    the flight booked at its end."""
    said = [("user", "I'm planning a trip to Tokyo in March, need a hotel near Shinjuku."),
            ("assistant", "Sure, how many nights in Tokyo?"), ("user", "Five nights in Tokyo, hotel near the station."),
            ("assistant", "好的，预算多少？"), ("user", "Hotel budget around 150 dollars a night in Tokyo."),
            ("user", "Also I'm allergic to seafood, remember that for Tokyo restaurants."),
            ("user", "Also book a flight: MU523 from Shanghai on March 3rd."),
            ("assistant", "Booked MU523, departing 09:10 on March 3rd.")]  # fmt: skip
    turns = [Message(role=role, content=text, timestamp=NOW + timedelta(minutes=i))
             for i, (role, text) in enumerate(said)]  # fmt: skip
    summary = extractive_summary(turns, max_sentences=4)
    assert "MU523" in summary and "预算多少" not in summary, summary

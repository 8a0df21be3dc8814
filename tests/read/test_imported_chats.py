"""Old chats imported whole, the assistant's turns included, with the real store and embedder. The cases come from a
user trial: four sessions of meal planning over a year, in which the user's news arrives in passing ("Also my mom …",
"Also Arjun got a job …") and the assistant's questions repeat the words of what is asked later."""

from __future__ import annotations

from tests.support.turns import first_answers, say

from memstrata import Memory
from memstrata.answers import answer_words, planned_change_answers
from memstrata.read.own_first import topic_terms
from memstrata.read.whose import subject

_SESSIONS = [
    ("2025-03-03T19:00:00-05:00", "s1", [
        ("user", "Hey, I need help planning meals. I live in Jersey City and work as a nurse at Mount Sinai."),
        ("assistant", "Happy to help! Any dietary restrictions?"),
        ("user", "I'm lactose intolerant and I don't eat beef."),
        ("assistant", "Got it: no dairy, no beef. How many nights a week do you cook?"),
        ("user", "Maybe four. I work night shifts Tuesday to Thursday so those days are out."),
        ("assistant", "Then let's plan Friday through Monday."),
    ]),
    ("2025-07-19T10:30:00-04:00", "s2", [
        ("user", "Quick update, we adopted a rescue dog! Her name is Biscuit, she's a beagle mix."),
        ("assistant", "Congratulations! How old is Biscuit?"),
        ("user", "About two. Also my mom is moving in with us next month, she's vegetarian."),
    ]),
    ("2025-11-02T21:15:00-05:00", "s3", [
        ("user", "I switched to day shifts! Monday to Wednesday now, 7am to 7pm."),
        ("assistant", "Nice, that should be easier. Does that change which nights you cook?"),
        ("user", "Yes, I can cook Thursday to Sunday now. Also Arjun got a job in Boston, we're moving in January."),
    ]),
    ("2026-03-08T09:00:00-05:00", "s4", [
        ("user", "We're settled in Somerville now."),
        ("assistant", "Glad to hear it! How is the new hospital?"),
        ("user", "Good but busy. Actually I can eat a little cheese now, the doctor said hard cheese is ok, no milk."),
        ("assistant", "Noted: hard cheese is fine, still no milk."),
        ("user", "Also my mom moved back to Edison, she missed her friends."),
    ]),
]  # fmt: skip


def import_chats(memory: Memory, *, user: str = "priya") -> None:
    """The trial's sessions, each as one add of its turns."""
    for start, session, turns in _SESSIONS:
        said = [{"role": role, "content": text, "timestamp": start} for role, text in turns]
        memory.add(said, user_id=user, session_id=session)


def test_news_said_in_passing_is_whose_it_names(memory: Memory) -> None:
    """ "Also my mom moved back to Edison" passed the assistant's "still no milk" for "Can I drink milk?" as the user's
    own statement."""
    import_chats(memory)
    found = memory.search("Can I drink milk?", user_id="priya")
    assert found and "milk" in found[0].text, [hit.text for hit in found]


def test_a_move_said_later_answers_where_someone_lives_whatever_opens_the_turn(memory: Memory) -> None:
    """ "About two. Also my mom is moving in with us next month" (the dog's age, then the mother's news) was read as
    the user's own turn, and led "Does my mom live with us?" above her later "Also my mom moved back to Edison"."""
    import_chats(memory)
    found = memory.search("Does my mom live with us?", user_id="priya")
    assert found and found[0].text.startswith("Also my mom moved back to Edison"), [hit.text for hit in found]


def test_the_readings_behind_it() -> None:
    assert subject("About two. Also my mom is moving in with us next month") == "another"
    assert subject("Maybe four. I work night shifts") == "user" and subject("Sounds good.") is None
    assert subject("Got promoted! My boss said it was overdue") is None  # the speaker's news, no answer
    assert subject("Also my mom moved back to Edison, she missed her friends.") == "another"
    assert subject("对了，我妈搬回老家了") == "another" and subject("Anyway I got a job") == "user"
    assert "work" not in answer_words("Yes, I can cook now. Also Arjun got a job in Boston.")
    assert "work" in answer_words("Great news. I got a job at Meta")
    assert "work" in answer_words("Great news! Today got a job at Meta")  # a time word opens it, not someone
    assert "live" in planned_change_answers("Also my mom is moving in with us next month")
    assert topic_terms("Does my mom live with us?") == ("live",) and "us" in topic_terms("Do I live in the US?")


def test_a_new_job_does_not_take_the_place_of_the_shifts_it_does_not_speak_of(memory: Memory) -> None:
    """A user trial: "User's new job is at Mass General as a nurse" took the place of the night shifts for "What
    shifts do I work?" on "work" alone. A change replaces only what it speaks to all of (for the question asked):
    the new job still answers where the user works."""
    said = [("2025-03-03", "I work night shifts Tuesday to Thursday at Mount Sinai."),
            ("2025-12-10", "New job: I'm now working at Mass General as a nurse.")]  # fmt: skip
    say(memory, "priya", said)
    asked = {"What shifts do I work?": "I work night shifts", "Where do I work?": "New job"}
    first_answers(memory, "priya", asked)

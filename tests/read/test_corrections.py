"""A later correction answers in place of what it corrects (read/newer.py), and only for what it corrects, with the
real store and embedder. The case comes from a user trial of a life imported from old chats."""

from __future__ import annotations

from memstrata import Memory
from memstrata.topics import topics_of


def _said(memory: Memory, user: str, said: list[tuple[str, str]]) -> None:
    for day, text in said:
        memory.add([{"role": "user", "content": text, "timestamp": f"{day}T10:00:00Z"}], user_id=user)


def test_a_correction_of_one_topic_does_not_answer_for_another_topic_of_the_statement(memory: Memory) -> None:
    """ "Correction: 朵朵 is 5, not 6" corrects the age of a statement that also names the kindergarten: it answers how
    old she is, and it led "Which school does my daughter go to?" above the kindergarten."""
    _said(memory, "mei", [("2025-01-12", "我女儿朵朵今年6岁，在上海的星光幼儿园上大班。"),
                          ("2025-03-02", "Correction: 朵朵 is 5, not 6. She turns 6 in July."),
                          ("2025-04-20", "周末带朵朵去了迪士尼，排队排了两个小时")])  # fmt: skip
    for question in ("Which school does my daughter go to?", "朵朵在哪个幼儿园？"):
        found = memory.search(question, user_id="mei")
        assert found and found[0].text.startswith("我女儿朵朵今年6岁"), (question, [hit.text for hit in found])
    for question in ("How old is my daughter?", "朵朵几岁了？"):
        found = memory.search(question, user_id="mei")
        assert found and found[0].text.startswith("Correction"), (question, [hit.text for hit in found])
    assert topics_of("How old is my daughter?") == {"age"} and topics_of("朵朵几岁了？") == {"age"}


def test_a_correction_naming_no_topic_still_answers_for_what_it_corrects(memory: Memory) -> None:
    """A correction that names none of the everyday topics may correct anything the earlier statement says."""
    _said(memory, "kai", [("2024-02-01", "I live in Beijing and work at a bank"),
                          ("2024-02-03", "Sorry, I meant Shanghai, not Beijing."),
                          ("2024-03-01", "Went hiking at the weekend")])  # fmt: skip
    found = memory.search("Where do I live?", user_id="kai")
    assert found and found[0].text.startswith("Sorry, I meant Shanghai"), [hit.text for hit in found]

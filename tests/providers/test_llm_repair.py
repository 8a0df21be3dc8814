"""The shared parse-validate-repair loop, driven by a scripted ``call_once`` (a plain function, no I/O)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from pydantic import BaseModel

from memstrata.errors import ProviderError
from memstrata.providers.llm import (
    ChatMessage,
    ModelOutputError,
    Usage,
    extract_json_object,
    run_with_repair,
)


class Fact(BaseModel):
    text: str


class Facts(BaseModel):
    facts: list[Fact]


class Script:
    """Answers with queued texts and records every conversation it was sent."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.calls: list[list[ChatMessage]] = []

    def __call__(self, messages: Sequence[ChatMessage], schema: dict[str, Any]) -> tuple[str, Usage]:
        self.calls.append(list(messages))
        return self.answers.pop(0), Usage(10, 5)


PROMPT = [ChatMessage("system", "extract facts"), ChatMessage("user", "我住在杭州")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('Sure! Here it is: {"a": {"b": [1, 2]}} Hope that helps {x}', {"a": {"b": [1, 2]}}),
        ('note {not json} then {"a": "brace } in string"}', {"a": "brace } in string"}),
        ('prose {with braces}\n```json\n{"a": 2}\n```', {"a": 2}),
        ('{"a": "escaped \\" quote {"}', {"a": 'escaped " quote {'}),
        ('  \n{"事实": "对花生过敏"}\n', {"事实": "对花生过敏"}),
    ],
)
def test_extract_json_object_tolerates_wrapping(text: str, expected: Any) -> None:
    assert extract_json_object(text) == expected


@pytest.mark.parametrize("text", ["no json here", '{"a": 1', "{'a': 1}", ""])
def test_extract_json_object_rejects_broken_output(text: str) -> None:
    with pytest.raises(ValueError):
        extract_json_object(text)


def test_valid_first_answer_takes_one_attempt() -> None:
    script = Script('{"facts": [{"text": "住在杭州"}]}')
    result = run_with_repair(script, PROMPT, Facts, model_id="scripted")
    assert result.data == Facts(facts=[Fact(text="住在杭州")])
    assert (result.attempts, result.usage, result.model_id) == (1, Usage(10, 5), "scripted")
    assert result.raw == '{"facts": [{"text": "住在杭州"}]}'
    assert script.calls == [PROMPT]


def test_invalid_answer_is_repaired_with_the_error_quoted() -> None:
    script = Script('{"facts": [{"txt": "住在杭州"}]}', '{"facts": [{"text": "住在杭州"}]}')
    result = run_with_repair(script, PROMPT, Facts)
    assert result.attempts == 2
    assert result.usage == Usage(20, 10)
    repair = script.calls[1]
    assert repair[:2] == PROMPT
    assert repair[2] == ChatMessage("assistant", '{"facts": [{"txt": "住在杭州"}]}')
    assert repair[3].role == "user"
    assert "facts.0.text: Field required" in repair[3].content
    assert '"required":["facts"]' in repair[3].content  # the schema is restated


def test_only_the_latest_failure_is_shown_to_keep_the_prompt_bounded() -> None:
    script = Script("nope", "still nope", '{"facts": []}')
    result = run_with_repair(script, PROMPT, Facts)
    assert result.attempts == 3
    assert len(script.calls[2]) == len(PROMPT) + 2
    assert script.calls[2][2].content == "still nope"


def test_exhausted_attempts_raise_with_every_raw_output() -> None:
    script = Script("nope", '{"facts": "x"}', "```json\n{\n```")
    with pytest.raises(ModelOutputError) as caught:
        run_with_repair(script, PROMPT, Facts, max_attempts=3, model_id="m")
    err = caught.value
    assert isinstance(err, ProviderError)
    assert err.raw_outputs == ["nope", '{"facts": "x"}', "```json\n{\n```"]
    assert "no complete, valid JSON object" in err.last_error
    assert "m gave no valid Facts in 3 attempt(s)" in str(err)


def test_provider_errors_are_not_retried_as_bad_output() -> None:
    def failing(messages: Sequence[ChatMessage], schema: dict[str, Any]) -> tuple[str, Usage]:
        raise ProviderError("network down")

    with pytest.raises(ProviderError, match="network down"):
        run_with_repair(failing, PROMPT, Facts)


def test_a_cut_off_answer_keeps_its_whole_items_without_asking_again() -> None:
    # A model at temperature 0 asked again loops or runs out of tokens the same way; what it finished is kept and
    # the result says it is not the whole answer.
    script = Script('{"facts": [{"text": "住在杭州"}, {"text": "对花生', '{"facts": []}')
    result = run_with_repair(script, PROMPT, Facts)
    assert result.data == Facts(facts=[Fact(text="住在杭州")])
    assert (result.attempts, result.cut_off) == (1, True)
    assert len(script.calls) == 1


def test_a_cut_off_answer_with_no_whole_item_is_asked_again() -> None:
    script = Script('{"facts": [{"text": "住在', '{"facts": [{"text": "住在杭州"}]}')
    result = run_with_repair(script, PROMPT, Facts)
    assert (result.attempts, result.cut_off) == (2, False)
    assert result.data == Facts(facts=[Fact(text="住在杭州")])

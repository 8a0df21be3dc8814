"""Hypothesis over the Python API: whatever a caller passes, the answer is a result or a MemstrataError that
says what to fix, never a crash from deep inside the store (UnicodeEncodeError, OverflowError, ...).

Inputs mix plausible values with the ones that broke the first version: lone surrogates and NUL inside
metadata, filter values and message names, datetimes that leave the calendar when converted to UTC, huge
numbers. Bounded so it runs in seconds on both backends.
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstrata import Memory
from memstrata.errors import MemstrataError

EXAMPLES = 60

hostile_text = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["\ud800", "a\udfffb", "nul\x00", "", "   ", "用户喜欢喝茶", "x" * 300]),
)
zones = st.sampled_from([None, UTC, timezone(timedelta(hours=-1)), timezone(timedelta(hours=14)),
                         timezone(timedelta(hours=-12))])  # fmt: skip
edge_times = st.sampled_from([datetime.min, datetime.max, datetime(1, 1, 1, 0, 30), datetime(9999, 12, 31, 23, 59)])
times = st.one_of(st.none(), st.builds(lambda d, z: d.replace(tzinfo=z), st.one_of(edge_times, st.datetimes()), zones))
numbers = st.one_of(st.integers(min_value=-(2**70), max_value=2**70), st.sampled_from([0, 1, 10, 10**6]))
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), hostile_text),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(hostile_text, inner, max_size=3),
    max_leaves=6,
)
metadata = st.one_of(st.none(), st.dictionaries(hostile_text, json_values, max_size=3))
filters = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {},
        optional={
            "kind": st.one_of(hostile_text, st.lists(hostile_text, max_size=2)),
            "metadata": st.dictionaries(st.sampled_from(["topic", "k", "\ud800"]), json_values, max_size=2),
            "key_prefix": hostile_text,
            "created_at": st.fixed_dictionaries({}, optional={"gte": times, "lt": times}),
            "event_time": st.fixed_dictionaries({}, optional={"gte": times, "lt": times}),
        },
    ),
)
messages = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "robot"]), "content": hostile_text},
        optional={"name": hostile_text, "timestamp": times, "id": hostile_text},
    ),
    min_size=1,
    max_size=3,
)
items = st.lists(
    st.one_of(
        hostile_text,
        st.fixed_dictionaries({"text": hostile_text}, optional={"metadata": metadata, "kind": hostile_text,
                                                                 "confidence": st.floats(), "event_time": times}),
    ),
    min_size=1,
    max_size=4,
)  # fmt: skip
scope_ids = st.one_of(st.just("fuzz"), hostile_text)


def _call(memory: Memory, name: str, args: dict[str, Any]) -> None:
    user = args.pop("user_id")
    if name == "add_text":
        memory.add(args["items"], user_id=user, metadata=args["metadata"], event_time=args["time"], on_error="skip")
    elif name == "add_turns":
        memory.add(args["messages"], user_id=user, session_id=args["text"] or None, metadata=args["metadata"])
    elif name == "search":
        memory.search(args["text"], user_id=user, filters=args["filters"], as_of=args["time"], limit=args["number"])
    elif name == "get_all":
        memory.get_all(user_id=user, filters=args["filters"], offset=args["number"], limit=10)
    elif name == "by_id":
        for call in (memory.get, memory.history, memory.resolve_id):
            with contextlib.suppress(MemstrataError):
                call(args["text"], user_id=user)
        memory.mark_used([args["text"]], user_id=user)
    elif name == "update":
        memory.update(args["text"], args["text"], metadata=args["metadata"], reason=args["text"], user_id=user)
    elif name == "lifecycle":
        memory.forget(args["text"], user_id=user, limit=args["number"])
        memory.review_queue(user_id=user, limit=args["number"])
    elif name == "session":
        memory.session_context(args["text"], user_id=user, budget_tokens=args["number"])


@settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(
    name=st.sampled_from(["add_text", "add_turns", "search", "get_all", "by_id", "update", "lifecycle", "session"]),
    user_id=scope_ids,
    text=hostile_text,
    items=items,
    messages=messages,
    metadata=metadata,
    filters=filters,
    time=times,
    number=numbers,
)
def test_any_input_gets_a_result_or_a_memstrata_error(memory: Memory, name: str, **args: Any) -> None:
    try:
        _call(memory, name, dict(args))
    except MemstrataError as exc:
        assert str(exc)  # every error says something

"""Loaders for the benchmark data: LoCoMo, MADial-Bench and any file in LongMemEval format.

The data is read where it lies (``../shared/data`` by default) and never copied into the repo.
Loaders return small frozen records; nothing here touches memstrata.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = (REPO_ROOT / ".." / "shared" / "data").resolve()

LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
EVIDENCE_NORMALISATION = (
    "split each evidence string on [;,\\s]+, keep tokens matching D:?(\\d+):(\\d+) as 'D<s>:<t>' "
    "(leading zeros dropped), de-duplicate; ids that match no turn stay in the denominator "
    "(never retrievable); a question with no evidence scores 1"
)
_EVIDENCE_SPLIT = re.compile(r"[;,\s]+")
_EVIDENCE_ID = re.compile(r"^D:?(\d+):(\d+)$")
_SESSION_KEY = re.compile(r"^session_(\d+)$")


# --- LoCoMo -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str | None
    session: int
    when: datetime | None

    @property
    def content(self) -> str:
        """What memstrata stores: the turn text, with the image caption when there is one."""
        return f"{self.text} [shared image: {self.caption}]" if self.caption else self.text

    @property
    def indexed(self) -> str:
        """The text every system indexes (memstrata indexes episodes as 'speaker: content')."""
        return f"{self.speaker}: {self.content}"

    @property
    def official(self) -> str:
        """The LoCoMo retrieval unit (``speaker said, "text"`` and the caption), for the reference BM25."""
        shared = f" and shared {self.caption}" if self.caption else ""
        return f'{self.speaker} said, "{self.text}"{shared}'


@dataclass(frozen=True)
class Question:
    conversation: str
    index: int
    question: str
    answer: str
    category: int
    evidence: tuple[str, ...]  # normalised, de-duplicated


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


def parse_locomo_date(text: str) -> datetime | None:
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")
    except ValueError:
        return None


def normalise_evidence(raw: list[str]) -> tuple[str, ...]:
    ids: list[str] = []
    for entry in raw:
        for token in _EVIDENCE_SPLIT.split(entry.strip()):
            match = _EVIDENCE_ID.match(token)
            if match:
                ids.append(f"D{int(match.group(1))}:{int(match.group(2))}")
    return tuple(dict.fromkeys(ids))


def load_locomo(path: Path | None = None) -> list[Conversation]:
    data = json.loads((path or DATA_DIR / "locomo10.json").read_text(encoding="utf-8"))
    conversations = []
    for sample in data:
        conv = sample["conversation"]
        sessions = sorted(
            (int(m.group(1)), key) for key in conv if (m := _SESSION_KEY.match(key)) and isinstance(conv[key], list)
        )
        turns = []
        for number, key in sessions:
            when = parse_locomo_date(str(conv.get(f"{key}_date_time", "")))
            for turn in conv[key]:
                turns.append(
                    Turn(
                        dia_id=turn["dia_id"],
                        speaker=turn["speaker"],
                        text=turn.get("text", "").strip(),  # memstrata trims; keep every system's text equal
                        caption=(turn.get("blip_caption") or "").strip() or None,
                        session=number,
                        when=when,
                    )
                )
        questions = tuple(
            Question(
                conversation=sample["sample_id"],
                index=j,
                question=qa["question"],
                answer=str(qa.get("answer", qa.get("adversarial_answer", ""))),
                category=int(qa["category"]),
                evidence=normalise_evidence(qa.get("evidence", [])),
            )
            for j, qa in enumerate(sample["qa"])
        )
        conversations.append(Conversation(sample["sample_id"], tuple(turns), questions))
    return conversations


# --- MADial-Bench -----------------------------------------------------------------------
@dataclass(frozen=True)
class MadialMemory:
    memory_id: str
    user_id: str
    text: str


@dataclass(frozen=True)
class MadialQuery:
    index: int
    user_id: str
    query: str
    relevant: tuple[str, ...]


@dataclass(frozen=True)
class MadialSet:
    language: str
    memories: tuple[MadialMemory, ...]
    queries: tuple[MadialQuery, ...]


def _json_lines(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def load_madial(language: str, root: Path | None = None) -> MadialSet:
    """``language`` is "zh" or "en". Query = the dialogue before the first test turn, joined as the
    official scripts do; memory text = scene, emotion and event (time left out, as officially)."""
    base = root or DATA_DIR / "madial_bench"
    # The English memory file has no user ids; the Chinese one has them for the same memory ids.
    owner = {
        key: str(value["user-id"])
        for row in _json_lines(base / "ch" / "MADial-Bench-zh-memory.json")
        for key, value in row.items()
    }
    folder, tag = ("ch", "zh") if language == "zh" else ("en", "en")
    memories = tuple(
        MadialMemory(key, owner[key], f"[{value['scene']} / {value['emotion']}] {value['event']}")
        for row in _json_lines(base / folder / f"MADial-Bench-{tag}-memory.json")
        for key, value in row.items()
    )
    queries = tuple(
        MadialQuery(
            index=i,
            user_id=str(row["user-id"]),
            query="".join(row["dialogue"][: row["test-turn"][0]]),
            relevant=tuple(str(r) for r in row["relevant-id"]),
        )
        for i, row in enumerate(_json_lines(base / folder / f"MADial-Bench-{tag}-dialogue.json"))
    )
    return MadialSet(language, memories, queries)


# --- LongMemEval format -----------------------------------------------------------------
@dataclass(frozen=True)
class LmeDoc:
    doc_id: str
    text: str
    date: str


@dataclass(frozen=True)
class LmeInstance:
    question_id: str
    question: str
    question_type: str
    sessions: tuple[LmeDoc, ...]  # one document per session: the user turns joined
    turns: tuple[LmeDoc, ...]  # one document per user turn, id f"{session_id}_{i+1}"
    gold_sessions: frozenset[str]
    gold_turns: frozenset[str]
    extra: dict[str, Any] = field(default_factory=dict)


def _has_answer_flags(session: list[dict[str, Any]]) -> bool:
    return any("has_answer" in turn for turn in session)


def load_longmemeval(path: Path) -> tuple[list[LmeInstance], int]:
    """Instances without abstention questions (id ending ``_abs``), and how many were dropped.

    Gold sessions are the answer sessions holding at least one user turn with ``has_answer``
    (all answer sessions when the file carries no turn labels); gold turns are those user turns.
    """
    data = json.loads(path.read_text(encoding="utf-8"))
    kept: list[LmeInstance] = []
    dropped = 0
    for entry in data:
        qid = str(entry["question_id"])
        if qid.endswith("_abs"):
            dropped += 1
            continue
        answer_ids = set(map(str, entry.get("answer_session_ids", [])))
        sessions, turns, gold_sessions, gold_turns = [], [], set(), set()
        dates = entry.get("haystack_dates") or [""] * len(entry["haystack_sessions"])
        for sid, session, date in zip(entry["haystack_session_ids"], entry["haystack_sessions"], dates, strict=True):
            sid = str(sid)
            user_turns = [(i, t) for i, t in enumerate(session) if t.get("role") == "user"]
            sessions.append(LmeDoc(sid, " ".join(t["content"] for _, t in user_turns), str(date)))
            labelled = _has_answer_flags(session)
            for i, turn in user_turns:
                turn_id = f"{sid}_{i + 1}"
                turns.append(LmeDoc(turn_id, turn["content"], str(date)))
                if sid in answer_ids and turn.get("has_answer"):
                    gold_turns.add(turn_id)
            if sid in answer_ids and (not labelled or any(t.get("has_answer") for _, t in user_turns)):
                gold_sessions.add(sid)
        kept.append(
            LmeInstance(
                question_id=qid,
                question=str(entry["question"]),
                question_type=str(entry.get("question_type", "")),
                sessions=tuple(sessions),
                turns=tuple(turns),
                gold_sessions=frozenset(gold_sessions),
                gold_turns=frozenset(gold_turns),
            )
        )
    return kept, dropped


def write_tiny_longmemeval(path: Path) -> Path:
    """A three-question file in LongMemEval format (one abstention) for smoke tests."""
    sessions = [
        [
            {"role": "user", "content": "I adopted a beagle named Biscuit last spring.", "has_answer": True},
            {"role": "assistant", "content": "Congratulations on Biscuit!"},
        ],
        [
            {"role": "user", "content": "My sister lives in Lisbon and teaches piano.", "has_answer": True},
            {"role": "assistant", "content": "Lisbon is lovely."},
            {"role": "user", "content": "她每周六在里斯本教钢琴。", "has_answer": True},
        ],
        [
            {"role": "user", "content": "I am training for a half marathon in October.", "has_answer": False},
            {"role": "assistant", "content": "Good luck with the training!"},
        ],
        [{"role": "user", "content": "Can you recommend a pasta recipe with mushrooms?"}],
    ]
    ids = ["answer_s1", "answer_s2", "s3", "s4"]
    dates = ["2023/05/20 (Sat) 02:21", "2023/05/22 (Mon) 10:00", "2023/06/01 (Thu) 08:30", "2023/06/03 (Sat) 19:12"]
    base = {"haystack_session_ids": ids, "haystack_dates": dates, "haystack_sessions": sessions}
    data = [
        {
            "question_id": "q1",
            "question_type": "single-session-user",
            "question": "What is my dog's name?",
            "answer": "Biscuit",
            "question_date": "2023/07/01",
            "answer_session_ids": ["answer_s1"],
            **base,
        },
        {
            "question_id": "q2",
            "question_type": "multi-session",
            "question": "Where does my sister teach piano?",
            "answer": "Lisbon",
            "question_date": "2023/07/01",
            "answer_session_ids": ["answer_s2"],
            **base,
        },
        {
            "question_id": "q3_abs",
            "question_type": "single-session-user",
            "question": "What is my cat's name?",
            "answer": "unknown",
            "question_date": "2023/07/01",
            "answer_session_ids": [],
            **base,
        },
    ]
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return path

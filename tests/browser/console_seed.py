"""Seeded data for the console tests, written through the real Memory facade before `memstrata serve` starts.

Extraction runs against the scripted OpenAI-compatible server (tests/support: a stand-in at the HTTP boundary
only, answering fixed replies); everything else is real: SQLite, the bundled embedder, the write path, the
graph patterns, the job queue.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memstrata import JobFailedError, Memory
from memstrata.api.keys import KeyStore
from memstrata.config import load_settings
from memstrata.vault import Vault
from support.scripted_llm import Reply, completion

FAILING_TURN = "我周末一般去西湖边跑步，偶尔也去爬山。"
PENDING_FACT = "王总好像喜欢红酒"  # hedged: the engine gives it confidence 0.6, under the seed's review gate
DOUBTFUL_FACT = "用户可能养了一只猫"
CHINESE_FACT = "我对花生过敏"
OTHER_TENANT_SECRET = "bob 的银行卡密码提示是蓝色海豚"
KEYLESS_FACT = "Sam keeps the spare key under the blue pot"
OTHER_TENANT_TEXTS = (OTHER_TENANT_SECRET, "我对海鲜过敏")  # tenant "other", user alice too


def _fact(text: str) -> dict[str, Any]:
    return {"turn": 1, "text": text}


@dataclass
class ScriptedBrain:
    """Answers every chat request from the prompt: facts for known turns, "compatible" for the judge's pair
    questions, and garbage for the failing turn until ``fail`` is switched off (then the retried job succeeds)."""

    fail: bool = True
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: dict[str, Any]) -> Reply:
        prompt = request["messages"][-1]["content"]
        if prompt.startswith("OLD: ") and "\nNEW: " in prompt:
            return completion({"answer": "compatible"})
        with self.lock:
            failing = self.fail
        if "西湖" in prompt:
            if failing:
                return completion("Sorry, I cannot answer in JSON today.")
            return completion({"facts": [_fact("用户周末去西湖边跑步")]})
        if "红酒" in prompt:
            facts = [
                _fact("用户在字节跳动做后端"),
                _fact(PENDING_FACT),
                _fact(DOUBTFUL_FACT),
            ]
            return completion({"facts": facts})
        if "上海" in prompt:
            return completion({"facts": [_fact("用户搬到了上海")]})
        return completion({"facts": []})


@dataclass(frozen=True)
class Seeded:
    config: Path
    acme_key: str  # every user of tenant acme
    alice_key: str  # tenant acme, user alice only
    other_key: str  # tenant other
    chinese_id: str  # the memory "我对花生过敏" of acme / alice
    failed_job_id: str


def settings_for(directory: Path, llm_url: str) -> dict[str, Any]:
    return {
        "store": {"path": str(directory / "memstrata.db")},
        "llm": {"base_url": llm_url, "model": "scripted", "timeout_s": 5, "max_attempts": 1},
        "write": {"trigger": "every_turn"},
        "lifecycle": {"pending_below": 0.7},  # hedged extractions ("好像", "可能": 0.6) wait for review
        "server": {"keys_path": str(directory / "keys.db")},
        # The bundled example vault, indexed for tenant acme (its keys may read it; other tenants get 404).
        "vault": {"path": str(directory / "vault"), "tenant_id": "acme", "watch": False},
    }


def write_config(path: Path, settings: dict[str, Any]) -> None:
    lines: list[str] = []
    for section, values in settings.items():
        lines.append(f"[{section}]")
        lines += [f"{name} = {_toml(value)}" for name, value in values.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _toml(value: object) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value).lower() if isinstance(value, bool) else str(value)


def _turn(text: str, day: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text, "timestamp": datetime(2025, 3, day, 9, 0, tzinfo=UTC)}]


def seed(directory: Path, llm_url: str) -> Seeded:
    settings = settings_for(directory, llm_url)
    write_config(directory / "memstrata.toml", settings)
    memory = Memory.from_config(load_settings({**settings, "write": {"background": False, "trigger": "every_turn"}}))
    try:
        acme = memory.for_tenant("acme")
        added = acme.add([CHINESE_FACT, "我喜欢喝乌龙茶", "I play tennis on Sundays"], user_id="alice")
        acme.add("The project database is PostgreSQL", user_id="alice", key="project:db:engine")
        said = _turn("我在字节跳动做后端，住在北京。王总好像喜欢红酒。", 1)
        acme.add(said, user_id="alice", session_id="s-2025-03-01", infer=True, wait=True)
        acme.add(_turn("我搬到上海了。", 20), user_id="alice", session_id="s-2025-03-20", infer=True, wait=True)
        try:
            acme.add(_turn(FAILING_TURN, 22), user_id="alice", session_id="s-2025-03-22", infer=True, wait=True)
            raise AssertionError("the scripted model was meant to fail this job")
        except JobFailedError as failure:
            failed_job_id = failure.jobs[0].id
        vault = Vault.of(acme)
        vault.init(example=True)
        vault.sync()
        other = memory.for_tenant("other")
        other.add(list(OTHER_TENANT_TEXTS), user_id="alice")
    finally:
        memory.close()
    keys = KeyStore(directory / "keys.db")
    try:
        acme_key = keys.create("acme", name="console test")[1]
        alice_key = keys.create("acme", user_ids=["alice"], name="alice only")[1]
        other_key = keys.create("other", name="another tenant")[1]
    finally:
        keys.close()
    chinese_id = added.results[0].id
    return Seeded(directory / "memstrata.toml", acme_key, alice_key, other_key, chinese_id, failed_job_id)


def seed_keyless(directory: Path) -> Path:
    """A store for keyless loopback mode: one memory in the default tenant; returns the config file."""
    settings = {"store": {"path": str(directory / "memstrata.db")}, "llm": {"provider": "rules"}}
    write_config(directory / "memstrata.toml", settings)
    with Memory.from_config(load_settings(settings)) as memory:
        memory.add(KEYLESS_FACT, user_id="sam")
    return directory / "memstrata.toml"

"""Graph memory with the real bundled model (Qwen2.5-Coder-1.5B via xllamacpp, loaded once per session):
the must-hold cases, with the model's triples and the patterns' together, from one extraction call."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.providers.local_llm import LocalChatModel
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.types import JobStatus, Message
from memstrata.write.extract import LLMExtractor
from memstrata.write.reconcile import LLMReconciler

pytestmark = pytest.mark.slow

TURNS = [
    "王总的太太是李女士，王总喜欢红酒",
    "前端开发依赖后端 API，张工负责后端 API",
    "我在字节跳动做后端，住在北京",
    "我现在在字节工作，搬到北京市朝阳区了",
]


def test_must_hold_cases_with_the_local_model(
    tmp_path, embedder: UniversalSentenceEncoder, local_model: LocalChatModel
) -> None:  # type: ignore[no-untyped-def]
    settings = load_settings({"store": {"path": str(tmp_path / "m.db")}, "write": {"background": False}})
    memory = Memory(
        SQLiteStore(tmp_path / "m.db"), embedder, settings=settings,
        extractor=LLMExtractor(local_model), reconciler=LLMReconciler(local_model),
    )  # fmt: skip
    start = datetime(2026, 3, 1, 9, tzinfo=UTC)
    turns = [Message(role="user", content=text, timestamp=start + timedelta(days=i)) for i, text in enumerate(TURNS)]
    memory.add(turns, user_id="u1", infer=True, wait=True)
    (job,) = memory.list_jobs(user_id="u1")
    assert job.status == JobStatus.DONE, (job.error, job.raw_output)
    print(f"\n[local llm] graph: {job.result['graph']}, model calls {job.result['model_calls']}, "
          f"{job.result['completion_tokens']} completion tokens, {job.result['model_seconds']} s")  # fmt: skip
    assert job.result["graph"]["triples_from_model"] >= 1  # the model's own triples were parsed and used

    wine = memory.search("送什么礼物给李女士的丈夫比较好？", user_id="u1", limit=5)
    assert any(hit.breakdown.graph_relation == "王总 likes 红酒" for hit in wine), [h.text for h in wine]
    affected = memory.graph.neighbors("张工", hops=2, user_id="u1")
    assert {"后端 API", "前端开发"} <= {entity.name for entity in affected.entities}
    companies = [e for e in memory.graph.entities(user_id="u1") if "字节" in e.name or "字节" in e.aliases]
    assert len(companies) == 1 and companies[0].name == "字节跳动" and "字节" in companies[0].aliases
    homes = memory.graph.relation_history("我", "lives_in", user_id="u1")
    # One current home, the newer one; the old one closed, not deleted (the model may also name the district
    # alone as a home on the way: that edge must be closed too).
    assert [edge.target for edge in homes if edge.record.current] == ["北京市朝阳区"], homes
    assert homes[0].target == "北京" and not homes[0].record.current
    memory.close()

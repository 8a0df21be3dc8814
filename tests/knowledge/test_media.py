"""Images: skipped with a note that says how to enable them, or described by a configured vision model
(here the scripted OpenAI-compatible server: fixed replies over real HTTP, no model behind it)."""

from __future__ import annotations

import base64
from pathlib import Path

from memstrata import Memory
from memstrata.knowledge import IngestOptions, Ingestor, MediaModels, OpenAIImageDescriber
from memstrata.types import Scope
from support.scripted_llm import ScriptedServer, completion

# A real 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
DESCRIPTION = "柱状图：二零二三年第二季度销售额增长百分之十五。"


def test_images_are_skipped_without_a_model_and_described_with_one(
    memory: Memory, tmp_path: Path, server: ScriptedServer
) -> None:
    folder = tmp_path / "images"
    folder.mkdir()
    (folder / "chart.png").write_bytes(PNG)
    scope = Scope(user_id="img")
    options = IngestOptions(collection="charts")

    skipped = Ingestor(memory.store, memory.embedder, scope, options).run([folder])
    outcome = skipped.outcomes[0]
    assert outcome.status == "skipped" and "no image model configured" in (outcome.error or "")

    server.enqueue(completion(DESCRIPTION))
    media = MediaModels(images=OpenAIImageDescriber(server.base_url, "vision-model"))
    described = Ingestor(memory.store, memory.embedder, scope, options, media=media).run([folder])
    assert described.count("added") == 1
    parts = server.requests[0]["messages"][0]["content"]
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,")
    hits = memory.search("第二季度销售额增长了多少？", user_id="img", filters={"kind": "knowledge"}, limit=1)
    assert DESCRIPTION in hits[0].text and hits[0].memory.metadata["format"] == "png"

"""What the process engine needs from the facade: the store, the one search path, embedding, a clock,
settings and, when one is configured, a chat model (for summaries). Built per call from the core."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import numpy.typing as npt

from memstrata.config import ProcessSettings
from memstrata.providers.llm import ChatModel
from memstrata.query import SearchQuery
from memstrata.storage.protocol import Store, WriteBatch
from memstrata.types import MemoryItem, SearchHit


@dataclass(frozen=True)
class ProcessDeps:
    store: Store
    search: Callable[[SearchQuery], list[SearchHit]]  # the facade's read path (keyword + dense, fused)
    vector_batch: Callable[[list[MemoryItem]], WriteBatch]  # embeds through the cache, vectors as a write
    embed: Callable[[Sequence[str]], npt.NDArray[np.float32]]  # query-side texts, never cached (like a search)
    identity: Callable[[], str]  # the embedding model's id, refused if the store holds another
    clock: Callable[[], datetime]
    settings: ProcessSettings
    max_text_chars: int
    model: ChatModel | None = None

"""The store contract suites again, on SQLite with every vector search going through the HNSW graph
(``ann_min_rows=0``, see conftest.py): the approximate path must keep every promise the exact one does."""

from __future__ import annotations

from contract.test_store_contract import *  # noqa: F403
from contract.test_store_graph import *  # noqa: F403
from storage.test_store_erasure import *  # noqa: F403

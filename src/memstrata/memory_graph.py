"""The graph part of the facade: ``memory.graph`` (see graph/view.py)."""

from __future__ import annotations

from memstrata.graph.view import GraphView
from memstrata.memory_base import MemoryBase


class GraphMixin(MemoryBase):
    @property
    def graph(self) -> GraphView:
        """Entities and relations of a scope: neighbors, path, subgraph, relation history, export, merge."""
        return GraphView(self.store, self._scope, self._clock)

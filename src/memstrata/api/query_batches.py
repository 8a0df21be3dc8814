"""Fast searches that arrive together embed their queries in one model call, then each runs.

A fast search runs on the event loop (api/routes.py), one after another, so the embedder's own coalescing
(providers/coalescing.py), which batches the queries of threads searching at once, never sees two of them. Here a
search request first waits for the end of the event loop's current round: every search that reached this point in
that round has its query embedded in the same model call (``Memory.embed_queries``), and then each runs and finds its
vector among the recent queries. A query embedded ahead as another text than its search embeds (a misspelt word it
corrects, a relative it names) costs only that search's own embedding.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict

from memstrata.facade.scoping import ScopeArgs
from memstrata.memory import Memory

log = logging.getLogger(__name__)


class QueryBatches:
    def __init__(self) -> None:
        self._waiting: list[tuple[Memory, str, ScopeArgs]] = []
        self._embedded: asyncio.Future[None] | None = None
        self.batches = 0  # model calls made ahead, and the queries they carried (observability, tests)
        self.queries = 0

    async def embedded(self, memory: Memory, query: str, scope: ScopeArgs) -> None:
        """Returns once ``query`` has been embedded with the others of this round of the event loop."""
        if self._embedded is None:
            loop = asyncio.get_running_loop()
            self._embedded = loop.create_future()
            loop.call_soon(self._embed)
        self._waiting.append((memory, query, scope))
        await asyncio.shield(self._embedded)  # a client that leaves cancels its wait, not the others'

    def _embed(self) -> None:
        waiting, embedded = self._waiting, self._embedded
        self._waiting, self._embedded = [], None
        # One call per tenant: views of one tenant resolve scopes alike (every view shares the one embedder).
        by_tenant: dict[str | None, list[tuple[Memory, str, ScopeArgs]]] = defaultdict(list)
        for item in waiting:
            by_tenant[item[0].tenant_id].append(item)
        for items in by_tenant.values():
            try:
                items[0][0].embed_queries([(query, scope) for _, query, scope in items])
            except Exception:  # only an optimisation: each search embeds for itself what is missing
                log.exception("queries of %d searches not embedded ahead", len(items))
                continue
            self.batches += 1
            self.queries += len(items)
        if embedded is not None:
            embedded.set_result(None)

"""The deferred-vector pass: recording a step writes its unit without a vector (no embedding on the hot
path); this pass embeds every unit of a scope still lacking one. It runs when a task finishes and before
every read that compares vectors (recall, check_plan, alternatives, strategies), so those reads never miss a
recorded step, and ``memstrata reindex`` fills the same gaps. A crash between recording and indexing loses
nothing: the next pass finds the units by their missing vectors."""

from __future__ import annotations

from memstrata.process.deps import ProcessDeps
from memstrata.types import Scope


def index_pending(deps: ProcessDeps, scope: Scope) -> int:
    """Embed the scope's process units that lack a vector, a batch per transaction. Returns how many."""
    identity = deps.identity()
    done = 0
    while pending := deps.store.process.unindexed(scope, identity, deps.settings.index_batch):
        deps.store.write(deps.vector_batch(pending))
        done += len(pending)
    return done

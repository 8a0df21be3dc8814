"""Id prefixes: tables show ids 12 characters long, and any unique prefix of at least 4 names the record.

``memory.resolve_id(prefix, **scope)`` is what the CLI calls before every command that takes an id, and
what REST, MCP or a web console can call too. An exact id is returned as it is (one store lookup); a
prefix is matched against the ids visible in the scope (every status: a deleted memory still has a
history), so it can never resolve to another scope's record. Two or more matches are an error that
lists them; none is a NotFoundError.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from memstrata.errors import InvalidInputError, NotFoundError
from memstrata.query import Filters, ListQuery
from memstrata.storage.protocol import Store
from memstrata.types import AdminScope, JobStatus, MemoryStatus, Scope
from memstrata.validation import clean_id

IdKind = Literal["memory", "job", "graph"]
MIN_PREFIX = 4
SHOWN = 12  # how many characters tables show
_PAGE = 10_000
_LISTED = 10  # candidates named in an ambiguity error


def is_shortened(value: str) -> bool:
    """An id cut short, as context() (8 characters) and tables (12) show it: REST and MCP reads take any unique
    prefix of at least 4 characters."""
    return MIN_PREFIX <= len(value) < 32 and _hex(value)


def _hex(value: str) -> bool:
    return all(character in "0123456789abcdef" for character in value)


def pick(prefix: str, candidates: Iterable[str], what: str, where: str) -> str:
    matches = sorted({candidate for candidate in candidates if candidate.startswith(prefix)})
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise NotFoundError(f"no {what} id starts with {prefix!r} {where}; check the id and the scope")
    shown = ", ".join(match[:SHOWN] for match in matches[:_LISTED])
    more = f" and {len(matches) - _LISTED} more" if len(matches) > _LISTED else ""
    raise InvalidInputError(
        f"{prefix!r} matches {len(matches)} {what} ids ({shown}{more}); give more characters of the id"
    )


def checked_prefix(prefix: object, field: str) -> str:
    text = clean_id(prefix, field=field)
    if len(text) < MIN_PREFIX:
        raise InvalidInputError(f"{field} {text!r} is too short; give at least {MIN_PREFIX} characters of the id")
    return text


def memory_id(store: Store, scope: Scope, prefix: object) -> str:
    text = clean_id(prefix)
    if store.get(scope, [text]):
        return text
    if len(text) >= 32 or not _hex(text):  # not a prefix: listing the scope could not find it either
        raise NotFoundError(f"no memory {text} in scope {scope.label()}; check the id and the scope")
    text = checked_prefix(text, "memory_id")
    every_status = Filters(status=tuple(MemoryStatus))
    ids: list[str] = []
    while page := store.list_memories(ListQuery(scope=scope, filters=every_status, limit=_PAGE, offset=len(ids))):
        ids.extend(item.id for item in page)
    return pick(text, ids, "memory", f"in scope {scope.label()}")


def job_id(store: Store, scope: AdminScope | None, tenant_id: str | None, prefix: object) -> str:
    text = checked_prefix(prefix, "job_id")
    jobs = store.list_jobs(scope, list(JobStatus), limit=1_000_000)
    return pick(text, (job.id for job in jobs if job.scope.tenant_id == tenant_id), "job", "in this tenant")


def graph_id(store: Store, scope: Scope, prefix: object) -> str:
    """An entity or relation id (``graph history`` takes either)."""
    text = checked_prefix(prefix, "record id")
    ids = [entity.id for entity in store.graph_entities(scope)]
    ids += [relation.id for relation in store.graph_relations(scope, include_closed=True)]
    return pick(text, ids, "entity or relation", f"in scope {scope.label()}")

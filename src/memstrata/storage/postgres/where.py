"""WHERE clauses for scope and filters. Scope is always part of the query, never a post-filter."""

from __future__ import annotations

from typing import Any

from psycopg.types.json import Jsonb

from memstrata.query import Filters, TimeRange
from memstrata.types import Scope


class Where:
    """Accumulates SQL conditions and their parameters (psycopg ``%s`` placeholders)."""

    def __init__(self) -> None:
        self.clauses: list[str] = []
        self.params: list[Any] = []

    def add(self, clause: str, *params: Any) -> None:
        self.clauses.append(clause)
        self.params.extend(params)

    def sql(self) -> str:
        return " AND ".join(self.clauses) if self.clauses else "TRUE"


def scope_where(scope: Scope, alias: str = "m", where: Where | None = None) -> Where:
    where = where or Where()
    where.add(f"{alias}.tenant_id = %s", scope.tenant_id or "")  # always: tenants never mix
    for column, value in (
        ("user_id", scope.user_id),
        ("agent_id", scope.agent_id),
        ("session_id", scope.session_id),
    ):
        if value is not None:
            where.add(f"{alias}.{column} = %s", value)
    return where


def _time_range(where: Where, column: str, bounds: TimeRange | None) -> None:
    if bounds is None:
        return
    if bounds.gte is not None:
        where.add(f"{column} >= %s", bounds.gte)
    if bounds.lt is not None:
        where.add(f"{column} < %s", bounds.lt)


def memory_where(scope: Scope, filters: Filters, alias: str = "m") -> Where:
    return memory_where_unscoped(filters, alias, scope_where(scope, alias))


def memory_where_unscoped(filters: Filters, alias: str = "m", where: Where | None = None) -> Where:
    """Filter conditions only. Unscoped use is for maintenance scans, never for user-facing reads."""
    where = where or Where()
    if filters.status:
        where.add(f"{alias}.status = ANY(%s)", [status.value for status in filters.status])
    if filters.kind:
        where.add(f"{alias}.kind = ANY(%s)", list(filters.kind))
    if filters.exclude_kind:
        where.add(f"{alias}.kind <> ALL(%s)", list(filters.exclude_kind))
    if filters.key_prefix:
        where.add(f"starts_with({alias}.key, %s)", filters.key_prefix)
    for name, value in filters.metadata.items():
        if value is None:  # like SQLite's json_extract(...) IS NULL: a missing key or a JSON null
            where.add(f"COALESCE({alias}.metadata -> %s, 'null'::jsonb) = 'null'::jsonb", name)
        else:  # containment uses the GIN index on metadata
            where.add(f"{alias}.metadata @> %s", Jsonb({name: value}))
    _time_range(where, f"{alias}.created_at", filters.created_at)
    _time_range(where, f"{alias}.updated_at", filters.updated_at)
    _time_range(where, f"{alias}.event_time", filters.event_time)
    if filters.valid_at is not None:  # valid time: true in the world then, whenever the store learned it
        where.add(f"{alias}.valid_from <= %s", filters.valid_at)
        where.add(f"({alias}.valid_to IS NULL OR {alias}.valid_to > %s)", filters.valid_at)
    if filters.known_at is not None:  # record time: what the store held as current then
        where.add(f"{alias}.created_at <= %s", filters.known_at)
        where.add(f"({alias}.recorded_to IS NULL OR {alias}.recorded_to > %s)", filters.known_at)
    return where

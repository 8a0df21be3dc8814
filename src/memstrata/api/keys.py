"""API keys in a small SQLite file of their own, stored hashed.

A token looks like ``msk_<key id>_<secret>``. Only the SHA-256 of the secret is kept; the secret is
shown once, when the key is created. The id is not secret: it finds the row, and the hash is then
compared in constant time. Keys are looked up on every request rather than cached, so a key revoked
with ``memstrata keys revoke`` stops working at once, even while a server is running.

The keys live apart from the memory store so that copying, exporting or resetting memories never
carries credentials along, and the file can get stricter permissions.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import secrets
import sqlite3
import threading
from datetime import datetime
from functools import partial
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from memstrata.api.principal import Principal
from memstrata.errors import InvalidInputError, NotFoundError
from memstrata.types import Scope, utcnow
from memstrata.validation import guarded

PREFIX = "msk"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    user_ids TEXT,          -- JSON list, NULL = every user of the tenant
    agent_ids TEXT,         -- JSON list, NULL = every agent of the tenant
    secret_sha256 TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
)
"""
# Compared against when the id is unknown, so a miss costs about what a hit costs.
_DUMMY_HASH = hashlib.sha256(b"memstrata-no-such-key").hexdigest()


class ApiKey(BaseModel):
    """A key as listed: everything but the secret."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    tenant_id: str
    user_ids: tuple[str, ...] | None
    agent_ids: tuple[str, ...] | None
    created_at: datetime
    revoked_at: datetime | None = None

    def principal(self) -> Principal:
        return Principal(
            tenant_id=self.tenant_id,
            user_ids=frozenset(self.user_ids) if self.user_ids is not None else None,
            agent_ids=frozenset(self.agent_ids) if self.agent_ids is not None else None,
            key_id=self.id,
        )


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _clean_ids(field: str, ids: list[str] | tuple[str, ...] | None) -> tuple[str, ...] | None:
    """Normalise the way Scope does (strip, no blanks), so a key's ids compare equal to request scopes."""
    if ids is None:
        return None
    if not ids:
        raise InvalidInputError(f"{field} is empty; leave it out to allow every id, or name at least one")
    cleaned: set[str] = set()
    for value in ids:
        scope = guarded(partial(Scope, user_id=value), what=field)
        cleaned.add(str(scope.user_id))
    return tuple(sorted(cleaned))


class KeyStore:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # One connection shared by the server's worker threads, serialised by the lock.
        self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute(_SCHEMA)
        with contextlib.suppress(PermissionError):  # someone else's file: its owner decides its mode
            self.path.chmod(0o600)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def create(
        self,
        tenant_id: str,
        *,
        user_ids: list[str] | tuple[str, ...] | None = None,
        agent_ids: list[str] | tuple[str, ...] | None = None,
        name: str = "",
    ) -> tuple[ApiKey, str]:
        """Create a key; returns it and the token, which is never shown again."""
        if not tenant_id.strip():
            raise InvalidInputError("a key needs a tenant, e.g. --tenant acme")
        tenant = str(guarded(lambda: Scope(user_id="-", tenant_id=tenant_id), what="tenant").tenant_id)
        key = ApiKey(
            id=secrets.token_hex(8),
            name=name,
            tenant_id=tenant,
            user_ids=_clean_ids("user_ids", user_ids),
            agent_ids=_clean_ids("agent_ids", agent_ids),
            created_at=utcnow(),
        )
        secret = secrets.token_urlsafe(32)
        with self._lock:
            self._conn.execute(
                "INSERT INTO api_keys (id, name, tenant_id, user_ids, agent_ids, secret_sha256, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    key.id,
                    key.name,
                    key.tenant_id,
                    None if key.user_ids is None else json.dumps(key.user_ids),
                    None if key.agent_ids is None else json.dumps(key.agent_ids),
                    _hash(secret),
                    key.created_at.isoformat(),
                ),
            )
        return key, f"{PREFIX}_{key.id}_{secret}"

    def list_keys(self, *, include_revoked: bool = False) -> list[ApiKey]:
        sql = f"SELECT {_COLUMNS} FROM api_keys"
        if not include_revoked:
            sql += " WHERE revoked_at IS NULL"
        with self._lock:
            rows = self._conn.execute(sql + " ORDER BY created_at").fetchall()
        return [_row_to_key(row) for row in rows]

    def revoke(self, key_id: str) -> ApiKey:
        with self._lock:
            cursor = self._conn.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (utcnow().isoformat(), key_id)
            )
            row = self._conn.execute(f"SELECT {_COLUMNS} FROM api_keys WHERE id = ?", (key_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no API key {key_id}; `memstrata keys list` shows the ids")
        if cursor.rowcount == 0:
            raise NotFoundError(f"API key {key_id} was already revoked")
        return _row_to_key(row)

    def verify(self, token: str) -> ApiKey | None:
        """The live key this token belongs to, or None. Never raises on malformed input."""
        prefix, _, rest = token.partition("_")
        key_id, _, secret = rest.partition("_")
        if prefix != PREFIX or not key_id or not secret:
            return None
        with self._lock:
            row = self._conn.execute(
                f"SELECT {_COLUMNS}, secret_sha256 FROM api_keys WHERE id = ?", (key_id,)
            ).fetchone()
        stored = row[-1] if row is not None else _DUMMY_HASH
        matches = hmac.compare_digest(_hash(secret), stored)
        if row is None or not matches:
            return None
        key = _row_to_key(row[:-1])
        return key if key.revoked_at is None else None


_COLUMNS = "id, name, tenant_id, user_ids, agent_ids, created_at, revoked_at"


def _row_to_key(row: tuple[object, ...]) -> ApiKey:
    key_id, name, tenant_id, user_ids, agent_ids, created_at, revoked_at = row
    return ApiKey(
        id=str(key_id),
        name=str(name),
        tenant_id=str(tenant_id),
        user_ids=None if user_ids is None else tuple(json.loads(str(user_ids))),
        agent_ids=None if agent_ids is None else tuple(json.loads(str(agent_ids))),
        created_at=datetime.fromisoformat(str(created_at)),
        revoked_at=None if revoked_at is None else datetime.fromisoformat(str(revoked_at)),
    )

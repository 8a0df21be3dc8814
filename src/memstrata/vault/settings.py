"""``[vault]`` settings: where the Markdown vault lives, whose index it feeds, where its rules are.

The lead adds ``vault: VaultSettings`` to :class:`memstrata.config.Settings`; until then
:func:`vault_settings_of` falls back to the defaults (or ``MEMSTRATA_VAULT__*`` once wired).
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memstrata.config import Settings
from memstrata.errors import InvalidInputError
from memstrata.types import Scope

_NAME = re.compile(r"^[a-z0-9][a-z0-9_\-]{0,63}$")


class VaultSettings(BaseModel):
    """One vault: a folder of domains (one folder each) with Markdown notes, indexed into one scope."""

    model_config = ConfigDict(extra="forbid")

    path: str | None = Field(default=None, description="the vault folder; vault calls need it (rules do not)")
    name: str = Field(default="vault", description="kept with every indexed section: tells vaults apart")
    # The scope the index belongs to. A caller sees the vault only if its scope contains this one.
    user_id: str | None = None
    agent_id: str | None = "vault"
    tenant_id: str | None = Field(default=None, description="the tenant whose keys may use this vault")
    rules_dir: str = Field(default="rules", description="folder in the vault: *.md for all, <agent_id>/*.md per agent")
    rules_files: list[str] = Field(
        default_factory=list, description="more rules files (AGENTS.md, CLAUDE.md...), loaded first, in this order"
    )
    watch: bool = Field(default=True, description="`memstrata serve` re-indexes notes edited while it runs")
    watch_debounce_ms: int = Field(default=300, ge=10, le=10_000)
    force_polling: bool = Field(default=False, description="poll instead of OS events (network drives)")
    batch_notes: int = Field(default=64, ge=1, le=10_000, description="notes embedded and written per transaction")
    max_section_chars: int = Field(default=2000, ge=200, le=20_000, description="longer sections are split")
    max_note_bytes: int = Field(default=2_000_000, ge=1024, description="larger files are skipped, with a warning")
    usage_weight: float = Field(default=0.1, ge=0, le=1, description="most a note's usage may lift its score")
    delete_guard: float = Field(
        default=0.5, ge=0, le=1, description="a sync that would drop more than this share of notes asks first"
    )

    @field_validator("name")
    @classmethod
    def _plain_name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError("vault.name must be lowercase letters, digits, '-' or '_' (at most 64)")
        return value

    def owner(self) -> Scope:
        """The scope every indexed section is stored under."""
        try:
            return Scope(user_id=self.user_id, agent_id=self.agent_id, tenant_id=self.tenant_id)
        except ValueError as exc:
            raise InvalidInputError(f"vault.user_id / vault.agent_id: {exc}") from None

    def root(self) -> Path:
        if self.path is None:
            raise InvalidInputError(
                "no vault is configured: set vault.path in memstrata.toml (or MEMSTRATA_VAULT__PATH), "
                "or pass --vault PATH; `memstrata vault init --example` creates one"
            )
        return Path(self.path).expanduser().resolve()


def vault_settings_of(settings: Settings) -> VaultSettings:
    """The vault section of the settings, or the defaults while config.Settings has none."""
    found = getattr(settings, "vault", None)
    return found if isinstance(found, VaultSettings) else VaultSettings()

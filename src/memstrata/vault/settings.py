"""``[vault]`` settings live in :mod:`memstrata.config` with every other section; this module keeps the
vault package's names for them."""

from __future__ import annotations

from memstrata.config import Settings, VaultSettings

__all__ = ["VaultSettings", "vault_settings_of"]


def vault_settings_of(settings: Settings) -> VaultSettings:
    """The vault section of the settings."""
    return settings.vault

"""The Markdown vault and the rules layer: memory a person can read and edit (seeds 000 and 002)."""

from memstrata.vault.errors import ReadOnlyRulesError, StaleVersionError
from memstrata.vault.models import (
    DomainContext,
    DomainSummary,
    ForgetCandidate,
    InitReport,
    NoteRef,
    NoteSummary,
    NoteView,
    RuleFile,
    RulesBlock,
    SyncReport,
    VaultHit,
)
from memstrata.vault.plan import Move, Plan, plan
from memstrata.vault.settings import VaultSettings
from memstrata.vault.vault import Vault

__all__ = [
    "DomainContext",
    "DomainSummary",
    "ForgetCandidate",
    "InitReport",
    "Move",
    "NoteRef",
    "NoteSummary",
    "NoteView",
    "Plan",
    "ReadOnlyRulesError",
    "RuleFile",
    "RulesBlock",
    "StaleVersionError",
    "SyncReport",
    "Vault",
    "VaultHit",
    "VaultSettings",
    "plan",
]

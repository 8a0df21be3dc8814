"""Errors of the vault, as subclasses of the project's tree so every interface maps them already."""

from __future__ import annotations

from memstrata.errors import ConflictError, InvalidInputError


class ReadOnlyRulesError(InvalidInputError):
    """A write aimed at a rules file: rules are people's decisions, kept in git, never edited by agents."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"{path} is a rules file, and rules are read-only to memstrata: a person edits them (and versions them "
            "with git). Write notes in a domain folder instead"
        )
        self.path = path


class StaleVersionError(ConflictError):
    """A write based on a version of the note that is no longer on disk: someone changed it meanwhile."""

    def __init__(self, path: str, expected: str, current: str) -> None:
        super().__init__(
            f"{path} changed since version {expected} was read (it is now {current}); nothing was written. "
            "Read the note again and re-apply your change to what is there now"
        )
        self.path = path
        self.expected = expected
        self.current = current

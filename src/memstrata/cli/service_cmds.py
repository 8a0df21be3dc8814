"""CLI commands that run memstrata as a service (registered on the main app when imported)."""

from __future__ import annotations

"""CLI commands about storage backends (registered on the main app when imported)."""

from __future__ import annotations

"""Providers: thin adapters to embedding models (and, later, LLMs) behind small protocols."""

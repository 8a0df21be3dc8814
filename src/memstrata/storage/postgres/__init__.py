"""PostgreSQL + pgvector backend (``pip install 'memstrata[postgres]'``), selected by a postgresql:// URL."""

"""Build providers from settings. The only place that maps configuration rows to classes."""

from __future__ import annotations

from memstrata.config import EmbedderSettings
from memstrata.errors import InvalidInputError
from memstrata.providers.protocol import Embedder
from memstrata.providers.use_embedder import UniversalSentenceEncoder


def build_embedder(settings: EmbedderSettings) -> Embedder:
    if settings.provider == "use":
        return UniversalSentenceEncoder(threads=settings.threads)
    if not (settings.base_url and settings.model and settings.dims):
        raise InvalidInputError(
            "embedder.provider=openai needs embedder.base_url, embedder.model and embedder.dims "
            "(e.g. MEMSTRATA_EMBEDDER__BASE_URL=http://localhost:11434/v1 MEMSTRATA_EMBEDDER__MODEL=bge-m3 "
            "MEMSTRATA_EMBEDDER__DIMS=1024)"
        )
    from memstrata.providers.openai_compat import OpenAICompatibleEmbedder  # httpx: ~8 MB, only where configured

    return OpenAICompatibleEmbedder(
        base_url=settings.base_url, model=settings.model, dims=settings.dims, api_key=settings.api_key
    )


_blas_cap: int | None = None


def cap_blas_threads(threads: int) -> None:
    """Cap the BLAS pools of this process (numpy's OpenBLAS / MKL) at ``threads``; 0 leaves them alone.

    Embedding and vector maths are many small matrix products, called from many request threads at once: a BLAS
    pool per call sized to every core oversubscribes the machine (search at 10k: p50 12.0 ms as shipped vs 2.9 ms
    with one thread on a busy 2-core machine, issue 20). The first Memory of a process applies its setting; the
    pools are process-wide, so later different values are ignored rather than fought over.
    """
    global _blas_cap
    if threads <= 0 or _blas_cap is not None:
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # a declared dependency; without it numpy keeps its default pool size
        return
    threadpool_limits(limits=threads, user_api="blas")  # not used as a context: the cap stays for the process
    _blas_cap = threads

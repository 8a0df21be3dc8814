"""A URL to a local file the pipeline can ingest: fetched with httpx under a size and a time limit.

The body is streamed to a file in a temporary folder, counted as it comes, and cut off past the limit
(a server that lies about Content-Length, or sends none, is still stopped). The file is named after the
URL's last path segment with an extension from the URL or, failing that, the Content-Type, so the
format checks see a real document type. The source recorded in provenance is the URL itself.
"""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import urlparse

import httpx

from memstrata.errors import InvalidInputError
from memstrata.knowledge.convert import format_of
from memstrata.knowledge.limits import MB, SourceRejected
from memstrata.patterns import lazy_pattern

_BY_TYPE = {
    "text/html": ".html", "application/xhtml+xml": ".html", "text/plain": ".txt", "text/markdown": ".md",
    "text/csv": ".csv", "application/json": ".json", "application/pdf": ".pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ".docx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": ".pptx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": ".xlsx",
}  # fmt: skip
_UNSAFE = lazy_pattern(r"[^\w.\-]+")


def is_url(target: object) -> bool:
    return isinstance(target, str) and target.lower().startswith(("http://", "https://"))


def file_name(url: str, content_type: str) -> str:
    """A safe local name for a fetched document, with the extension its format check needs."""
    last = urlparse(url).path.rstrip("/").rsplit("/", 1)[-1]
    name = _UNSAFE.sub("_", last).strip("._")[:100] or "index"
    if format_of(Path(name)) is None:
        name += _BY_TYPE.get(content_type.split(";")[0].strip().lower(), ".html")
    return name


def fetch(url: str, folder: Path, *, max_mb: float, timeout_s: float, client: httpx.Client | None = None) -> Path:
    """Download ``url`` into ``folder``; SourceRejected (with what to do) when it is too big, too slow or
    not there."""
    if not is_url(url):
        raise InvalidInputError(f"{url!r} is not an http(s) URL")
    limit = int(max_mb * MB)
    deadline = time.monotonic() + timeout_s
    owned = client is None
    http = client or httpx.Client(timeout=timeout_s, follow_redirects=True)
    try:
        with http.stream("GET", url) as response:
            if response.status_code >= 400:
                raise SourceRejected(f"{url} answered HTTP {response.status_code}; check the address")
            declared = response.headers.get("content-length")
            if declared and declared.isdigit() and int(declared) > limit:
                raise SourceRejected(f"{url} is {int(declared) / MB:.1f} MB, over ingest.max_url_mb={max_mb:g}")
            target = folder / file_name(str(response.url), response.headers.get("content-type", ""))
            received = 0
            with target.open("wb") as out:
                for block in response.iter_bytes():
                    received += len(block)
                    if received > limit:
                        raise SourceRejected(f"{url} sent over {max_mb:g} MB (ingest.max_url_mb); nothing was kept")
                    if time.monotonic() > deadline:
                        raise SourceRejected(f"{url} took over {timeout_s:g} s (ingest.url_timeout_s)")
                    out.write(block)
            return target
    except httpx.HTTPError as exc:
        raise SourceRejected(f"cannot fetch {url}: {type(exc).__name__}: {exc}") from None
    finally:
        if owned:
            http.close()

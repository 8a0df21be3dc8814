"""Images and audio: described or transcribed only when a model for it is configured, else skipped.

MarkItDown itself only reads image metadata unless it is handed an OpenAI client, and transcribes
audio through an online speech service; neither works offline. memstrata asks a configured
describer instead: an OpenAI-compatible vision chat model for images (any server that accepts
``image_url`` content parts: OpenAI, Qwen-VL on DashScope or vLLM, Ollama's llava), and any object
with ``transcribe()`` for audio (e.g. a whisper.cpp binding). Without one, the file is skipped with
a note that says how to enable it, never silently dropped.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from memstrata.errors import ProviderError

_MIME = {"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}

DESCRIBE_PROMPT = (
    "Describe this image for a search index, in the language of any text it contains (Chinese stays "
    "Chinese). Transcribe all visible text exactly, then describe charts, tables and scenes with their "
    "numbers and labels. Plain text only."
)


class ImageDescriber(Protocol):
    def describe_image(self, data: bytes, mime: str, name: str) -> str: ...


class Transcriber(Protocol):
    def transcribe(self, data: bytes, fmt: str, name: str) -> str: ...


@dataclass(frozen=True)
class MediaModels:
    images: ImageDescriber | None = None
    audio: Transcriber | None = None


class OpenAIImageDescriber:
    """Describes an image through ``/chat/completions`` with an ``image_url`` data URI."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout_s: float = 120.0) -> None:
        self.model = model
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout_s = timeout_s

    def describe_image(self, data: bytes, mime: str, name: str) -> str:
        uri = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
        body = {
            "model": self.model,
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": DESCRIBE_PROMPT},
                        {"type": "image_url", "image_url": {"url": uri}},
                    ],
                }
            ],
            "temperature": 0.0,
        }
        import httpx  # here, not at import: ~70 ms of every command's start-up

        try:
            response = httpx.post(self._url, json=body, headers=self._headers, timeout=self._timeout_s)
        except httpx.HTTPError as exc:
            raise ProviderError(f"the image model at {self._url} could not be reached: {exc}") from exc
        if response.status_code != 200:
            raise ProviderError(
                f"the image model at {self._url} answered {response.status_code}: {response.text[:300]}"
            )
        try:
            text = str(response.json()["choices"][0]["message"]["content"]).strip()
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ProviderError(f"the image model at {self._url} sent no chat completion ({exc})") from exc
        if not text:
            raise ProviderError(f"the image model described {name} with empty text")
        return text


class MediaSkipped(Exception):
    """No model is configured for this kind of file; the message says how to configure one."""


def media_markdown(path: Path, fmt: str, models: MediaModels) -> str:
    """Markdown for an image or audio file: its name as the heading, then the description or transcript."""
    data = path.read_bytes()
    if fmt in _MIME:
        if models.images is None:
            raise MediaSkipped(
                f"{path.name}: image not ingested, no image model configured "
                "(pass an ImageDescriber, e.g. OpenAIImageDescriber for a vision model)"
            )
        text = models.images.describe_image(data, _MIME[fmt], path.name)
    else:
        if models.audio is None:
            raise MediaSkipped(f"{path.name}: audio not ingested, no transcriber configured (pass a Transcriber)")
        text = models.audio.transcribe(data, fmt, path.name)
    return f"# {path.name}\n\n{text.strip()}\n"

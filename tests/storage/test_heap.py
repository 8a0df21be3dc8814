"""Freed heap memory goes back to the system after index builds (memstrata.storage.heap)."""

from __future__ import annotations

import platform

import pytest

from memstrata.storage import heap


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_glibc_returns_a_freed_heap_to_the_system() -> None:
    assert heap._malloc_trim() is not None
    blocks = [bytearray(64 * 1024) for _ in range(2000)]  # ~128 MB from the heap, not mmap
    del blocks[:-1]  # the last block pins the heap's top: only trimming can return the rest
    before = _rss_anon_kb()
    heap.release_free_heap()
    assert _rss_anon_kb() < before - 50_000


def _rss_anon_kb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    pytest.skip("no /proc/self/status")

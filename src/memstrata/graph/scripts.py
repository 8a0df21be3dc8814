"""One entity named in two scripts: '杭州' and 'Hangzhou', '林晓' and 'Lin Xiao', '微软' and 'Microsoft'.

Users mix Chinese and English, so the same place or person comes in both; without this the graph holds two
nodes and a question in one language misses what was said in the other. Two tests, both strict:

- **Transliteration**: the Chinese name read in pinyin (every reading of a polyphonic character, ü as v or u)
  is the Latin name, in either word order ('Wei Zhang' is 张伟). This holds for any type.
- **Translation**: for places and organisations only, the names' embeddings are at least ``TRANSLATION_FLOOR``
  similar. Measured with the bundled USE model: translations 0.76-0.95 (Microsoft/微软 0.83, Paris/巴黎 0.90,
  New York/纽约 0.95), other places and organisations at most 0.65 (West Lake/东湖). People and concepts are
  left out: 'Zhang Wei' is 0.89 similar to 张伟明 (another person), 'frontend development' 0.78 to 后端开发.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from functools import lru_cache

from memstrata.han import HAN_RANGES
from memstrata.patterns import lazy_pattern

TRANSLATION_FLOOR = 0.78
TRANSLATED_TYPES = frozenset({"location", "organization"})
_HAN_NAME = lazy_pattern(rf"^[{HAN_RANGES}]{{1,8}}$")
_LATIN_WORDS = lazy_pattern(r"^[a-z]+(?:[\s\-'.]+[a-z]+)*$")
_READINGS = 64  # spellings tried at most per Chinese name (polyphonic characters multiply them)


def _folded(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold().strip()


def split_scripts(first: str, second: str) -> tuple[str, str] | None:
    """(the Chinese name, the Latin one) when one name is all Han characters and the other all Latin words."""
    a, b = _folded(first), _folded(second)
    if _HAN_NAME.match(a) and _LATIN_WORDS.match(b):
        return a, b
    if _HAN_NAME.match(b) and _LATIN_WORDS.match(a):
        return b, a
    return None


@lru_cache(maxsize=4096)
def _spellings(han: str) -> frozenset[str]:
    from pypinyin import Style, pinyin  # 0.4 s to import its dictionary: only when names cross scripts

    readings = pinyin(han, style=Style.NORMAL, heteronym=True, errors="ignore")
    if len(readings) != len(han):
        return frozenset()
    spelled = set()
    for choice in itertools.islice(itertools.product(*readings), _READINGS):
        joined = "".join(choice)
        spelled.update({joined, joined.replace("v", "u")})
    return frozenset(spelled)


def transliterates(first: str, second: str) -> bool:
    """True when one name is the other's pinyin (see the module docstring)."""
    pair = split_scripts(first, second)
    if pair is None:
        return False
    han, latin = pair
    words = re.split(r"[\s\-'.]+", latin)
    forms = {"".join(words), "".join(reversed(words))}
    return not forms.isdisjoint(_spellings(han))

"""What gets indexed for a memory: the text the embedder and keyword index see, and its hash.

Kept apart from both the store and the facade because both need exactly the same answer:
the keyword index (built by the store) and the vectors (built by the facade) must describe the
same text, or hybrid fusion compares different documents.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from memstrata.types import MemoryItem

_SPACES = re.compile(r"\s+")


def index_text(item: MemoryItem) -> str:
    """Episodes are indexed with their speaker, so "what did Caroline say about X" can match, and
    with the turns before them (``metadata["preceding_turns"]``, set on the write path), so an answer is
    found by the words of the question it answered."""
    own = own_index_text(item)
    context = indexed_context(item)
    return f"{own}\n{context}" if context else own


_KEY_SEPARATORS = re.compile(r"[:_.\-]+")


# The words people ask a personal key with, where they are not the key's own ("Where do I live?" for home:city,
# "我在哪上班？" for work:employer): indexed beside the key's words so a plain question finds the value.
ASKED_WITH = {
    "home": "live lives 住 住在 家",
    "address": "live lives 住 住址 地址",
    "city": "城市",
    "work": "job company employer 工作 上班 公司",
    "employer": "work job company 工作 上班 公司",
    "company": "work job employer 工作 上班 公司",
    "job": "work occupation 工作 职业",
    "phone": "number mobile 电话 手机 号码",
    "email": "mail 邮箱 邮件",
    "birthday": "born birth 生日 出生",
    "name": "called 名字 叫",
}


def key_words(key: str, owner: str | None = None) -> str:
    """A namespaced key as words: "lin:contact:phone_number" -> "lin contact phone number", and the words a question
    asks it with ("... number mobile 电话 手机 号码"). ``owner``: the user id of the key's scope, left out of the words
    (a key namespaced by the user's name, "lin:home:city", is not about the word "lin": searches leave the user's
    own name out of the question too, see read/retrieve.topic_text)."""
    every = _KEY_SEPARATORS.sub(" ", key).split()
    words = [word for word in every if owner is None or word.lower() != owner.lower()] or every
    asked = [ASKED_WITH[word.lower()] for word in words if word.lower() in ASKED_WITH]
    return " ".join(dict.fromkeys(" ".join([*words, *asked]).split()))


def own_index_text(item: MemoryItem) -> str:
    """The memory's own part of :func:`index_text`: an episode with its speaker, without earlier turns; a key's
    value with the key's words ("lin home city: 上海"), since the value alone ("上海", "139-2222-3333") says
    nothing of what it is and a natural question ("Where does Lin live?") found no key fact at all."""
    if item.key:
        return f"{key_words(item.key, item.scope.user_id)}: {item.text}"
    if item.kind != "episode":
        return item.text
    speaker = item.metadata.get("speaker")
    return f"{speaker}: {item.text}" if isinstance(speaker, str) and speaker else item.text


def indexed_context(item: MemoryItem) -> str | None:
    """The earlier turns an episode is indexed with, if any."""
    context = item.metadata.get("preceding_turns") if item.kind == "episode" else None
    return context if isinstance(context, str) and context else None


_INVISIBLE = re.compile(r"[\u200b-\u200d\u2060\ufeff]")  # zero-width spaces and joiners, word joiner, BOM


def normalised(text: str) -> str:
    """Case, width, spacing and invisible characters folded (a zero-width space pasted along made a duplicate)."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", _INVISIBLE.sub("", text))).strip().lower()


def content_hash(text: str) -> str:
    """Hash of the normalised text: equal for exact duplicates up to case, width and spacing."""
    return hashlib.sha256(normalised(text).encode("utf-8")).hexdigest()


def text_hash(text: str, tenant_id: str | None = None) -> str:
    """Hash of the exact text, the embedding cache key. A named tenant's texts hash with its id, so the cache
    never answers one tenant with a vector another stored (nor tells, by a hit or its speed, that another
    tenant holds a text); the default tenant's hash is the plain one."""
    salt = f"tenant\0{tenant_id}\0" if tenant_id else ""
    return hashlib.sha256((salt + text).encode("utf-8")).hexdigest()

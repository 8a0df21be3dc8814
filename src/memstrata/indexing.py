"""What gets indexed for a memory: the text the embedder and keyword index see, and its hash.

Kept apart from both the store and the facade because both need exactly the same answer:
the keyword index (built by the store) and the vectors (built by the facade) must describe the
same text, or hybrid fusion compares different documents.
"""

from __future__ import annotations

import hashlib
import unicodedata
from functools import lru_cache

from memstrata.answers import answer_words, planned_change_answers
from memstrata.categories import category_words
from memstrata.han import simplified
from memstrata.lexical import keyword_tokens
from memstrata.patterns import lazy_pattern
from memstrata.same_names import relatives_in_other_script
from memstrata.text_cache import text_cache
from memstrata.types import MemoryItem

_SPACES = lazy_pattern(r"\s+")


def as_simplified(item: MemoryItem) -> MemoryItem:
    """The memory as words are matched: Traditional characters read as Simplified (han.simplified). Only the keyword
    index and ranking's word rules read this; the stored, shown and embedded text stays as written."""
    text = simplified(item.text)
    return item if text == item.text else item.model_copy(update={"text": text})


def index_text(item: MemoryItem) -> str:
    """Episodes are indexed with their speaker, so "what did Caroline say about X" can match, and
    with the turns before them (``metadata["preceding_turns"]``, set on the write path), so an answer is
    found by the words of the question it answered."""
    own = own_index_text(item)
    context = indexed_context(item)
    return f"{own}\n{context}" if context else own


def keyword_text(item: MemoryItem) -> str:
    """What the keyword index holds of a memory: :func:`index_text`, the words of the categories it names
    (:func:`category_text`) and, for the user's own plan of change, the words of what it will answer once done
    (:func:`planned_change_answers`), so that "我现在住哪？" finds "我下个月要搬到上海了" at all. Ranking counts a
    plan's words only once its time has come (read/due_plans.py); the embedded text stays :func:`index_text`."""
    item = as_simplified(item)
    planned = planned_change_answers(item.text) if states_for_the_user(item) else ""
    extra = " ".join(words for words in (category_text(item), planned) if words)
    text = index_text(item)
    return f"{text}\n{extra}" if extra else text


_KEY_SEPARATORS = lazy_pattern(r"[:_.\-]+")


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


def category_text(item: MemoryItem) -> str:
    """The words of the categories the user's own statement names an instance of
    (:func:`memstrata.categories.category_words`: "Just adopted a beagle puppy" -> "pet pets 宠物"), less those it says
    already, or "". Keyword search and ranking read them; the embedded text leaves them out: the same words on two
    memories ("I have a dog", "I have a cat") would bring their vectors together, and near-duplicates are found by
    their vectors."""
    if not states_for_the_user(item):
        return ""
    words = unsaid_category_words(item.text)
    if item.kind == "episode":
        return words
    # A fact (the model's or the user's own) also names a partner in the other script: the model writes the facts of
    # an English turn in English, and "我男朋友是做什么的？" found "User's boyfriend is a firefighter" 5th, below the
    # breakup it no longer answers (a user trial). Raw turns do not gain them, nor other relatives: added to every
    # text naming a relative they cost MADial en 0.766 -> 0.752 (same_names.RELATIONS), and "我妈妈叫王芳" with
    # "mom mother" came above "My mom's name is Helen" for "What is my mother's name?".
    said = set(words.split())
    across = [word for word in relatives_in_other_script(item.text, partners_only=True).split() if word not in said]
    return " ".join(filter(None, [words, *across]))


@text_cache  # primed from the stored row (stored_words.py)
def unsaid_category_words(text: str) -> str:
    words = category_words(text)
    if not words:
        return ""
    # a word among the statement's own keywords is not said twice; one glued into a longer word is ("用户车是特斯拉":
    # jieba reads "车是", so "我开什么车？" matched no word of it)
    said = set(keyword_tokens(text))
    return " ".join(word for word in words.split() if word not in said)


def with_answer_words(text: str) -> str:
    """A statement followed by the words of the questions it answers (:func:`answer_words`), if any."""
    answers = answer_words(text)
    return f"{text}\n{answers}" if answers else text


def states_for_the_user(item: MemoryItem) -> bool:
    """Whether the memory is the user's own word (their turn, or a fact): a reply does not state the user's changes
    ("新工作加油！" is the assistant cheering, not the user's new job)."""
    return item.kind != "episode" or item.metadata.get("role", "user") == "user"


def statement_text(item: MemoryItem) -> str:
    """The memory's text, followed by the words of the questions it answers (:func:`answer_words`) when it is the
    user's own word (a reply repeating "你住在北京朝阳区" answers nothing of its own)."""
    return with_answer_words(item.text) if states_for_the_user(item) else item.text


def key_words(key: str, owner: str | None = None) -> str:
    """A namespaced key as words: "lin:contact:phone_number" -> "lin contact phone number", and the words a question
    asks it with ("... number mobile 电话 手机 号码"). ``owner``: the user id of the key's scope, left out of the words
    (a key namespaced by the user's name, "lin:home:city", is not about the word "lin": searches leave the user's
    own name out of the question too, see read/retrieve.topic_text)."""
    every = _KEY_SEPARATORS.sub(" ", key).split()
    words = [word for word in every if owner is None or word.lower() != owner.lower()] or every
    asked = [ASKED_WITH[part] for part in asked_parts(key)]
    return " ".join(dict.fromkeys(" ".join([*words, *asked]).split()))


@lru_cache(maxsize=65_536)
def asked_parts(key: str) -> tuple[str, ...]:
    """The words of ``key`` a question may ask with :data:`ASKED_WITH`'s words: its entity's (the last part's), and
    the part's before it when the entity has one too. "lin:home:city" is where Lin lives, "contact:phone_number" a
    phone, but "home:wifi:password" is no home: indexed with "live 住", it answered "Where do I live?"."""
    parts = [_KEY_SEPARATORS.sub(" ", part).split() for part in key.lower().split(":")]
    entity = [word for word in parts[-1] if word in ASKED_WITH]
    before = [word for word in parts[-2] if word in ASKED_WITH] if entity and len(parts) > 1 else []
    return (*before, *entity)


def own_index_text(item: MemoryItem) -> str:
    """The memory's own part of :func:`index_text`: an episode with its speaker, without earlier turns; a key's
    value with the key's words ("lin home city: 上海"), since the value alone ("上海", "139-2222-3333") says
    nothing of what it is and a natural question ("Where does Lin live?") found no key fact at all. A statement of
    change, or of where someone lives or works, is followed by the words of the questions it answers
    (:func:`answer_words`)."""
    if item.key:
        return f"{key_words(item.key, item.scope.user_id)}: {item.text}"
    text = statement_text(item)
    if item.kind != "episode":
        return text
    speaker = item.metadata.get("speaker")
    return f"{speaker}: {text}" if isinstance(speaker, str) and speaker else text


def indexed_context(item: MemoryItem) -> str | None:
    """The earlier turns an episode is indexed with, if any."""
    context = item.metadata.get("preceding_turns") if item.kind == "episode" else None
    return context if isinstance(context, str) and context else None


_ASKS = lazy_pattern(r"[?？]|[吗呢][。！!～~…\s]*$")


def replies(item: MemoryItem) -> bool:
    """Whether an episode follows a question another speaker asked in the turn just before it (its last context
    line, ``name: text``): then it most likely answers it, in words of its own ("Three times a week")."""
    context = indexed_context(item)
    if context is None:
        return False
    speaker, _, asked = context.rsplit("\n", 1)[-1].partition(": ")
    own = item.metadata.get("speaker") or item.metadata.get("role")
    return bool(_ASKS.search(asked)) and (not own or speaker != own)


_INVISIBLE = lazy_pattern(r"[\u200b-\u200d\u2060\ufeff]")  # zero-width spaces and joiners, word joiner, BOM


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

"""Facts that affirm what their turn denies.

The bundled 1.5B model, given "其实我不对花生过敏，是对虾过敏", wrote "用户对花生过敏，不对虾过敏": the correction
turned around and stored with confidence 0.9. A word the turn says only right after a negation ("不对花生过敏",
"not allergic to peanuts", "never been to Japan") and the fact says in a clause with no negation at all is read as
a denial the model dropped: extraction asks once more, and a fact that still drops it waits for review as pending.

Kept narrow on purpose, since a false alarm costs a model call and can hold back a true fact:
- the turn's negation must come shortly before the word, in the same clause ("没想到我喜欢上了跑步" denies nothing
  about running), and not be a word that only looks like one (不错, 没关系, 是不是, "not only");
- the fact's clause counts as affirming only without any negation, ending, past, hedge or plan word ("User used to
  eat meat", "用户可能对花生过敏", "用户明年想去日本" say no more than the turn did);
- a fact's clause that says every word of an affirmed clause of the turn may take up the denied word elliptically
  ("我以前不喜欢吃辣，现在很喜欢" -> "用户现在很喜欢吃辣"; "I don't speak Japanese yet but I'm learning it").
A fact denying what the turn affirms is how a move or an ending is paraphrased ("I moved to Denver from Boston" ->
"User no longer lives in Boston"), so it is checked only against what the turn says holds *now*
(:func:`denied_now`): given "I'm not allergic to penicillin anymore. 我现在对头孢过敏", the same model wrote
"用户实际上不再对头孢过敏", the new allergy stored as its opposite.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memstrata.han import HAN_CHAR
from memstrata.modality import HEDGE, PLAN
from memstrata.patterns import lazy_pattern
from memstrata.read.evidence import memory_terms

# Negation in the turn. Excluded: words in which 不 / 没 / 未 / 别 mean something else (不错 "good", 不过 "but",
# 差不多 "about", 没想到 "unexpectedly", 未来 "future", 别人 "others") and "not only".
_DENIAL = lazy_pattern(
    r"(?<![差得])不(?!错|少|过|久|断|同|仅|管|然|如|光|但|论|得不|一定|知道)|没(?!想到|准|事|关系)|未(?!来)|别(?!人|的)"
    r"|并非|无法|\b(?:not(?! only)|never|no|none|nobody|nothing|neither|nor|without|cannot)\b|n['’]t\b",
    re.IGNORECASE,
)
# A fact's clause with any of these says no more than "not", "no longer", "used to" or "maybe".
_NOT_AFFIRMED = lazy_pattern(
    rf"{_DENIAL.pattern}|戒|以前|曾经|原来|之前|离开|不再|{HEDGE}|{PLAN}"
    r"|\b(?:quit|quits|stopped|stops|gave up|given up|used to|formerly|former|previously|anymore|any more|ex)\b",
    re.IGNORECASE,
)
# A fact's clause that says something no longer holds, or not at all.
_DENYING = lazy_pattern(
    rf"{_DENIAL.pattern}|不再|戒|\b(?:no longer|anymore|any more|quit|quits|stopped|gave up|given up)\b", re.IGNORECASE
)
# A turn's clause that says what holds now.
_NOW = lazy_pattern(
    r"现在|目前|如今|眼下|\b(?:now|currently|these days|nowadays|at the moment|at present)\b", re.IGNORECASE
)
_A_NOT_A = lazy_pattern(r"(.)[不没]\1")  # 是不是, 有没有: a question, not a negation
_CLAUSE = lazy_pattern(r"[，。！？；：,.!?;:\n]|\b(?:but|and|while|whereas)\b|但是?|可是|而是|而且|并且", re.IGNORECASE)
_SCOPE_CHARS = 10  # a Chinese negation reaches this far into its clause
_SCOPE_WORDS = 6  # an English one this many words
_ENGLISH_SCOPE = lazy_pattern(rf"\s*(?:\S+\s*){{0,{_SCOPE_WORDS}}}")
_FRAMING = frozenset({"user", "用户"})  # the words extraction uses for the speaker


def _clauses(text: str) -> Iterator[str]:
    for clause in _CLAUSE.split(_A_NOT_A.sub(r"\1", text)):
        if clause.strip():
            yield clause


def _scope(after: str) -> str:
    """What a negation reaches: the next few words of its clause."""
    if HAN_CHAR.match(after.lstrip()):
        return after[: _SCOPE_CHARS + len(after) - len(after.lstrip())]
    return found.group() if (found := _ENGLISH_SCOPE.match(after)) else after


class _Said:
    """Where a word occurs in a turn. Chinese words are looked up as substrings: the segmenter cuts a clause
    and the fact's rewording of it differently ("没有养狗" holds 有养 / 狗, "用户养狗" holds 养狗)."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.terms = frozenset().union(*map(memory_terms, texts)) if texts else frozenset()

    def __contains__(self, term: object) -> bool:
        if isinstance(term, str) and HAN_CHAR.search(term):
            return any(term in text for text in self.texts)
        return term in self.terms


def _read(source: str) -> tuple[_Said, _Said, list[frozenset[str]]]:
    """The turn's words said right after a negation; those said outside a negation's reach; and the words of each
    clause without a negation."""
    denied: list[str] = []
    elsewhere: list[str] = []
    plain_clauses: list[frozenset[str]] = []
    for clause in _clauses(source):
        reached_to = 0
        for cue in _DENIAL.finditer(clause):
            if cue.start() < reached_to:
                continue
            elsewhere.append(clause[reached_to : cue.start()])
            scope = _scope(clause[cue.end() :])
            denied.append(scope)
            reached_to = cue.end() + len(scope)
        if reached_to == 0:
            plain_clauses.append(memory_terms(clause))
        elsewhere.append(clause[reached_to:])
    return _Said(denied), _Said(elsewhere), plain_clauses


def dropped_denials(fact: str, source: str) -> list[str]:
    """Words of ``fact`` affirmed in a clause without negation that its ``source`` turn says only as denied:
    花生 in "用户对花生过敏" of "其实我不对花生过敏，是对虾过敏"."""
    if not _DENIAL.search(source):
        return []
    denied, elsewhere, plain_clauses = _read(source)
    found: set[str] = set()
    for clause in _clauses(fact):
        if _NOT_AFFIRMED.search(clause):
            continue
        said_here = _Said([clause])
        if any(_restates(said_here, plain) for plain in plain_clauses):
            continue  # the turn's own affirmed clause, said in full: "现在很喜欢" -> "用户现在很喜欢吃辣"
        found |= {term for term in said_here.terms - _FRAMING if term in denied and term not in elsewhere}
    return sorted(found)


def denied_now(fact: str, source: str) -> list[str]:
    """Words a denying clause of ``fact`` says that its ``source`` turn says only where it affirms what holds now:
    头孢 in "用户实际上不再对头孢过敏" of "I'm not allergic to penicillin anymore. 我现在对头孢过敏". A word the turn
    also says elsewhere is not counted ("我以前对花生过敏，现在对虾过敏" -> "用户不再对花生过敏": 过敏 is said of
    the past too), nor is anything when the turn says nothing of now."""
    if not _NOW.search(source):
        return []
    now: list[str] = []
    other: list[str] = []
    for clause in _clauses(source):
        (now if _NOW.search(clause) and not _DENIAL.search(clause) else other).append(clause)
    if not now:
        return []
    affirmed, elsewhere = _Said(now), _Said(other)
    found: set[str] = set()
    for clause in _clauses(fact):
        if not _DENYING.search(clause):
            continue
        said = {term for term in _Said([clause]).terms - _FRAMING if term in affirmed or term in elsewhere}
        # What the clause denies is what now holds only if every word of it the turn says is said of now, and at
        # least two ("User no longer works at Google" shares only "work" with "I now work at Stripe").
        if len(said) >= 2 and not any(term in elsewhere for term in said):
            found |= said
    return sorted(found)


def _restates(clause: _Said, plain: frozenset[str]) -> bool:
    """Whether a fact's clause says every word of an affirmed clause of the turn, which may take up a denied word
    elliptically ("以前不喜欢吃辣，现在很喜欢", "I don't speak Japanese yet but I'm learning it")."""
    return bool(plain) and all(term in clause for term in plain)

"""Among hits that answer a question for the same reasons, the later statement first; and what ended, corrected or
called off a statement before the statement.

A user who said "my favourite food is sushi" in 2023 and "my favourite food is ramen" in 2024 means ramen now.
Both match the question on the same words, so their relevance is a near tie decided by noise, and lifecycle
decay cannot separate them when both lie long in the past (it is about 0 for each, most of all for imported
history). So a hit that matches the query on exactly the words a hit above it matches, was said later, and
scores within ``margin`` of it, moves above it (and takes its score, so scores still fall down the list).

Further:
- the same person's statement of change answering for the same reasons moves up from anywhere in the window
  ("搬到深圳南山区了" above "我住在北京朝阳区", which says "住" itself);
- a later statement that ends or corrects one it shares a subject with moves up from within half its score
  ("我已经戒掉咖啡了", "Actually … green, not blue"), and one calling off a plan from anywhere ("Japan is off");
- from anywhere too: a maybe settled by the same person's later plain statement ("might cook four nights a week",
  then "I can cook Thursday to Sunday now"), and an ending of the thing an earlier statement names by the same name
  ("Stopped taking melatonin");
- :func:`with_what_replaced_them` looks below the relevance cutoff for corrections of the first hits, and for changes
  that speak to all the question asks of what they replace.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import tzinfo

from memstrata.answers import change_answers, unquoted
from memstrata.indexing import category_text, own_index_text, states_for_the_user
from memstrata.lexical import has_han
from memstrata.lifecycle.decay import said_at
from memstrata.lifecycle.timeparse import TimeSpan
from memstrata.modality import corrects
from memstrata.patterns import lazy_pattern
from memstrata.read.evidence import cross_script, memory_terms, scripts
from memstrata.read.move_up import move_up, within_reach
from memstrata.read.own_first import mentions, people_named, topic_terms
from memstrata.read.parting import asks_past_the_parting
from memstrata.read.replies import assistant_asks
from memstrata.read.retrieve import time_it_names
from memstrata.read.takes_back import (
    about_others,
    calls_off_plan,
    ends_or_corrects_it,
    ends_the_same_thing,
    facets,
    settles_a_maybe,
)
from memstrata.read.whose import whose
from memstrata.types import MemoryItem, SearchHit

# What a memory says has changed, as the words of the questions it answers: by default a change said as done;
# the read path adds plans whose time has come (read/due_plans.changes_by).
Changes = Callable[[MemoryItem], str]


def _said_as_done(item: MemoryItem) -> str:
    return change_answers(unquoted(item.text))  # a change quoted is the quoted person's (answers.unquoted)


MARGIN = 0.2  # a later statement at most this share below the hit above it answers instead (read/move_up.py)
REPLACING_EVIDENCE = 0.2  # of the corrected hit's relevance, at least, for a correction replacing it from below
FOLLOWED = 3  # the first hits whose later replacements are looked for lower in the list and below the cutoff


def newer_first(
    hits: Sequence[SearchHit],
    query_text: str,
    *,
    margin: float = MARGIN,
    names_a_time: bool = False,
    time_to_come: bool = False,
    formerly: bool = False,
    names: tuple[str, ...] = (),
    changes: Changes = _said_as_done,
) -> list[SearchHit]:
    """``names_a_time``: the question names its time ("Where did I live in January?"), so it asks for what held
    then and only what says the earlier statement never held moves up: a correction, or a plan called off ("Did I
    go to Iceland in 2024?" after "Iceland is off"). ``time_to_come``: that time is still to come, so a change said
    before it also holds then ("Schedule a 1:1 with my boss next week" after a new manager), while a later statement
    of another event does not ("We had a long meeting on Monday" for "Is there a meeting on Monday?"). ``formerly``:
    the question asks what held before now ("我以前住在哪？"), so of two such statements the earlier one moves up,
    the latest of them first. ``names``:
    those the scope gives the relatives the question asks about (read/relatives.py). ``changes``: what a memory says
    has changed (:data:`Changes`)."""
    terms = facets(topic_terms(query_text))
    if not terms:
        return list(hits)

    def reasons(hit: SearchHit) -> frozenset[str]:
        return terms & facets(memory_terms(_statement(hit.memory)))

    def said_later(hit: SearchHit, above: SearchHit) -> bool:
        return not above.breakdown.key_match and said_at(hit.memory) > said_at(above.memory)

    def changed_for_the_same_reasons(hit: SearchHit, above: SearchHit) -> bool:
        # a change of what the question asks: "Joined Leith Links Leisure … before work" (a gym) replaced the job
        # for "Where do I work?" on the word "work" alone (a held-out trial)
        why, because = reasons(above), reasons(hit)
        changed = facets(tuple(changes(hit.memory).split()))
        if not (why and because) or not _changes_what_it_says(hit.memory, above.memory, changes):
            return False
        if because == why and terms & changed:
            return True
        # or a change of the kind the earlier statement is of, for some of its reasons: "医生把二甲双胍加到 850mg 了"
        # (a dose changed) after "医生让我每天吃二甲双胍 500mg" (a medicine taken) for "我现在吃多少二甲双胍？", which
        # only the earlier one matches on 吃 (a user trial)
        return because <= why and bool(changed & facets(memory_terms(category_text(above.memory))))

    def never_held(hit: SearchHit, above: SearchHit) -> bool:
        return _never_held(hit, above, query_text)

    def holds_on(hit: SearchHit, above: SearchHit) -> bool:
        return never_held(hit, above) or (said_later(hit, above) and changed_for_the_same_reasons(hit, above))

    if names_a_time:
        held = holds_on if time_to_come else never_held
        return move_up(hits, held, best=lambda hit: said_at(hit.memory))

    named = people_named(query_text, names)
    asked_in = scripts(query_text)

    def answers_instead(hit: SearchHit, above: SearchHit) -> bool:
        if not said_later(hit, above) or assistant_asks(hit.memory):  # a question said later changes nothing
            return False
        if about_others(hit.memory, above.memory) or _leaves_the_one_asked(hit, above, named, query_text):
            return False
        if asks_past_the_parting(query_text, above.memory, hit.memory):  # (read/parting.py)
            return False
        if changed_for_the_same_reasons(hit, above):
            return True
        why = reasons(above)
        if not why and reasons(hit) and _changes_what_it_says(hit.memory, above.memory, changes):
            # the later change says what the question asks where the earlier statement says none of it: "moved into
            # the house 🏡 4187 148th Ave NE" (live 住) after "下个月就搬去温哥华了", which matched on its plan's words;
            # from anywhere in the window: "Honestly great. Still eat eggs and cheese." led "Am I still vegetarian?"
            # on the question it answered (0.60) above "back to eating chicken and fish" (0.15)
            return True
        if calls_off_plan(hit.memory, above.memory) and (reasons(hit) or cross_script(asked_in, hit.memory.text)):
            # a call-off that shares nothing of what is asked answers it only across scripts ("成都的行程取消了"
            # for "Are we going to Chengdu?"): "西安去不成了" led "我儿子喜欢玩什么？" above "星球大战系列。另外
            # 我们国庆打算带他去西安玩", which matched on 玩 (a user trial)
            return True
        if why and reasons(hit) == why and settles_a_maybe(hit.memory, above.memory):
            return True
        if ends_the_same_thing(hit.memory, above.memory, question=query_text):
            return True
        if not within_reach(hit, above, margin):
            return False
        return (bool(why) and reasons(hit) == why) or ends_or_corrects_it(hit.memory, above.memory, question=query_text)

    if formerly:  # what a later statement replaced answers instead of it
        return move_up(hits, lambda hit, above: answers_instead(above, hit), best=lambda hit: said_at(hit.memory))
    return move_up(hits, answers_instead, best=lambda hit: said_at(hit.memory))


def changed_by_then(hits: Sequence[SearchHit], query_text: str, span: TimeSpan, zone: tzinfo) -> list[SearchHit]:
    """For a question that names its time: the user's statement of change that had taken effect for most of that
    time answers above the earlier state it changed, for the same reasons. "I work at ByteDance" (said in 2023) led
    "Where did I work in December 2024?" above "Just started my new job at Alibaba last week!" (said that
    November) on more of its words. A change taking effect late in the time leaves the earlier state first: in most
    of it, that state still held ("Where did I live in 2024?" with a move in July). Only changes said as done count
    here: a plan of that time may not have happened (read/due_plans.py)."""
    terms = facets(topic_terms(query_text))
    if not terms:
        return list(hits)
    middle = span.start + (span.end - span.start) / 2

    def answers_instead(hit: SearchHit, above: SearchHit) -> bool:
        if above.breakdown.key_match or not _changes_what_it_says(hit.memory, above.memory):
            return False
        named = time_it_names(hit.memory, zone)
        took_effect = named.start if named is not None else said_at(hit.memory)
        why = terms & facets(memory_terms(_statement(above.memory)))
        same_reasons = bool(why) and terms & facets(memory_terms(_statement(hit.memory))) == why
        return same_reasons and said_at(above.memory) < took_effect <= middle

    return move_up(hits, answers_instead, best=lambda hit: said_at(hit.memory))


def said_by_then_first(
    hits: Sequence[SearchHit], query_text: str, span: TimeSpan, zone: tzinfo, *, margin: float = MARGIN
) -> list[SearchHit]:
    """For a question about a past time: of two statements by one person answering for the same reasons, the one
    said by the end of that time answers above one said after it (within ``margin`` of its score), unless the later
    one names a time inside it ("Last year my coach was Li"). "我去年的健身教练是谁？" was answered by "我的健身教练
    是王教练" said this month, which says 教练 twice, above "我的健身教练是小李" of last year."""
    terms = facets(topic_terms(query_text))
    if not terms:
        return list(hits)

    def answers_instead(hit: SearchHit, above: SearchHit) -> bool:
        if above.breakdown.key_match or not said_at(hit.memory) <= span.end < said_at(above.memory):
            return False
        named = time_it_names(above.memory, zone)
        if (named is not None and named.start < span.end) or whose(hit.memory) != whose(above.memory):
            return False
        why = terms & facets(memory_terms(_statement(above.memory)))
        same_reasons = bool(why) and terms & facets(memory_terms(_statement(hit.memory))) == why
        return same_reasons and within_reach(hit, above, margin)

    return move_up(hits, answers_instead, best=lambda hit: hit.score)


def _never_held(hit: SearchHit, above: SearchHit, question: str) -> bool:
    """``hit`` says what ``above`` says never held for ``question``: a later correction of it (within reach), or a
    plan called off."""
    if above.breakdown.key_match or said_at(hit.memory) <= said_at(above.memory):
        return False
    corrected = corrects(hit.memory.text) and within_reach(hit, above, MARGIN)
    return calls_off_plan(hit.memory, above.memory) or (
        corrected and ends_or_corrects_it(hit.memory, above.memory, question=question)
    )


def with_what_replaced_them(
    hits: Sequence[SearchHit],
    below: Sequence[SearchHit],
    query_text: str,
    *,
    names_a_time: bool = False,
    names: tuple[str, ...] = (),
    changes: Changes = _said_as_done,
) -> list[SearchHit]:
    """Each of the first ``FOLLOWED`` hits preceded by the latest statement that corrects or changes it from among
    the candidates the relevance cutoff dropped: "Sorry I meant Grace 是 orthodontist 不是 general dentist" shares
    almost no word with "我姐姐是做什么的？" (relevance 0.04) and was cut, so the job the user took back answered
    alone. It takes the score of the hit it replaces, as in :func:`newer_first`. A key fact is the key's current
    value and is never replaced; for a question that names its time only a correction is looked for. ``names``: those
    the scope gives the relatives the question asks about (read/relatives.py); ``changes`` as in newer_first."""
    asked = topic_terms(query_text)
    # "我妈以前是做什么的？": the sister's new job replaces nothing of the mother's (``names``: as in newer_first)
    named = people_named(query_text, names)

    def later_ones(earlier: SearchHit, candidates: list[SearchHit]) -> list[SearchHit]:
        if earlier.breakdown.key_match:
            return []
        # Below the cutoff, or lower in the list than newer_first reaches: a correction with more evidence than the
        # cutoff asks must not stay behind what it corrects where one with less moves up.
        return [
            hit
            for hit in candidates
            if _replaces(hit, earlier, query_text, asked, changes, corrections_only=names_a_time)
            and not _leaves_the_one_asked(hit, earlier, named, query_text)
        ]

    return _brought_up(hits, below, later_ones)


def with_what_they_changed(
    hits: Sequence[SearchHit],
    below: Sequence[SearchHit],
    query_text: str,
    *,
    names: tuple[str, ...] = (),
    changes: Changes = _said_as_done,
) -> list[SearchHit]:
    """For a question of what held before now ("What was my job before Stripe?"): each of the first ``FOLLOWED``
    hits preceded by the latest earlier statement it changes, also from among the candidates the relevance cutoff
    dropped. "I got an offer from Stripe, starting May 5 as a staff engineer" matched on Stripe (0.87) and the job
    it replaced ("I'm Sam, backend engineer at Shopify") fell below the cutoff (a user trial). The statement the
    write path superseded has its own way (read/former.py); this one reads two statements that both stayed."""
    asked = topic_terms(query_text)
    named = people_named(query_text, names)

    def earlier_ones(later: SearchHit, candidates: list[SearchHit]) -> list[SearchHit]:
        changed = frozenset(changes(later.memory).split())
        if later.breakdown.key_match or not facets(tuple(changed)) & facets(asked):
            return []
        # what the earlier statement says in any of the change's words: "working remotely" is the job "starting May
        # 5 as a staff engineer" changed, though only the change says "job"
        return [
            hit
            for hit in candidates
            if not hit.breakdown.key_match
            and said_at(hit.memory) < said_at(later.memory)
            and changed & memory_terms(_statement(hit.memory))
            and _changes_what_it_says(later.memory, hit.memory, changes)
            and not _leaves_the_one_asked(later, hit, named, query_text)
        ]

    return _brought_up(hits, below, earlier_ones)


def _brought_up(
    hits: Sequence[SearchHit],
    below: Sequence[SearchHit],
    answering: Callable[[SearchHit, list[SearchHit]], list[SearchHit]],
) -> list[SearchHit]:
    """Each of the first ``FOLLOWED`` hits preceded by the latest of those ``answering`` gives for it from the rest
    of the list and from ``below``, with its score."""
    ordered, spare = list(hits), list(below)
    position = 0
    while position < min(FOLLOWED, len(ordered)):
        current = ordered[position]
        found = answering(current, [*spare, *ordered[position + 1 :]])
        if found:
            chosen = max(found, key=lambda hit: said_at(hit.memory))
            (spare if chosen in spare else ordered).remove(chosen)
            ordered.insert(position, chosen.model_copy(update={"score": current.score}))
            position += 1
        position += 1
    return ordered


def replacement(hit: SearchHit, others: Sequence[SearchHit], question: str) -> SearchHit | None:
    """The latest of ``others`` (hits of the same ``question``) that takes ``hit`` back for it: a correction or an
    ending of what it says, or the same person's change of what the question asks (as :func:`with_what_replaced_them`
    reads them); None when none does. A key fact is the key's current value and is never replaced. A correction must
    name what it corrects: one tied by category alone may be of another thing of that kind, said in the other script
    ("Turns out the penicillin allergy was a misdiagnosis" took the place of "我也对芒果过敏", and a context showed no
    allergy: a user trial), and the caller leaves out what is replaced."""
    if hit.breakdown.key_match or hit.memory.key is not None:
        return None
    asked = topic_terms(question)
    later = [
        other
        for other in others
        if other is not hit
        and _replaces(other, hit, question, asked, _said_as_done, corrections_only=False, by_category=False)
    ]
    return max(later, key=lambda other: said_at(other.memory)) if later else None


def _replaces(
    later: SearchHit,
    earlier: SearchHit,
    question: str,
    asked: Sequence[str],
    changes: Changes,
    *,
    corrections_only: bool,
    by_category: bool = True,
) -> bool:
    """From below, only what plainly takes the earlier statement back and still has some evidence for the question:
    a correction of it with a fifth of its relevance at least ("Sorry I meant Grace 是 orthodontist…"; a correction of
    another of its facts is no answer: "Sorry, correction: Arjun works at Microsoft, but in Suzhou" has 0.014 for
    "What's my husband allergic to?", "My husband Arjun … is allergic to peanuts" 0.95), or the same person's change
    of what it answers, where the question asks it ("Officially an Austin resident now" after "I live in Seattle" for
    "Where do I live now?"; a new job does not replace "我住在北京，在字节做后端" there). A habit resumed or a trip
    called off that merely shares a word with a hit is left where it is."""
    if said_at(later.memory) <= said_at(earlier.memory) or later.breakdown.relevance <= 0:
        return False
    if corrects(later.memory.text):
        enough = later.breakdown.relevance >= REPLACING_EVIDENCE * earlier.breakdown.relevance
        return enough and ends_or_corrects_it(later.memory, earlier.memory, by_category=by_category, question=question)
    if corrections_only:
        return False
    changed = facets(tuple(changes(later.memory).split()))
    statement = facets(memory_terms(_statement(earlier.memory)))
    # A word of the question whole, not one of its characters: "我哥去年年底结婚了" (husband wife married 老公
    # 老婆 结婚) shares only 老 with "我老家是哪里的？" and took the place of "老家是绵阳的".
    shared = [term for term in asked if facets((term,)) <= changed and facets((term,)) <= statement]
    if not shared:
        return False
    # and it speaks to all the question asks that the earlier one answers: a new job ("User's new job is at Mass
    # General as a nurse") replaced "I work night shifts Tuesday to Thursday" for "What shifts do I work?" on "work"
    # alone, above the later "switched to day shifts" (a user trial)
    # (a Chinese word by any of its characters: segmentation cuts the question's words many ways, "手机号码" also as
    # "机号码", and "新手機門號" speaks of the number without 码)
    spoken = changed | facets(memory_terms(_statement(later.memory)))
    answered = [facets((term,)) for term in asked if facets((term,)) <= statement]
    return all(term & spoken if has_han("".join(term)) else term <= spoken for term in answered) and (
        _changes_what_it_says(later.memory, earlier.memory, changes)
    )


def _changes_what_it_says(later: MemoryItem, earlier: MemoryItem, changes: Changes = _said_as_done) -> bool:
    """A statement of change by the one the earlier statement is about, answering the question for the same reasons
    ("搬到深圳南山区了" after "我住在北京朝阳区", both "live 住"): what the earlier one says no longer holds, however
    much better it matches on its own words (the earlier home says "住" itself and leads on every word and on
    meaning, 0.87 to 0.46). Someone else's change keeps to the margin ("My brother started at Meta" does not pass
    "I work at Google" for "Where do I work?")."""
    if not (states_for_the_user(later) and changes(later)):
        return False
    subject = whose(later)
    return subject is not None and subject == whose(earlier)


def _leaves_the_one_asked(later: SearchHit, earlier: SearchHit, named: re.Pattern[str] | None, question: str) -> bool:
    """The question asks about someone the earlier statement names and the later one does not: the user's own new
    job ("新工作：同程旅行") moved above "My older brother Feng … works at 华为" for "我哥在哪里工作？". Named in the
    other script counts: "Are we going to Chengdu?" asks of what "用户成都的行程取消了" says (a user trial)."""
    return named is not None and mentions(named, earlier) and not mentions(named, later, question)


def asked_of(item: MemoryItem, asked: str) -> bool:
    """Whether a memory states something of what the question (``asked``: its words, its time aside) asks about."""
    return bool(facets(topic_terms(asked)) & facets(memory_terms(_statement(item))))


def _statement(item: MemoryItem) -> str:
    """What a memory states, in the words it is indexed with: a statement of change with the words of the questions
    it answers ("I moved to Shanghai" answers where the user lives, answers.change_answers), an episode with its
    speaker. A key fact by its value alone: it holds the key's current value, and chatter said later that shares
    the words its key is asked with ("I live for the weekend") must not take its place. With the words of the
    categories it names (indexing.category_text): "我的电话号码是…" and "My new phone number is…" answer "What is my
    phone number?" for the same reasons, the one on its own words, the other on its category's."""
    if item.key:
        return item.text
    categories = category_text(item)
    own = _WORK_AS_A_TIME.sub(" ", own_index_text(item))
    return f"{own}\n{categories}" if categories else own


# Work as a time of day says nothing of the job: "Lane swimming before work" answered "Where do I work?" for the same
# reason as the job itself, and being later, in its place (a held-out trial).
_WORK_AS_A_TIME = lazy_pattern(
    r"\b(?:before|after|from|off|at)\s+work\b|下班(?:后|以后|之后|前)|上班(?:前|之前)", re.IGNORECASE
)

"""The in-memory keyword index of the SQLite backend answers exactly as FTS5 does: two stores open the same
file, one always asking the copy and one always asking FTS5, and every query gets the same memories with the
same scores, through inserts, rewrites, status changes, hard deletes, a reset and a keyword reindex, whichever
of the two made the writes."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memstrata.lexical import search_terms
from memstrata.query import Filters
from memstrata.storage.protocol import ScoredId, StatusChange, WriteBatch
from memstrata.storage.sqlite import keywords
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.storage.vector_index import IndexFilter
from memstrata.types import MemoryItem, MemoryStatus, Scope, new_id

T0 = datetime(2025, 1, 1, 9, 0, tzinfo=UTC)
SCOPES = [Scope(user_id="lin"), Scope(user_id="sam"), Scope(user_id="lin", agent_id="coach"),
          Scope(tenant_id="acme", user_id="lin")]  # fmt: skip
WORDS = ["cat", "cats", "running", "runner", "peanut", "allergy", "badminton", "weekend", "Berlin", "coffee",
         "猫", "团子", "羽毛球", "周末", "过敏", "花生", "咖啡", "柏林", "跑步", "老师"]  # fmt: skip
QUERIES = ["cat", "running allergy", "我的猫叫什么", "周末打羽毛球", "coffee in Berlin", "peanut 过敏", "runners",
           "老师 weekend cats", "nothing matches this"]  # fmt: skip


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[SQLiteStore, SQLiteStore]]:
    cached = SQLiteStore(tmp_path / "m.db", keyword_cache_min_rows=0)
    fts = SQLiteStore(tmp_path / "m.db", keyword_cache_min_rows=10**9)
    yield cached, fts
    cached.close()
    fts.close()


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 9)))


def memory(rng: random.Random, scope: Scope, kind: str = "fact", text: str | None = None) -> MemoryItem:
    return MemoryItem(id=new_id(), scope=scope, kind=kind, text=text or sentence(rng), created_at=T0, updated_at=T0,
                      valid_from=T0, metadata={"topic": rng.choice("abc")})  # fmt: skip


def answers(store: SQLiteStore, scope: Scope, query: str, filters: Filters, limit: int = 10) -> list[ScoredId]:
    return store.keyword_search(scope, search_terms(query), filters, limit)


def assert_same_answers(cached: SQLiteStore, fts: SQLiteStore) -> None:
    for scope in SCOPES:
        for filters in (Filters(), Filters(kind=["preference"]), Filters(exclude_kind=["preference"]),
                        Filters(status=[MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED]),
                        Filters(metadata={"topic": "b"})):  # fmt: skip
            for query in QUERIES:
                got, want = answers(cached, scope, query, filters), answers(fts, scope, query, filters)
                assert [h.memory_id for h in got] == [h.memory_id for h in want], (scope, filters, query)
                assert [h.score for h in got] == pytest.approx([h.score for h in want], rel=1e-9)
    assert cached._keywords.stats()["rows"] > 0  # the copy answered


def test_the_copy_ranks_as_fts5_through_every_kind_of_write(pair: tuple[SQLiteStore, SQLiteStore]) -> None:
    cached, fts = pair
    rng = random.Random(7)
    live: list[MemoryItem] = []
    for step in range(6):
        writer = (cached, fts)[step % 2]  # the other store's writes are caught up from the file
        fresh = [memory(rng, rng.choice(SCOPES), rng.choice(["fact", "preference"])) for _ in range(60)]
        writer.write(WriteBatch(inserts=fresh))
        live += fresh
        later = T0 + timedelta(hours=step + 1)
        rewritten = [(m.model_copy(update={"text": sentence(rng), "updated_at": later}), m.updated_at)
                     for m in rng.sample(live, 10)]  # fmt: skip
        writer.write(WriteBatch(replacements=rewritten))
        live = [next((new for new, _ in rewritten if new.id == m.id), m) for m in live]
        archived = rng.sample(live, 5)
        writer.write(WriteBatch(status_changes=[StatusChange(m.id, m.scope, MemoryStatus.ARCHIVED, later)
                                                for m in archived]))  # fmt: skip
        live = [m for m in live if m not in archived]  # stored still; not rewritten again
        gone = rng.sample(live, 4)
        for m in gone:
            writer.purge(m.scope, [m.id])
        live = [m for m in live if m not in gone]
        assert_same_answers(cached, fts)


def test_a_reset_and_a_keyword_reindex_start_a_new_copy(pair: tuple[SQLiteStore, SQLiteStore]) -> None:
    cached, fts = pair
    rng = random.Random(11)
    fts.write(WriteBatch(inserts=[memory(rng, SCOPES[0]) for _ in range(50)]))
    assert_same_answers(cached, fts)
    fts.reset()
    assert answers(cached, SCOPES[0], "cat", Filters()) == []
    fts.write(WriteBatch(inserts=[memory(rng, SCOPES[0]) for _ in range(50)]))
    assert_same_answers(cached, fts)
    for _ in fts.rebuild_keyword_index():
        pass
    assert_same_answers(cached, fts)


def test_a_large_store_builds_its_first_copy_beside_the_searches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keywords, "SYNC_BUILD_ROWS", 100)
    rng = random.Random(3)
    with_fts = SQLiteStore(tmp_path / "m.db", keyword_cache_min_rows=10**9)
    with_fts.write(WriteBatch(inserts=[memory(rng, SCOPES[0]) for _ in range(300)]))
    cached = SQLiteStore(tmp_path / "m.db", keyword_cache_min_rows=200)
    try:
        first = answers(cached, SCOPES[0], "cat coffee", Filters())  # FTS5 answers while the copy is built
        assert cached.wait_for_keyword_index(timeout_s=30)
        assert cached._keywords.stats()["rows"] == 300
        assert first == answers(cached, SCOPES[0], "cat coffee", Filters())  # the copy's answer: FTS5's
        with_fts.write(WriteBatch(inserts=[memory(rng, SCOPES[0]) for _ in range(5)]))  # caught up after adoption
        assert_same_answers(cached, with_fts)
    finally:
        cached.close()
        with_fts.close()


def test_a_filter_too_selective_for_the_candidates_ranks_the_rows_passing_it_in_the_copy(
    pair: tuple[SQLiteStore, SQLiteStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Too few of the copy's candidates pass the filter: the copy ranks the rows passing it (listed in SQL once,
    then followed through writes), as FTS5 would, and FTS5 is not asked."""
    cached, fts = pair
    rng = random.Random(9)
    common = [memory(rng, SCOPES[0], text=f"cat {sentence(rng)}") for _ in range(400)]
    rare = [m.model_copy(update={"metadata": {"topic": "rare"}}) for m in common[:3]]
    fts.write(WriteBatch(inserts=[*rare, *common[3:]]))
    only_rare = Filters(metadata={"topic": "rare"})
    assert len(cached._keywords.search(["cat"], _any_kind(SCOPES[0]), 256) or []) == 256  # a full candidate list

    def no_fts5(*args: object) -> None:
        raise AssertionError("FTS5 was asked")

    monkeypatch.setattr(cached.dialect, "_fts_search", no_fts5)
    got = answers(cached, SCOPES[0], "cat", only_rare)
    assert sorted(h.memory_id for h in got) == sorted(m.id for m in rare)
    assert got == answers(fts, SCOPES[0], "cat", only_rare)
    # The other store writes: one row joins the filter, one leaves it, one is deleted.
    later = T0 + timedelta(hours=1)
    joined = common[10].model_copy(update={"metadata": {"topic": "rare"}, "updated_at": later})
    left = rare[0].model_copy(update={"metadata": {"topic": "a"}, "updated_at": later})
    fts.write(WriteBatch(replacements=[(joined, common[10].updated_at), (left, rare[0].updated_at)]))
    fts.purge(SCOPES[0], [rare[1].id])
    got = answers(cached, SCOPES[0], "cat", only_rare)
    assert sorted(h.memory_id for h in got) == sorted([rare[2].id, joined.id])
    assert got == answers(fts, SCOPES[0], "cat", only_rare)


def _any_kind(scope: Scope) -> IndexFilter:
    return IndexFilter(tenant_id=scope.tenant_id or "", user_id=scope.user_id, agent_id=scope.agent_id,
                       session_id=scope.session_id, statuses=["active"], kinds=None)  # fmt: skip


def test_a_small_store_stays_with_fts5(tmp_path: Path) -> None:
    rng = random.Random(5)
    store = SQLiteStore(tmp_path / "m.db")  # default threshold: far above these rows
    try:
        store.write(WriteBatch(inserts=[memory(rng, SCOPES[0]) for _ in range(20)]))
        assert answers(store, SCOPES[0], "cat", Filters())
        assert store._keywords.stats()["rows"] == 0
    finally:
        store.close()


def test_a_store_that_grows_past_the_threshold_gets_the_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keywords, "FTS_ANSWERS_FIRST", 0)
    rng = random.Random(13)
    store = SQLiteStore(tmp_path / "m.db", keyword_cache_min_rows=50)
    try:
        store.write(WriteBatch(inserts=[memory(rng, SCOPES[0], text="cat coffee") for _ in range(10)]))
        assert len(answers(store, SCOPES[0], "cat", Filters())) == 10
        store.write(WriteBatch(inserts=[memory(rng, SCOPES[0], text="cat") for _ in range(50)]))
        assert len(answers(store, SCOPES[0], "cat", Filters())) == 10  # FTS5 still, until the recheck
        assert store._keywords.stats()["rows"] == 0
        monkeypatch.setattr(keywords, "monotonic", lambda: float("inf"))  # the recheck is due
        assert len(answers(store, SCOPES[0], "cat", Filters())) == 10
        assert store._keywords.stats()["rows"] == 60
    finally:
        store.close()


def test_a_process_that_searches_a_few_times_never_pays_for_a_copy(tmp_path: Path) -> None:
    """Building the copy costs more than a few searches gain from it (one CLI command): FTS5 answers the first
    ``FTS_ANSWERS_FIRST`` keyword searches of a store large enough for a copy, the copy the ones after."""
    rng = random.Random(17)
    store = SQLiteStore(tmp_path / "m.db", keyword_cache_min_rows=50)
    try:
        store.write(WriteBatch(inserts=[memory(rng, SCOPES[0]) for _ in range(80)]))
        first = [answers(store, SCOPES[0], query, Filters()) for query in QUERIES]
        for _ in range(keywords.FTS_ANSWERS_FIRST - len(QUERIES)):
            answers(store, SCOPES[0], "cat", Filters())
        assert store._keywords.stats()["rows"] == 0
        assert [answers(store, SCOPES[0], query, Filters()) for query in QUERIES] == first  # the copy's: FTS5's
        assert store._keywords.stats()["rows"] == 80
    finally:
        store.close()


def test_compacting_the_copy_merges_each_terms_postings_and_keeps_every_answer() -> None:
    """A first build appends postings batch by batch; compact() leaves one array per term (what a search would
    otherwise merge one term at a time, leaving the freed chunks in the heap), with the same answers."""
    from memstrata.lexical import TermSplitter
    from memstrata.storage.keyword_index import KeywordIndex, KeywordRow

    rng = random.Random(7)
    index = KeywordIndex(TermSplitter())
    for batch in range(6):
        index.upsert(KeywordRow(seq, ("", "lin", "", "", "active", "fact"), " ".join(search_terms(sentence(rng))))
                     for seq in range(batch * 50, batch * 50 + 50))  # fmt: skip
    lin = IndexFilter(tenant_id="", user_id="lin", agent_id=None, session_id=None, statuses=["active"], kinds=None)
    asked = [ids for query in QUERIES if (ids := index.phrases(search_terms(query)))]
    before = [index.search(ids, lin, 10) for ids in asked]
    assert any(before) and any(len(chunks) > 1 for chunks in index._postings)
    index.compact()
    assert all(len(chunks) == 1 for chunks in index._postings)
    assert [index.search(ids, lin, 10) for ids in asked] == before


def test_term_counts_in_the_fewest_bytes_score_as_fts5(pair: tuple[SQLiteStore, SQLiteStore]) -> None:
    """Counts are kept as 8 or 16 bits, or not at all where each is 1 (most terms of short memories); batches of
    each form merge into one array, and every score stays FTS5's."""
    from memstrata.lexical import TermSplitter
    from memstrata.storage.keyword_index import KeywordIndex, KeywordRow

    cached, fts = pair
    rng = random.Random(3)
    texts = [["cat coffee"] * 3, ["cat cat cat coffee", "running cat"], [" ".join(["cat"] * 300) + " coffee"]]
    for batch in texts:  # one chunk of postings per batch: all ones, then up to 3, then past 255
        fts.write(WriteBatch(inserts=[memory(rng, SCOPES[0], text=text) for text in batch]))
        assert_same_answers(cached, fts)
    index = KeywordIndex(TermSplitter())
    rows = [("cat coffee", "cat"), ("cat cat coffee", "cat " * 300)]
    for batch, pair_of_texts in enumerate(rows):
        index.upsert(KeywordRow(batch * 2 + n, ("", "lin", "", "", "active", "fact"), " ".join(search_terms(text)))
                     for n, text in enumerate(pair_of_texts))  # fmt: skip
    term = {word: index.phrases(search_terms(word)) for word in ("coffee", "cat")}  # the words' own terms
    coffee = index._postings[term["coffee"][0]]
    assert coffee[0][1].strides == (0,)  # each count 1: one shared byte
    assert coffee[1][1].dtype == "uint8"
    index.compact()
    cat_counts = index._postings[term["cat"][0]][0][1]
    assert cat_counts.dtype == "uint16" and cat_counts.tolist() == [1, 1, 2, 300]

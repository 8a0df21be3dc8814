"""The web console in real Chromium: what a person does with it, end to end, against `memstrata serve`."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from console_browser import Recorder
from console_seed import (
    CHINESE_FACT,
    DOUBTFUL_FACT,
    FAILING_TURN,
    KEYLESS_FACT,
    OTHER_TENANT_TEXTS,
    PENDING_FACT,
    ScriptedBrain,
    Seeded,
)

expect = pytest.importorskip(
    "playwright.sync_api", reason="the browser tests need Playwright (the browser extra)"
).expect
expect.set_options(timeout=20_000)  # a shared 2-core machine: the first search of a fresh service may take seconds


def log_in(page: Any, url: str, key: str, user: str | None = "alice") -> None:
    page.goto(url + "/")
    expect(page.get_by_role("heading", name="Sign in to memstrata")).to_be_visible()
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("navigation", name="Pages", exact=True)).to_be_visible()
    if user is not None:
        page.get_by_label("User").fill(user)
        page.locator("#scope-form").get_by_role("button", name="Show").click()


def visit(page: Any, url: str, hash_path: str, heading: str) -> None:
    page.goto(f"{url}/#/{hash_path}")
    expect(page.locator("main h1")).to_have_text(heading)
    expect(page.locator("main")).not_to_have_attribute("aria-busy", "true")


def shot(page: Any, screens: Path, name: str) -> None:
    page.screenshot(path=str(screens / f"{name}.png"), full_page=True)


def api(url: str, key: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=30)


def assert_clean(recorder: Recorder) -> None:
    assert recorder.urls, "the page made no requests at all"
    assert recorder.outside_loopback() == [], "the console sent requests off the machine"
    assert recorder.errors == [], "the page raised script errors"


def test_a_person_reviews_and_corrects_memories(
    page: Any, console_url: str, seeded: Seeded, brain: ScriptedBrain, recorder: Recorder, screens: Path
) -> None:
    url = console_url
    page.goto(url + "/")
    shot(page, screens, "01-login")
    log_in(page, url, seeded.acme_key)

    # Search a Chinese memory with an English query ("/" jumps to the search field); the breakdown says why.
    expect(page.get_by_role("searchbox", name="Search")).to_be_visible()
    page.keyboard.press("/")
    expect(page.get_by_role("searchbox", name="Search")).to_be_focused()
    page.keyboard.type("peanut allergy")
    page.keyboard.press("Enter")
    first = page.locator("li.hit").first
    expect(first.locator("a.memory-text")).to_have_text(CHINESE_FACT)
    first.get_by_text("Why it ranked here").click()
    expect(first.locator("table.breakdown")).to_contain_text("Vector rank (similarity)")
    shot(page, screens, "02-memories-search")

    # Edit it and see the history entry with the old and the new text.
    first.locator("a.memory-text").click()
    expect(page.locator("main h1")).to_have_text("Memory")
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("Text").fill("我对花生和腰果过敏")
    page.get_by_label("Reason").fill("also cashews")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("blockquote.memory-body")).to_have_text("我对花生和腰果过敏")
    edit = page.locator("ol.timeline li.action-UPDATE")
    expect(edit.locator("del")).to_have_text(CHINESE_FACT)
    expect(edit.locator("ins")).to_have_text("我对花生和腰果过敏")
    expect(edit).to_contain_text("also cashews")
    page.get_by_role("button", name="Edit").click()  # saving the same text says so, and writes no history
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#toast")).to_contain_text("unchanged")
    expect(page.locator("ol.timeline li.action-UPDATE")).to_have_count(1)
    shot(page, screens, "03-memory-history")
    page.get_by_role("button", name="Delete").click()  # destructive: the dialog says what will happen; cancel
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Soft delete")
    expect(dialog).to_contain_text("stay in the history")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    page.get_by_role("button", name="Purge…").click()
    expect(dialog).to_contain_text("cannot be undone")
    page.keyboard.press("Escape")  # the keyboard closes it too
    expect(dialog).to_be_hidden()
    expect(page.locator("main .meta, main dl.facts").first).to_contain_text("active")

    # Review queue: confirm one pending fact in bulk, reject the other after a dialog that says what happens.
    visit(page, url, "review", "Review")
    expect(page.locator("li.review-item")).to_have_count(2)
    shot(page, screens, "04-review")
    page.get_by_label(f"Select: {PENDING_FACT}").check()
    page.get_by_role("button", name="Confirm selected").click()
    expect(page.locator("li.review-item")).to_have_count(1)
    doubtful = page.locator("li.review-item", has_text=DOUBTFUL_FACT)
    doubtful.get_by_role("button", name="Reject").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("deletes a pending fact softly")
    dialog.get_by_role("button", name="Reject").click()
    expect(page.get_by_text("Nothing waits for review in this scope.")).to_be_visible()
    with api(url, seeded.acme_key) as client:
        found = client.get("/v1/console/memories", params={"user_id": "alice", "status": ["active", "deleted"]})
        statuses = {item["text"]: item["status"] for item in found.json()["items"]}
    assert statuses[PENDING_FACT] == "active" and statuses[DOUBTFUL_FACT] == "deleted"

    # The graph: entities drawn, a closed relation kept as history, a click expands and shows relation history.
    visit(page, url, "graph", "Graph")
    expect(page.locator("svg.graph g.node")).to_have_count(6)
    expect(page.locator("svg.graph g.edge.closed")).to_have_count(1)
    page.locator('svg.graph g.node[data-entity="北京"]').click()
    side = page.locator("aside.graph-side")
    expect(side.locator("h2")).to_have_text("北京")
    expect(side.locator("li.closed")).to_contain_text("lives_in")
    shot(page, screens, "05-graph")

    # A failed extraction shows its error and raw output; retry runs it again, and it succeeds.
    visit(page, url, "jobs", "Jobs")
    failed = page.locator(f'li[data-job="{seeded.failed_job_id}"]')
    expect(failed).to_contain_text("Sorry, I cannot answer in JSON today.")
    shot(page, screens, "06-jobs-failed")
    brain.fail = False
    failed.get_by_role("button", name="Retry").click()
    deadline = time.monotonic() + 30
    while "status-done" not in (failed.get_attribute("class") or "") and time.monotonic() < deadline:
        page.wait_for_timeout(500)
        page.get_by_role("button", name="Refresh").click()
        expect(page.locator("main")).not_to_have_attribute("aria-busy", "true")
    expect(failed).to_have_class(re.compile(r"status-done"))
    with api(url, seeded.acme_key) as client:
        hits = client.post("/v1/memories/search", json={"user_id": "alice", "query": "西湖 跑步", "limit": 5}).json()
    assert "用户周末去西湖边跑步" in [hit["memory"]["text"] for hit in hits]
    shot(page, screens, "07-jobs-retried")

    # Sessions and their raw turns, verbatim.
    visit(page, url, "sessions", "Sessions")
    page.get_by_role("link", name="s-2025-03-22").click()
    expect(page.locator("ol.turns li")).to_have_text([re.compile(FAILING_TURN)])
    shot(page, screens, "08-session-turns")

    # Time travel, valid time: on 10 March 2025 the user lived in Beijing; the move to Shanghai (said on 20 March)
    # was not true yet. Record time: the store learned all of it only when it was seeded, so it held nothing then.
    visit(page, url, "time?at=2025-03-10T12:00&axis=valid", "Time travel")
    results = page.locator("main section")
    expect(results).to_contain_text("我在字节跳动做后端，住在北京。")
    expect(results).not_to_contain_text("我搬到上海了。")
    shot(page, screens, "09-time-travel")
    visit(page, url, "time?at=2025-03-10T12:00&axis=record", "Time travel")
    expect(page.get_by_text("Nothing in this scope at that moment.")).to_be_visible()

    # The vault: notes read, rules read-only.
    visit(page, url, "vault", "Vault")
    expect(page.locator("main table tbody tr").first).to_be_visible()
    expect(page.get_by_text("read-only", exact=True)).to_be_visible()
    # with no agent chosen, every agent's rules, each marked with its agent (the researcher's were hidden)
    expect(page.locator("main")).to_contain_text("rules/researcher/style.md")
    expect(page.locator("main")).to_contain_text("agent:researcher")
    shot(page, screens, "10-vault")

    visit(page, url, "stats", "Stats")
    expect(page.locator(".stat-grid")).to_contain_text("memories")
    shot(page, screens, "11-stats")

    # Every English string has its Chinese counterpart.
    tables = page.evaluate("async () => (await import('/console/js/i18n.js')).STRING_TABLES")
    assert set(tables["zh"]) == set(tables["en"])

    # Chinese interface at a phone's width: the menu folds away, every page is still reachable.
    page.set_viewport_size({"width": 390, "height": 844})
    page.get_by_label("Language").select_option("zh")
    visit(page, url, "memories", "记忆")
    page.get_by_role("button", name="菜单").click()
    expect(page.get_by_role("link", name="关系图")).to_be_visible()
    shot(page, screens, "12-phone-zh")
    assert_clean(recorder)


def test_the_console_shows_only_what_the_key_allows(
    page: Any, console_url: str, seeded: Seeded, recorder: Recorder, screens: Path
) -> None:
    url = console_url
    # Another tenant, same user id: none of tenant acme's memories, jobs or graph appear.
    log_in(page, url, seeded.other_key)
    visit(page, url, "memories?status=any", "Memories")
    shown = page.locator("main a.memory-text")
    expect(shown).to_have_count(len(OTHER_TENANT_TEXTS))
    assert sorted(shown.all_inner_texts()) == sorted(OTHER_TENANT_TEXTS)
    page.get_by_role("searchbox", name="Search").fill("peanut allergy")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.locator("li.hit").first).to_be_visible()
    assert set(page.locator("main a.memory-text").all_inner_texts()) <= set(OTHER_TENANT_TEXTS)
    main = page.locator("main")
    visit(page, url, f"memory/{seeded.chinese_id}", "Memory")
    expect(page.get_by_role("alert")).to_contain_text("404")
    visit(page, url, "jobs", "Jobs")
    expect(page.locator("li.job")).to_have_count(0)
    visit(page, url, "graph", "Graph")
    expect(main).to_contain_text("No graph yet")
    visit(page, url, "vault", "Vault")
    expect(page.get_by_role("alert").first).to_contain_text("404")
    shot(page, screens, "13-other-tenant")

    # A key limited to alice: the user is filled in, and asking for bob is refused (403), showing nothing.
    page.get_by_role("button", name="Log out").click()
    log_in(page, url, seeded.alice_key, user=None)
    expect(page.get_by_label("User")).to_have_value("alice")
    page.get_by_label("User").fill("bob")
    page.locator("#scope-form").get_by_role("button", name="Show").click()
    visit(page, url, "memories?status=any", "Memories")
    expect(page.get_by_role("alert")).to_contain_text("403")
    expect(page.locator("main li.card")).to_have_count(0)
    shot(page, screens, "14-limited-key")
    assert_clean(recorder)


def test_a_wrong_key_is_refused_and_the_key_stays_in_the_tab(
    page: Any, console_url: str, seeded: Seeded, recorder: Recorder
) -> None:
    page.goto(console_url + "/")
    page.get_by_label("API key").fill("msk_nothere_secret")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("unknown or revoked")
    log_in(page, console_url, seeded.acme_key)
    storage = page.evaluate("() => [Object.keys(sessionStorage), Object.keys(localStorage), document.cookie]")
    assert "memstrata.key" in storage[0] and "memstrata.key" not in storage[1] and storage[2] == ""
    assert_clean(recorder)


def test_the_interface_language_follows_the_browser(browser: Any, keyless_url: str) -> None:
    context = browser.new_context(locale="zh-CN")
    try:
        page = context.new_page()
        page.goto(keyless_url + "/")
        expect(page.get_by_role("link", name="记忆")).to_be_visible()
        expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
        page.get_by_label("用户").fill("sam")
        page.locator("#scope-form button").first.click()
        page.goto(keyless_url + "/#/memories")
        expect(page.locator("main span.badge.kind")).to_have_text(["事实"])  # a kind in the interface's language
        page.get_by_label("语言").select_option("en")  # switchable, and remembered
        expect(page.get_by_role("link", name="Memories")).to_be_visible()
        page.reload()
        expect(page.get_by_role("link", name="Memories")).to_be_visible()
    finally:
        context.close()


def test_keyless_loopback_mode_needs_no_login(page: Any, keyless_url: str, recorder: Recorder, screens: Path) -> None:
    page.goto(keyless_url + "/")
    expect(page.locator("#who")).to_have_text("local, no key")
    expect(page.get_by_role("button", name="Log out")).to_be_hidden()
    visit(page, keyless_url, "stats", "Stats")  # the whole local store, no scope needed
    expect(page.locator(".stat-grid")).to_contain_text("1")
    page.get_by_label("User").fill("sam")
    page.locator("#scope-form").get_by_role("button", name="Show").click()
    visit(page, keyless_url, "memories", "Memories")
    expect(page.locator("main a.memory-text")).to_have_text([KEYLESS_FACT])
    shot(page, screens, "15-keyless")
    assert_clean(recorder)


def test_a_memory_keeps_its_line_breaks_and_a_long_word_wraps(
    page: Any, keyless_url: str, recorder: Recorder, screens: Path
) -> None:
    """A 400-character word made the page 5,771 px wide in a 1,280 px window, and "line one\\nline two" showed as
    one line."""
    with httpx.Client(base_url=keyless_url, timeout=30) as client:
        added = client.post("/v1/memories", json={"user_id": "wrap", "text": ["A" * 400, "line one\nline two"]})
        assert added.status_code == 201, added.text
        long_id, lines_id = [event["id"] for event in added.json()["results"]]
    page.goto(keyless_url + "/")
    page.get_by_label("User").fill("wrap")
    page.locator("#scope-form").get_by_role("button", name="Show").click()
    page.goto(f"{keyless_url}/#/memory/{long_id}")
    body = page.locator("blockquote.memory-body")
    expect(body).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.goto(f"{keyless_url}/#/memory/{lines_id}")
    expect(body).to_contain_text("line one")
    assert body.inner_text().splitlines()[:2] == ["line one", "line two"]
    shot(page, screens, "16-line-breaks")
    assert_clean(recorder)

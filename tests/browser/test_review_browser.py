"""Cards and spaced review in Debian's Chromium against the real app with no language model (the local model's
cards are tested in tests/test_study.py): a person makes cards from a chapter and from a note, reviews them over
simulated days (STUDY_CLOCK_FILE moves the study clock; every due date is checked against an FSRS replay
of the stored reviews), takes a quiz, exports the deck to Anki, and sees mastery and coverage in the
report. A second person (the live app's bob) sees none of it. Screenshots 20-24 go to test-artefacts/.
"""
from __future__ import annotations

import json
import re
import sqlite3
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import pytest
from fsrs import Card as FsrsCard
from fsrs import Rating, Scheduler

from assistant.report import validate_report
from tests.browser.conftest import BROWSER_WAIT_MS, USERS, login, open_tab, running_app, settled
from tests.browser.pdfgen import make_pdf
from tests.test_study import BOOK

pytestmark = pytest.mark.browser

NOTE = "A memo is a computed value kept for later use so it is not computed again."


def wait_text(page, selector: str, needle: str, timeout: int = BROWSER_WAIT_MS) -> str:
    page.wait_for_function("([s, n]) => { const e = document.querySelector(s); return e && e.innerText.includes(n); }",
                           arg=[selector, needle], timeout=timeout)
    return page.inner_text(selector)


def choose(page, selector: str, option: str) -> None:
    """Pick `option` in a Gradio dropdown."""
    page.click(f"{selector} input")
    page.click(f"[role=option]:has-text({json.dumps(option)})")


def open_accordion(page, accordion: str, inside: str) -> None:
    """Open an accordion unless what is `inside` it already shows (a click on an open one closes it)."""
    if not page.is_visible(inside):
        page.click(f"{accordion} button, {accordion} .label-wrap")
        page.wait_for_selector(inside, state="visible")


def tab_label(page) -> str:
    return page.inner_text("#tab-review-button")


def open_review(page) -> None:
    """Switch to the Review tab and wait until the refresh its selection fires (review_tab.refresh_review) has
    landed: until then the old due line is still on screen, and the refresh hides an answer shown before it."""
    if page.get_attribute("#tab-review-button", "aria-selected") == "true":
        open_tab(page, "Q&A")                      # selecting the tab it is on fires nothing
    with settled(page, "#review-due"):
        open_tab(page, "Review")


def make_cards(page, button: str) -> int:
    """Click a make-cards button; how many new cards its status line reports. The line also says how many
    cards there are in all, so the new line cannot be mistaken for the old one still on screen."""
    found = re.search(r"\((\d+) in all\)", page.inner_text("#cards-status"))
    before = int(found.group(1)) if found else 0
    page.click(button)
    page.wait_for_function("b => { const m = document.querySelector('#cards-status').innerText.match(/New cards: \\d+ \\((\\d+) in all\\)/);"
                           " return m && Number(m[1]) > b; }", arg=before, timeout=240_000)
    return int(re.search(r"New cards: (\d+)", page.inner_text("#cards-status")).group(1))


class Clock:
    """The app's study clock: days added to the real time, in the file STUDY_CLOCK_FILE names."""
    def __init__(self, path: Path):
        self.path = path
        self.set(0)

    def set(self, days: float) -> None:
        self.path.write_text(str(days), encoding="utf-8")


def replay_matches_fsrs(data_dir: Path) -> int:
    """Every card's stored due date equals FSRS (no fuzz) replayed over its stored reviews; how many were checked."""
    db = sqlite3.connect(f"file:{data_dir / 'study' / 'cards.sqlite3'}?mode=ro", uri=True)
    scheduler, checked = Scheduler(enable_fuzzing=False), 0
    for card_id, due in db.execute("SELECT card_id, due FROM cards").fetchall():
        reviews = db.execute("SELECT rating, reviewed_at FROM reviews WHERE card_id=? ORDER BY reviewed_at",
                             (card_id,)).fetchall()
        if not reviews:
            continue
        state = None
        for rating, at in reviews:
            moment = datetime.fromtimestamp(at, timezone.utc)
            state = state or FsrsCard(due=moment)
            state, _ = scheduler.review_card(state, Rating(rating), moment)
        assert abs(state.due.timestamp() - due) < 1e-3, (card_id, state.due, due)
        checked += 1
    return checked


def review_due(page, expected: int, grade: str = "good") -> None:
    """Open the Review tab, see `expected` cards due, grade each; then nothing is due."""
    open_review(page)
    wait_text(page, "#review-due", f"Cards due now: {expected}.")
    for left in range(expected - 1, -1, -1):
        page.wait_for_selector("#review-show:not([disabled])")
        page.click("#review-show")
        page.wait_for_selector("#review-back", state="visible")
        page.click(f"#review-{grade}")
        wait_text(page, "#review-due", f"Cards due now: {left}." if left else "Nothing is due now")
        wait_text(page, "#review-status", "you will see that card again")


@pytest.fixture(scope="module", params=["none"])
def learner(request, browser, tmp_path_factory):
    work = tmp_path_factory.mktemp(f"review-{request.param}")
    clock = Clock(work / "clock.txt")
    book = work / "book.pdf"
    book.write_bytes(make_pdf(BOOK))
    users = ",".join(f"{u}:{p}" for u, p in USERS.items())
    with running_app(work, LLM_BACKEND=request.param, STUDY_CLOCK_FILE=str(clock.path), APP_USERS=users) as url:
        context, page = login(browser, url, "alice")
        page.set_input_files("#upload input[type=file]", str(book))
        page.wait_for_selector("#upload-progress tr[data-state=done]", timeout=180_000)
        yield page, clock, work / "data", request.param, url
        context.close()


def test_cards_from_a_chapter_and_a_note_reviewed_over_days(learner, artefacts, tmp_path):
    page, clock, data_dir, llm, _ = learner
    open_tab(page, "Notes")
    page.fill("#concept input", "memoization")
    page.keyboard.press("Enter")
    page.fill("#note-text textarea", NOTE)
    page.click("#note-save")
    wait_text(page, "#note-status", "Saved the note")

    open_review(page)
    wait_text(page, "#review-due", "No cards yet")
    choose(page, "#cards-doc", "book.pdf")
    page.wait_for_function("() => document.querySelector('#cards-chapter input').value.length > 0")
    choose(page, "#cards-chapter", "Chapter 2 Dictionaries")
    made = make_cards(page, "#cards-make-chapter")
    assert made >= 3
    page.fill("#cards-first input", "3")
    page.fill("#cards-last input", "3")
    made += make_cards(page, "#cards-make-pages")     # the glossary page
    choose(page, "#cards-note", "memoization")
    due = made + make_cards(page, "#cards-make-note")
    wait_text(page, "#review-due", f"Cards due now: {due}")
    assert f"{due} due" in tab_label(page)
    assert "[...]" in page.inner_text("#review-front") or "?" in page.inner_text("#review-front")
    page.wait_for_function("() => { const i = document.querySelector('#review-page img'); return i && i.naturalWidth > 0; }")
    page.screenshot(path=str(artefacts / f"20-review-card-{llm}.png"), full_page=True)

    review_due(page, due)                         # day 0: each new card goes to its 10-minute learning step
    clock.set(1)                                  # the next day: all due again, then graduate to days
    review_due(page, due)
    clock.set(40)                                 # weeks later: every card due; one forgotten
    open_review(page)
    wait_text(page, "#review-due", f"Cards due now: {due}")
    page.click("#review-show")
    page.click("#review-again")
    wait_text(page, "#review-status", "Again")
    assert replay_matches_fsrs(data_dir) == due
    page.screenshot(path=str(artefacts / f"21-review-graded-{llm}.png"), full_page=True)


def test_a_quiz_on_the_chapter_is_graded(learner, artefacts):
    page, _, _, llm, _ = learner
    open_accordion(page, "#quiz", "#quiz-start")
    page.click("#quiz-start")
    wait_text(page, "#quiz-question", "Question 1 of")
    total = int(page.inner_text("#quiz-question").split(" of ")[1].split()[0])
    kinds = []
    for i in range(total):
        wait_text(page, "#quiz-question", f"Question {i + 1} of")
        page.wait_for_selector("#quiz-choices label, #quiz-answer textarea", state="visible")
        if page.is_visible("#quiz-choices label"):          # wrong options come from all of alice's cards
            kinds.append("choice")
            page.click("#quiz-choices label >> nth=0")
        else:                                               # too few other answers: asked as a short answer
            kinds.append("short")
            page.fill("#quiz-answer textarea", "dictionary")
        page.click("#quiz-submit")
        if i + 1 < total:
            wait_text(page, "#quiz-question", f"Question {i + 2} of")
    done = wait_text(page, "#quiz-question", "right")
    assert re.search(rf"\d+ of {total}", done) and "choice" in kinds, (done, kinds)
    assert re.search(r"Right|Not quite", page.inner_text("#quiz-result"))
    page.screenshot(path=str(artefacts / f"22-quiz-{llm}.png"), full_page=True)


def test_the_deck_exports_to_anki_and_the_report_shows_mastery_and_coverage(learner, artefacts, tmp_path):
    page, _, _, llm, _ = learner
    open_accordion(page, "#deck", "#cards-export-apkg")
    page.click("#cards-export-apkg")
    wait_text(page, "#deck-status", "Cards exported")
    link = page.wait_for_selector("#cards-export-file a")
    with page.expect_download() as info:
        link.click()
    target = tmp_path / "deck.apkg"
    info.value.save_as(target)
    with zipfile.ZipFile(target) as z:
        assert "collection.anki2" in z.namelist()

    open_tab(page, "Reports")
    page.click("#report-refresh")
    wait_text(page, "#report-status", "Report ready")
    with page.expect_download() as info:
        page.click("#report-download")
    report = json.loads(Path(info.value.path()).read_text(encoding="utf-8"))
    validate_report(report)
    study = report["study"]
    assert study["reviews"] > study["cards"] and study["quiz"]["answered"] >= 3
    assert {m["level"] for m in study["mastery"]} & {"weak", "learning", "strong"}
    chapters = {c["chapter"]: c for c in study["coverage"]}
    assert chapters["Chapter 2 Dictionaries"]["studied"] and not chapters["Chapter 1 Tuples"]["studied"]
    for plot in ("#plot-mastery", "#plot-coverage"):      # drawn from the same report
        page.wait_for_selector(f"{plot} canvas, {plot} svg")
    page.screenshot(path=str(artefacts / f"23-report-study-{llm}.png"), full_page=True)


def test_another_person_sees_none_of_the_cards(browser, learner, artefacts):
    alice, _, _, llm, url = learner
    context, page = login(browser, url, "bob")
    try:
        open_review(page)
        wait_text(page, "#review-due", "No cards yet")
        assert "due" not in tab_label(page)
        open_accordion(page, "#deck", "#cards-table")
        assert "[...]" not in page.inner_text("#cards-table") and "memo" not in page.inner_text("#cards-table")
        page.screenshot(path=str(artefacts / f"24-review-other-user-{llm}.png"), full_page=True)
    finally:
        context.close()
    open_review(alice)                                        # alice's cards are still there
    alice.wait_for_function("() => /Cards due now|Nothing is due now/.test(document.querySelector('#review-due').innerText)")


def test_a_cited_passage_becomes_a_note_that_can_be_edited_and_deleted(learner, artefacts):
    page, _, _, llm, _ = learner
    open_tab(page, "Q&A")
    page.fill("#question textarea", "What is a hash?")
    page.click("#ask")
    page.wait_for_selector("#sources label", timeout=120_000)
    page.click("#sources label >> nth=0")
    page.wait_for_function("() => { const i = document.querySelector('#page-view img'); return i && i.naturalWidth > 0; }")
    page.click("#note-passage")
    wait_text(page, "#page-status", "Saved the passage of", timeout=120_000)
    open_tab(page, "Notes")
    wait_text(page, "#notes-table", "book.pdf, p.")              # the note keeps where its passage is
    open_accordion(page, "#note-edit", "#note-pick")
    page.click("#note-pick input")
    page.click("[role=option] >> nth=0")                         # the newest note: the passage
    page.wait_for_function("() => document.querySelector('#note-edit-text textarea').value.length > 0")
    page.fill("#note-edit-text textarea", "A hash maps any value to an integer (my own words).")
    page.click("#note-edit-save")
    wait_text(page, "#note-status", "The note is changed")
    wait_text(page, "#notes-table", "my own words")
    page.screenshot(path=str(artefacts / f"25-note-from-passage-{llm}.png"), full_page=True)
    choose(page, "#note-pick", "my own words")
    page.click("#note-delete")
    wait_text(page, "#note-status", "The note is deleted")
    page.wait_for_function("() => !document.querySelector('#notes-table').innerText.includes('my own words')")

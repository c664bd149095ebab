"""End to end in Debian's Chromium against the real app (see conftest.py): a person uploads a PDF (a
15-page proposed airworthiness directive, generated: tests/browser/pdfgen.py's NOTICE),
asks, sees the answer stream with page citations, opens the cited page, writes a note, finds it in
Recall, downloads the report (validated against docs/report.schema.json); a second person sees none
of it; the UI follows the browser's language. Screenshots of each tab go to test-artefacts/.

The tests of this module share alice's page and run in order (each builds on the previous one).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from assistant.report import validate_report
from tests.browser.conftest import login, open_tab
from tests.browser.pdfgen import NOTICE, make_pdf

pytestmark = pytest.mark.browser

NAME = "proposed-airworthiness-directive.pdf"
# The loopback model's answer: sentences the notice backs (unbacked ones are left out of an answer).
ANSWER = ("The threshold is a function of the magnitude of the disagreement and its rate of change [1]. "
          "If the two sensors disagree by more than the threshold, the stabilizer trim system is disabled [1].")
QUESTION = "What does the AOA sensor disagreement threshold depend on?"
NOTE = "MCAS is disabled for the rest of the flight when the two AOA sensors disagree."

# Records every text the last answer bubble shows while the answer is written, and how many sources
# were listed at that moment.
WATCH_CHAT = """() => {
  window.__answers = [];
  window.__sourcesSeen = [];
  const chat = document.querySelector('#chat');
  new MutationObserver(() => {
    const bots = chat.querySelectorAll('[data-testid="bot"]');
    if (bots.length) {
      const text = bots[bots.length - 1].innerText.trim();
      if (window.__answers[window.__answers.length - 1] !== text) {
        window.__answers.push(text);
        window.__sourcesSeen.push(document.querySelectorAll('#sources label').length);
      }
    }
  }).observe(chat, {subtree: true, childList: true, characterData: true});
}"""


def wait_text(page, selector: str, needle: str, timeout: int = 30_000) -> str:
    page.wait_for_function("([s, n]) => { const e = document.querySelector(s); return e && e.innerText.includes(n); }",
                           arg=[selector, needle], timeout=timeout)
    return page.inner_text(selector)


def download_report(page, tmp_path) -> dict:
    open_tab(page, "Reports")
    page.click("#report-refresh")
    wait_text(page, "#report-status", "Report ready")
    page.wait_for_function("!document.querySelector('#report-download button, #report-download').disabled")
    with page.expect_download() as info:
        page.click("#report-download")
    target = tmp_path / info.value.suggested_filename
    info.value.save_as(target)
    report = json.loads(target.read_text(encoding="utf-8"))
    validate_report(report)
    return report


@pytest.fixture(scope="module")
def notice(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("notice") / NAME
    path.write_bytes(make_pdf(NOTICE, title="Airworthiness Directives; Transport Category Airplanes"))
    return path


@pytest.fixture(scope="module")
def alice(browser, live_app):
    context, page = login(browser, live_app, "alice")
    yield page
    context.close()


def test_upload_shows_progress_per_file_and_lists_the_document(alice, notice, artefacts):
    page = alice
    page.screenshot(path=str(artefacts / "01-documents-empty.png"), full_page=True)
    page.set_input_files("#upload input[type=file]", str(notice))
    page.wait_for_selector("#upload-progress tr[data-state]")          # the per-file row appears at once
    page.wait_for_selector("#upload-progress tr[data-state=done]", timeout=180_000)
    row = page.inner_text("#upload-progress tr[data-state=done]")
    assert NAME in row and "15 pages" in row
    assert page.get_attribute("#upload-progress tr[data-state=done] progress", "value") == "100"
    table = wait_text(page, "#doc-table", NAME)
    assert "15" in table
    wait_text(page, "#doc-status", "1 of 1 files added")
    page.screenshot(path=str(artefacts / "02-documents.png"), full_page=True)


def test_reupload_says_it_is_there_and_a_broken_file_is_one_sentence(alice, notice, tmp_path):
    page = alice
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\n" + b"\x00garbage" * 50)
    page.set_input_files("#upload input[type=file]", [str(notice), str(broken)])
    wait_text(page, "#doc-status", "2 files", timeout=60_000)
    exists = page.inner_text("#upload-progress tr[data-state=exists]")
    assert "Already in your library" in exists
    error = page.inner_text("#upload-progress tr[data-state=error]")
    assert "broken.pdf" in error and "Traceback" not in error
    assert page.inner_text("#doc-table").count(NAME) == 1


def test_answer_streams_with_page_citations_and_opens_the_cited_page(alice, artefacts, fake_llm):
    page = alice
    fake_llm.mode, fake_llm.stall_seconds = "stall_midstream", 1.5   # a pause mid-answer makes streaming visible
    fake_llm.answer = ANSWER
    try:
        open_tab(page, "Q&A")
        assert page.is_disabled("#mqe input") is False                   # an LLM is configured here
        assert "Answers are written by fake-model." in page.inner_text("#who")
        assert not page.is_visible("#llm-notice")
        page.evaluate(WATCH_CHAT)
        page.fill("#question textarea", QUESTION)
        page.click("#ask")
        wait_text(page, "#answer-notice", "Answered by fake-model", timeout=60_000)
    finally:
        fake_llm.mode = "ok"
    answers, sources_seen = page.evaluate("[window.__answers, window.__sourcesSeen]")
    final = answers[-1]
    assert final.startswith("The threshold is a function of the magnitude")  # the loopback LLM's answer
    checking = "\n\nChecking each sentence against its passage…"   # shown under a model's answer as it streams
    partial = [i for i, a in enumerate(answers) if a and a != final and a != "…"
               and final.startswith(a.split(checking)[0].rstrip("…").strip())]
    assert partial, f"the answer appeared at once, not streamed: {answers}"
    assert all(sources_seen[i] > 0 for i in partial), (answers, sources_seen)   # the passages came first
    labels = [label.inner_text() for label in page.query_selector_all("#sources label")]
    cited = re.compile(r"\[\d+\] " + re.escape(NAME) + r" · pp?\. \d+")
    assert labels and all(cited.match(x) for x in labels), labels
    assert not any("score" in x for x in labels)
    assert all(re.search(r" — (strong|partial|weak) match$", x) for x in labels if "match" in x), labels
    assert "Related passages" not in page.inner_text("#sources")
    assert page.inner_text("#searched-for").strip() == ""
    last = page.query_selector_all('#chat [data-testid="bot"]')[-1]
    assert last.query_selector('a[href^="#cite-"]') is not None            # [n] is a link to its source
    page.click("#sources label >> nth=0")
    page.wait_for_selector("#page-view img")
    caption = wait_text(page, "#page-view", "page ")
    assert re.search(r"page \d+ of 15", caption)
    src = page.get_attribute("#page-view img", "src")
    assert src and ("/file=" in src or src.startswith("data:image"))
    page.screenshot(path=str(artefacts / "03-qa.png"), full_page=True)


def test_a_follow_up_is_rewritten_by_the_model_and_says_what_it_searched(alice, fake_llm):
    page = alice
    fake_llm.rewrite = "What does the AOA sensor disagreement threshold depend on, and why?"
    fake_llm.answer = ANSWER
    try:
        page.fill("#question textarea", "Why does it depend on that?")
        page.click("#ask")
        searched = wait_text(page, "#searched-for", "Searched for:", timeout=60_000)
        wait_text(page, "#answer-notice", "Answered by", timeout=60_000)
    finally:
        fake_llm.rewrite = None
    assert "What does the AOA sensor disagreement threshold depend on, and why?" in searched


def test_a_question_about_the_past_is_answered_from_memory(alice, artefacts):
    page = alice
    page.fill("#question textarea", "What did I study today?")
    page.click("#ask")
    page.wait_for_function("document.querySelectorAll('#chat [data-testid=\"bot\"]').length >= 3", timeout=60_000)
    page.wait_for_function("document.querySelectorAll('#sources label').length === 0")
    assert page.inner_text("#memory-used") == ""          # memory answers are not shown as document sources
    # the fake model's reply is about functions, which no record says: the records are listed instead
    notice = wait_text(page, "#answer-notice", "not in your records")
    assert "no language model" not in notice, notice        # a model ran; its words were set aside
    last = page.query_selector_all('#chat [data-testid="bot"]')[-1].inner_text()
    assert "From your learning history" in last and "named sequence" not in last, last
    page.screenshot(path=str(artefacts / "08b-memory-answer-records.png"), full_page=True)


def test_note_with_a_concept_appears_in_the_graph(alice, artefacts):
    page = alice
    open_tab(page, "Notes")
    page.click("#concept input")
    page.wait_for_selector("ul[role=listbox] li", timeout=60_000)   # suggestions from the document
    suggestions = [li.inner_text() for li in page.query_selector_all("ul[role=listbox] li")]
    assert "Proposed Design Changes" in suggestions or "Background" in suggestions, suggestions
    page.fill("#concept input", "MCAS")
    page.keyboard.press("Enter")
    page.fill("#note-text textarea", NOTE)
    page.click("#note-save")
    wait_text(page, "#note-status", "Saved the note (MCAS)")
    wait_text(page, "#notes-table", NOTE)
    graph = page.inner_html("#concept-graph")
    assert "<svg" in graph and ">MCAS<" in graph
    page.screenshot(path=str(artefacts / "04-notes.png"), full_page=True)


def test_recall_finds_the_note_and_filters_by_type(alice, artefacts):
    page = alice
    open_tab(page, "Recall")
    page.fill("#recall-query textarea, #recall-query input", "MCAS disabled when sensors disagree")
    page.click("#recall-search")
    results = wait_text(page, "#recall-results", "MCAS is disabled")
    assert "semantic" in results and "episodic" in results
    page.uncheck("#recall-types label:has-text('episodic') input")
    page.uncheck("#recall-types label:has-text('working') input")
    page.click("#recall-search")
    page.wait_for_function("!document.querySelector('#recall-results').innerText.includes('episodic')")
    assert "MCAS is disabled" in page.inner_text("#recall-results")
    page.click("#maintenance")
    page.click("#forget-preview")
    wait_text(page, "#maintenance-status", "would be forgotten")
    page.screenshot(path=str(artefacts / "05-recall.png"), full_page=True)


def test_report_downloads_as_schema_valid_json_with_plots(alice, artefacts, tmp_path):
    page = alice
    report = download_report(page, tmp_path)
    assert report["user"]["id"] == "alice"
    assert [d["name"] for d in report["documents"]] == [NAME] and report["documents"][0]["pages"] == 15
    asked = [q for q in report["questions"] if q["question"] == QUESTION]
    assert asked and asked[0]["citations"] and asked[0]["citations"][0]["page_start"] >= 1
    assert any(q["route"] == "memory" for q in report["questions"])
    assert [n["content"] for n in report["notes"]] == [NOTE] and report["notes"][0]["concept"] == "MCAS"
    assert report["retrieval"]["llm_configured"] is True
    for plot in ("#plot-activity", "#plot-questions", "#plot-concepts", "#plot-memory"):
        page.wait_for_selector(f"{plot} canvas, {plot} svg")
    page.screenshot(path=str(artefacts / "06-reports.png"), full_page=True)


def test_a_second_user_sees_nothing_of_the_first(browser, live_app, alice, artefacts, tmp_path):
    context, page = login(browser, live_app, "bob")
    try:
        assert NAME not in page.inner_text("#doc-table")
        open_tab(page, "Notes")
        wait_text(page, "#concept-graph", "No concepts yet")
        assert NOTE not in page.inner_text("#notes-table")
        page.fill("#note-text textarea", "Bob's sourdough starter needs feeding twice a day.")
        page.click("#note-save")
        wait_text(page, "#note-status", "Saved the note")
        open_tab(page, "Recall")
        page.fill("#recall-query textarea, #recall-query input", "MCAS sensors disagree")
        page.click("#recall-search")
        wait_text(page, "#recall-status", "Memories found")
        assert "MCAS" not in page.inner_text("#recall-results")
        report = download_report(page, tmp_path)
        assert report["user"]["id"] == "bob" and report["documents"] == [] and report["questions"] == []
        assert [n["content"] for n in report["notes"]] == ["Bob's sourdough starter needs feeding twice a day."]
        page.screenshot(path=str(artefacts / "07-bob-reports.png"), full_page=True)
    finally:
        context.close()
    # ...and alice does not see bob's note.
    open_tab(alice, "Recall")
    alice.fill("#recall-query textarea, #recall-query input", "sourdough starter feeding")
    alice.click("#recall-search")
    wait_text(alice, "#recall-status", "Memories found")
    assert "sourdough" not in alice.inner_text("#recall-results")


def test_deleting_the_document_empties_the_library(alice):
    page = alice
    open_tab(page, "Documents")
    page.click("#doc-select input")
    page.click(f"ul[role=listbox] li:has-text('{NAME}')")
    page.click("#doc-delete")
    wait_text(page, "#doc-status", f"Deleted '{NAME}'")
    page.wait_for_function(f"!document.querySelector('#doc-table').innerText.includes('{NAME}')")


def test_the_ui_follows_the_browser_language(browser, live_app, artefacts):
    context, page = login(browser, live_app, "bob", locale="zh-CN")
    try:
        tabs = page.inner_text("#tabs")
        for label in ("文档", "问答", "笔记", "回顾", "报告"):
            assert label in tabs
        assert "已登录" in page.inner_text("#who")
        page.screenshot(path=str(artefacts / "08-zh-documents.png"), full_page=True)
    finally:
        context.close()

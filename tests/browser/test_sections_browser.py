"""Sources without pages in Debian's Chromium against the real app with no language model (see
conftest.extractive_app): a Markdown study note (with an <img onerror> and a <script> line, and a Chinese
section) and a PDF are uploaded; a question about the note cites it; [1] opens the cited SECTION as text
in place of the page image, the passage marked, the note's HTML printed as text; a PDF source brings the
page image back. The tests share one page and run in order. Screenshot 13 goes to test-artefacts/.
"""
from __future__ import annotations

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from rag.chunk import split_sections
from tests.browser.conftest import login
from tests.browser.pdfgen import AVIATION, make_pdf

pytestmark = pytest.mark.browser

NOTE_NAME = "perceptron-notes.md"
NOTE = """# Perceptron study notes

These notes summarise the first lecture on perceptrons of the machine learning course.

## 1 History

Frank Rosenblatt built the first perceptron in 1958 at the Cornell Aeronautical Laboratory.

<img src=x onerror="window.__pwned = 1">

<script>window.__pwned = 2</script>

## 2 Learning rule

The perceptron learning rule adds the input to the weights after a false negative and subtracts it
after a false positive, until every training example is classified correctly.

## 3 感知机

感知机是一种二分类的线性模型，它根据输入特征的加权和是否超过阈值来决定输出的类别。
"""
SECTIONS = len(split_sections(NOTE.strip("\n")))


def source_labels(page) -> list[str]:
    return [label.inner_text().strip() for label in page.query_selector_all("#sources label")]


def ask(page, question: str) -> str:
    """Ask and wait for the finished answer (its line says who answered); the answer's text."""
    before = page.eval_on_selector_all('#chat [data-testid="bot"]', "els => els.length")
    page.fill("#question textarea", question)
    page.click("#ask")
    page.wait_for_function(
        """n => document.querySelectorAll('#chat [data-testid="bot"]').length > n
              && document.querySelector('#answer-notice').innerText.trim().length > 0""", arg=before,
        timeout=60_000)
    return page.eval_on_selector_all('#chat [data-testid="bot"]', "els => els[els.length - 1].innerText.trim()")


def viewer(page) -> dict:
    return page.evaluate("""() => {
      const visible = (sel) => { const e = document.querySelector(sel); return !!e && e.offsetParent !== null; };
      const panel = document.querySelector('#section-view');
      return {image: visible('#page-view'), panel: visible('#section-view .section-text'),
              marks: panel ? [...panel.querySelectorAll('mark')].map(m => m.innerText) : [],
              caption: panel && panel.querySelector('.section-caption') ? panel.querySelector('.section-caption').innerText : '',
              text: panel ? panel.innerText : '',
              imgs: panel ? panel.querySelectorAll('img, script, [onerror]').length : -1,
              pwned: window.__pwned === undefined ? 0 : window.__pwned};
    }""")


@pytest.fixture(scope="module")
def learner(browser, extractive_app, tmp_path_factory):
    folder = tmp_path_factory.mktemp("sections")
    note = folder / NOTE_NAME
    note.write_text(NOTE, encoding="utf-8")
    pdf = folder / "flight-notes.pdf"
    pdf.write_bytes(make_pdf(AVIATION, title="Flight Control Notes"))
    context, page = login(browser, extractive_app, "reader")
    page.set_input_files("#upload input[type=file]", [str(note), str(pdf)])
    page.wait_for_function("() => document.querySelectorAll('#upload-progress tr[data-state=done]').length === 2",
                           timeout=120_000)
    yield page
    context.close()


def test_the_note_is_counted_in_sections_not_pages(learner):
    page = learner
    row = page.inner_text(f"#upload-progress tr:has-text('{NOTE_NAME}')")
    assert f"Added: {SECTIONS} sections" in row and "0 pages" not in row, row
    assert "2 pages" in page.inner_text("#upload-progress tr:has-text('flight-notes.pdf')")
    page.wait_for_function(f"() => document.querySelector('#doc-table').innerText.includes('{NOTE_NAME}')")
    table = page.inner_text("#doc-table")
    assert f"{SECTIONS} sections" in table and "2 pages" in table and "0 pages" not in table


def test_a_cited_section_is_shown_as_text_with_the_passage_marked(learner, artefacts):
    page = learner
    page.click("button[role=tab]:has-text('Q&A')")
    page.wait_for_selector("#question textarea")
    answer = ask(page, "Who built the first perceptron, and in which year?")
    assert "Rosenblatt" in answer
    labels = source_labels(page)
    assert any(label.startswith(f"[1] {NOTE_NAME} · § 1 History") for label in labels), labels
    link = page.query_selector_all('#chat [data-testid="bot"]')[-1].query_selector('a[href^="#cite-"]')
    assert link is not None and link.inner_text().strip() == "[1]"
    link.click()
    page.wait_for_selector("#section-view mark", state="visible")
    shown = viewer(page)
    assert shown["panel"] and not shown["image"]
    assert any("Rosenblatt built the first perceptron in 1958" in m for m in shown["marks"]), shown["marks"]
    assert "§ Perceptron study notes › 1 History" in shown["caption"]
    assert f"section 2 of {SECTIONS}" in shown["caption"]
    # the note's HTML is text on the screen: no element of it exists, nothing of it ran
    assert '<img src=x onerror="window.__pwned = 1">' in shown["text"] and "<script>" in shown["text"]
    assert shown["imgs"] == 0 and shown["pwned"] == 0
    assert "Learning rule" not in shown["text"]                 # the next section is not part of this one
    page.screenshot(path=str(artefacts / "13-cited-section.png"), full_page=True)


def test_a_chinese_section_and_back_to_a_pdf_page(learner):
    page = learner
    ask(page, "感知机根据什么决定输出的类别？")
    page.wait_for_function("() => document.querySelectorAll('#sources label').length > 0")
    labels = source_labels(page)
    index = next(i for i, label in enumerate(labels) if NOTE_NAME in label)
    assert "§ 3 感知机" in labels[index], labels
    page.click(f"#sources label >> nth={index}")
    page.wait_for_function("() => [...document.querySelectorAll('#section-view mark')]"
                           ".some(m => m.innerText.includes('加权和'))")
    assert "3 感知机" in viewer(page)["caption"]

    ask(page, "What happens when the two angle of attack sensors disagree?")
    # Any PDF of the aviation text will do: an earlier browser test may have uploaded the same text as
    # flight-history.pdf for this user, and an identical passage is cited once, from either file. The
    # answer's line can also show before the new sources replace the last question's: wait for them.
    try:
        page.wait_for_function("() => [...document.querySelectorAll('#sources label')]"
                               ".some(l => l.innerText.includes('.pdf'))", timeout=15_000)
    except PlaywrightTimeout:
        pass
    labels = source_labels(page)
    index = next((i for i, label in enumerate(labels) if ".pdf" in label), None)
    assert index is not None, labels
    page.click(f"#sources label >> nth={index}")
    page.wait_for_function("() => document.querySelector('#page-view')?.innerText.includes(' of 2')")
    page.wait_for_selector("#page-view img")
    shown = viewer(page)
    assert shown["image"] and not shown["panel"]

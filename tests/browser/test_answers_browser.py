"""Answers in Debian's Chromium against the real app WITHOUT a language model (LLM_BACKEND=none, no
endpoint, no login; see conftest.extractive_app): a small study guide (lists and tuples, recursion, and
two Chinese pages on 支持向量机 and Transformer 注意力机制) is uploaded, then questions are asked the
way a learner asks them.

- a new question is searched as asked, even right after another one, and cites its own page;
- a follow-up that points back ("Why is it immutable?") is searched with the question before it, and
  the chat says so ("Searched for: …");
- a question the documents do not answer says so plainly and lists the closest passages as related;
- [n] in an answer opens that source's page; HTML in a document is printed, never rendered; fenced
  code stays code;
- the UI says which model answers (here: none, the answers quote the documents).

The tests share one page and run in order. Screenshots 09-12 go to test-artefacts/.
"""
from __future__ import annotations

import re

import pytest

from tests.browser.conftest import login, open_tab, upload
from tests.browser.pdfgen import STUDY, make_pdf
from tests.test_rows import ZH_PAGE

pytestmark = pytest.mark.browser

PDF_NAME = "study-guide.pdf"
WEB_PAGE = ["# Web pages",
            "The tag <img src=x onerror=alert(1)> shows an image in a web page.",
            "A paragraph of a web page is written between <p> and </p> tags."]
CODE_NOTES = """# Recursion in code

Here is a recursive factorial function in Python:

```python
def factorial(n):
    if n <= 1:
        return 1
    return n * factorial(n - 1)
```
"""
TUPLES = "What is the difference between a list and a tuple?"
EXTRACTIVE = "Quoted from your documents (no language model)."


def bots(page) -> list[str]:
    return page.eval_on_selector_all('#chat [data-testid="bot"]', "els => els.map(e => e.innerText.trim())")


def source_labels(page) -> list[str]:
    return [label.inner_text().strip() for label in page.query_selector_all("#sources label")]


def ask(page, question: str) -> str:
    """Ask and wait for the finished answer (its line says who answered); the answer's text."""
    before = len(bots(page))
    page.fill("#question textarea", question)
    page.click("#ask")
    page.wait_for_function(
        """n => document.querySelectorAll('#chat [data-testid="bot"]').length > n
              && document.querySelector('#answer-notice').innerText.trim().length > 0""", arg=before,
        timeout=60_000)
    return bots(page)[-1]


def pages_of(labels: list[str]) -> set[int]:
    return {int(m.group(1)) for label in labels for m in re.finditer(r"· pp?\. (\d+)", label)}


@pytest.fixture(scope="module")
def learner(browser, extractive_app, tmp_path_factory):
    folder = tmp_path_factory.mktemp("study")
    pdf = folder / PDF_NAME
    pdf.write_bytes(make_pdf(STUDY + [WEB_PAGE], title="Study guide"))
    context, page = login(browser, extractive_app, "reader")
    page.set_input_files("#upload input[type=file]", str(pdf))
    page.wait_for_selector("#upload-progress tr[data-state=done]", timeout=120_000)
    assert "5 pages" in page.inner_text("#upload-progress tr[data-state=done]")
    page.click("button[role=tab]:has-text('Q&A')")
    page.wait_for_selector("#question textarea")
    yield page
    context.close()


def test_the_ui_says_answers_quote_the_documents(learner):
    page = learner
    assert "No language model: answers quote your documents." in page.inner_text("#who")
    assert "No language model is available here" in page.inner_text("#llm-notice")
    assert page.is_disabled("#mqe input") and page.is_disabled("#hyde input")
    body = page.inner_text("body")
    for setting in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "LLM_BACKEND", "APP_USERS"):
        assert setting not in body


def test_a_new_question_cites_its_own_page_not_the_previous_one(learner, artefacts):
    page = learner
    first = ask(page, TUPLES)
    assert "lists are mutable and tuples are immutable" in first
    labels = source_labels(page)
    assert labels and all(re.fullmatch(r"\[\d\] study-guide\.pdf · p\. \d — (strong|partial|weak) match", x)
                          for x in labels), labels
    assert pages_of(labels) == {1} and "score" not in " ".join(labels)
    assert page.inner_text("#answer-notice").strip() == EXTRACTIVE
    page.screenshot(path=str(artefacts / "09-answer-extractive.png"), full_page=True)

    second = ask(page, "How does recursion work?")
    assert "calls itself" in second and "tuple" not in second
    assert pages_of(source_labels(page)) == {2}
    assert page.inner_text("#searched-for").strip() == ""          # an independent question: searched as asked


def test_a_new_chinese_question_cites_its_own_page(learner):
    page = learner
    first = ask(page, "Transformer 的注意力机制是什么?")
    assert "注意力" in first and pages_of(source_labels(page)) == {4}
    second = ask(page, "什么是支持向量机?")
    assert "支持向量机" in second and "Transformer" not in second
    assert pages_of(source_labels(page)) == {3}
    assert page.inner_text("#searched-for").strip() == ""


def test_a_follow_up_is_searched_with_the_question_before_it(learner, artefacts):
    page = learner
    ask(page, TUPLES)
    assert page.inner_text("#searched-for").strip() == ""
    answer = ask(page, "Why is it immutable?")
    searched = page.inner_text("#searched-for")
    assert searched.startswith("Searched for:") and TUPLES in searched, searched
    assert "immutable" in answer and pages_of(source_labels(page)) == {1}
    page.screenshot(path=str(artefacts / "10-followup.png"), full_page=True)


def test_a_question_the_documents_do_not_answer_lists_related_passages(learner, artefacts):
    page = learner
    answer = ask(page, "Who painted the Mona Lisa?")
    assert answer.startswith("This is not in your documents")
    assert "Related passages (not an answer)" in page.inner_text("#sources")
    labels = source_labels(page)
    assert labels and all("study-guide.pdf" in x and "score" not in x for x in labels), labels
    last = page.query_selector_all('#chat [data-testid="bot"]')[-1]
    assert last.query_selector_all('a[href^="#cite-"]') == []       # nothing to cite: no answer was given
    assert page.inner_text("#answer-notice").strip() == "Searched your documents (no language model)."
    page.screenshot(path=str(artefacts / "11-not-in-documents.png"), full_page=True)


def test_clicking_a_citation_opens_its_page(learner, artefacts):
    page = learner
    # [1] of the recursion answer (the second answer): not the latest answer, so its own sources come back
    link = page.query_selector_all('#chat [data-testid="bot"]')[1].query_selector('a[href^="#cite-"]')
    assert link is not None and link.inner_text().strip() == "[1]"
    link.click()
    page.wait_for_selector("#page-view img")
    caption = page.wait_for_function(
        "() => { const t = document.querySelector('#page-view')?.innerText; return t && t.includes('page 2 of 5') && t; }")
    assert "study-guide.pdf · p. 2" in caption.json_value()
    assert "Sources — click one" in page.inner_text("#sources")
    checked = page.query_selector("#sources input:checked")
    assert checked is not None
    assert pages_of(source_labels(page)) == {2}
    assert page.url.endswith("/") or "#cite" not in page.url        # the link did not navigate
    page.screenshot(path=str(artefacts / "12-citation-page.png"), full_page=True)
    # the source list still works on its own
    page.click("#sources label >> nth=0")
    page.wait_for_function("() => document.querySelector('#page-view')?.innerText.includes('page 2 of 5')")


def test_document_html_is_printed_not_rendered(learner):
    page = learner
    answer = ask(page, "What does the img tag show in a web page?")
    assert "<img src=x onerror=alert(1)>" in answer
    assert page.query_selector_all("#chat img[src='x'], #chat [onerror]") == []


TIE_NOTES = """# Ties in music notation

A tie is created by appending a tilde ‘~’ to the first of the two notes being tied, as in g'4~ g.
Your own tie styles go in the folder ~/texmf of your home directory.
"""


def test_a_tilde_in_a_document_is_text_not_strikethrough(learner, tmp_path):
    """Two tildes in a passage ("‘~’", "g'4~ g") once struck out all the text between them."""
    page = learner
    notes = tmp_path / "tie-notes.md"
    notes.write_text(TIE_NOTES, encoding="utf-8")
    open_tab(page, "Documents")
    upload(page, notes)
    open_tab(page, "Q&A")
    answer = ask(page, "How is a tie created in music notation?")
    assert "appending a tilde ‘~’ to the first of the two notes being tied, as in g'4~ g" in answer, answer
    assert page.query_selector_all("#chat del, #chat s") == []


def test_fenced_code_stays_code(learner, tmp_path, artefacts):
    page = learner
    notes = tmp_path / "factorial-notes.md"
    notes.write_text(CODE_NOTES, encoding="utf-8")
    open_tab(page, "Documents")
    upload(page, notes)
    open_tab(page, "Q&A")
    # the study guide PDF speaks of factorials in prose too: the question names what the notes say
    ask(page, "How do I write a recursive factorial function in Python?")
    last = page.query_selector_all('#chat [data-testid="bot"]')[-1]
    code = last.query_selector("pre code")
    assert code is not None, last.inner_html()
    assert "def factorial(n):\n    if n <= 1:\n        return 1" in code.inner_text()
    page.screenshot(path=str(artefacts / "14-howto-worked-example.png"), full_page=True)


def test_a_table_of_short_lines_is_shown_row_by_row(learner, tmp_path, artefacts):
    page = learner
    notes = tmp_path / "ls-table-notes.md"
    notes.write_text(ZH_PAGE, encoding="utf-8")        # a manual's table as a PDF gives it: short lines, a caption
    open_tab(page, "Documents")
    upload(page, notes)
    open_tab(page, "Q&A")
    page.click("#clear-chat")          # a new conversation: the question is searched as asked
    page.wait_for_function("() => document.querySelectorAll('#chat [data-testid=\"bot\"]').length === 0")
    answer = ask(page, "ls -l 输出最前面那个字母代表啥？d 和 l 分别是什么意思")
    assert "d 目录\nl 符号链接" in answer and "Table 1.4" in answer, answer      # one row a line, with its caption
    last = page.query_selector_all('#chat [data-testid="bot"]')[-1]
    assert "- 普通文件" in last.inner_text() and last.query_selector_all("li") == []   # a row, not a list item
    assert pages_of(source_labels(page)) == set() and "ls-table-notes.md" in source_labels(page)[0]
    page.screenshot(path=str(artefacts / "14b-table-rows.png"), full_page=True)


PACKAGE_TOOLS = """# Package tools

## apt

apt is the high-level command line tool for installing and removing packages, meant for people at a terminal.

## apt-get

apt-get is the older low-level command line tool whose output stays stable, so scripts should call it.

## aptitude

aptitude is a package manager with a full-screen text interface that can also resolve conflicts interactively.
"""


def test_a_comparison_of_three_tools_shows_each_side_labelled(learner, tmp_path, artefacts):
    page = learner
    notes = tmp_path / "package-tools.md"
    notes.write_text(PACKAGE_TOOLS, encoding="utf-8")
    open_tab(page, "Documents")
    upload(page, notes)
    open_tab(page, "Q&A")
    page.click("#clear-chat")
    page.wait_for_function("() => document.querySelectorAll('#chat [data-testid=\"bot\"]').length === 0")
    answer = ask(page, "what's the difference between apt, apt-get and aptitude?")
    for side, says in (("apt", "meant for people at a terminal"), ("apt-get", "scripts should call it"),
                       ("aptitude", "full-screen text interface")):
        assert f"{side}:" in answer and says in answer, answer
    # the notes are one chunk: each side's source is labelled with the section its sentence sits under
    headings = {label.split(" · § ")[-1] for label in source_labels(page)}
    assert len(headings) == 3, source_labels(page)
    page.screenshot(path=str(artefacts / "14c-three-way-comparison.png"), full_page=True)

"""A document's study guide in Debian's Chromium against the real app with no model: the learner picks a book in
the Documents tab, opens its guide (outline, cited chapter summaries, key terms, suggested questions), clicks a
suggested question and asks it in Q&A — an English and a Chinese textbook — and sees the question counted on
its chapter when the guide opens again; then studies a chapter (cards from it, the Review tab, a short quiz on
it) and sees its standing move on the guide. Screenshots 30-39 go to test-artefacts/.
"""
from __future__ import annotations

import pytest

from tests.browser.conftest import login, open_tab, upload
from tests.browser.test_answers_browser import ask
from tests.browser.test_app_browser import download_report
from tests.browser.test_review_browser import choose
from tests.test_shapes import BOOK, BOOK_ZH

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def library(browser, extractive_app, tmp_path_factory):
    folder = tmp_path_factory.mktemp("guide")
    books = {folder / "guide-python.md": BOOK, folder / "guide-ml.md": BOOK_ZH}
    for path, text in books.items():
        path.write_text(text + "\nA <b>bold</b> claim is shown as text, not as HTML.\n",
                        encoding="utf-8")
    # a library of its own (login "guide"): another module's copy of the same book would answer its questions
    # first, and the guide rightly keeps only those its own book answers
    context, page = login(browser, extractive_app, "guide")
    upload(page, *books)
    yield page
    context.close()


def pick(page, name: str) -> None:
    page.click("#doc-select input")
    page.click(f"ul[role=listbox] li:has-text('{name}')")


def open_guide(page, name: str, title: str) -> None:
    """Pick the document named so, open its guide and wait until it is that document's (`title`: the guide
    shown before stays until the new one comes) and its questions are checked."""
    pick(page, name)
    page.click("#guide-open")
    page.wait_for_function("t => document.querySelector('#guide-view .guide-title')?.innerText === t && "
                           "!document.querySelector('#guide-view .guide-pending')", arg=title, timeout=300_000)
    page.wait_for_selector("#guide-questions button, #guide-questions td, #guide-questions .gallery-item")


def guide_then_question(page, name: str, title: str, question: str, shots: tuple[str, str], artefacts) -> tuple[str, str]:
    """Open the guide of the document named so (its second chapter unfolded), click one of its suggested
    questions and ask it in Q&A: (the guide's text, the answer)."""
    open_tab(page, "Documents")
    open_guide(page, name, title)
    assert page.locator("#guide-view b").count() == 0       # document text is never HTML
    page.click("#guide-view details.guide-chapter >> nth=1 >> summary")
    text = page.inner_text("#guide-view")                    # the first two chapters unfolded
    page.screenshot(path=str(artefacts / shots[0]), full_page=True)
    page.click(f"#guide-questions >> text={question}")
    page.wait_for_selector("button[role=tab][aria-selected=true]:has-text('Q&A')")
    page.wait_for_function("q => document.querySelector('#question textarea').value === q", arg=question)
    answer = ask(page, question)
    page.screenshot(path=str(artefacts / shots[1]), full_page=True)
    return text, answer


def test_the_guide_of_an_english_book_and_a_suggested_question(library, artefacts):
    text, answer = guide_then_question(library, "guide-python.md", "Learning Python", "What is a tuple?",
                                       ("30-guide-en.png", "31-guide-question-en.png"), artefacts)
    assert "Chapter 1 Values and variables" in text and "Chapter 2 Lists and tuples" in text
    assert "2.2 Tuples" in text and "A variable is a name that refers to a value." in text
    assert "guide-python.md" in text                        # the summary's sources
    assert "A tuple is a sequence of values that is immutable." in answer and "not in your documents" not in answer
    assert "questions answered from it: 0" in progress(text, 1) and "mastery: new" in progress(text, 1)

    open_tab(library, "Documents")                          # the guide again: the question is on its chapter
    pick(library, "guide-python.md")
    library.click("#doc-refresh")                           # a refresh answered after the pick keeps it
    library.wait_for_timeout(3000)                          # (it used to clear it: the guide then opened nothing)
    assert "guide-python.md" in library.input_value("#doc-select input")
    open_guide(library, "guide-python.md", "Learning Python")
    # textContent: a folded chapter's innerText is empty
    library.wait_for_function("() => document.querySelectorAll('#guide-view .guide-progress')[1]?.textContent"
                              ".includes('questions answered from it: 1')")
    library.screenshot(path=str(artefacts / "34-guide-progress-en.png"), full_page=True)
    assert "questions answered from it: 0" in library.text_content("#guide-view .guide-progress >> nth=0")
    open_outline_entry(library, "2.2 Tuples", "A tuple is a sequence of values that is immutable.",
                       "37-guide-outline-en.png", artefacts)
    # a chapter summary's citation works: clicked, its passage opens in Q&A
    open_tab(library, "Documents")
    # (its quote opens with the section's first sentence: a section of a short chapter is summarized by two)
    open_outline_entry(library, "A value is one of the basic things", "Values belong to different types: 2 is an integer",
                       "39-guide-source-en.png", artefacts, listing="#guide-sources")


def open_outline_entry(page, entry: str, text: str, shot: str, artefacts, listing: str = "#guide-outline") -> None:
    """Click a chapter or section of the open guide's outline (or a passage its summaries cite, `listing`
    "#guide-sources"): the Q&A tab shows where it starts."""
    page.click(f"{listing} >> text={entry}")
    page.wait_for_selector("button[role=tab][aria-selected=true]:has-text('Q&A')")
    page.wait_for_function("t => document.querySelector('#section-view')?.innerText.includes(t)", arg=text)
    page.screenshot(path=str(artefacts / shot), full_page=True)


def progress(guide_text: str, chapter: int) -> str:
    """The progress line of the guide's `chapter`-th chapter (0-based) in its unfolded text."""
    lines = [line for line in guide_text.splitlines() if line.lower().startswith("your progress")]   # CSS capitals it
    return lines[chapter]


def test_the_guide_of_a_chinese_book_and_a_suggested_question(library, artefacts):
    text, answer = guide_then_question(library, "guide-ml.md", "机器学习笔记", "过拟合和欠拟合有什么区别？",
                                       ("32-guide-zh.png", "33-guide-question-zh.png"), artefacts)
    assert "第 2 章 模型评估" in text and "2.1 经验误差与过拟合" in text
    assert "过拟合是指学习器" in text and "什么是过拟合？" in text
    assert "欠拟合" in answer and "not in your documents" not in answer
    open_tab(library, "Documents")
    open_outline_entry(library, "2.2 评估方法", "留出法直接将数据集划分为两个互斥的集合", "38-guide-outline-zh.png", artefacts)


def test_studying_a_chapter_walks_through_cards_and_a_quiz_and_moves_its_standing(library, artefacts, tmp_path):
    page = library
    open_tab(page, "Documents")
    open_guide(page, "guide-python.md", "Learning Python")
    choose(page, "#guide-chapter", "Chapter 1 Values and variables")
    page.click("#guide-study")
    page.wait_for_selector("button[role=tab][aria-selected=true]:has-text('Review')")
    page.wait_for_function("() => document.querySelector('#cards-status').innerText.includes("
                           "'Studying Chapter 1 Values and variables')")
    assert page.input_value("#cards-chapter input") == "Chapter 1 Values and variables"
    page.wait_for_function("() => document.querySelector('#quiz-question').innerText.includes('Question 1 of')")
    page.screenshot(path=str(artefacts / "35-study-chapter-en.png"), full_page=True)
    total = int(page.inner_text("#quiz-question").split("Question 1 of ")[1].split()[0])
    for i in range(total):
        page.wait_for_function("n => document.querySelector('#quiz-question').innerText.includes(n)",
                               arg=f"Question {i + 1} of")
        page.wait_for_selector("#quiz-choices label, #quiz-answer textarea", state="visible")
        if page.is_visible("#quiz-choices label"):          # too few cards for choices: a short answer
            page.click("#quiz-choices label >> nth=0")
        else:
            page.fill("#quiz-answer textarea", "variable")
        page.click("#quiz-submit")
        page.wait_for_function("n => !document.querySelector('#quiz-question').innerText.includes(n)",
                               arg=f"Question {i + 1} of")
    assert "right" in page.inner_text("#quiz-question")

    open_tab(page, "Documents")                             # the chapter's standing has moved
    open_guide(page, "guide-python.md", "Learning Python")
    page.wait_for_function("n => (document.querySelectorAll('#guide-view .guide-progress')[0]?.textContent || '')"
                           ".includes(n)", arg=f"of {total} right")
    first = page.text_content("#guide-view .guide-progress >> nth=0")
    page.screenshot(path=str(artefacts / "36-guide-after-study-en.png"), full_page=True)
    assert "cards: 0" not in first and "mastery: new" not in first, first
    # the chapter's key terms carry the person's cards on them now (the concept map joins the guide)
    concepts = page.text_content("#guide-view .guide-chapter >> nth=0")
    assert "your cards on it:" in concepts, concepts
    # and in the report the person downloads: the chapter's study, its quiz answers and its mastery
    chapters = download_report(page, tmp_path)["study"]["chapters"]
    studied = next(c for c in chapters if c["title"] == "Chapter 1 Values and variables")
    assert studied["cards"] > 0 and studied["quiz_answered"] == total and studied["level"] != "new", studied
    untouched = next(c for c in chapters if c["title"] == "Chapter 3 Files")
    assert untouched["quiz_answered"] == 0 and untouched["level"] == "new", untouched

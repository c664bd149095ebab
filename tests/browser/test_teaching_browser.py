"""Answers that teach, in Debian's Chromium against the real app: a learner asks for a chapter summary, a
comparison, a question in the other language than the book, and a follow-up — in English and in Chinese.

A small English textbook and a Chinese one (Markdown, chapters and sections as headings) are uploaded.
Summaries, comparisons and follow-ups are answered without a language model (conftest.extractive_app),
from the books' own sentences; the cross-language questions need a model to answer in the question's
language, so they go to the app whose model is the loopback OpenAI-compatible test server (conftest.live_app),
scripted to translate the question and to write the answer. Screenshots 20-27 go to test-artefacts/.
"""
from __future__ import annotations

import pytest

from tests.browser.conftest import login, open_tab, upload
from tests.browser.test_answers_browser import ask, bots, source_labels
from tests.test_shapes import BOOK, BOOK_ZH

pytestmark = pytest.mark.browser


def with_books(page, folder):
    """The page after uploading the English and the Chinese textbook, on the Q&A tab."""
    books = {folder / "learning-python.md": BOOK, folder / "ml-notes.md": BOOK_ZH}
    for path, text in books.items():
        path.write_text(text, encoding="utf-8")
    upload(page, *books)
    open_tab(page, "Q&A")
    page.wait_for_selector("#question textarea")
    return page


@pytest.fixture(scope="module")
def reader(browser, extractive_app, tmp_path_factory):
    context, page = login(browser, extractive_app, "reader")
    yield with_books(page, tmp_path_factory.mktemp("teaching"))
    context.close()


def test_a_chapter_summary_goes_through_its_sections_with_working_citations(reader, artefacts):
    page = reader
    answer = ask(page, "Summarize chapter 2")
    assert answer.startswith("Chapter 2 Lists and tuples") and "covers 3 sections" in answer
    assert answer.index("Lists") < answer.index("Tuples") < answer.index("Recursion")
    assert "A tuple is a sequence of values that is immutable." in answer
    assert "not in your documents" not in answer
    labels = source_labels(page)
    # the app is shared: another test's copy of the same book may be the one summarized
    assert labels and all("python.md" in label for label in labels)
    page.screenshot(path=str(artefacts / "20-summary-en.png"), full_page=True)
    page.click('#chat [data-testid="bot"] >> nth=-1 >> a[href^="#cite-"] >> nth=0')     # [1] opens its section
    page.wait_for_function("document.querySelector('#section-view') && "
                           "document.querySelector('#section-view').innerText.includes('Lists')")
    assert "A list is a sequence of values." in page.inner_text("#section-view")


def test_a_chinese_chapter_summary(reader, artefacts):
    page = reader
    answer = ask(page, "我想知道第二章主要讲了什么，帮我梳理一下脉络。")
    assert answer.startswith("第 2 章 模型评估") and "共 2 节" in answer
    assert "经验误差与过拟合" in answer and "评估方法" in answer
    assert "From your learning history" not in answer          # a request about the book, not about the past
    page.screenshot(path=str(artefacts / "21-summary-zh.png"), full_page=True)


def test_a_summary_names_what_each_section_goes_on_to_teach(reader, tmp_path, artefacts):
    """A chapter of nine sections, one sentence each: the draw and fill sections also name what they go on to
    teach (arrowheads, gradients), in the book's words, as plain text beside the cited sentence."""
    from tests.test_shapes import DRAWING_BOOK
    page = reader
    book = tmp_path / "drawing.md"
    book.write_text(DRAWING_BOOK, encoding="utf-8")
    open_tab(page, "Documents")
    upload(page, book)
    open_tab(page, "Q&A")
    answer = ask(page, "Summarize the drawing commands chapter")
    assert answer.startswith("Chapter 4 Drawing commands") and "covers 9 sections" in answer, answer
    draw = next(line for line in answer.splitlines() if line.startswith("Draw"))
    fill = next(line for line in answer.splitlines() if line.startswith("Fill"))
    assert "(also: arrowhead" in draw.lower() and "(also: gradient" in fill.lower(), answer
    # one chunk holds several short sections: each is cited under its own heading, not the chunk's first
    labels = source_labels(page)
    sections = [label.split(" · § ")[-1] for label in labels]
    assert sections[:4] == ["4.1 Draw", "4.2 Fill", "4.3 Label", "4.4 Clip"], labels
    page.screenshot(path=str(artefacts / "20b-summary-topics.png"), full_page=True)


def test_a_comparison_sets_the_two_side_by_side_in_both_languages(reader, artefacts):
    page = reader
    answer = ask(page, "What is the difference between a list and a tuple?")
    assert "list:" in answer and "tuple:" in answer and "mutable" in answer and "immutable" in answer
    page.screenshot(path=str(artefacts / "22-compare-en.png"), full_page=True)
    answer = ask(page, "过拟合和欠拟合有什么区别？")
    assert "过拟合：" in answer and "欠拟合：" in answer
    page.screenshot(path=str(artefacts / "23-compare-zh.png"), full_page=True)


def test_a_follow_up_in_each_language_is_searched_with_the_question_before_it(reader, artefacts):
    page = reader
    ask(page, "What is a tuple?")
    answer = ask(page, "Why can it be a dictionary key?")
    searched = page.inner_text("#searched-for")
    assert "What is a tuple?" in searched and "dictionary keys" in answer
    ask(page, "什么是过拟合？")
    answer = ask(page, "那欠拟合呢？")
    assert "什么是过拟合？" in page.inner_text("#searched-for") and "欠拟合" in answer
    page.screenshot(path=str(artefacts / "24-followup-zh.png"), full_page=True)


@pytest.fixture(scope="module")
def tutor(browser, live_app, fake_llm, tmp_path_factory):
    context, page = login(browser, live_app, "alice")
    yield with_books(page, tmp_path_factory.mktemp("teaching-llm"))
    context.close()
    fake_llm.reset()


def test_an_english_question_about_the_chinese_book_is_answered_in_english_with_its_quote(tutor, fake_llm,
                                                                                          artefacts):
    page = tutor
    fake_llm.reset()
    fake_llm.translation = "什么是过拟合？"
    fake_llm.answer = ("Overfitting means the learner takes the training samples' own traits as general properties, "
                       "so generalization suffers [1].")
    fake_llm.judgement = 0.95
    answer = ask(page, "What does overfitting mean in the machine learning notes?")
    assert answer.startswith("Overfitting means the learner takes") and "not in your documents" not in answer
    assert "过拟合是指学习器把训练样本自身的特点当作所有样本的一般性质" in answer    # the original quote beside it
    assert any("ml-notes.md" in label for label in source_labels(page))
    translate = [r for r in fake_llm.requests if r["body"]["messages"][0]["content"].startswith("Translate")]
    assert translate, "the question was also searched in the book's language"
    page.screenshot(path=str(artefacts / "25-crosslang-en.png"), full_page=True)


def test_a_chinese_question_about_the_english_book_is_answered_in_chinese_with_its_quote(tutor, fake_llm,
                                                                                         artefacts):
    page = tutor
    fake_llm.reset()
    fake_llm.translation = "Why can a tuple be used as a dictionary key?"
    fake_llm.answer = "因为元组是不可变的，所以元组可以用作字典的键 [1]。"
    fake_llm.judgement = 0.95
    answer = ask(page, "为什么元组可以用作字典的键？")
    assert answer.startswith("因为元组是不可变的") and "没有这个问题的答案" not in answer
    assert "Because tuples are immutable, they can be used as dictionary keys" in answer
    page.screenshot(path=str(artefacts / "26-crosslang-zh.png"), full_page=True)


def test_an_answer_left_in_the_books_language_opens_with_its_passage_translated(tutor, fake_llm, artefacts):
    """The model's English opening does not hold (the judge rejects it): the reader still gets English first, the
    passage's translation marked as one, then the book's own words."""
    page = tutor
    fake_llm.reset()
    fake_llm.translation = "什么是过拟合？"
    fake_llm.answer = "Overfitting only happens with tiny data sets [1]."
    fake_llm.judgement = 0.02
    fake_llm.quote_translation = ("Overfitting is when the learner takes the training samples' own traits as "
                                  "general properties of all samples, so generalization performance drops. "
                                  "Underfitting is when the learner has not yet learned the general properties of "
                                  "the training samples.")
    answer = ask(page, "What does overfitting mean in the machine learning notes?")
    assert answer.startswith("Translated from [1]: Overfitting is when the learner"), answer
    assert "From the book" in answer and "过拟合是指学习器把训练样本自身的特点" in answer
    assert "tiny data sets" not in answer
    assert "shown translated by the model" in page.inner_text("#answer-notice")
    page.screenshot(path=str(artefacts / "28-crosslang-translated.png"), full_page=True)


def test_a_chinese_question_the_model_answers_in_english_opens_in_chinese(tutor, fake_llm, artefacts):
    """The model answers a Chinese question about the English book in English, and its sentence holds: the reader
    gets it in Chinese first, marked as a translation, then the model's sentence and the book's words."""
    page = tutor
    fake_llm.reset()
    fake_llm.translation = "Why can a tuple be used as a dictionary key?"
    fake_llm.answer = "Tuples can be used as dictionary keys [1]."
    fake_llm.judgement = 0.95
    fake_llm.quote_translation = "元组可以用作字典的键。"
    answer = ask(page, "Learning Python 里的 tuple 有什么用？")
    assert answer.startswith("译自 [1]：元组可以用作字典的键。"), answer
    assert "Tuples can be used as dictionary keys" in answer
    page.screenshot(path=str(artefacts / "29-crosslang-model-english.png"), full_page=True)


def test_a_sentence_the_judge_rejects_is_not_shown(tutor, fake_llm, artefacts):
    page = tutor
    fake_llm.reset()
    fake_llm.answer = "A tuple is a sequence of values that is immutable [1]. Tuples are faster than lists [1]."
    fake_llm.judgement = 0.02                  # the judge finds neither sentence in the passage
    answer = ask(page, "What is a tuple?")
    assert "Tuples are faster than lists" not in bots(page)[-1] and "faster" not in answer
    assert "passages that answer best" in page.inner_text("#answer-notice")
    page.screenshot(path=str(artefacts / "27-judged-out.png"), full_page=True)

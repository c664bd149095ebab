"""A document's study guide (assistant.guide) through the facade, with the real stores and embedders and no model.

The small English and Chinese textbooks of tests/test_shapes.py are loaded as Markdown files; each guide must
show the book's outline, a cited summary and the key terms of each chapter, and suggested questions in the
book's language that the Q&A answers (not refused) when asked.
"""
from __future__ import annotations

import re

import pytest

from assistant import guide as G
from assistant.guide_questions import (PHRASINGS, SectionRef, candidate_questions, compared_pair, document_label,
                                      english_term)
from core.text import CJK_CHAR
from tests.test_shapes import BOOK, BOOK_ZH


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    from assistant.facade import PDFLearningAssistant
    from core.settings import Settings
    folder = tmp_path_factory.mktemp("guide")
    settings = Settings(_env_file=None, data_dir=folder / "data", llm_backend="none")
    a = PDFLearningAssistant("learner", settings)
    (folder / "learning-python.md").write_text(BOOK, encoding="utf-8")
    (folder / "ml-notes.md").write_text(BOOK_ZH, encoding="utf-8")
    en = a.load_document(folder / "learning-python.md").doc_id
    zh = a.load_document(folder / "ml-notes.md").doc_id
    return a, a.document_guide(en), a.document_guide(zh)


def chapter(guide, number: str):
    return next(c for c in guide.chapters if c.number == number)


def test_the_outline_is_the_books_chapters_and_their_sections(books):
    _, en, zh = books
    assert en.language == "en" and zh.language == "zh"
    assert [c.title for c in en.chapters] == ["Chapter 1 Values and variables", "Chapter 2 Lists and tuples",
                                              "Chapter 3 Files"]
    assert [s.title for s in chapter(en, "2").sections] == ["2.1 Lists", "2.2 Tuples", "2.3 Recursion"]
    assert [s.number for s in chapter(en, "1").sections] == ["1.1", "1.2", "1.3"]
    assert [c.title for c in zh.chapters] == ["第 1 章 绪论", "第 2 章 模型评估"]
    assert [s.title for s in chapter(zh, "2").sections] == ["2.1 经验误差与过拟合", "2.2 评估方法"]


def test_each_chapter_is_summarized_in_the_books_sentences_with_citations(books):
    _, en, zh = books
    for guide, book in ((en, BOOK), (zh, BOOK_ZH)):
        for c in guide.chapters:
            marks = {int(n) for n in re.findall(r"\[(\d+)\]", c.summary)}
            assert marks and marks == {x.n for x in c.citations}, c.title
            assert all(x.doc_name.endswith(".md") and x.quote for x in c.citations)
            # every line is a section of the chapter with the book's own sentence, but for the line naming the words
            # the chapter is mostly about, each the book's
            for line in filter(None, c.summary.splitlines()):
                about = re.match(r"^\*\*(?:Mostly about:|主要讲：)\*\*\s*(.+)$", line)
                if about:
                    assert all(w in book for w in re.split(r", |、", about.group(1))), line
                    continue
                said = re.sub(r"^- \*\*[^*]+\*\*(?: \([^)]*\)|（[^）]*）)?[:：]\s*", "", line)
                sentences = [s.strip() for s in re.split(r"\[\d+\]", said) if s.strip()]
                assert sentences and all(s in " ".join(book.split()) for s in sentences), line   # line breaks: spaces
    ch1 = chapter(en, "1").summary
    assert "**Values**" in ch1 and "A variable is a name that refers to a value." in ch1
    assert "Glossary" not in ch1 and "Key terms" not in ch1     # the terms are the guide's glossary
    assert "**评估方法**" in chapter(zh, "2").summary


def test_key_terms_are_defined_by_the_books_own_sentences(books):
    _, en, zh = books
    terms = {t.term: t.definition for t in chapter(en, "1").terms}
    assert terms == {"variable": "A name that refers to a value.",
                     "assignment": "A statement that assigns a value to a variable."}   # its glossary
    terms = {t.term: t.definition for t in chapter(en, "2").terms}
    assert terms["tuple"] == "A tuple is a sequence of values that is immutable."
    terms = {t.term: t.definition for t in chapter(zh, "2").terms}
    assert terms["过拟合"].startswith("过拟合是指学习器") and terms["过拟合"] in BOOK_ZH


def test_every_suggested_question_is_in_the_books_language_and_answered(books):
    a, en, zh = books
    for guide in (en, zh):
        assert guide.checked
        for c in guide.chapters:
            assert 1 <= len(c.questions) <= 5, c.title
            for question in c.questions:
                assert bool(CJK_CHAR.search(question)) == (guide.language == "zh"), question
                result = a.ask_once(question)
                assert result.route == "documents" and not result.refused, (question, result.text)
    assert chapter(en, "2").questions[:4] == ["Summarize chapter 2 of Learning Python", "What is a list?", "What is a tuple?",
                                              "What is the difference between list and tuple?"]
    assert "过拟合和欠拟合有什么区别？" in chapter(zh, "2").questions
    assert chapter(zh, "2").questions[0] == "总结《机器学习笔记》第2章"
    assert "总结《机器学习笔记》第2.1节" in chapter(zh, "2").questions
    assert len(chapter(en, "1").questions) >= 3 and len(chapter(zh, "2").questions) >= 3


def test_a_refused_question_is_not_suggested(books):
    a, en, _ = books
    ch = chapter(en, "2")
    node = next(n for n in a.rag.document_outline(en.doc_id).outline.chapters() if n.number == "2")
    made_up = G.GuideChapter(ch.title, ch.number, None, None, [], "", [],
                             [G.GuideTerm("quaternion", "", None), G.GuideTerm("tuple", ch.terms[1].definition, None)])
    kept = G._checked_questions(a.rag.without_model(), made_up, node, "en", a.rag.get_document(en.doc_id))
    assert "What is a quaternion?" not in kept and "What is a tuple?" in kept


def test_the_checked_questions_are_kept_and_not_asked_again(books, monkeypatch):
    a, en, _ = books
    asked = []
    monkeypatch.setattr(type(a.rag), "ask", lambda self, q, **kw: asked.append(q))
    again = a.document_guide(en.doc_id)
    assert asked == [] and [c.questions for c in again.chapters] == [c.questions for c in en.chapters]
    stages = list(a.document_guide_stages(en.doc_id))
    assert len(stages) == 1 and stages[0].checked      # all of it at once: nothing left to check


# -- the phrasings (data) ----------------------------------------------------------------------------------

def test_every_language_has_every_phrasing():
    kinds = set(PHRASINGS["en"])
    assert all(set(table) == kinds for table in PHRASINGS.values())


@pytest.mark.parametrize("language", sorted(PHRASINGS))
def test_each_phrasing_is_read_as_it_is_meant(books, language):
    """A definition is not a summary, a comparison has the two terms as its sides, a section is that section."""
    a, en, zh = books
    guide, (x, y), section = (zh, ("过拟合", "欠拟合"), "2.1") if language == "zh" else (en, ("list", "tuple"), "2.1")
    table = PHRASINGS[language]
    for phrasing in ("define", "define_word"):
        plan = a.rag.plan(table[phrasing].format(term=x))
        assert plan.kind != "summarize" and plan.scope is None and plan.language == language, phrasing
    plan = a.rag.plan(table["compare"].format(a=x, b=y))
    assert plan.kind == "compare" and plan.sides == (x, y)
    other = en if guide is zh else zh                     # both books have a section 2.1 and a chapter 2
    for book in (guide, other):                           # the one the question names is the one summarized
        label = document_label(book.name, book.title)
        plan = a.rag.plan(table["section"].format(number=section, doc=label))
        assert plan.summarizes and plan.scope.node.number == section and plan.scope.doc_id == book.doc_id, label
        plan = a.rag.plan(table["chapter"].format(number="2", doc=label))
        assert plan.summarizes and plan.scope.node.number == "2" and plan.scope.doc_id == book.doc_id, label
    name = chapter(guide, "2").sections[1].title.split(" ", 1)[1]       # "Tuples", "评估方法"
    plan = a.rag.plan(table["section_named"].format(name=name))
    assert plan.summarizes and plan.scope.node.title.endswith(name)


def test_english_terms_take_an_article_where_one_is_needed():
    assert [english_term(t) for t in ("tuple", "assignment", "tuples", "Python", "base case", "class")] == \
        ["a tuple", "an assignment", "tuples", "Python", "base case", "a class"]


def test_candidates_define_compare_then_summarize_sections():
    sections = [SectionRef("2.1", "Lists"), SectionRef(None, "Tuples")]
    assert candidate_questions("en", ["list", "tuple", "recursion"], sections, ("list", "tuple"),
                               document="Think Python") == [
        "What is a list?", "What is a tuple?", "What is the difference between list and tuple?",
        "Summarize section 2.1 of Think Python", "What does the section on Tuples say?"]
    assert candidate_questions("zh", ["过拟合"], [SectionRef("1.2", "假设空间")], document="南瓜书") == [
        "什么是过拟合？", "总结《南瓜书》第1.2节"]
    # the chapter itself first: by its number, or by its name when its heading has none
    assert candidate_questions("en", [], [], None, SectionRef("4", "Case study"), "Think Python")[0] == \
        "Summarize chapter 4 of Think Python"
    assert candidate_questions("zh", [], [], None, SectionRef("3", "线性模型"), "南瓜书") == ["总结《南瓜书》第3章"]
    # a question names the document by its short title, else by its file name
    assert document_label("thinkpython2.pdf", "Think Python") == "Think Python"
    assert document_label("pumpkin_book_1.9.9.pdf", "") == "pumpkin book 1.9.9"
    assert document_label("notes.md", "x" * 80) == "notes"
    assert candidate_questions("en", [], [], None, SectionRef(None, "Background")) == [
        "What does the section on Background say?"]
    assert compared_pair([("list", "A list is a sequence of values."), ("file", "A file is stored on a disk."),
                          ("tuple", "A tuple is a sequence of values that is immutable.")]) == ("list", "tuple")
    assert compared_pair([("list", "A list is a sequence of values.")]) is None
    # a quality or an action is asked about as a word (Think Python's glossary)
    assert candidate_questions("en", ["deterministic", "encode", "tuple"], [], definitions={
        "deterministic": "Pertaining to a program that does the same thing each time it runs.",
        "encode": "To represent one set of values using another set of values.",
        "tuple": "An immutable sequence of elements."}) == ["What does deterministic mean?", "What does encode mean?"]
    # kinds of one thing are compared; a variable and "something a variable can refer to" are not
    assert compared_pair([("object", "Something a variable can refer to."),
                          ("counter", "A variable used to count something, usually initialized to zero."),
                          ("pure function", "A function that does not modify any of the objects it receives."),
                          ("modifier", "A function that changes one or more of the objects it receives.")]) == \
        ("pure function", "modifier")
    # definitions that share a word or two are not worth comparing (Think Python's glossary)
    assert compared_pair([("keyword argument", "An argument that includes the name of the parameter as a keyword."),
                          ("interface", "A description of how to use a function, including the name and "
                                        "descriptions of the arguments and return value.")]) is None


def test_the_guide_shows_document_text_as_text_never_as_html():
    from rag.types import Citation
    from ui.guide_view import guide_html, question_samples
    hostile = "<img src=x onerror=alert(1)>"
    chapter = G.GuideChapter(f"Chapter 1 {hostile}", "1", 3, 5, [G.GuideSection(f"1.1 {hostile}", "1.1", 3, 4)],
                             f"- **Values**: A value {hostile} is data. [1]",
                             [Citation(n=1, doc_id="d", doc_name="book.pdf", chunk_id="c", page_start=3, page_end=3, score=1.0,
                                       quote=f"A value {hostile} is data.")],
                             [G.GuideTerm("value", f"A value {hostile} is data.", 3)], [f"What is {hostile}?"])
    shown = guide_html(None, G.DocumentGuide("d", "book.pdf", hostile, "en", [chapter]))
    assert "<img" not in shown and shown.count("&lt;img") == 7
    assert "pp. 3-5" in shown and "[1] book.pdf · p. 3" in shown and "<strong>Values</strong>" in shown
    assert question_samples(G.DocumentGuide("d", "b", "t", "en", [chapter])) == (
        [[f"1 · What is {hostile}?"]], [f"What is {hostile}?"])
    # a chapter of tables or code only: a sentence saying so, not its heading with nothing after it
    bare = G.GuideChapter("2. 分章环境说明", "2", None, None, [], "**2. 分章环境说明**：", [], [], [])
    shown = guide_html(None, G.DocumentGuide("d", "b.md", "t", "zh", [bare]))
    assert "no sentences to summarize" in shown and "分章环境说明**" not in shown


def test_the_guide_evaluation_measures_coverage_and_writes_the_suggested_questions(tmp_path):
    """python -m assistant.guide_eval: the guides of a folder of books, their sections' coverage by the chapter
    summaries, and a question set (one row per suggested question) for rag.eval."""
    import json
    from assistant.guide_eval import main
    books = tmp_path / "books"
    books.mkdir()
    (books / "learning-python.md").write_text(BOOK, encoding="utf-8")
    (books / "ml-notes.md").write_text(BOOK_ZH, encoding="utf-8")
    (books / "LICENSE.txt").write_text("Permission is granted to copy this book.", encoding="utf-8")
    total = main([str(books), str(tmp_path / "set")])
    assert total["docs"] == 2 and total["chapters"] >= 4 and total["chapters_without_summary"] == 0
    assert total["section_coverage"] >= 0.8 and total["questions"] > 0
    rows = [json.loads(line) for line in (tmp_path / "set" / "questions.jsonl").read_text("utf-8").splitlines()]
    assert len(rows) == total["questions"] and {r["gold"][0]["doc"] for r in rows} == {"learning-python.md", "ml-notes.md"}
    assert {r["lang"] for r in rows} == {"en", "zh"}
    assert sorted(p.name for p in (tmp_path / "set" / "docs").iterdir()) == ["learning-python.md", "ml-notes.md"]


def test_each_outline_entry_opens_where_it_starts(books, tmp_path):
    """The guide's outline entries carry their first passage: a Markdown book's section opens as that section,
    a PDF's chapter as its first page with the passage on it."""
    from tests.browser.pdfgen import make_pdf
    a, en, _ = books
    tuples = next(s for c in en.chapters for s in c.sections if s.title == "2.2 Tuples")
    shown = a.render_source(tuples.place)
    assert shown.heading.endswith("2.2 Tuples") and tuples.place.quote.startswith("A tuple is a sequence")
    pages = [["# Chapter 1 Values", "A value is one of the basic things a program works with.",
              "Values belong to different types."],
             ["Every value has a type, and the type decides what it can do."],
             ["# Chapter 2 Lists", "A list is a sequence of values in brackets.", "Lists can be changed."],
             ["A list inside another list is nested."]]
    pdf = tmp_path / "values-and-lists.pdf"
    pdf.write_bytes(make_pdf(pages, title="Values and lists"))
    guide = a.document_guide(a.load_document(pdf).doc_id)
    assert [(c.title, c.place.page_start) for c in guide.chapters] == [("Chapter 1 Values", 1), ("Chapter 2 Lists", 3)]
    page = a.render_source(guide.chapters[1].place)
    assert page.page == 3 and guide.chapters[1].place.quote.startswith("A list is a sequence")


@pytest.mark.parametrize("sentence, term", [
    ("过拟合是指学习器把训练样本自身的特点当作了所有样本都会具有的一般性质。", "过拟合"),
    ("正空间是指超平面法向量所指向的那一侧。", "正空间"),
    ("注意：这里的损失函数是凸函数。", None),                          # a note, not a term
    ("通常这是一种在训练集上表现很好的模型。", None),                     # an adverb and a pronoun
    ("涌现能力可以是指模型规模变大后突然出现的能力。", None),              # the pattern ran into the sentence
    ("满足该条件的数称为利普希茨常数的实数。", None),                     # "X 的 Y" is a phrase, not a name
])
def test_a_chinese_key_term_is_a_name_not_a_stretch_of_its_sentence(sentence, term):
    from rag.terms import defined_term
    assert defined_term(sentence) == term


def test_a_chapter_of_few_sections_says_more_than_one_sentence_of_each(books):
    """A section's later topics were missed when each section gave its opening sentence alone."""
    from rag.summary import sentences_per_section
    assert [sentences_per_section(n) for n in (1, 2, 3, 4, 5, 12)] == [3, 3, 2, 2, 1, 1]
    _, en, _ = books
    tuples = next(line for line in chapter(en, "2").summary.splitlines() if "**Tuples**" in line)
    assert "A tuple is a sequence of values that is immutable." in tuples and "dictionary keys" in tuples, tuples

"""What a software manual's pages hold, answered (no model, the real stores and embedders): names glued from words
(LEFTPADDING), a program's printed lines that differ only in a number, a chapter named by its number in a question
about something inside it, and a question of two asks that no single passage answers whole."""
from __future__ import annotations

import pytest

from core.text import compound_parts
from rag.tool import RAGTool
from tests.libraries import text_library

MANUAL = """# Report Writer User Guide

## Chapter 1 Introduction

### 1.1 About this guide

This guide shows how to write documents from a program. It begins with drawing on a page, goes on to paragraphs
and tables, and ends with flowables that are evaluated while a document is laid out.

### 1.2 Installation

Install the library with the package manager of your system, then check the installation by running the tests.
A working installation prints the version and the folder it was installed in. For example, the first line printed
is the version number, and the second is the folder; the tests work the same way on every system.

## Chapter 2 Drawing on a page

### 2.1 The canvas

A canvas is a blank page that a program paints on. Its origin is the lower left corner, and its unit is the point,
one seventy-second of an inch. The default page size is A4 unless another is given.

### 2.2 Lines and shapes

Lines, rectangles and circles are drawn with the canvas methods of the same names. The example below draws a
square; how it works is explained line by line, and what it prints is a page with one square on it. A path collects several lines
and curves and is drawn at once, stroked or filled.

## Chapter 3 Colors

### 3.1 Color models

Colors may be given as names, as red, green and blue values, or as cyan, magenta, yellow and black values for
printing. Transparency is set with an alpha value between zero and one. An example: a red square at half transparency lets
the lines under it show through, which works well for highlighting; printed, it looks pink.

## Chapter 6 Paragraphs

### 6.1 Paragraph styles

A paragraph style sets the font, the size and the leading of the lines of a paragraph. The leading is the
distance from one baseline to the next. Styles are kept in a stylesheet and looked up by their name.

## Chapter 7 Tables

### 7.1 Making a table

A table is made from a list of rows, each row a list of cell values. Column widths and row heights may be given;
without them the table measures its cells.

### 7.4 TableStyle commands

The cell formatting commands all begin with an identifier, followed by the start and stop cells. The cell
formatting commands are:
FONT - takes fontname, optional fontsize and optional leading.
TEXTCOLOR - takes a color name or (R,G,B) tuple.
LEFTPADDING - takes an integer, defaults to 6.
TOPPADDING - takes an integer, defaults to 3.
VALIGN - takes one of TOP, MIDDLE or the default BOTTOM

## Chapter 8 Programming flowables

### 8.1 DocAssign

DocAssign assigns a variable of name var to the expression expr, for the flowables after it.

### 8.6 DocWhile

Runs the whileBlock while cond evaluates to True. E.g.:
DocAssign('i',5)
DocWhile('i',[DocPara('i',format='The value of i is %(__expr__)d'),DocExec('i-=1')])
This example produces a set of paragraphs of the form:
The value of i is 5
The value of i is 4
The value of i is 3
The value of i is 2
The value of i is 1

## Chapter 9 Fonts

### 9.5 TrueType font support

We use TTFont to create a true type font object and register it with registerFont; the font is then set by its
name like any other:
registerFont(TTFont('Vera', 'Vera.ttf'))
canvas.setFont('Vera', 32)
Figure 9-6: Using the Vera TrueType font

### 9.1 Standard fonts

Fourteen standard fonts are always available: Courier, Helvetica and Times in four styles each, Symbol and
ZapfDingbats. They need not be embedded in the document, because every reader has them.
"""


@pytest.fixture(scope="module")
def manual(tmp_path_factory):
    return text_library(tmp_path_factory.mktemp("manual") / "data",
                        (MANUAL, "Report Writer User Guide", "report-writer.md"))


def answer_to(tool: RAGTool, question: str):
    return list(tool.ask_stream(question))[-1]


@pytest.mark.parametrize("identifier, parts", [
    ("LEFTPADDING", ("left", "padding")), ("fontname", ("font", "name")), ("setFont", ("set", "font")),
    ("background", ()), ("checklist", ()), ("pdfgen", ()), ("recyling", ()),
])
def test_a_glued_identifier_is_read_as_its_two_words(identifier, parts):
    """Both halves must be common English words, and the whole must be none: "background" and "checklist" are
    words of their own, "pdfgen" has no common halves, a typing slip is no identifier."""
    assert compound_parts(identifier) == parts


def test_a_learners_word_meets_the_manuals_glued_name(manual):
    """"padding" is found in LEFTPADDING; the question's two asks are each judged on their own, so a passage that
    answers one is enough (neither passage holds the words of both)."""
    answer = answer_to(manual, "whats the default padding in a table cell? and where does the text sit vertically "
                               "by default")
    assert not answer.refused
    assert "PADDING - takes an integer, defaults to" in answer.text


def test_a_programs_numbered_output_is_evidence_not_a_table_of_contents(manual):
    """Lines that differ only in the number at their end are what a program printed; a contents page names a new
    title on each line. The chapter named by its number is where to look, not words to find in the passage."""
    answer = answer_to(manual, "the DocWhile example in chapter 8, what does it print and how does it work")
    assert not answer.refused
    assert "The value of i is 5" in answer.text and "The value of i is 1" in answer.text
    assert "DocWhile('i'," in answer.text
    # "E.g.:" alone says only that code follows: the sentence before it says what the code does
    assert "Runs the whileBlock while cond evaluates to True. E.g.:" in answer.text


def test_a_glued_word_in_the_question_meets_the_words_apart_and_a_caption_does_not_lead(manual):
    """"truetype" is found in "a true type font"; "Figure 9-6: Using the Vera TrueType font" is a title close to the
    question in meaning, and the sentences around it answer."""
    from rag.evidence import glued_terms, unit_terms, with_glued
    assert glued_terms("how do I use a truetype font?") == {"truetyp": ("true", "type")}
    assert "truetyp" in with_glued(unit_terms("We create a true type font object."), glued_terms("truetype fonts"))
    question = "how do I use a truetype font?"
    evidence = manual.evidence(question, manual.retrieve(question).answering_hits, kind="howto")
    assert evidence[0].unit.text.startswith("We use TTFont to create a true type font object")
    caption = next(ev for ev in evidence if ev.unit.text.startswith("Figure 9-6"))
    assert caption.score < evidence[0].score - 0.1
    answer = answer_to(manual, question)
    assert not answer.refused and "We use TTFont to create a true type font object" in answer.text
    # asked about the figure itself, its caption is what answers
    evidence = manual.evidence("what does figure 9-6 show?", manual.retrieve("what does figure 9-6 show?").answering_hits)
    assert evidence[0].unit.text.startswith("Figure 9-6")


@pytest.mark.parametrize("text, wordless", [
    ("00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F 10 11 12 13 14 15 16 17 18 19 1A 1B 1C 1D 1E 1F", True),
    ("✁ ✂ ✃ ✄ ☎ ✆ ✇ ✈ ✉ ☛ ☞ ✌ ✍ ✎ ✏ ✐ ✑ ✒ ✓ ✔", True),
    ("€ ϒ ′ ≤ ⁄ ∞ ƒ ♣ ♦ ♥ ♠ ↔ ← ↑ → ↓ ° ± ″ ≥ × ∝ ∂ • ÷ ≠ ≡ ≈ … ↵ ℵ ℑ ℜ ℘ ⊗ ⊕ ∅ ∩ ∪ ⊃ ⊇ ⊄ ⊂ ⊆ ∈ ∉ ∠ ∇ ∏ √ ⋅ ¬ ∧ "
     "∨ ⇔ ⇐ ⇑ ⇒ ⇓ ◊ 〈 ∑ ■ 〉 ∫ ⌠ ⌡ ■ Figure 3-5: Symbol and its one and only encoding", True),
    ("00\n20\n40\n60\n80\nA0\nC0\nE0", True),
    ("Revenue $ 1,234 $ 5,678 $ 9,999", False),             # a table row: a label and its numbers
    ("10 20 30 40 50", False),
    ("令 f(x) = wx + b 为线性模型。", False),
    ("The value of i is 5.", False),
])
def test_a_code_chart_is_not_words(text, wordless):
    """A font's code chart or a column of tick labels reads as no answer, though the embedder finds it close to
    any question ("表格里想合并几个单元格" met a hex row at 0.80); a table row of numbers or a formula in a sentence
    is kept."""
    from rag.evidence import Unit, is_wordless
    assert is_wordless(Unit(0, len(text), "sentence", text)) is wordless
    assert not is_wordless(Unit(0, 5, "code", "x = 5"))


def test_a_code_chart_never_answers(tmp_path):
    chart = "\n\n".join(["### 3.4 Code charts", "The charts below show every character of the two encodings.",
                          "00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F 10 11 12 13 14 15 16 17 18 19 1A 1B 1C 1D",
                          "✁ ✂ ✃ ✄ ☎ ✆ ✇ ✈ ✉ ☛ ☞ ✌ ✍ ✎ ✏ ✐ ✑ ✒ ✓ ✔ ✕ ✖ ✗ ✘ ✙ ✚ ✛ ✜ ✝ ✞ ✟ ✠"])
    tool = text_library(tmp_path / "data", (MANUAL + "\n" + chart + "\n", "Report Writer User Guide", "manual.md"))
    for question in ("表格里想合并几个单元格，要怎么写？", "how do i merge cells in a table?"):
        answer = tool.ask(question)
        assert "0A 0B" not in answer.text and "✁" not in answer.text, answer.text


SHELL_MANUAL = """# Shell Manual

## Chapter 9 Using History Interactively

### 9.1 History Facilities

When the -o history option is enabled, the shell provides access to the command history, the list of commands
previously typed. The value of the HISTSIZE variable is used as the number of commands to save in the history list.
The text of the last HISTSIZE commands (default 500) is saved. The shell stores each command in the history list
prior to parameter expansion. If the value is 0, commands are not saved in the history list.

### 9.2 History Builtins

The fc builtin lists or edits and re-executes commands from the history list. The history builtin displays the
history list with line numbers.
"""


@pytest.mark.parametrize("question", ["how many commands does the history keep by default?",
                                      "历史记录默认保存多少条命令？"])
def test_a_question_about_a_default_is_answered_by_the_sentence_stating_it(tmp_path, question):
    """A manual states its defaults as "(default 500)", "the default is", "defaults to", 默认为: the sentence that
    states one answers a question about it before one that only shares its words."""
    tool = text_library(tmp_path / "data", (SHELL_MANUAL, "Shell Manual", "shell.md"))
    evidence = tool.evidence(question, tool.retrieve(question).answering_hits)
    best = [e.unit.text for e in evidence[:2]]
    assert any("(default 500)" in text for text in best), best


def test_a_subheading_the_outline_missed_is_not_an_answer(tmp_path):
    """"Coordinate System" on a line of its own names the topic of what follows and says nothing about it: the
    sentences under it answer."""
    text = ("# Graphics Guide\n\n## Chapter 11 Graphics\n\n### 11.2 General Concepts\n\nCoordinate System\n\n"
            "The Y-direction in our X-Y coordinate system points from the bottom up.\n"
            "The X-coordinate points, as usual, from left to right.\n")
    tool = text_library(tmp_path / "data", (text, "Graphics Guide", "graphics.md"))
    question = "can u explain the coordinate system? which way is up"
    units = [e.unit.text for e in tool.evidence(question, tool.retrieve(question).answering_hits)]
    assert units and "Coordinate System" not in units and "points from the bottom up" in units[0], units

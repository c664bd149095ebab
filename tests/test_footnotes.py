"""A footnote the PDF left in the running text is told apart and does not lead an answer (rag.footnotes)."""
from __future__ import annotations

from rag.evidence import score_evidence
from rag.footnotes import footnote_spans
from rag.types import Chunk, SearchHit

# An Introduction to R, pages 24-25 as the converter gives them: the page's footnote in the middle of the sentence
# the page break cut
ORDERED = ("The ordered() function creates such ordered factors but is otherwise identical to factor. For most "
           "purposes the only difference between ordered\n\n")
NOTE = ("2 Note that tapply() also works in this case when its second argument is not a factor, e.g.,\n"
        "‘tapply(incomes, state)’, and this is true for quite a few other functions.\n\n")
NEXT_PAGE = "and unordered factors is that the former are printed showing the ordering of the levels."
TEXT = ORDERED + NOTE + NEXT_PAGE
BREAKS = [(0, 24), (len(ORDERED) + len(NOTE), 25)]


def test_a_numbered_paragraph_ending_a_page_is_a_footnote():
    assert footnote_spans(TEXT, BREAKS) == [(len(ORDERED), len(ORDERED) + len(NOTE.rstrip("\n")))]


def test_two_footnotes_ending_a_page_are_both_told():
    second = "3 Even better would be to form a matrix square root B with A = BBT.\n\n"
    text = ORDERED + NOTE + second + NEXT_PAGE
    spans = footnote_spans(text, [(0, 24), (len(ORDERED) + len(NOTE) + len(second), 25)])
    assert [text[s:e][:2] for s, e in spans] == ["2 ", "3 "]


def test_numbered_text_that_does_not_end_a_page_or_is_too_short_is_not_a_footnote():
    # a numbered paragraph with more text after it on its page
    assert footnote_spans(NOTE + "More of the page follows here.\n\n" + NEXT_PAGE, [(0, 24), (len(NOTE) + 33, 25)]) == []
    # bar numbers under a music example end a page, but say nothing
    assert footnote_spans(ORDERED + "2 4\n\n" + NEXT_PAGE, [(0, 24), (len(ORDERED) + 5, 25)]) == []
    # without a page map there is no page's end to stand at
    assert footnote_spans(TEXT, []) == []


def test_a_footnote_does_not_outscore_the_text_it_annotates():
    """The same words in a footnote and in the body: the body's sentence is the better evidence."""
    body = ("The function tapply() is used to apply a function, here mean(), to each group of components of the first "
            "argument, here incomes, defined by the levels of the second component, here statef, a factor.\n\n")
    note = "2 Note that tapply() is used with a factor as its second argument here, the states of incomes.\n\n"
    text = body + note + NEXT_PAGE
    chunk = Chunk("d:0", "d", 0, text, ["4.2 The function tapply()"], 24, 25, 0, len(text), 120,
                  page_breaks=[(0, 24), (len(body) + len(note), 25)])
    hit = SearchHit(chunk=chunk, doc_name="R-intro.pdf", doc_title="An Introduction to R", score=1.0, rank=1)
    evidence = score_evidence("how is tapply() used with a factor of the states?", [hit], None, {})
    assert evidence[0].unit.text.startswith("The function tapply()"), [e.unit.text[:40] for e in evidence]

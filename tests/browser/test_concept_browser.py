"""The concept map in Debian's Chromium against the real app with no language model (conftest.extractive_app):
a study guide is uploaded, ten notes are filed under concepts (English, Chinese, and one concept written both
ways), the map — about 30 concepts — keeps its labels apart, a card is made from one note, and a click on a
concept lists its notes, cards and the pages that mention it. Screenshots 30-31 go to test-artefacts/ for a reviewer: is the map readable?
"""
from __future__ import annotations

import re

import pytest

from tests.browser.conftest import login, open_tab, settled, upload
from tests.browser.pdfgen import STUDY, make_pdf
from tests.browser.test_review_browser import wait_text
from tests.test_concept_map import outside_view, overlapping_labels

pytestmark = pytest.mark.browser

NOTES = [
    ("支持向量机 (SVM)", "支持向量机寻找最大间隔的超平面，核函数把样本映射到高维空间。"),
    ("SVM", "An SVM uses a kernel function and a soft margin for data that is not linearly separable."),
    ("Recursion", "Recursion needs a base case; each call waits on the call stack until Python raises RecursionError."),
    ("Tuples", "A tuple is an immutable sequence, so tuples can be dictionary keys unlike lists."),
    ("Transformer", "The Transformer uses self-attention with query vectors and multi-head attention, not recurrence."),
    ("注意力机制", "注意力机制根据相关程度给序列中的词分配权重，自注意力用查询向量和键向量计算。"),
    ("Gradient descent", "Gradient descent moves the weights against the gradient of the loss function by a learning rate."),
    ("List comprehension", "A list comprehension builds a new list from an iterable in a single expression."),
    ("Factorial", "The factorial of a number multiplies every positive integer up to it."),
    ("Overfitting", "Overfitting means a model memorises its training data; regularisation and dropout help."),
]


def test_a_click_on_a_concept_lists_its_notes_and_pages(browser, extractive_app, tmp_path, artefacts):
    pdf = tmp_path / "study-guide.pdf"
    pdf.write_bytes(make_pdf(STUDY, title="Study Guide"))
    context, page = login(browser, extractive_app, "reader")
    try:
        upload(page, pdf)
        open_tab(page, "Notes")
        for concept, text in NOTES:
            page.fill("#concept input", concept)
            page.keyboard.press("Escape")
            page.fill("#note-text textarea", text)
            page.click("#note-save")
            wait_text(page, "#notes-table", text[:40])
        page.wait_for_selector('#concept-graph .concept-node[data-key="overfitting"]')

        svg = re.search(r"<svg.*</svg>", page.inner_html("#concept-graph"), re.S).group(0)
        nodes = svg.count('class="concept-node"')
        assert nodes >= 25, nodes
        assert overlapping_labels(svg) == [] and outside_view(svg) == []
        # "支持向量机 (SVM)" and "SVM" are one node; the Chinese entity in the note is folded into it
        assert 'data-key="svm"' in svg and 'data-key="支持向量机"' not in svg
        page.locator("#concept-graph").screenshot(path=str(artefacts / "30-concept-map.png"))

        with settled(page, "#review-due"):                           # its refresh resets the note list
            open_tab(page, "Review")                                 # a card from the SVM note
        page.click("#cards-note input")
        page.click("[role=option]:has-text('An SVM uses a kernel')")
        page.click("#cards-make-note")
        wait_text(page, "#cards-status", "New cards")
        open_tab(page, "Notes")
        page.wait_for_selector('#concept-graph .concept-node[data-key="svm"]')

        page.click('#concept-graph .concept-node[data-key="svm"] circle')
        details = wait_text(page, "#concept-details", NOTES[1][1][:30])
        assert NOTES[0][1][:20] in details                       # both spellings' notes
        assert "study-guide.pdf" in details and "p. 3" in details    # the page on support vector machines
        assert "Recursion needs" not in details and "Study cards (0)" not in details
        assert "What do your notes say about SVM?" in details
        assert "SVM" in page.input_value("#concept-pick input")    # the click selected it in the picker

        page.click('#concept-graph .concept-node[data-key="recursion"] circle')
        details = wait_text(page, "#concept-details", "Recursion needs a base case")
        assert "p. 2" in details and NOTES[1][1][:30] not in details
        page.screenshot(path=str(artefacts / "31-concept-details.png"), full_page=True)
    finally:
        context.close()

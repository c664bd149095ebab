"""Sources without pages (Markdown, notes added as text): the viewer shows the cited section as text with
the passage marked, and the documents list counts sections instead of "0 pages".

The documents are indexed by the real pipeline (conversion, chunking, the embedding models, SQLite) and
asked through `PDFLearningAssistant` with no language model (answers quote the documents), as a learner
would; the section is rendered with the viewer's own HTML builder (assistant.views.section_html)."""
from __future__ import annotations

import re

import pytest

from assistant.sections import CitedSection, rebuild_markdown, section_of
from assistant.views import markdown_html, section_html
from core.settings import Settings
from rag.chunk import chunk_document, split_sections
from rag.types import ConvertedDocument

NOTES = """# Study notes on neural networks

These notes summarise the neural network lectures of the machine learning course.

## 1 Perceptrons

A perceptron computes a weighted sum of its inputs and fires when the sum passes a threshold.
Frank Rosenblatt built the first perceptron in 1958 at the Cornell Aeronautical Laboratory.

<img src=x onerror=alert(1)>

<script>alert("stolen")</script>

## 2 Transformers

### 2.1 Embeddings

Every token is mapped to a vector by an embedding table that is learned with the rest of the model.

### 2.3 Attention

Attention lets every token look at every other token. Each token is weighted by the similarity of
its query and the other token's key, so the model can relate distant words in a sentence.

## 3 注意力机制

注意力机制让模型在处理每个词时关注句子中的其他词，并根据查询与键的相似度为它们分配权重。
这种方法使模型能够捕捉句子中长距离的依赖关系。

## 4 Exercises

Write a perceptron in Python:

```python
# start with zero weights
def train(samples):
    return [0.0, 0.0]
```

| model | year |
|---|---|
| perceptron | 1958 |
| transformer | 2017 |
"""

NOTE = """# Gradient descent

Gradient descent moves the weights a small step against the gradient of the loss after every batch.

## Learning rate

The learning rate sets how large each step of gradient descent is; too large a rate makes the loss diverge.
"""


def make_docx(path, paragraphs: list[tuple[str | None, str]]) -> None:
    """A minimal Word file: (style id, e.g. "Heading1", or None, text) per paragraph."""
    import zipfile
    from xml.sax.saxutils import escape
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    rels = "http://schemas.openxmlformats.org/package/2006/relationships"
    kinds = "application/vnd.openxmlformats-officedocument.wordprocessingml"

    def para(style, text):
        props = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
        return f'<w:p>{props}<w:r><w:t xml:space="preserve">{escape(text)}</w:t></w:r></w:p>'
    styles = "".join(f'<w:style w:type="paragraph" w:styleId="Heading{i}"><w:name w:val="heading {i}"/></w:style>'
                     for i in (1, 2))
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("[Content_Types].xml",
                   '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
                   f'<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
                   '<Default Extension="xml" ContentType="application/xml"/>'
                   f'<Override PartName="/word/document.xml" ContentType="{kinds}.document.main+xml"/>'
                   f'<Override PartName="/word/styles.xml" ContentType="{kinds}.styles+xml"/></Types>')
        z.writestr("_rels/.rels", f'<Relationships xmlns="{rels}"><Relationship Id="rId1" Type="http://schemas.'
                   'openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>'
                   '</Relationships>')
        z.writestr("word/_rels/document.xml.rels", f'<Relationships xmlns="{rels}"><Relationship Id="rId1" Type="http:'
                   '//schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>'
                   '</Relationships>')
        z.writestr("word/styles.xml", f"<w:styles {w}>{styles}</w:styles>")
        z.writestr("word/document.xml", f"<w:document {w}><w:body>{''.join(para(*p) for p in paragraphs)}"
                   "</w:body></w:document>")


def marked(html: str) -> str:
    return " ".join(re.findall(r"<mark>(.*?)</mark>", html))


@pytest.fixture(scope="module")
def learner(tmp_path_factory):
    from assistant.facade import PDFLearningAssistant
    folder = tmp_path_factory.mktemp("sections")
    settings = Settings(_env_file=None, data_dir=folder / "data", llm_backend="none")
    a = PDFLearningAssistant("learner", settings)
    path = folder / "nn-notes.md"
    path.write_text(NOTES, encoding="utf-8")
    loaded = a.load_document(path)
    note = a.rag.add_text(NOTE, title="optimisation")
    return a, loaded, note


def cited(a, question: str, doc_id: str):
    result = a.ask_once(question)
    cites = [c for c in (result.citations or result.related) if c.doc_id == doc_id]
    assert cites, (question, result.text)
    return cites[0], result


# -- the cited section of an asked question --------------------------------------------------------------

def test_a_cited_markdown_passage_shows_its_section_marked_and_escaped(learner):
    a, loaded, _ = learner
    assert loaded.pages == 0
    citation, result = cited(a, "Who built the first perceptron, and when?", loaded.doc_id)
    assert citation.page_start is None and "Rosenblatt" in result.text
    shown = a.render_source(citation)
    assert isinstance(shown, CitedSection)
    assert shown.heading_path == ["Study notes on neural networks", "1 Perceptrons"]
    assert (shown.number, shown.count) == (2, len(split_sections(NOTES)))
    html = section_html(shown, "nn-notes.md — § 1 Perceptrons")
    assert "<h2>1 Perceptrons</h2>" in html
    assert "Rosenblatt built the first perceptron in 1958" in marked(html)
    # the section ends at the next heading of its level: nothing of "2 Transformers" is shown
    assert "Transformers" not in html and "embedding" not in html
    # the document's HTML is printed as text, never markup
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "&lt;script&gt;" in html
    assert "<img" not in html and "<script" not in html and "onerror=" not in html.replace("&lt;img src=x onerror=", "")


def test_a_chinese_passage_is_marked_in_its_own_section(learner):
    a, loaded, _ = learner
    citation, _ = cited(a, "注意力机制如何为句子中的其他词分配权重？", loaded.doc_id)
    shown = a.render_source(citation)
    assert shown.heading_path[-1] == "3 注意力机制"
    html = section_html(shown, "caption")
    assert "注意力机制让模型在处理每个词时关注句子中的其他词" in marked(html).replace("</mark> <mark>", "")
    assert "<h2>3 注意力机制</h2>" in html                     # the heading itself is not part of the passage
    assert "Exercises" not in html and "Attention lets" not in html


def test_a_note_added_as_text_has_sections_too(learner):
    a, _, note = learner
    citation, _ = cited(a, "What does the learning rate set in gradient descent?", note.doc_id)
    assert citation.doc_name == "optimisation.md"
    shown = a.render_source(citation)
    # (the quote may join sentences of both sections: then the section shown is the one holding both)
    assert shown.heading_path[0] == "Gradient descent" and shown.count == 2
    html = section_html(shown, "caption")
    assert "learning rate sets how large each step" in marked(html)
    assert "<h2>Learning rate</h2>" in html
    assert a.cited_headings([citation]) == [shown.heading_path[-1]]


def test_the_documents_list_counts_sections_not_zero_pages(learner, tmp_path):
    import app
    from tests.browser.pdfgen import AVIATION, make_pdf
    a, loaded, note = learner
    pdf = tmp_path / "flight.pdf"
    pdf.write_bytes(make_pdf(AVIATION, title="Flight Control Notes"))
    a.load_document(pdf)
    docs = {d.name: d for d in a.list_documents()}
    assert docs["nn-notes.md"].pages == 0 and not docs["nn-notes.md"].has_pages
    counts = a.section_counts([loaded.doc_id, note.doc_id])
    assert counts == {loaded.doc_id: len(split_sections(NOTES)), note.doc_id: 2}

    class Request:
        headers = {"accept-language": "en-US"}
        username = None
    request = Request()
    assert app.extent(request, 2, None) == "2 pages" and app.extent(request, 0, 7) == "7 sections"
    assert app.extent(request, 1, None) == "1 page" and app.extent(request, 0, 1) == "1 section"
    citation, _ = cited(a, "Who built the first perceptron, and when?", loaded.doc_id)
    caption = app.section_caption(request, citation, a.render_source(citation))
    assert re.fullmatch(r"\[\d\] nn-notes\.md — § Study notes on neural networks › 1 Perceptrons — section 2 of "
                        rf"{len(split_sections(NOTES))}", caption), caption


def test_a_cited_web_page_shows_its_section_as_text(learner, tmp_path):
    a, _, _ = learner
    page = tmp_path / "web-notes.html"
    page.write_text("<html><head><title>Web notes</title></head><body><h1>Web notes</h1>"
                    "<p>These notes are about writing web pages by hand.</p><h2>Pictures</h2>"
                    "<p>The image element shows a picture in a page. <img src='x' onerror='alert(1)' alt='a diagram'>"
                    " Its alt text describes the picture for people who cannot see it.</p><script>alert(2)</script>"
                    "<h2>Links</h2><p>An anchor element links one page to another page.</p></body></html>",
                    encoding="utf-8")
    loaded = a.load_document(page)
    assert loaded.pages == 0
    citation, _ = cited(a, "What does the alt text of an image describe?", loaded.doc_id)
    shown = a.render_source(citation)
    assert shown.heading_path == ["Web notes", "Pictures"]
    html = section_html(shown, "caption")
    assert "alt text describes the picture" in marked(html)
    assert "<img" not in html and "<script" not in html and "[a diagram]" in html and "Links" not in html


def test_a_cited_word_document_shows_its_section_as_text(learner, tmp_path):
    a, _, _ = learner
    handbook = tmp_path / "course-handbook.docx"
    make_docx(handbook, [("Heading1", "Course handbook"), (None, "Welcome to the <b>course</b> on databases."),
                         ("Heading2", "Grading"),
                         (None, "The final exam counts for sixty percent of the grade, the project for forty."),
                         ("Heading2", "Office hours"), (None, "Office hours are on Tuesdays in room 101.")])
    loaded = a.load_document(handbook)
    assert loaded.pages == 0 and a.section_counts([loaded.doc_id]) == {loaded.doc_id: 3}
    citation, _ = cited(a, "How much does the final exam count towards the grade?", loaded.doc_id)
    shown = a.render_source(citation)
    assert shown.heading_path == ["Course handbook", "Grading"] and (shown.number, shown.count) == (2, 3)
    html = section_html(shown, "caption")
    assert "final exam counts for sixty percent" in marked(html) and "Office hours" not in html


# -- rebuilding the Markdown from chunks, and excerpts ---------------------------------------------------

@pytest.mark.parametrize("size, overlap", [(200, 40), (30, 10), (12, 0)])
def test_the_markdown_rebuilt_from_chunks_is_the_indexed_markdown(size, overlap):
    doc = ConvertedDocument(markdown=NOTES.strip("\n"), title="t", source_format="md")
    chunks = chunk_document(doc, "d", size=size, overlap=overlap)
    rebuilt = rebuild_markdown(chunks)
    if overlap:
        assert rebuilt.markdown == NOTES.strip("\n")
    else:   # chunks that do not overlap leave out the space between them: " " may come back as "\n"
        assert rebuilt.markdown.split() == NOTES.split()
    assert len(rebuilt.sections) == len(split_sections(NOTES))
    for c in chunks:   # each chunk's text sits where the rebuilt text says
        start, end = rebuilt.spans[c.chunk_id]
        assert rebuilt.markdown[start:end] == c.text


def test_a_long_section_is_shown_as_an_excerpt_around_the_passage():
    long_text = "# Long chapter\n\n" + "\n\n".join(
        f"Paragraph {i} talks about topic number {i} in several plain words." for i in range(300))
    doc = rebuild_markdown(chunk_document(ConvertedDocument(markdown=long_text, title="t"), "d", size=60, overlap=10))
    at = doc.markdown.index("Paragraph 150 talks")
    shown = section_of(doc, [(at, at + len("Paragraph 150 talks about topic number 150"))], "long.md", max_chars=2000)
    assert shown.cut_before and shown.cut_after and shown.heading_line == "# Long chapter"
    assert len(shown.body) <= 2000 + 2000 // 2 and shown.body.startswith("Paragraph")
    html = section_html(shown, "long.md — § Long chapter")
    assert "<h1>Long chapter</h1>" in html and html.count('class="section-cut"') == 2
    assert marked(html) == "Paragraph 150 talks about topic number 150"


def test_document_markdown_renders_safely():
    html = markdown_html("[click](javascript:alert(1)) [site](https://example.org) ![chart](http://e.x/p.png) "
                         "[next](page2.html) <b onclick=x>bold</b> **strong words here**", [(0, 5)])
    assert '<a href="https://example.org" target="_blank" rel="noopener noreferrer nofollow">site</a>' in html
    assert "javascript:alert(1)" in html and 'href="javascript' not in html
    assert '<span class="doc-link">next</span>' in html and "page2.html" not in html
    assert "<img" not in html and "[chart]" in html and "e.x/p.png" not in html and "&lt;b onclick=x&gt;" in html
    # a mark never crosses a tag: it is closed before <strong> and reopened inside it
    html = markdown_html("plain **strong words** end", [(0, 26)])
    assert html.strip() == ("<p><mark>plain </mark><strong><mark>strong words</mark></strong><mark> end</mark></p>")


def test_the_load_sentence_and_the_remembered_load_count_sections_for_markdown(settings, tmp_path):
    from assistant import PDFLearningAssistant
    doc = tmp_path / "guide.md"
    doc.write_text("# One\n\nFirst part of the guide.\n\n# Two\n\nSecond part.\n\n# Three\n\nThird part.", encoding="utf-8")
    assistant = PDFLearningAssistant("sections-count", settings)
    loaded = assistant.load_document(doc)
    assert loaded.sections == 3 and "3 sections" in loaded.message and "0 pages" not in loaded.message
    again = assistant.load_document(doc)
    assert "(3 sections)" in again.message
    remembered = [m.content for m in assistant.memory.list(["episodic"])]
    assert any("guide.md" in m and "3 sections" in m for m in remembered), remembered

"""rag.convert: real files in, ConvertedDocument out. PDFs are written by hand (tiny, exact) so each
test controls fonts, positions, columns, outline, metadata and encryption. The big shared sample
documents (../shared) are measured by the `books` tests only (make test-books)."""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from tests.browser.pdfgen import cjk_font_objects, has_cjk, show_text
from tests.pdf_bytes import escape, serialize_pdf, text_string
from tests.shared_docs import shared_doc

from core.errors import DocumentError
from rag.convert import convert_file, parse_markdown_headings
from rag.types import ConvertedDocument

# A 1x1 grey image: what a scanned page is to a PDF reader (a picture, no text).
_IMAGE = (b"<< /Type /XObject /Subtype /Image /Width 1 /Height 1 /ColorSpace /DeviceGray "
          b"/BitsPerComponent 8 /Length 1 >>\nstream\n\x80\nendstream")


# --- a minimal PDF writer --------------------------------------------------------------------------

_esc = escape


def make_pdf(pages, outline=None, title=None, encrypt=False) -> bytes:
    """Build a PDF.

    pages: one entry per page, each a list of (font, size, x, y, text) with font F1 = Helvetica,
        F2 = Helvetica-Bold, F3 = Courier (Chinese in a text is set in STSong-Light); or the string
        "image" for a page that is only a picture (a scan); or [] for a blank page.
    outline: [(title, page_index, [children...]), ...]
    encrypt: add a standard-security /Encrypt dictionary whose user password is not empty.
    """
    objs: dict[int, bytes] = {
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        4: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>",
        5: b"<< /Type /Font /Subtype /Type1 /BaseFont /Courier /Encoding /WinAnsiEncoding >>",
        6: _IMAGE,
    }
    next_id = 7
    fonts = "/F1 3 0 R /F2 4 0 R /F3 5 0 R"
    if any(has_cjk(item[4]) for lines in pages if lines != "image" for item in lines):
        objs.update(cjk_font_objects(next_id))
        fonts += f" /F5 {next_id} 0 R"
        next_id += 4
    page_ids = []
    for lines in pages:
        page_id, content_id = next_id, next_id + 1
        next_id += 2
        page_ids.append(page_id)
        if lines == "image":
            stream = b"q 612 0 0 792 0 0 cm /Im1 Do Q\n"
        else:
            stream = "".join(f"BT {x} {y} Td {show_text(text, font, size)} ET\n" if has_cjk(text)
                             else f"BT /{font} {size} Tf {x} {y} Td ({_esc(text)}) Tj ET\n"
                             for font, size, x, y, text in lines).encode("latin-1")
        objs[content_id] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"endstream"
        objs[page_id] = (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content_id} 0 R "
                         f"/Resources << /Font << {fonts} >> "
                         "/XObject << /Im1 6 0 R >> >> >>").encode()
    objs[2] = f"<< /Type /Pages /Kids [{' '.join(f'{p} 0 R' for p in page_ids)}] /Count {len(pages)} >>".encode()

    catalog = "<< /Type /Catalog /Pages 2 0 R"
    if outline:
        root_id = next_id
        next_id += 1

        def write_items(items, parent_id):
            nonlocal next_id
            ids = list(range(next_id, next_id + len(items)))
            next_id += len(items)
            for k, (item_title, page_index, children) in enumerate(items):
                d = (f"<< /Title {text_string(item_title)} /Parent {parent_id} 0 R "
                     f"/Dest [{page_ids[page_index]} 0 R /XYZ 0 792 0]")
                if k > 0:
                    d += f" /Prev {ids[k - 1]} 0 R"
                if k < len(items) - 1:
                    d += f" /Next {ids[k + 1]} 0 R"
                if children:
                    first, last = write_items(children, ids[k])
                    d += f" /First {first} 0 R /Last {last} 0 R /Count {len(children)}"
                objs[ids[k]] = (d + " >>").encode()
            return ids[0], ids[-1]

        first, last = write_items(outline, root_id)
        objs[root_id] = f"<< /Type /Outlines /First {first} 0 R /Last {last} 0 R /Count {len(outline)} >>".encode()
        catalog += f" /Outlines {root_id} 0 R"
    objs[1] = (catalog + " >>").encode()

    trailer = ""
    if title is not None:
        objs[next_id] = f"<< /Title {text_string(title)} >>".encode()
        trailer += f" /Info {next_id} 0 R"
        next_id += 1
    if encrypt:
        objs[next_id] = b"<< /Filter /Standard /V 1 /R 2 /O <" + b"11" * 32 + b"> /U <" + b"22" * 32 + b"> /P -4 >>"
        trailer += f" /Encrypt {next_id} 0 R /ID [<{'ab' * 16}> <{'ab' * 16}>]"
        next_id += 1

    return serialize_pdf(objs, trailer, header=b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")


def body(lines: list[str], top: int = 700, size: int = 11, x: int = 72, font: str = "F1"):
    """Body text lines, one under the other."""
    return [(font, size, x, top - i * int(size * 1.3), text) for i, text in enumerate(lines)]


def write(tmp_path: Path, name: str, data: bytes | str) -> Path:
    path = tmp_path / name
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


def page_of(doc: ConvertedDocument, offset: int) -> int:
    return next(s.page for s in doc.pages if s.char_start <= offset < s.char_end)


def page_text(doc: ConvertedDocument, page: int) -> str:
    span = doc.pages[page - 1]
    return doc.markdown[span.char_start:span.char_end]


def assert_spans_cover(doc: ConvertedDocument) -> None:
    assert [s.page for s in doc.pages] == list(range(1, doc.page_count + 1))
    assert doc.pages[0].char_start == 0
    assert doc.pages[-1].char_end == len(doc.markdown)
    for a, b in zip(doc.pages, doc.pages[1:]):
        assert a.char_end == b.char_start, (a, b)
        assert a.char_start <= a.char_end


# --- PDFs: page map ----------------------------------------------------------------------------------

def test_page_spans_are_contiguous_and_each_word_falls_on_its_page(tmp_path):
    words = ["aardvark", "buffalo", "chinchilla", "dromedary"]
    pages = [body([f"Page about the {w} and its habits.", f"More notes on the {w} here."]) for w in words]
    doc = convert_file(write(tmp_path, "animals.pdf", make_pdf(pages)))

    assert doc.source_format == "pdf"
    assert doc.page_count == 4
    assert_spans_cover(doc)
    for number, word in enumerate(words, start=1):
        offset = doc.markdown.index(word)
        assert page_of(doc, offset) == number
        assert word in page_text(doc, number)
        assert all(other not in page_text(doc, number) for other in words if other != word)
    assert doc.warnings == []


def test_blank_and_scanned_pages_get_empty_spans_and_a_warning(tmp_path):
    pages = ["image", body(["The only searchable page talks about zebras."]), [], "image"]
    doc = convert_file(write(tmp_path, "mixed.pdf", make_pdf(pages)))

    assert doc.page_count == 4
    assert_spans_cover(doc)
    assert page_text(doc, 1) == "" and page_text(doc, 3) == "" and page_text(doc, 4) == ""
    assert "zebras" in page_text(doc, 2)
    # The blank page 3 is not a scan; pages 1 and 4 are pictures without text.
    assert len(doc.warnings) == 1
    assert doc.warnings[0].startswith("pages 1, 4 have no text layer")
    assert "OCR" in doc.warnings[0]


# --- PDFs: headings ------------------------------------------------------------------------------------

def test_headings_come_from_the_outline(tmp_path):
    pages = [
        body(["1. Getting Started", "Installing the tool takes a minute."]),
        body(["1.1 First Steps", "Open a terminal and type the command."]),
        body(["This page has no heading line of its own but a bookmark points here."]),
    ]
    outline = [("Getting Started", 0, [("First Steps", 1, [])]), ("Appendix Notes", 2, [])]
    doc = convert_file(write(tmp_path, "guide.pdf", make_pdf(pages, outline=outline)))

    got = [(h.level, h.title, page_of(doc, h.char_offset)) for h in doc.headings]
    # A bookmark's own line becomes the heading (with its numbering); a bookmark without a line
    # on its page is inserted at the top of that page.
    assert got == [(1, "1. Getting Started", 1), (2, "1.1 First Steps", 2), (1, "Appendix Notes", 3)]
    for heading in doc.headings:
        line = doc.markdown[heading.char_offset:].split("\n", 1)[0]
        assert line == "#" * heading.level + " " + heading.title
    assert doc.markdown.count("Getting Started") == 1  # marked in place, not duplicated
    assert_spans_cover(doc)


def test_numbered_lines_below_the_deepest_bookmark_become_headings(tmp_path):
    """Bookmarks stop at "1.1 What goes into an agreement"; the text numbers its parts on in the body's own font.
    Parts 1.1.1, 1.1.2, … in order become headings one level down; a numbered sentence, a line that skips a
    number and a number of another section stay text."""
    pages = [
        body(["1.1 What goes into an agreement", "An agreement names its parts.",
              "1.1.1 Service hours", "When the service is open.",
              "1.1.2 Availability", "How long the service may be down.",
              "1.1.4 Stability", "A skipped number is not the next part.",
              "1.1.3 Support times for each kind of request are measured in minutes.",
              "2.1.1 Another section", "Not a part of 1.1."]),
        body(["1.2 Costs", "What the service costs."]),
    ]
    outline = [("What goes into an agreement", 0, []), ("Costs", 1, [])]
    doc = convert_file(write(tmp_path, "sla.pdf", make_pdf(pages, outline=outline)))

    got = [(h.level, h.title) for h in doc.headings]
    assert got == [(1, "1.1 What goes into an agreement"), (2, "1.1.1 Service hours"), (2, "1.1.2 Availability"),
                   (1, "1.2 Costs")]
    assert "1.1.3 Support times" in doc.markdown and "## 1.1.3" not in doc.markdown


def test_headings_come_from_a_printed_contents_page_without_bookmarks(tmp_path):
    """A tutorial with no bookmarks whose section titles are set in the body's own size: its contents page
    ("2.1. Numbers . . . 2", printed page 1 being the PDF's third) is the outline, each title marked where its page
    has it, so "chapter 2" exists."""
    lines = lambda *text: body(list(text))        # noqa: E731 - one page of body-size lines
    pages = [
        lines("A Tutorial for Counting", "The Counting Group"),
        lines("Contents", "1. Greetings . . . . . . . . . . . 1", "2. Warming up . . . . . . . . . . 2",
              "2.1. Numbers . . . . . . . . . . 2", "2.2. Words . . . . . . . . . . . 3",
              "3. Going further . . . . . . . . 3"),
        lines("1. Greetings.", "You type count to start the program, and it greets you."),
        lines("2. Warming up.", "Counting starts at one.", "2.1. Numbers.", "Numbers are counted one by one."),
        lines("2.2. Words.", "Words are counted by their spaces.", "3. Going further.", "Counting backwards."),
    ]
    doc = convert_file(write(tmp_path, "tutorial.pdf", make_pdf(pages)))

    got = [(h.level, h.title, page_of(doc, h.char_offset)) for h in doc.headings]
    assert got == [(1, "1. Greetings.", 3), (1, "2. Warming up.", 4), (2, "2.1. Numbers.", 4),
                   (2, "2.2. Words.", 5), (1, "3. Going further.", 5)], got
    assert "Contents" in page_text(doc, 2) and "# 2" not in page_text(doc, 2)     # the list stays text


def test_a_contents_list_whose_titles_are_not_on_their_pages_is_not_an_outline(tmp_path):
    """An index or a price list with dotted leaders is not a table of contents: its titles are not where it says."""
    pages = [body(["Prices", "Apples . . . . . . 12", "Pears . . . . . . 14", "Plums . . . . . . 15",
                   "Grapes . . . . . . 19"])] + [body([f"Page {i} talks about the weather."]) for i in range(4)]
    doc = convert_file(write(tmp_path, "prices.pdf", make_pdf(pages)))
    assert doc.headings == [] or all("Apples" not in h.title for h in doc.headings)


def test_headings_come_from_font_sizes_without_an_outline(tmp_path):
    filler = [f"Body sentence number {i} explains a detail of the subject at some length." for i in range(12)]
    page = ([("F1", 24, 72, 740, "Understanding Rivers")]
            + body(filler[:4], top=700)
            + [("F1", 16, 72, 630, "How Water Moves")]
            + body(filler[4:8], top=600)
            + [("F2", 11, 72, 530, "Bold Subheading Here")]  # bold, body size, after a gap
            + body(filler[8:], top=514)
            + [("F1", 16, 72, 450, "A large sentence that ends with a period.")])
    doc = convert_file(write(tmp_path, "rivers.pdf", make_pdf([page, body(filler)])))

    got = [(h.level, h.title) for h in doc.headings]
    assert got == [(1, "Understanding Rivers"), (2, "How Water Moves"), (3, "Bold Subheading Here")]
    assert "\n## How Water Moves\n" in doc.markdown
    assert "A large sentence that ends with a period." in doc.markdown  # kept as text, not a heading
    assert doc.title == "Understanding Rivers"


def test_bold_table_headers_and_tight_bold_rows_are_not_headings(tmp_path):
    prose = [f"Sentence {i} of ordinary prose that carries the body size of this report." for i in range(10)]
    page = (body(prose[:4], top=740)
            + [("F2", 11, 72, 660, "Net Revenue by Region")]           # a real sub-heading, after a gap
            + body(prose[4:8], top=640)
            + [("F2", 11, 72, 570, "Fiscal Year")]                     # a table header, after a gap ...
            + body(["2023 2022 2021", "1,200 1,100 1,050", "Total 3,350 3,100 2,900"], top=556)  # ... over numbers
            + [("F2", 11, 72, 515, "Subtotal row")]                    # bold, but tight under the table
            + body(prose[8:], top=501))
    doc = convert_file(write(tmp_path, "table.pdf", make_pdf([page])))

    assert [h.title for h in doc.headings] == ["Net Revenue by Region"]
    assert "Fiscal Year" in doc.markdown and "Subtotal row" in doc.markdown


def test_code_lines_keep_indentation_and_are_never_headings(tmp_path):
    code = [("F3", 10, 72, 660, "# add two numbers"),
            ("F3", 10, 72, 647, "def add(a, b):"),
            ("F3", 10, 96, 634, "return a + b")]  # Courier 10 pt is 6 pt per character: 24 pt = 4 spaces
    doc = convert_file(write(tmp_path, "code.pdf", make_pdf([body(["A short program follows."]) + code])))

    assert doc.headings == []
    assert "\\# add two numbers" in doc.markdown
    assert "def add(a, b):\n    return a + b" in doc.markdown


# --- PDFs: cleaning ------------------------------------------------------------------------------------

def test_running_headers_and_page_numbers_are_dropped_but_content_is_kept(tmp_path):
    pages = []
    for n in range(1, 6):
        lines = [f"Unique finding {n}: revenue grew in region {n}.", "Table of values below.",
                 "Region North and South.", "Region East and West.", f"Total {n * 1000}"]
        pages.append([("F1", 9, 72, 760, "Quarterly Report of Example Corp")]
                     + body(lines)
                     + [("F1", 9, 300, 40, str(n + 10))])  # printed page numbers start at 11
    for n, page in enumerate(pages, start=1):    # a printer's slug in the margin, read into the body text
        page.insert(3, ("F1", 6, 20, 400, f"VerDate Sep<11>2014 16:21 Aug 05, 2020 Jkt 250001 Frm 0000{n} Fmt 4702"))
    doc = convert_file(write(tmp_path, "report.pdf", make_pdf(pages)))

    assert "Quarterly Report of Example Corp" not in doc.markdown
    assert "VerDate" not in doc.markdown and "Frm" not in doc.markdown
    for n in range(1, 6):
        text = page_text(doc, n)
        assert f"Unique finding {n}: revenue grew in region {n}." in text
        assert text.strip().splitlines()[-1] == f"Total {n * 1000}"  # the page number is gone, the total stays
        assert str(n + 10) not in text
    assert doc.markdown.count("Table of values below.") == 5  # repeated lines inside the page are content


def test_a_running_footer_naming_each_chapter_is_dropped_even_in_a_one_page_chapter(tmp_path):
    """"User Guide Chapter 8 Programming Flowables" is on the chapter's one page only: it is known by the words it
    opens with on every page, where each chapter's footer goes on with its own title."""
    chapters = ["Introduction", "Introduction", "Introduction", "Programming Flowables", "Other Useful Flowables",
                "Other Useful Flowables"]
    pages = []
    for n, title in enumerate(chapters, start=1):
        number = sorted(set(chapters), key=chapters.index).index(title) + 1
        pages.append(body([f"Body sentence {n} explains what this page of the guide teaches the reader."])
                     + [("F1", 9, 72, 52, f"User Guide Chapter {number} {title}"),
                        ("F1", 9, 300, 40, f"Page {n + 90}")])
    doc = convert_file(write(tmp_path, "guide.pdf", make_pdf(pages)))

    assert "User Guide Chapter" not in doc.markdown
    for n in range(1, 7):
        assert f"Body sentence {n} explains what this page of the guide teaches the reader." in page_text(doc, n)


def test_line_end_hyphens_are_joined_where_safe(tmp_path):
    page = body(["The experiment was an impor-", "tant step for the well-", "known team.",
                 "Everyone agreed the well-known team did important work."])
    doc = convert_file(write(tmp_path, "hyphens.pdf", make_pdf([page])))

    assert "important step" in doc.markdown
    assert "well-known team." in doc.markdown.replace("\n", " ")
    assert "impor-" not in doc.markdown and "\ufffe" not in doc.markdown


# --- titles ----------------------------------------------------------------------------------------------

def test_pdf_title_prefers_meaningful_metadata(tmp_path):
    page = [("F1", 24, 72, 740, "Cover Heading")] + body(["Some text of the body that is long enough."] * 3)
    doc = convert_file(write(tmp_path, "x.pdf", make_pdf([page], title="Field Guide to Birds")))
    assert doc.title == "Field Guide to Birds"

    doc = convert_file(write(tmp_path, "y.pdf", make_pdf([page], title="0001410636-23-000020")))
    assert doc.title == "Cover Heading"  # an accession number is not a title


def test_title_falls_back_to_the_file_name(tmp_path):
    doc = convert_file(write(tmp_path, "my_study-notes_v2.txt", "just some notes without headings\n"))
    assert doc.title == "my study notes v2"
    assert doc.source_format == "txt"
    assert doc.pages == [] and doc.page_count == 0


# --- other formats ---------------------------------------------------------------------------------------

def test_markdown_keeps_its_headings_with_offsets(tmp_path):
    text = ("# Linear Algebra\n\nIntro.\n\n## Vectors\n\nA vector.\n\n```python\n# not a heading\nx = 1\n```\n\n"
            "### Dot product ###\n\n#hashtag is not a heading either\n")
    doc = convert_file(write(tmp_path, "notes.md", text))

    assert doc.source_format == "md"
    assert doc.title == "Linear Algebra"
    assert [(h.level, h.title) for h in doc.headings] == [(1, "Linear Algebra"), (2, "Vectors"), (3, "Dot product")]
    for heading in doc.headings:
        assert doc.markdown[heading.char_offset:].startswith("#" * heading.level + " ")
    assert "# not a heading" in doc.markdown


def test_parse_markdown_headings_strips_inline_markup():
    headings = parse_markdown_headings("intro\n## **Bold** and [a link](http://x) with `code`\n")
    assert [(h.level, h.title, h.char_offset) for h in headings] == [(2, "Bold and a link with code", 6)]


def test_docx_goes_through_markitdown_with_headings(tmp_path):
    def para(text, style=None):
        ppr = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
        return f"<w:p>{ppr}<w:r><w:t>{text}</w:t></w:r></w:p>"

    ns = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    document = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document {ns}><w:body>'
                + para("Photosynthesis", "Heading1") + para("Plants turn light into sugar.")
                + para("Light reactions", "Heading2") + para("They happen in the thylakoids.")
                + "</w:body></w:document>")
    styles = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:styles {ns}>'
              '<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style>'
              '<w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/></w:style></w:styles>')
    content_types = ('<?xml version="1.0" encoding="UTF-8"?>'
                     '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
                     '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
                     '<Default Extension="xml" ContentType="application/xml"/>'
                     '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
                     'officedocument.wordprocessingml.document.main+xml"/>'
                     '<Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-'
                     'officedocument.wordprocessingml.styles+xml"/></Types>')
    rels = ('<?xml version="1.0" encoding="UTF-8"?>'
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
            'relationships/officeDocument" Target="word/document.xml"/></Relationships>')
    doc_rels = ('<?xml version="1.0" encoding="UTF-8"?>'
                '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
                '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
                'relationships/styles" Target="styles.xml"/></Relationships>')
    path = tmp_path / "biology.docx"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("[Content_Types].xml", content_types)
        z.writestr("_rels/.rels", rels)
        z.writestr("word/document.xml", document)
        z.writestr("word/_rels/document.xml.rels", doc_rels)
        z.writestr("word/styles.xml", styles)
    doc = convert_file(path)

    assert doc.source_format == "docx"
    assert [(h.level, h.title) for h in doc.headings] == [(1, "Photosynthesis"), (2, "Light reactions")]
    assert "thylakoids" in doc.markdown
    assert doc.title == "Photosynthesis"
    assert doc.pages == []


def test_html_headings_and_title(tmp_path):
    html = ("<html><head><title>Guide to Tides</title></head><body><h1>Tides</h1><p>The moon pulls.</p>"
            "<h2>Spring tides</h2><p>Sun and moon align.</p></body></html>")
    doc = convert_file(write(tmp_path, "tides.html", html))
    assert doc.source_format == "html"
    assert doc.title == "Guide to Tides"
    assert [(h.level, h.title) for h in doc.headings] == [(1, "Tides"), (2, "Spring tides")]


def test_a_pdf_with_another_extension_is_read_as_pdf(tmp_path):
    doc = convert_file(write(tmp_path, "download.bin", make_pdf([body(["Content of a PDF saved as .bin"])])))
    assert doc.source_format == "pdf" and doc.page_count == 1
    assert "saved as .bin" in doc.markdown


def test_pptx_goes_through_markitdown(tmp_path):
    pptx = pytest.importorskip("pptx")
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Cell Biology"
    slide.placeholders[1].text = "Mitochondria make ATP"
    path = tmp_path / "cells.pptx"
    deck.save(path)
    doc = convert_file(path)

    assert doc.source_format == "pptx"
    assert "Mitochondria make ATP" in doc.markdown
    assert any(h.title == "Cell Biology" for h in doc.headings)


# --- bad input: one clear sentence, never a traceback from a library ---------------------------------------

def _error(path: Path) -> str:
    with pytest.raises(DocumentError) as info:
        convert_file(path)
    message = str(info.value)
    assert path.name in message
    assert ";" in message and "\n" not in message  # what happened; what to do
    return message


def test_missing_file(tmp_path):
    assert "not found" in _error(tmp_path / "nowhere.pdf")


def test_folder_instead_of_file(tmp_path):
    (tmp_path / "folder.pdf").mkdir()
    assert "folder" in _error(tmp_path / "folder.pdf")


def test_empty_file(tmp_path):
    assert "empty (0 bytes)" in _error(write(tmp_path, "empty.pdf", b""))


def test_corrupt_pdf(tmp_path):
    good = make_pdf([body(["hello"])])
    message = _error(write(tmp_path, "broken.pdf", good[:40] + b"\x00garbage" * 50))
    assert "damaged" in message and "upload it again" in message


def test_encrypted_pdf(tmp_path):
    message = _error(write(tmp_path, "locked.pdf", make_pdf([body(["secret"])], encrypt=True)))
    assert "password-protected" in message and "unlocked copy" in message


ZERO_PAGES = serialize_pdf({1: b"<< /Type /Catalog /Pages 2 0 R >>", 2: b"<< /Type /Pages /Kids [] /Count 0 >>"})


def test_zero_page_pdf_says_it_has_no_pages(tmp_path):
    message = _error(write(tmp_path, "zero.pdf", ZERO_PAGES))
    assert "has no pages" in message and "password" not in message and "damaged" not in message


def test_zero_page_pdf_after_an_encrypted_one_is_not_called_password_protected(tmp_path):
    # PDFium's last-error code is process-global: the encrypted load leaves FPDF_ERR_PASSWORD behind.
    assert "password-protected" in _error(write(tmp_path, "locked.pdf", make_pdf([body(["secret"])], encrypt=True)))
    message = _error(write(tmp_path, "zero.pdf", ZERO_PAGES))
    assert "has no pages" in message and "password" not in message


def test_damaged_pdf_after_an_encrypted_one_is_called_damaged(tmp_path):
    assert "password-protected" in _error(write(tmp_path, "locked.pdf", make_pdf([body(["secret"])], encrypt=True)))
    good = make_pdf([body(["hello"])])
    message = _error(write(tmp_path, "broken.pdf", good[:40] + b"\x00garbage" * 50))
    assert "damaged" in message and "password" not in message


def test_pdf_without_any_text_layer(tmp_path):
    message = _error(write(tmp_path, "scan.pdf", make_pdf(["image", "image"])))
    assert "no text layer" in message and "scanned" in message and "OCR" in message


def test_pdf_with_only_blank_pages(tmp_path):
    assert "no selectable text" in _error(write(tmp_path, "blank.pdf", make_pdf([[], []])))


def test_text_file_renamed_to_pdf(tmp_path):
    message = _error(write(tmp_path, "notes.pdf", "These are plain notes, not a PDF.\n"))
    assert "not a PDF" in message and "plain text" in message


def test_png_renamed_to_pdf(tmp_path):
    message = _error(write(tmp_path, "photo.pdf", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64))
    assert "not a PDF" in message and "PNG image" in message


def test_unsupported_format(tmp_path):
    message = _error(write(tmp_path, "picture.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64))
    assert "cannot read" in message and "PDF" in message


def test_office_extension_on_a_non_office_file(tmp_path):
    message = _error(write(tmp_path, "essay.docx", "plain text pretending to be Word\n"))
    assert "not a Word document" in message


def test_image_renamed_to_txt(tmp_path):
    message = _error(write(tmp_path, "notes.txt", b"\xff\xd8\xff\xe0" + b"\x00" * 64))
    assert "not a text file" in message and "JPEG image" in message


def test_damaged_office_file(tmp_path):
    message = _error(write(tmp_path, "slides.pptx", b"PK\x03\x04" + b"\x00" * 200))
    assert "could not be read" in message


# --- a three-column notice, generated: the Federal Register's layout ------------------------------------

NOTICE_HEADER = "Federal Register / Vol. 85, No. 152 / Thursday, August 6, 2020 / Proposed Rules"
NOTICE_PAGES = 6
NOTICE_FIRST_NUMBER = 47696                       # printed page numbers, in the running header
COLUMN_LEFTS = (36, 222, 408)                     # three columns of about 170 pt on a letter page
NOTICE_HEADINGS = {(1, 2): "Comments Invited", (1, 3): "Background", (3, 2): "Proposed Design Changes",
                   (5, 1): "Costs of Compliance"}  # (page, column): a bold run-in heading in its middle
THRESHOLD = ("The calculated threshold would be a function of the magnitude of the disagreement and the rate "
             "of change of the angle of attack sensor position values.")
FAA_APPROVED = ["Finally, operators with an existing FAA-", "approved MEL would be required to",
                "incorporate more restrictive provisions."]
NOTICE_FILLER = [
    "The flight control computer compares the two angle of attack sensors on every cycle.",
    "The agency invites comments on the proposed directive and on its economic effects.",
    "Operators must record the completion of each inspection in the airplane records.",
    "Each sensor reports the angle between the wing and the oncoming air many times a second.",
    "The manufacturer has issued service information that describes the revised procedures.",
    "Maintenance crews check the sensor wiring and its connectors before loading the software.",
]


def notice_column(page: int, column: int) -> list[tuple[str, str]]:
    """One column's lines, top down: ("text" | "heading" | "gap", line)."""
    import textwrap
    out = [("text", f"Column {column} of page {page} starts here.")]
    for k in range(5):
        if k == 2 and (page, column) in NOTICE_HEADINGS:
            out += [("gap", ""), ("heading", NOTICE_HEADINGS[page, column])]
        elif k == 2 and (page, column) == (2, 2):
            out += [("gap", "")] + [("text", line) for line in textwrap.wrap(THRESHOLD, 42)]
        elif k == 3 and (page, column) == (4, 3):
            out += [("gap", "")] + [("text", line) for line in FAA_APPROVED]
        paragraph = " ".join(NOTICE_FILLER[(page + column + k + j) % len(NOTICE_FILLER)] for j in range(3))
        out += [("gap", "")] + [("text", line) for line in textwrap.wrap(paragraph, 42)]
    return out


def three_column_notice() -> bytes:
    """A notice set like the Federal Register: three columns of 8-pt Helvetica a page, written column by
    column, under a running header that carries the printed page number (left on even pages, right on
    odd ones), with bold run-in headings at body size after a gap."""
    pages = []
    for page in range(1, NOTICE_PAGES + 1):
        number = NOTICE_FIRST_NUMBER + page - 1
        header = (f"{number} {NOTICE_HEADER}", 36) if number % 2 == 0 else (f"{NOTICE_HEADER} {number}", 226)
        items = [("F1", 7, header[1], 765, header[0])]
        for column, left in enumerate(COLUMN_LEFTS, start=1):
            y = 740
            for kind, text in notice_column(page, column):
                if kind == "gap":
                    y -= 6
                    continue
                items.append(("F2" if kind == "heading" else "F1", 8, left, y, text))
                y -= 10
            assert y > 40, "a column runs off the page"
        pages.append(items)
    return make_pdf(pages)


def test_three_columns_are_read_column_by_column_without_the_running_header(tmp_path):
    doc = convert_file(write(tmp_path, "notice.pdf", three_column_notice()))
    assert doc.page_count == NOTICE_PAGES
    assert_spans_cover(doc)
    titles = {h.title: page_of(doc, h.char_offset) for h in doc.headings}
    assert titles == {title: page for (page, _), title in NOTICE_HEADINGS.items()}
    # The running header and its page numbers are gone; every column is read top to bottom, in order.
    assert "Federal Register / Vol. 85" not in doc.markdown
    assert not any(str(NOTICE_FIRST_NUMBER + k) in doc.markdown for k in range(NOTICE_PAGES))
    for page in range(1, NOTICE_PAGES + 1):
        text = page_text(doc, page)
        starts = [text.index(f"Column {column} of page {page} starts here.") for column in (1, 2, 3)]
        assert starts == sorted(starts), page
    flat = " ".join(doc.markdown.split())
    assert THRESHOLD in flat                              # a sentence wrapped over four lines of one column
    assert "operators with an existing FAA-approved MEL would be required" in flat   # a line-end hyphen kept


# --- a Chinese book with an outline, generated -------------------------------------------------------------

def test_chinese_outline_titles_become_the_headings(tmp_path):
    pages = [
        [("F1", 28, 200, 600, "南瓜书")] + body(["机器学习公式详解"], top=540, size=14),
        body(["第 1 章 绪论", "机器学习致力于研究如何通过计算的手段，利用经验来改善系统自身的性能。",
              "在计算机系统中，经验通常以数据形式存在。"], size=12),
        body(["1.1 引言", "学习算法从数据中产生模型，面对新的情况时，模型会给出相应的判断。"], size=12),
        body(["第 2 章 模型评估与选择", "学习器在训练集上的误差称为训练误差，在新样本上的误差称为泛化误差。"], size=12),
    ]
    outline = [("第 1 章 绪论", 1, [("1.1 引言", 2, [])]), ("第 2 章 模型评估与选择", 3, [])]
    doc = convert_file(write(tmp_path, "pumpkin.pdf", make_pdf(pages, outline=outline, title="南瓜书")))

    assert_spans_cover(doc)
    got = [(h.level, h.title, page_of(doc, h.char_offset)) for h in doc.headings]
    assert got == [(1, "第 1 章 绪论", 2), (2, "1.1 引言", 3), (1, "第 2 章 模型评估与选择", 4)]
    first = next(h for h in doc.headings if h.level == 1)
    assert "机器学习" in page_text(doc, page_of(doc, first.char_offset))
    assert doc.markdown.count("绪论") == 1               # marked in place, not duplicated
    assert doc.title == "南瓜书"


# --- the shared sample documents, read in place (make test-books) ---------------------------------------------

@pytest.mark.books
def test_federal_register_three_columns():
    doc = convert_file(shared_doc("pdfs_en", "federal-register-2020-17221.pdf"))
    assert doc.page_count == 15
    assert_spans_cover(doc)
    titles = {h.title: page_of(doc, h.char_offset) for h in doc.headings}
    assert titles.get("Proposed Design Changes") == 3
    assert "Background" in titles
    # Running header ("Federal Register / Vol. 85, ...") and page numbers are gone.
    assert "Federal Register / Vol. 85" not in doc.markdown
    assert "FAA-approved" in doc.markdown


@pytest.mark.books
def test_thinkpython_outline():
    # Speed is measured by bench/ingest.py, never asserted here.
    doc = convert_file(shared_doc("pdfs_en", "thinkpython2.pdf"))
    assert doc.page_count == 264
    assert_spans_cover(doc)
    assert len(doc.headings) >= 200
    heading = next(h for h in doc.headings if h.title == "1.1. What is a program?")
    assert heading.level == 2 and page_of(doc, heading.char_offset) == 21
    assert doc.title == "Think Python"


@pytest.mark.books
def test_chinese_book_outline():
    doc = convert_file(shared_doc("pdfs_zh", "pumpkin_book_1.9.9.pdf"))
    assert_spans_cover(doc)
    first = next(h for h in doc.headings if h.level == 1)
    assert first.title == "第 1 章 绪论"
    assert "机器学习" in page_text(doc, page_of(doc, first.char_offset))


# Scanned samples: tests/test_ocr.py reads every page of both shared scans (OCR is slow; once is enough).

"""rag.tables and table-aware chunking: real PDFs (written by hand, no ruling lines, like filings) read
with the real pypdfium2; tables come out as Markdown with their header, and chunks never part a row
from its header."""
from __future__ import annotations

import re
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from tests.pdf_bytes import escape, serialize_pdf
from tests.shared_docs import shared_doc

from rag.chunk import chunk_document, embedding_text, markdown_tables
from rag.pdf_converter import PDFIUM_LOCK, _clean, _page_lines, _page_markdown
from rag.tables import apply_tables, find_tables, may_hold_table
from rag.types import ConvertedDocument, PageSpan

# Helvetica advance widths (1/1000 em) of what numbers are made of, to right-align them as filings do.
_WIDTHS = {**{d: 556 for d in "0123456789$"}, ",": 278, ".": 278, "(": 333, ")": 333, "%": 889, " ": 278, "—": 1000}


def _width(text: str, size: float) -> float:
    return sum(_WIDTHS.get(ch, 556) for ch in text) * size / 1000


_esc = escape


def make_pdf(pages: list[list[tuple[str, float, float, float, str]]]) -> bytes:
    """A PDF whose pages are lists of (font, size, x, y, text); F1 = Helvetica, F2 = Helvetica-Bold,
    F3 = Courier."""
    objs = {3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
            4: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>",
            5: b"<< /Type /Font /Subtype /Type1 /BaseFont /Courier /Encoding /WinAnsiEncoding >>"}
    next_id, page_ids = 6, []
    for items in pages:
        page_id, content_id = next_id, next_id + 1
        next_id += 2
        page_ids.append(page_id)
        stream = "".join(f"BT /{font} {size} Tf {x:.2f} {y:.2f} Td ({_esc(text)}) Tj ET\n"
                         for font, size, x, y, text in items).encode("cp1252")
        objs[content_id] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"endstream"
        objs[page_id] = (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content_id} 0 R "
                         "/Resources << /Font << /F1 3 0 R /F2 4 0 R /F3 5 0 R >> >> >>").encode()
    objs[2] = f"<< /Type /Pages /Kids [{' '.join(f'{p} 0 R' for p in page_ids)}] /Count {len(pages)} >>".encode()
    objs[1] = b"<< /Type /Catalog /Pages 2 0 R >>"
    return serialize_pdf(objs, "", header=b"%PDF-1.4\n")


# --- a filing-like page: title, prose, a statement without ruling lines, prose ----------------------

COLUMNS = (400.0, 470.0, 540.0)       # right edges of the value columns
SIZE = 9.0


def _value_cells(y: float, values: list[str], dollar: bool = False) -> list:
    """Numbers right-aligned on their column; "$" set apart at the column's left, as filings do."""
    items = []
    for right, value in zip(COLUMNS, values):
        items.append(("F1", SIZE, right - _width(value, SIZE), y, value))
        if dollar:
            items.append(("F1", SIZE, right - 58, y, "$"))
    return items


def _centred(y: float, text: str, left: float, right: float, font: str = "F2") -> tuple:
    return (font, SIZE, (left + right) / 2 - _width(text, SIZE) / 2, y, text)


STATEMENT_ROWS = [  # label, values, "$" signs
    ("Revenue:", None, False),
    ("Product", ["5,123.4", "4,456.0", "4,101.9"], True),
    ("Services", ["2,178.1", "1,861.2", "1,752.5"], False),
    ("Total revenue", ["7,301.5", "6,317.2", "5,854.4"], True),
    ("Cost of revenue", ["(1,234.5)", "(1,100.2)", "(998.7)"], False),
    ("Gross margin", ["83.1%", "82.6%", "82.9%"], False),
    ("Restructuring charges", ["—", "12.0", "—"], False),
    ("Net income (loss)", ["(123.4)", "56.7", "41.0"], True),
]


def statement_page() -> list:
    items = [("F1", 10, 72, 760, "ACME Corporation reports its results for the fiscal years below; all figures are"),
             ("F1", 10, 72, 747, "audited and presented in accordance with generally accepted accounting principles."),
             ("F2", 11, 200, 712, "CONSOLIDATED STATEMENTS OF OPERATIONS"),
             ("F1", SIZE, 230, 699, "(In millions, except percentages)")]
    # A three-line column header: a label spanning all columns, then "December 31," and the year per column.
    items.append(_centred(676, "Fiscal Years Ended", COLUMNS[0] - 50, COLUMNS[-1]))
    for right, year in zip(COLUMNS, ("2017", "2016", "2015")):
        items.append(_centred(665, "December 31,", right - 55, right))
        items.append(_centred(654, year, right - 55, right))
    y = 638.0
    for label, values, dollar in STATEMENT_ROWS:
        items.append(("F1", SIZE, 72 if values is None else 80, y, label))
        if values:
            items += _value_cells(y, values, dollar)
        y -= 12
    items += [("F1", 10, 72, y - 20, "The accompanying notes are an integral part of these consolidated statements."),
              ("F1", 10, 72, y - 33, "Revenue grew in every year shown, led by product sales in North America.")]
    return items


LONG_ROWS = 40


def long_table_page() -> list:
    items = [("F2", 11, 220, 760, "SEGMENT REVENUE BY REGION"), ("F1", SIZE, 250, 747, "(In thousands)")]
    for right, year in zip(COLUMNS[1:], ("2019", "2018")):
        items.append(_centred(728, year, right - 55, right))
    y = 714.0
    for i in range(1, LONG_ROWS + 1):
        items.append(("F1", SIZE, 72, y, f"Region {i} net revenue"))
        for right, value in zip(COLUMNS[1:], (f"{i},{100 + i:03d}", f"({i * 7},{200 + i:03d})")):
            items.append(("F1", SIZE, right - _width(value, SIZE), y, value))
        y -= 15
    return items


PROSE = ["In 2017 the company sold 1,200 widgets, up 12.5% from 2016, and its revenue rose to $7,301.5 million.",
         "Management believes that the results reflect strong demand in 3 regions and 2 new product lines.",
         "The board met 4 times during the year; no director attended fewer than 75% of the meetings.",
         "Risk factors are described in Item 1A and should be read together with the notes on page 57.",
         "Our headquarters lease expires in 2025, with options to renew for two additional terms of 5 years."]


def prose_page() -> list:
    return [("F1", 10, 72, 720 - i * 14, text) for i, text in enumerate(PROSE * 4)]


@pytest.fixture(scope="module")
def filing() -> bytes:
    return make_pdf([statement_page(), long_table_page(), prose_page()])


def _page(data: bytes, index: int):
    """(tables, converter lines) of one page, read the way the converter reads it."""
    with PDFIUM_LOCK:
        pdf = pdfium.PdfDocument(data)
        try:
            textpage = pdf[index].get_textpage()
            text, lines = _page_lines(textpage)
            return find_tables(textpage, text), lines, text
        finally:
            pdf.close()


def _markdown_rows(markdown: str) -> list[str]:
    return markdown.splitlines()


# --- finding tables -------------------------------------------------------------------------------

def test_statement_becomes_a_markdown_table_with_its_header(filing):
    tables, _, _ = _page(filing, 0)
    assert len(tables) == 1
    table = tables[0]
    rows = _markdown_rows(table.markdown)
    # One header row merged from three lines; the spanning label reaches every column it spans.
    assert rows[0] == ("|  | Fiscal Years Ended December 31, 2017 | Fiscal Years Ended December 31, 2016 "
                       "| Fiscal Years Ended December 31, 2015 |")
    assert rows[1] == "|---|---|---|---|"
    assert rows[2] == "| Revenue: |  |  |  |"                        # a group label keeps its empty cells
    assert "| Total revenue | $7,301.5 | $6,317.2 | $5,854.4 |" in rows
    assert "| Cost of revenue | (1,234.5) | (1,100.2) | (998.7) |" in rows
    assert "| Gross margin | 83.1% | 82.6% | 82.9% |" in rows
    assert "| Restructuring charges | — | 12.0 | — |" in rows
    assert "| Net income (loss) | $(123.4) | $56.7 | $41.0 |" in rows
    assert len(rows) == 2 + len(STATEMENT_ROWS) and table.n_rows == len(STATEMENT_ROWS) and table.n_columns == 4
    assert "CONSOLIDATED STATEMENTS OF OPERATIONS" in table.caption
    assert "(In millions, except percentages)" in table.caption


def test_bbox_uses_pdfium_coordinates(filing):
    tables, lines, _ = _page(filing, 0)
    left, bottom, right, top = tables[0].bbox
    assert bottom < top and left < right
    # PDFium's origin: the header (baseline 676) is near the top, the last row (baseline 554) lower.
    assert 676 < top < 690 and 545 < bottom < 554
    assert 70 <= left <= 81 and 539 <= right <= 545
    prose = [line for line in lines if line.text.startswith(("ACME Corporation", "The accompanying"))]
    assert prose and all(not (bottom <= line.top <= top) for line in prose)


def test_apply_tables_replaces_the_loose_lines(filing):
    tables, lines, _ = _page(filing, 0)
    before = _page_markdown(lines)
    assert "Total revenue $ 7,301.5 $ 6,317.2 $ 5,854.4" in before      # what the reader gives without tables
    markdown = _page_markdown(apply_tables(lines, tables))
    assert "Total revenue $ 7,301.5" not in markdown
    assert tables[0].markdown in markdown
    # The table is its own paragraph between the prose and caption above and the prose below.
    assert f"\n\n{tables[0].markdown}\n\n" in markdown
    assert markdown.index("CONSOLIDATED STATEMENTS") < markdown.index("| Total revenue")
    assert markdown.index("| Net income (loss)") < markdown.index("The accompanying notes")
    assert markdown.count("| Total revenue") == 1
    # The converter's escaping of "#" lines and its clean-up (hyphens, odd characters) leave it intact.
    assert tables[0].markdown in _clean(markdown, set())


def test_prose_page_has_no_table(filing):
    tables, _, text = _page(filing, 2)
    assert tables == []
    assert not may_hold_table(text)      # the cheap gate already says no: no PDFium calls beyond the text


# --- a book's pages: contents, code, sessions, diagrams and an index are not tables -----------------------

def contents_page() -> list:
    """Chapter lines with their page number, section lines with dotted leaders to right-aligned numbers."""
    items, y, number = [("F2", 18, 72, 740, "Contents")], 710.0, 1
    for chapter in range(1, 5):
        title = f"{chapter} Chapter {chapter} of the book"
        items += [("F2", 10, 72, y, title), ("F2", 10, 540 - _width(str(number), 10), y, str(number))]
        y -= 14
        for section in range(1, 7):
            label = f"{chapter}.{section} Section {section} on a topic of chapter {chapter}"
            items += [("F1", 10, 86, y, label), ("F1", 10, 300, y, " ." * 56),
                      ("F1", 10, 540 - _width(str(number), 10), y, str(number))]
            number += 1 + section % 2
            y -= 13
        y -= 6
    return items


def code_page() -> list:
    """Prose, a listing in Courier with numbers in it, an interpreter session and a state diagram."""
    items = [("F1", 10, 72, 740, "A program that prints the first few powers of two and their sum follows:")]
    code = ["total = 0", "for i in range(10):", "    total = total + 2 ** i", "    print(i, 2 ** i)",
            "print('sum', total, 1023)", "pi = 3.14159", "radius = 2.5", "area = pi * radius ** 2"]
    items += [("F3", 9, 72, 716 - 12 * i, line) for i, line in enumerate(code)]
    items.append(("F1", 10, 72, 610, "The interpreter answers each expression in turn:"))
    session = [">>> 40 + 2", "42", ">>> 2 ** 10", "1024", ">>> round(3.14159, 2)", "3.14", ">>> 1,000,000",
               "(1, 0, 0)", ">>> 7 / 2", "3.5"]
    items += [("F3", 9, 72, 590 - 12 * i, line) for i, line in enumerate(session)]
    items.append(("F1", 10, 72, 450, "A state diagram shows each variable with an arrow to its value:"))
    for i, (name, value) in enumerate([("message", "'And now for something different'"), ("n", "17"),
                                       ("pi", "3.1415926535897932"), ("total", "1023")]):
        y = 426 - 14 * i
        items += [("F1", 9, 180 - _width(name, 9), y, name), ("F1", 9, 190, y, "->"), ("F1", 9, 210, y, value)]
    return items


def index_page() -> list:
    """An index in two columns: a term, then the pages it is on."""
    items = [("F2", 18, 72, 740, "Index")]
    terms = ["accumulator", "algorithm", "argument", "assignment", "attribute", "base case", "boolean",
             "branch", "bug", "call graph", "chained conditional", "comment", "comparison", "concatenation",
             "conditional", "debugging", "dictionary", "element", "exception", "expression", "flow of execution",
             "function call", "hash function", "hashable", "header", "immutability", "increment", "index",
             "iteration", "keyword", "list", "loop", "method", "module", "operator", "parameter"]
    for i, term in enumerate(terms):
        column, row = divmod(i, 18)
        pages = ", ".join(str(7 + (i * 13 + k * 37) % 230) for k in range(1 + i % 4))
        items.append(("F1", 9, 72 + 250 * column, 712 - 14 * row, f"{term}, {pages}"))
    return items


def test_book_pages_of_contents_code_and_index_have_no_tables():
    data = make_pdf([contents_page(), code_page(), index_page(), statement_page()])
    pages = [_page(data, index) for index in range(4)]
    assert [may_hold_table(text) for _, _, text in pages] == [False, True, True, True]   # lone page numbers end
    # the contents' lines; code, session, diagram and index lines end in numbers and are looked at ...
    assert [tables for tables, _, _ in pages[:3]] == [[], [], []]      # ... and are no tables
    assert len(pages[3][0]) == 1                                      # the statement beside them still is one


@pytest.mark.books
def test_book_pages_of_prose_and_code_have_no_tables():
    path = shared_doc("pdfs_en", "thinkpython2.pdf")
    # Every page of prose, >>> sessions, code, stack and object diagrams, the contents and the index;
    # pages 92 (a table of square roots) and 242 (a table of run times) hold real tables and are left out.
    with PDFIUM_LOCK:
        pdf = pdfium.PdfDocument(str(path))
        try:
            found = {index + 1: find_tables(pdf[index].get_textpage()) for index in range(len(pdf))
                     if index + 1 not in (92, 242)}
        finally:
            pdf.close()
    assert len(found) == 262
    assert {page: tables for page, tables in found.items() if tables} == {}


# --- chunking keeps rows with their header --------------------------------------------------------

def _converted(data: bytes) -> ConvertedDocument:
    """The filing as the converter will write it once tables are applied: one Markdown, a page map."""
    parts, spans, pos = [], [], 0
    for index in range(3):
        tables, lines, _ = _page(data, index)
        text = _page_markdown(apply_tables(lines, tables))
        parts.append(text)
        spans.append(PageSpan(index + 1, pos, pos + len(text) + 2))
        pos += len(text) + 2
    markdown = "\n\n".join(parts)
    spans[-1] = PageSpan(3, spans[-1].char_start, len(markdown))
    return ConvertedDocument(markdown=markdown, title="ACME 10-K", pages=spans, page_count=3, source_format="pdf")


def _check_table_chunks(doc: ConvertedDocument, size: int, overlap: int):
    chunks = chunk_document(doc, "d", size=size, overlap=overlap)
    tables = markdown_tables(doc.markdown)
    for chunk in chunks:
        assert doc.markdown[chunk.char_start:chunk.char_end].strip() == chunk.text   # still a contiguous slice
        lines = chunk.text.splitlines()
        for table in tables:
            header_row = table.header.splitlines()[0]
            if header_row in lines:
                # The chunk that holds a header holds the first row under it too.
                at = lines.index(header_row)
                assert at + 2 < len(lines) and lines[at + 2].startswith("| "), chunk.text
            holds_rows = table.start < chunk.char_start < table.end or (
                chunk.char_start <= table.start < chunk.char_end)
            if holds_rows and header_row not in lines:
                assert table.header in chunk.context_prefix
                if table.caption:
                    assert chunk.context_prefix.startswith(table.caption)
        # No row is cut in two: every line of a table in a chunk is a whole row.
        assert all(line.endswith("|") for line in lines if line.startswith("|"))
    return chunks, tables


@pytest.mark.parametrize("size,overlap", [(40, 0), (60, 15), (120, 20), (200, 40)])
def test_long_table_chunks_carry_the_header(filing, size, overlap):
    doc = _converted(filing)
    chunks, tables = _check_table_chunks(doc, size, overlap)
    long_table = next(t for t in tables if "| Region 1 net revenue |" in doc.markdown[t.start:t.end])
    continued = [c for c in chunks if long_table.start < c.char_start < long_table.end]
    assert len(continued) >= 2
    assert long_table.caption.endswith("(In thousands)")
    assert all(c.context_prefix.startswith(long_table.caption) for c in continued)
    # Every region's row is in some chunk whose header (its own or carried) names the years.
    for i in range(1, LONG_ROWS + 1):
        row = f"| Region {i} net revenue |"
        holder = next(c for c in chunks if row in c.text)
        assert "| 2019 | 2018 |" in holder.text or "| 2019 | 2018 |" in holder.context_prefix
    indexed = embedding_text("ACME 10-K", continued[0].heading_path, continued[0].text, continued[0].context_prefix)
    assert "| 2019 | 2018 |" in indexed and continued[0].text in indexed


def test_small_table_stays_whole_in_one_chunk(filing):
    doc = _converted(filing)
    statement = next(t for t in markdown_tables(doc.markdown) if "Total revenue" in doc.markdown[t.start:t.end])
    whole = doc.markdown[statement.caption_start:statement.end]
    assert any(whole in c.text for c in chunk_document(doc, "d", size=300, overlap=40))
    # A table that would straddle a window's end moves whole, with its caption, to the next chunk.
    intro = " ".join(f"Sentence {i} explains the figures." for i in range(24))        # ~120 tokens
    rows = "\n".join(f"| Item {i} | {i * 3}.0 | {i * 5}.0 |" for i in range(12))         # ~150 tokens
    md = f"# Report\n\n{intro}\n\nQuarterly results\n\n| Item | Q1 | Q2 |\n|---|---|---|\n{rows}\n\nAfter the table.\n"
    chunks = chunk_document(ConvertedDocument(markdown=md, title="Report"), "d", size=200, overlap=40)
    table = md[md.index("Quarterly results"):md.index("\n\nAfter")]
    assert any(c.text.startswith(table) for c in chunks)
    assert all(c.context_prefix == "" for c in chunks)


def test_markdown_tables_from_any_source_are_kept_whole():
    """Tables written by other converters (DOCX, HTML, Markdown files) follow the same rules."""
    intro = " ".join(f"Sentence {i} explains the figures." for i in range(30))
    rows = "\n".join(f"| Item {i} | {i * 3}.0 | {i * 5}.0 |" for i in range(60))
    header = "| Item | Q1 | Q2 |\n|---|---|---|"
    md = f"# Report\n\n{intro}\n\nQuarterly results by item\n\n{header}\n{rows}\n\nAfter the table.\n"
    doc = ConvertedDocument(markdown=md, title="Report")
    chunks, tables = _check_table_chunks(doc, 80, 20)
    assert tables[0].caption == "Quarterly results by item"
    assert sum(1 for c in chunks if c.context_prefix == f"Quarterly results by item\n\n{header}") >= 3
    assert not any(re.search(r"\| Item \d+ \| [\d.]+ \|$", line) for c in chunks for line in c.text.splitlines())
    # Chunks outside tables carry nothing extra.
    assert all(c.context_prefix == "" for c in chunks if "|" not in c.text)


def test_a_window_cut_short_before_a_wide_table_is_not_slid_one_token_at_a_time():
    """A caption between two tables, before a header too wide to share a window: its window is cut
    short, and the next one must not step back into it ("as follows:", "follows:", ":" were chunks)."""
    cols = " | ".join(f"Three Months Ended, Dec. 31, 2016 Quarter {i} (in thousands, except per share data) (unaudited)"
                      for i in range(8))
    header = f"| Share-Based Compensation | {cols} |\n|" + "---|" * 9
    rows = "\n".join(f"| Line item {i} | " + " | ".join(str(1000 + i * j) for j in range(8)) + " |" for i in range(12))
    before = "| Item | Q1 |\n|---|---|\n" + "\n".join(f"| Previous {i} | {i} |" for i in range(40))
    caption = "Costs and expenses include share-based compensation expense as follows:"
    md = f"# Report\n\nQuarterly data\n\n{before}\n\n{caption}\n\n{header}\n{rows}\n\nAfter the table.\n"
    chunks = chunk_document(ConvertedDocument(markdown=md, title="Report"), "d", size=200, overlap=40)
    texts = [c.text for c in chunks]
    assert not any(a != b and a in b for a in texts for b in texts), texts   # no chunk is a piece of another
    assert all(c.token_count >= 10 for c in chunks)
    assert any(c.text.startswith("| Share-Based Compensation |") for c in chunks)
    assert "| Line item 11 |" in "".join(c.text for c in chunks)


def balance_sheet_page() -> list:
    """A balance sheet in two parts under one column header, as 10-Qs set it: the assets, a centred
    LIABILITIES AND STOCKHOLDERS' EQUITY line, then the liabilities with no header of their own."""
    columns = COLUMNS[1:]
    items = [("F2", 11, 200, 760, "CONSOLIDATED BALANCE SHEETS"), ("F1", SIZE, 250, 747, "(In thousands)")]
    for right, (day, year) in zip(columns, (("June 30,", "2023"), ("December 31,", "2022"))):
        items += [_centred(737, day, right - 55, right), _centred(726, year, right - 55, right)]
    y = 710.0

    def rows(labelled: list[tuple[str, tuple[str, str] | None]]) -> None:
        nonlocal y
        for label, values in labelled:
            items.append(("F1", SIZE, 72 if values is None else 80, y, label))
            for right, value in zip(columns, values or ()):
                items.append(("F1", SIZE, right - _width(value, SIZE), y, value))
            y -= 12
    rows([("Current assets", None), ("Cash and cash equivalents", ("3,843,366", "5,911,893")),
          ("Accounts receivable, net", ("703,971", "852,149")), ("Total current assets", ("5,616,995", "8,154,692")),
          ("Total assets", ("42,905,829", "45,692,206"))])
    y -= 14
    items.append(_centred(y, "LIABILITIES AND STOCKHOLDERS' EQUITY", 200, 600))   # runs over the value columns
    y -= 18
    rows([("Current liabilities", None), ("Accounts and construction payable", ("358,807", "369,817")),
          ("Other accrued liabilities", ("2,295,172", "2,236,323")),
          ("Total current liabilities", ("2,749,404", "4,515,892")),
          ("Long-term debt, net", ("6,674,044", "7,432,817"))])
    return items


def test_the_parts_of_a_statement_under_one_column_header_share_it():
    tables, _, _ = _page(make_pdf([balance_sheet_page()]), 0)
    assert len(tables) == 2, [t.markdown for t in tables]
    assets, liabilities = (_markdown_rows(t.markdown) for t in tables)
    assert assets[0] == "|  | June 30, 2023 | December 31, 2022 |", tables[0].markdown
    assert liabilities[0] == assets[0]
    assert "| Total current liabilities | 2,749,404 | 4,515,892 |" in liabilities

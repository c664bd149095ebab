"""OCR of scanned PDF pages with the real RapidOCR model (no mocks).

The synthetic pages are images of known English and Chinese text drawn with Pillow (bench/ocr.py draws
them) and put into image-only PDFs, so every page must be read by OCR. Chinese needs a CJK font on the
machine (the Debian package fonts-wqy-microhei, which scripts/system-deps.sh installs): without it these
tests fail, they do not skip. The shared scanned samples (../shared) are read by the `books` test only.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from bench.ocr import cjk_font, image_pdf, latin_font, lines_for, scanned, text_page
from core.errors import DocumentError
from rag import ocr
from rag.chunk import chunk_document
from rag.convert import convert_file
from rag.pdf_converter import PDFIUM_LOCK
from tests.browser.pdfgen import make_pdf
from tests.shared_docs import shared_doc

REPO = Path(__file__).resolve().parents[1]
PAGE = (432.0, 288.0)            # 6 x 4 inches: small pages keep the model's work (and the test) short
HERONS = ("Herons stand quite still in shallow water and strike at passing fish with long sharp beaks "
          "before the fish can escape.")
GLACIERS = ("Glaciers carve deep valleys as they slide downhill, grinding rock into flour that turns "
            "rivers milky blue.")
LIGHTHOUSE = ["The lighthouse keeper wound the clockwork", "lamp every single evening at dusk and",
              "logged each passing ship in a red book."]
CHINESE = ["光合作用把光能转化为化学能。", "二分查找每一步都把区间缩小一半。", "递归函数必须逐步接近基本情形。"]


def page_text(doc, page: int) -> str:
    span = doc.pages[page - 1]
    return doc.markdown[span.char_start:span.char_end]


def flat(text: str) -> str:
    return " ".join(text.split())


def two_column_page():
    """English in two columns: a reader must finish the left column before the right one."""
    font = latin_font()
    column = (PAGE[0] - 72) / 2 - 18
    left = lines_for(HERONS, font, 13, column, 5)
    right = lines_for(GLACIERS, font, 13, column, 5)
    assert len(left) == len(right) == 5 and left[-1].endswith("escape.")
    return text_page(left + right, font, 13, page=PAGE, margin_pt=36, columns=2)[0]


@pytest.fixture(scope="module")
def scans(tmp_path_factory):
    """An image-only PDF: EN two columns, ZH scanned, a blank scan, EN scanned; converted once."""
    from PIL import Image
    chinese, _ = text_page(CHINESE, cjk_font(), 16, page=PAGE, margin_pt=36)
    english, tops = text_page(LIGHTHOUSE, latin_font(), 14, page=PAGE, margin_pt=36)
    blank = Image.new("L", english.size, 255)
    data = image_pdf([two_column_page(), scanned(chinese, 3), blank, scanned(english, 4)], page=PAGE)
    path = tmp_path_factory.mktemp("scans") / "scans.pdf"
    path.write_bytes(data)
    calls: list[tuple[str, int, int]] = []
    doc = convert_file(path, progress=lambda *call: calls.append(call))
    return path, doc, calls, tops


# --- the model ---------------------------------------------------------------------------------------

def test_models_ship_in_the_wheel_and_nothing_is_downloaded(tmp_path):
    det, rec = ocr.model_files()
    assert det.is_file() and rec.is_file()
    before = sorted(p.name for p in det.parent.iterdir())
    image_path = tmp_path / "line.png"
    text_page(["Offline reading works"], latin_font(), 20, page=(300.0, 80.0), margin_pt=20)[0].save(image_path)
    # Any attempt to reach the network fails loudly in this process.
    code = f"""
import socket
def refuse(*args, **kwargs):
    raise OSError("network access attempted")
socket.socket.connect = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
import numpy as np
from PIL import Image
from rag import ocr
image = np.asarray(Image.open({str(image_path)!r}).convert("RGB"))[:, :, ::-1].copy()
print("|".join(line.text for line in ocr.ocr_page(image, 300 / 72)))
"""
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "Offline reading works"
    assert "network access attempted" not in done.stderr
    assert sorted(p.name for p in det.parent.iterdir()) == before


def test_render_scale_is_200_dpi_but_bounded_for_posters():
    assert ocr.render_scale(612, 792) == pytest.approx(200 / 72)
    assert ocr.render_scale(2160, 2160) * 2160 == pytest.approx(ocr.MAX_RENDER_SIDE)


# --- reading order without the model ------------------------------------------------------------------

def box(text, x0, y0, x1, y1):
    return ocr._Box(text, x0, y0, x1, y1, 0.99)


def test_two_columns_are_read_one_after_the_other():
    rows = [(f"left line {i}", f"right line {i}") for i in range(6)]
    boxes = [box("Title across both columns", 100, 40, 1100, 80)]
    for i, (left, right) in enumerate(rows):
        y = 120 + 40 * i
        boxes += [box(left, 100, y, 560, y + 30), box(right, 640, y, 1100, y + 30)]
    boxes.append(box("A footer line that runs across the page", 100, 400, 1100, 430))
    order = [b.text for b in ocr.reading_order(boxes)]
    assert order == (["Title across both columns"] + [r[0] for r in rows] + [r[1] for r in rows]
                     + ["A footer line that runs across the page"])


def test_a_table_is_read_row_by_row():
    boxes = []
    for i, (label, value) in enumerate([("Revenue", "1,234"), ("Costs", "567"), ("Profit", "667"), ("Tax", "80")]):
        y = 100 + 40 * i
        boxes += [box(label, 100, y, 100 + 20 * len(label), y + 30), box(value, 900, y, 980, y + 30)]
    assert [b.text for b in ocr.reading_order(boxes)] == ["Revenue 1,234", "Costs 567", "Profit 667", "Tax 80"]


def test_paragraphs_start_at_indents_and_after_short_lines():
    texts = ["It was the best of times and the worst of", "times, the age of wisdom and foolishness.",
             "Short end.", "A new paragraph starts here at the margin", "and goes on for a while longer than that.",
             "    An indented first line opens another", "paragraph of the same text on the page."]
    boxes = []
    for i, text in enumerate(texts):
        y = 100 + 40 * i
        x0 = 160 if text.startswith("    ") else 100
        x1 = 300 if text == "Short end." else 1000
        boxes.append(box(text.strip(), x0, y, x1, y + 30))
    breaks = [b.text for b in ocr.reading_order(boxes) if b.para_break]
    assert breaks == [texts[0], texts[3], texts[5].strip()]


# --- scanned PDFs through the converter ----------------------------------------------------------------

def test_scanned_pages_are_read_with_their_page_numbers(scans):
    _, doc, _, _ = scans
    assert doc.page_count == 4 and doc.ocr_pages == [1, 2, 4]
    first = flat(page_text(doc, 1))
    assert "Herons stand" in first and "Glaciers carve" in first
    assert first.index("escape") < first.index("Glaciers")           # the left column first
    second = page_text(doc, 2).replace(" ", "")
    for line in CHINESE:
        assert line.rstrip("。") in second
    assert page_text(doc, 3) == ""
    assert "lighthouse keeper wound the clockwork lamp" in flat(page_text(doc, 4))
    # Chunks carry the right pages, so search results cite them.
    chunks = chunk_document(doc, "scans", size=30, overlap=0)
    for word, page in [("Herons", 1), ("Glaciers", 1), ("二分查找", 2), ("lighthouse", 4)]:
        chunk = next(c for c in chunks if word in c.text)
        at = chunk.text.index(word)
        assert chunk.pages_of_span(at, at + len(word))[0] == page, word


def test_ocr_pages_and_an_unreadable_page_are_named_in_the_warnings(scans):
    _, doc, _, _ = scans
    assert doc.warnings == [
        "pages 1-2, 4 were scanned and read by OCR, so their text may contain recognition mistakes",
        "page 3 has no text layer (scanned?) and OCR found no readable text on it, so it cannot be searched"]
    # the Documents tab shows them in the reader's language (ui.common.said); English is the sentence itself
    from types import SimpleNamespace

    from ui.common import said
    zh, en = (SimpleNamespace(headers={"accept-language": lang}) for lang in ("zh-CN,zh;q=0.9", "en-US"))
    assert [said(zh, w) for w in doc.warnings] == ["第 1-2, 4 页是扫描页，已用 OCR 识别，文字可能有识别错误",
                                                  "第 3 页没有文字层（扫描件？），OCR 也没有识别出文字，因此无法搜索"]
    assert [said(en, w) for w in doc.warnings] == doc.warnings


def test_progress_is_reported_per_page_and_per_ocr_page(scans):
    _, _, calls, _ = scans
    assert [c for c in calls if c[0] == "pages"] == [("pages", i, 4) for i in range(1, 5)]
    assert [c for c in calls if c[0] == "ocr" and c[1] > 0] == [("ocr", k, 4) for k in range(1, 5)]


def test_ocr_line_boxes_are_in_pdf_points_where_the_text_was_drawn(scans):
    _, doc, _, tops = scans
    assert sorted(doc.ocr_lines) == [1, 2, 4]
    for lines in doc.ocr_lines.values():
        for line in lines:
            left, bottom, right, top = line["box"]
            assert 0 <= left < right <= PAGE[0] and 0 <= bottom < top <= PAGE[1]
            assert 0.65 <= line["conf"] <= 1
    keeper = next(line for line in doc.ocr_lines[4] if "lighthouse" in line["text"])
    # Drawn with its top at tops[0] (the glyphs start a little lower); the scan is skewed by 0.7 degrees.
    assert tops[0] - 14 < keeper["box"][3] < tops[0] + 6
    assert 30 < keeper["box"][0] < 45


def test_a_pdf_of_blank_scans_is_refused_in_one_sentence(tmp_path):
    from PIL import Image
    path = tmp_path / "blank-scan.pdf"
    path.write_bytes(image_pdf([Image.new("L", (400, 300), 255)], page=(288.0, 216.0)))
    with pytest.raises(DocumentError) as info:
        convert_file(path)
    message = str(info.value)
    assert "blank-scan.pdf" in message and "scanned" in message and "OCR" in message and "\n" not in message


# --- the sidecar and the page viewer -------------------------------------------------------------------

def test_sidecar_round_trips_and_is_removed_when_empty(scans, tmp_path):
    _, doc, _, _ = scans
    stored = tmp_path / "doc.pdf"
    stored.write_bytes(b"%PDF-1.4")
    written = ocr.save_ocr_lines(stored, doc.ocr_lines)
    assert written == ocr.sidecar_path(stored) == tmp_path / "doc.pdf.ocr.json"
    assert ocr.load_ocr_lines(stored) == doc.ocr_lines
    assert json.loads(written.read_text(encoding="utf-8"))["version"] == 1
    written.write_text("{not json", encoding="utf-8")
    assert ocr.load_ocr_lines(stored) == {}
    assert ocr.save_ocr_lines(stored, {}) is None and not written.exists()
    assert ocr.load_ocr_lines(tmp_path / "missing.pdf") == {}


def test_viewer_highlights_a_passage_on_a_scanned_page(scans, tmp_path):
    from assistant.pages import best_page, render_page
    path, doc, _, tops = scans
    stored = tmp_path / "stored.pdf"
    stored.write_bytes(path.read_bytes())
    passage = " ".join(LIGHTHOUSE)
    assert render_page(stored, 4, passage).boxes == []          # no sidecar: nothing to match against
    ocr.save_ocr_lines(stored, doc.ocr_lines)
    shown = render_page(stored, 4, passage, scale=2.0)
    assert shown.matched_words >= 15 and len(shown.boxes) == 3
    x0, y0, x1, y1 = shown.boxes[0]
    assert abs(y0 / 2.0 - (PAGE[1] - tops[0])) < 14 and x0 < x1
    r, g, b = shown.image.getpixel((int(x0) + 3, int((y0 + y1) / 2)))
    assert r > 200 and g > 150                                   # yellowish: highlighted
    assert render_page(stored, 1, passage).boxes == []           # another page: no match
    assert best_page(stored, 1, 4, passage) == 4


def test_typed_pages_among_scans_are_read_from_their_text_layer(tmp_path):
    """A scanned file with a typed page in it: OCR reads the scans only, and every page has its text."""
    lighthouse = scanned(text_page(LIGHTHOUSE, latin_font(), 14, page=PAGE, margin_pt=36)[0], 5)
    glaciers = lines_for(GLACIERS, latin_font(), 14, PAGE[0] - 72, 3)
    later = scanned(text_page(glaciers, latin_font(), 14, page=PAGE, margin_pt=36)[0], 6)
    with PDFIUM_LOCK:
        pdf = pdfium.PdfDocument(image_pdf([lighthouse, later], page=PAGE))
        typed = pdfium.PdfDocument(make_pdf([["# A Typed Page", "Herons stand quite still in shallow water."]]))
        pdf.import_pages(typed, [0], index=1)
        pdf.save(tmp_path / "mixed.pdf")
        typed.close()
        pdf.close()
    doc = convert_file(tmp_path / "mixed.pdf")
    assert doc.page_count == 3 and doc.ocr_pages == [1, 3]
    assert "lighthouse keeper wound the clockwork lamp" in flat(page_text(doc, 1))
    assert "Herons stand quite still in shallow water." in page_text(doc, 2)
    assert "Glaciers carve deep valleys" in flat(page_text(doc, 3))
    assert doc.warnings == ["pages 1, 3 were scanned and read by OCR, so their text may contain recognition mistakes"]


def test_scanned_pages_over_the_limit_are_named_not_lost(scans):
    path, _, _, _ = scans
    doc = convert_file(path, ocr_max_pages=1)    # reads the first scanned page only
    assert doc.ocr_pages == [1]
    assert "Herons stand" in flat(page_text(doc, 1)) and page_text(doc, 4) == ""
    assert doc.warnings[-1] == ("pages 2-4 were not read: OCR reads the first 1 scanned pages of a file; "
                                "split the file to read the rest")


# --- the shared scanned samples (make test-books) --------------------------------------------------------

@pytest.mark.books
@pytest.mark.slow
@pytest.mark.parametrize("name,ocr_pages,phrases", [
    ("ocrmypdf_c02-22.pdf", [1], {1: "tip-toeing along a path"}),
    ("ocrmypdf_multipage.pdf", [1, 2, 3, 5, 6],
     {1: "scrape our heads", 2: "megapixels", 3: "Percentage", 4: "Percentage", 5: "Cock-lane ghost",
      6: "atheistical and traitorous"}),
])
def test_every_page_of_the_shared_scans_has_text(name, ocr_pages, phrases):
    doc = convert_file(shared_doc("pdfs_scanned", name))
    assert doc.ocr_pages == ocr_pages
    for page in range(1, doc.page_count + 1):
        text = page_text(doc, page)
        assert re.search(r"[^\W\d_]{3}", text), f"page {page} has no text"
        assert phrases[page] in flat(text), (page, text[:300])
    assert not any("cannot be searched" in warning for warning in doc.warnings)

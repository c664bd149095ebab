"""Figures found in PDFs (rag/figures.py) with real pypdfium2 and the real OCR model, no mocks.

The synthetic PDF is built with pypdfium2's own object API: a raster figure of known words drawn
with Pillow and its caption, a vector drawing with text-layer labels and its caption, a code listing
in grey boxes (not a figure), an uncaptioned photo with a stand-alone label line, a logo repeated on
every page, a tiny icon, and a scanned page (a full-page image with no text layer). A second one is a
Chinese book's pages: cover ornaments running off the page, a plot and a picture under "图 n-m"
captions, four plots in a 2 x 2 grid under one caption. Think Python and the pumpkin book (../shared)
are measured by the `books` tests only (make test-books).
"""
from __future__ import annotations

import ctypes
import io
import json
import time
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from PIL import Image, ImageDraw, ImageFont

from bench.ocr import cjk_font, image_pdf, latin_font, scanned, text_page
from rag import figures
from rag.figures import Figure, extract_figures, figure_memory_text, load_figures, memory_records, save_figures
from rag.pdf_converter import PDFIUM_LOCK
from tests.browser.pdfgen import make_pdf
from tests.shared_docs import shared_doc

LETTER = (612.0, 792.0)
RASTER_BOX = (162.0, 400.0, 450.0, 580.0)     # the raster figure on page 1, PDF points
VECTOR_BOX = (150.0, 420.0, 460.0, 600.0)     # the drawing on page 2
PHOTO_BOX = (200.0, 450.0, 400.0, 600.0)      # the uncaptioned photo on page 3
BODY = ["Glaciers move slowly downhill under their own weight, grinding the rock below them.",
        "Measurements at the front of the glacier show how fast the ice flows each season."]


# --- building the PDF ----------------------------------------------------------------------------------------

def _text(pdf, page, font, text: str, x: float, y: float, size: float = 11) -> None:
    obj = pdfium_c.FPDFPageObj_CreateTextObj(pdf, font, ctypes.c_float(size))
    encoded = ctypes.create_string_buffer((text + "\0").encode("utf-16-le"))
    assert pdfium_c.FPDFText_SetText(obj, ctypes.cast(encoded, ctypes.POINTER(ctypes.c_ushort)))
    pdfium_c.FPDFPageObj_Transform(obj, 1, 0, 0, 1, x, y)
    pdfium_c.FPDFPage_InsertObject(page, obj)


def _image(pdf, page, pil: Image.Image, box: tuple[float, float, float, float]) -> None:
    image = pdfium.PdfImage.new(pdf)
    bitmap = pdfium.PdfBitmap.from_pil(pil)
    image.set_bitmap(bitmap)
    image.set_matrix(pdfium.PdfMatrix().scale(box[2] - box[0], box[3] - box[1]).translate(box[0], box[1]))
    page.insert_obj(image)


def _path(page, points, *, close=False, fill=None, bezier=False, width=1.5) -> None:
    obj = pdfium_c.FPDFPageObj_CreateNewPath(*points[0])
    if bezier:
        for i in range(1, len(points) - 2, 3):
            pdfium_c.FPDFPath_BezierTo(obj, *points[i], *points[i + 1], *points[i + 2])
    else:
        for x, y in points[1:]:
            pdfium_c.FPDFPath_LineTo(obj, x, y)
    if close:
        pdfium_c.FPDFPath_Close(obj)
    pdfium_c.FPDFPageObj_SetStrokeColor(obj, 20, 40, 120, 255)
    pdfium_c.FPDFPageObj_SetStrokeWidth(obj, ctypes.c_float(width))
    if fill:
        pdfium_c.FPDFPageObj_SetFillColor(obj, *fill, 255)
    pdfium_c.FPDFPath_SetDrawMode(obj, pdfium_c.FPDF_FILLMODE_WINDING if fill else pdfium_c.FPDF_FILLMODE_NONE, True)
    pdfium_c.FPDFPage_InsertObject(page, obj)


def _picture(size: tuple[int, int], words: list[str], background=(235, 242, 250)) -> Image.Image:
    """A picture with big known words on it, and a few shapes so it is not just text."""
    img = Image.new("RGB", size, background)
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype(str(latin_font()), size[1] // 7)
    draw.ellipse((size[0] * 0.72, size[1] * 0.08, size[0] * 0.95, size[1] * 0.45), fill=(120, 170, 220))
    draw.polygon([(0, size[1]), (size[0] * 0.3, size[1] * 0.55), (size[0] * 0.6, size[1])], fill=(160, 190, 160))
    for i, word in enumerate(words):
        draw.text((size[0] * 0.06, size[1] * (0.1 + 0.22 * i)), word, fill=(10, 10, 10), font=font)
    return img


def _logo() -> Image.Image:
    img = Image.new("RGB", (240, 120), (200, 30, 30))
    ImageDraw.Draw(img).ellipse((20, 10, 120, 110), fill=(255, 255, 255))
    return img


def build_pdf() -> bytes:
    pdf = pdfium.PdfDocument.new()
    font = pdfium_c.FPDFText_LoadStandardFont(pdf, b"Helvetica")
    mono = pdfium_c.FPDFText_LoadStandardFont(pdf, b"Courier")
    logo = _logo()

    def page_with_header(number: int):
        page = pdf.new_page(*LETTER)
        _image(pdf, page, logo, (40, 730, 120, 770))        # the same logo on every page: 80 x 40 pt
        _text(pdf, page, font, f"Glaciology notes, page {number}", 140, 745, 10)
        return page

    # Page 1: a raster figure with words in it, its caption below, a tiny icon.
    page = page_with_header(1)
    _image(pdf, page, Image.new("RGB", (60, 60), (30, 160, 60)), (540, 740, 564, 764))   # a 1/3-inch icon
    for i, line in enumerate(BODY):
        _text(pdf, page, font, line, 72, 680 - 16 * i)
    _image(pdf, page, _picture((800, 500), ["GLACIER", "SPEED 42"]), RASTER_BOX)
    _text(pdf, page, font, "Figure 1.1: Ice flow measured at the glacier front.", 180, 382, 10)
    _text(pdf, page, font, "The speed of the ice changes with the season and the slope.", 72, 340)
    page.gen_content()

    # Page 2: a vector drawing (axes, a curve, labels in the text layer) and a code listing in boxes.
    page = page_with_header(2)
    _text(pdf, page, font, "The drawing below plots the speed of the glacier over one year.", 72, 660)
    left, bottom, right, top = VECTOR_BOX
    _path(page, [(left + 30, top - 10), (left + 30, bottom + 30), (right - 10, bottom + 30)])   # axes
    _path(page, [(left + 30, bottom + 40), (left + 110, top - 20), (left + 200, bottom + 50), (right - 20, top - 40)],
          bezier=True, width=2.5)
    _path(page, [(right - 60, top - 30), (right - 20, top - 30), (right - 40, top - 5)], close=True, fill=(230, 120, 40))
    _text(pdf, page, font, "time", left + 200, bottom + 12, 9)
    _text(pdf, page, font, "speed", left + 2, top - 60, 9)
    _text(pdf, page, font, "Figure 2.1: Speed of the glacier over a year.", 190, VECTOR_BOX[1] - 18, 10)
    code = ["def speed(distance, days):", "    return distance / days", "print(speed(42, 7))"]
    for i, line in enumerate(code):   # a code listing: one grey box per line, like Think Python's
        y = 300 - 14 * i
        _path(page, [(72, y - 4), (540, y - 4), (540, y + 10), (72, y + 10)], close=True, fill=(235, 235, 235), width=0.2)
        _text(pdf, page, mono, line, 78, y, 10)
    page.gen_content()

    # Page 3: an uncaptioned photo with a stand-alone label line under it.
    page = page_with_header(3)
    _text(pdf, page, font, BODY[0], 72, 680)
    _image(pdf, page, _picture((600, 450), ["NORTH", "FACE"], background=(250, 240, 225)), PHOTO_BOX)
    _text(pdf, page, font, "The north face in winter", 230, PHOTO_BOX[1] - 16, 10)
    for i, line in enumerate(BODY):
        _text(pdf, page, font, line, 72, 380 - 16 * i)
    page.gen_content()

    # Page 4: a scan, a page-sized picture of text and no text layer: read as text elsewhere, no figure.
    page = pdf.new_page(*LETTER)
    scan = Image.new("RGB", (850, 1100), (250, 250, 250))
    ImageDraw.Draw(scan).text((80, 100), "A scanned page of notes", fill=(0, 0, 0),
                              font=ImageFont.truetype(str(latin_font()), 40))
    _image(pdf, page, scan, (0, 0) + LETTER)
    page.gen_content()

    out = io.BytesIO()
    pdf.save(out)
    pdf.close()
    return out.getvalue()


@pytest.fixture(scope="module")
def sample_pdf(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("figures") / "glaciers.pdf"
    path.write_bytes(build_pdf())
    return path


@pytest.fixture(scope="module")
def found(sample_pdf):
    """The sample's figures with OCR, extracted once (OCR takes seconds a figure), and the progress heard."""
    heard = []
    result = extract_figures(sample_pdf, progress=lambda stage, done, total: heard.append((stage, done, total)))
    return result, heard


def close_to(box, expected, tolerance=4.0) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(box, expected))


# --- the synthetic PDF ------------------------------------------------------------------------------------------

def test_finds_the_three_figures_and_skips_logos_icons_code_and_scans(found):
    result, _ = found
    assert [(f.page, f.kind) for f in result] == [(1, "image"), (2, "vector"), (3, "image")]


def test_raster_figure_has_page_box_caption_ocr_text_and_png(found):
    fig = found[0][0]
    assert fig.page == 1 and close_to(fig.bbox, RASTER_BOX), fig.bbox
    assert fig.caption == "Figure 1.1: Ice flow measured at the glacier front."
    assert fig.label == "Figure 1.1"
    assert fig.text_source == "ocr"
    words = fig.text.upper()
    assert "GLACIER" in words and "SPEED 42" in words, fig.text
    with Image.open(io.BytesIO(fig.png)) as img:
        img.load()
        # 288 x 180 pt (+ 2 pt padding on each side) at 150 dpi
        assert abs(img.width - 292 * 150 / 72) <= 3 and abs(img.height - 184 * 150 / 72) <= 3, img.size
        assert img.size == fig.size
        # the picture itself, not a blank crop: its background colour fills the middle
        assert img.getpixel((img.width // 2, img.height // 2))[2] > 200


def test_vector_figure_is_found_by_its_caption_with_text_layer_labels(found):
    fig = found[0][1]
    assert fig.page == 2 and fig.label == "Figure 2.1"
    assert fig.caption == "Figure 2.1: Speed of the glacier over a year."
    # the drawing's own extent (axes, curve and labels), not the caption or the code below
    assert VECTOR_BOX[0] <= fig.bbox[0] + 2 and fig.bbox[2] <= VECTOR_BOX[2] + 2, fig.bbox
    assert fig.bbox[1] >= VECTOR_BOX[1] - 2 and fig.bbox[3] <= VECTOR_BOX[3] + 2, fig.bbox
    assert fig.text_source == "text layer" and set(fig.text.split()) == {"time", "speed"}
    with Image.open(io.BytesIO(fig.png)) as img:
        assert img.convert("L").getextrema()[0] < 100   # the curve is drawn in it


def test_uncaptioned_photo_takes_the_label_line_under_it(found):
    fig = found[0][2]
    assert fig.page == 3 and close_to(fig.bbox, PHOTO_BOX)
    assert fig.caption == "The north face in winter" and fig.label == ""
    assert "NORTH" in fig.text.upper()


def test_progress_is_reported_per_page_and_per_figure(found):
    _, heard = found
    assert ("figures", 4, 4) in heard and ("figure-images", 3, 3) in heard


def test_without_ocr_raster_figures_have_no_words_and_it_is_fast(sample_pdf):
    started = time.perf_counter()
    result = extract_figures(sample_pdf.read_bytes(), ocr=False)
    assert time.perf_counter() - started < 5
    assert [f.text_source for f in result] == ["", "text layer", ""]
    assert extract_figures(sample_pdf, ocr=False, max_figures=1)[0].page == 1


def test_save_and_load_round_trip(found, tmp_path):
    result, _ = found
    folder = figures.figures_dir(tmp_path / "files" / "abc123.pdf")
    assert folder == tmp_path / "files" / "abc123.figures"
    entries = save_figures(folder, "abc123", result)
    assert [e["file"] for e in entries] == ["p0001-1.png", "p0002-1.png", "p0003-1.png"]
    index = json.loads((folder / "figures.json").read_text(encoding="utf-8"))
    assert index["doc_id"] == "abc123" and len(index["figures"]) == 3
    loaded = load_figures(folder)
    assert [(e["page"], e["caption"], e["label"]) for e in loaded] == [(f.page, f.caption, f.label) for f in result]
    assert loaded[0]["path"] == str(folder / "p0001-1.png")
    with Image.open(loaded[0]["path"]) as img:
        assert img.size == (loaded[0]["width"], loaded[0]["height"])
    # Saving again replaces; saving nothing removes the folder.
    assert len(save_figures(folder, "abc123", result[:1])) == 1 and not (folder / "p0002-1.png").exists()
    assert save_figures(folder, "abc123", []) == [] and not folder.exists() and load_figures(folder) == []


def test_memory_text_and_records(found, tmp_path):
    fig = found[0][0]
    text = figure_memory_text(fig, "glaciers.pdf")
    assert text.startswith("Figure 1.1 (p. 1 of glaciers.pdf): Ice flow measured at the glacier front. "
                           "Text in the figure: ")
    assert "GLACIER" in text.upper()
    plain = Figure(page=3, bbox=(0, 0, 1, 1), caption="The north face in winter")
    assert figure_memory_text(plain, "a.pdf") == "Figure (p. 3 of a.pdf): The north face in winter"
    entries = save_figures(tmp_path / "x.figures", "doc1", found[0])
    records = memory_records(entries, "doc1", "glaciers.pdf")
    assert records[0]["memory_type"] == "perceptual" and records[0]["modality"] == "image"
    assert records[0]["file_path"] == entries[0]["path"]
    assert records[0]["metadata"]["doc_id"] == "doc1" and records[0]["metadata"]["page"] == 1
    assert records[0]["content"] == figure_memory_text(entries[0], "glaciers.pdf")


@pytest.mark.parametrize("rotation", [90, 180, 270])
def test_rotated_pages_cut_out_the_right_region(rotation):
    pdf = pdfium.PdfDocument.new()
    font = pdfium_c.FPDFText_LoadStandardFont(pdf, b"Helvetica")
    page = pdf.new_page(*LETTER)
    _image(pdf, page, Image.new("RGB", (300, 100), (0, 0, 255)), (100, 500, 400, 600))   # blue, 300 x 100 pt
    _image(pdf, page, Image.new("RGB", (100, 100), (255, 0, 0)), (450, 100, 550, 200))   # red, elsewhere
    _text(pdf, page, font, "Body text.", 72, 700)
    page.set_rotation(rotation)
    page.gen_content()
    out = io.BytesIO()
    pdf.save(out)
    blue = extract_figures(out.getvalue(), ocr=False)[0]
    assert close_to(blue.bbox, (100, 500, 400, 600))     # page space, like PDFium's text rectangles
    with Image.open(io.BytesIO(blue.png)) as img:
        img = img.convert("RGB")
        assert (img.width > img.height) == (rotation == 180)   # shown as the page is displayed
        inset = 8   # the 2-pt padding is about 4 px
        for x, y in [(inset, inset), (img.width - inset, inset), (inset, img.height - inset),
                     (img.width - inset, img.height - inset)]:
            assert img.getpixel((x, y)) == (0, 0, 255), (x, y)


def test_caption_patterns():
    match = figures._caption_match
    assert match("Figure 2.1.: State diagram.").group("label") == "Figure 2.1"
    assert match("Fig. 3 (a) Left panel").group("label") == "Fig. 3"
    assert match("FIGURE B.1 Hash table cost").group("label") == "FIGURE B.1"
    assert match("图 2-1 ROC 曲线示意").group("label") == "图 2-1"
    assert match("图3.5：决策树").group("label") == "图3.5"
    # references in running text are not captions
    for text in ("Figure 7.1 shows what reassignment looks like", "Figure 10.5.", "图 3.5 中所说的距离", "Figures 2 and 3"):
        assert match(text) is None, text


# --- a Chinese book's pages, generated -------------------------------------------------------------------------

GRID_BOX = (120.0, 300.0, 500.0, 640.0)       # four plots in a 2 x 2 grid on page 3, with their labels


def _cjk_font(pdf):
    """The machine's Chinese font (fonts-wqy-microhei), embedded: the standard 14 fonts have no Chinese."""
    data = Path(cjk_font()).read_bytes()
    buffer = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
    font = pdfium_c.FPDFText_LoadFont(pdf, buffer, len(data), pdfium_c.FPDF_FONT_TRUETYPE, True)
    assert font, "PDFium could not load the Chinese font"
    return font


def _plot(pdf, page, font, box: tuple[float, float, float, float]) -> None:
    """Axes and a curve filling `box`, with tick labels and axis titles in the text layer (as the
    pumpkin book's plots have them, each plot's text written with it)."""
    left, bottom, right, top = box
    _path(page, [(left, top), (left, bottom), (right, bottom)])
    _path(page, [(left + 5, bottom + 5), (left + (right - left) * 0.3, top - 5), (left + (right - left) * 0.6,
                 bottom + 20), (right - 5, top - 20)], bezier=True, width=2)
    for k, tick in enumerate(("0.2", "0.4", "0.6", "0.8")):
        _text(pdf, page, font, tick, left + (right - left) * (k + 1) / 5 - 6, bottom - 9, 7)
    _text(pdf, page, font, "密度", (left + right) / 2 - 8, bottom - 18, 7)
    _text(pdf, page, font, "含糖率", left - 8, top + 4, 7)


def build_chinese_book() -> bytes:
    pdf = pdfium.PdfDocument.new()
    zh = _cjk_font(pdf)
    body = ["机器学习致力于研究如何通过计算的手段，利用经验来改善系统自身的性能。",
            "在计算机系统中，经验通常以数据形式存在，学习算法从数据中产生模型。"]

    # Page 1, the cover: a title and ornaments that run off the page (a band and a swirl).
    page = pdf.new_page(*LETTER)
    _text(pdf, page, zh, "机器学习公式详解", 150, 560, 36)
    _path(page, [(-20, 700), (640, 700), (640, 820), (-20, 820)], close=True, fill=(200, 120, 40))
    _path(page, [(-40, 100), (150, 300), (300, -50), (520, 200)], bezier=True, width=6)
    page.gen_content()

    # Page 2: a plot under its caption "图 2-1 ..." (a drawing) and body text.
    page = pdf.new_page(*LETTER)
    for i, line in enumerate(body):
        _text(pdf, page, zh, line, 72, 700 - 18 * i)
    _plot(pdf, page, zh, (180, 440, 430, 620))
    _text(pdf, page, zh, "图 2-1 ROC 曲线示意", 250, 400, 10)
    _text(pdf, page, zh, "图 2-1 中所示的曲线越靠近左上角，学习器的性能越好。", 72, 360)
    page.gen_content()

    # Page 3: four plots in a 2 x 2 grid, "(a)" .. "(d)" under each, one caption under the grid.
    page = pdf.new_page(*LETTER)
    _text(pdf, page, zh, body[0], 72, 700)
    left, bottom, right, top = GRID_BOX
    width, height = (right - left - 20) / 2, (top - bottom - 60) / 2
    for k, label in enumerate(["(a) 第一次划分", "(b) 第二次划分", "(c) 第三次划分", "(d) 第四次划分"]):
        row, column = divmod(k, 2)
        x = left + column * (width + 20)
        y = top - (row + 1) * height - row * 30
        _plot(pdf, page, zh, (x, y, x + width, y + height))
        _text(pdf, page, zh, label, x + width / 2 - 30, y - 30, 9)
    _text(pdf, page, zh, "图 4-2 决策树对样本空间的四次划分", 200, bottom - 22, 10)
    page.gen_content()

    # Page 4: a picture (a screenshot of a web page) under its caption "图 8-3 ...".
    page = pdf.new_page(*LETTER)
    _text(pdf, page, zh, body[1], 72, 700)
    _image(pdf, page, _picture((700, 450), ["SCHOLAR", "PAGE"], background=(245, 245, 250)), (156, 380, 456, 580))
    _text(pdf, page, zh, "图 8-3 某位教授的学术主页截图", 220, 360, 10)
    page.gen_content()

    out = io.BytesIO()
    pdf.save(out)
    pdf.close()
    return out.getvalue()


def test_chinese_captions_a_subfigure_grid_and_no_cover_ornaments():
    result = extract_figures(build_chinese_book(), ocr=False)
    by_label = {f.label: f for f in result}
    assert [(f.page, f.label, f.kind) for f in result] == [(2, "图 2-1", "vector"), (3, "图 4-2", "vector"),
                                                          (4, "图 8-3", "image")]
    assert by_label["图 2-1"].caption == "图 2-1 ROC 曲线示意"          # not the sentence that mentions it
    assert by_label["图 8-3"].caption.startswith("图 8-3 某位教授的学术主页")
    grid = by_label["图 4-2"]        # one figure over the four plots and their labels
    assert grid.bbox[0] <= GRID_BOX[0] + 2 and grid.bbox[2] >= GRID_BOX[2] - 2, grid.bbox
    assert grid.bbox[3] >= GRID_BOX[3] - 2 and grid.bbox[1] <= GRID_BOX[1] + 2, grid.bbox
    assert "(a) 第一次划分" in grid.text and "(d) 第四次划分" in grid.text and "含糖率" in grid.text


def test_scanned_pages_give_no_figures():
    """A scanned file (page-sized pictures of text, one page typed): its text is read by OCR, no figures."""
    pages = [scanned(text_page([f"Scanned page {n} of the notes", "with a few lines of text on it."],
                               latin_font(), 14, dpi=100)[0], n) for n in range(3)]
    with PDFIUM_LOCK:
        pdf = pdfium.PdfDocument(image_pdf(pages))
        typed = pdfium.PdfDocument(make_pdf([["# Typed Page", "A page with a text layer among the scans."]]))
        pdf.import_pages(typed, [0], index=2)
        assert len(pdf) == 4
        out = io.BytesIO()
        pdf.save(out)
        typed.close()
        pdf.close()
    assert extract_figures(out.getvalue(), ocr=False) == []


# --- the shared books (make test-books) ---------------------------------------------------------------------------

@pytest.mark.books
def test_think_python_vector_figures_with_their_captions():
    result = extract_figures(shared_doc("pdfs_en", "thinkpython2.pdf"), ocr=False)
    by_label = {f.label: f for f in result}
    # All 26 numbered figures (25 in chapters, B.1 in an appendix), nothing else: its code listings
    # sit in grey boxes and must not count.
    assert len(result) == 26 and all(f.label for f in result), [(f.page, f.caption) for f in result if not f.label]
    for label, page, caption in [("Figure 2.1", 29, "Figure 2.1.: State diagram."),
                                 ("Figure 3.1", 44, "Figure 3.1.: Stack diagram."),
                                 ("Figure 4.1", 60, "Figure 4.1.: Turtle flowers."),
                                 ("Figure 4.2", 60, "Figure 4.2.: Turtle pies."),
                                 ("Figure 8.1", 96, "Figure 8.1.: Slice indices."),
                                 ("Figure 11.2", 136, "Figure 11.2.: Call graph."),
                                 ("Figure B.1", 249, "Figure B.1.: The cost of a hashtable add.")]:
        fig = by_label[label]
        assert (fig.page, fig.caption, fig.kind) == (page, caption, "vector"), fig
    assert by_label["Figure 4.1"].bbox[1] > by_label["Figure 4.2"].bbox[3]   # flowers above pies
    assert "__main__" in by_label["Figure 3.1"].text                          # labels from the text layer
    with Image.open(io.BytesIO(by_label["Figure 5.2"].png)) as img:            # the Koch curve is drawn
        assert img.convert("L").getextrema()[0] < 100


@pytest.mark.books
def test_pumpkin_book_chinese_captions_and_subfigure_grid():
    result = extract_figures(shared_doc("pdfs_zh", "pumpkin_book_1.9.9.pdf"), ocr=False)
    by_label = {f.label: f for f in result}
    assert by_label["图 8-3"].page == 88 and by_label["图 8-3"].kind == "image"
    assert by_label["图 8-3"].caption.startswith("图 8-3 周志华教授谷歌学术")
    assert by_label["图 2-1"].page == 22 and by_label["图 2-1"].kind == "vector"
    grid = by_label["图 4-2"]       # four plots (a)-(d) in a 2 x 2 grid under one caption
    assert grid.page == 53 and grid.bbox[2] - grid.bbox[0] > 400 and grid.bbox[3] - grid.bbox[1] > 350
    assert [f.page for f in result].count(53) == 1
    assert all(f.page != 1 for f in result)    # the cover's ornaments run off the page


# --- through the assistant ------------------------------------------------------------------------------------

def test_a_loaded_pdf_s_figures_become_perceptual_memories_and_leave_with_it(sample_pdf, settings):
    from assistant import PDFLearningAssistant
    assistant = PDFLearningAssistant("figures", settings)
    loaded = assistant.load_document(sample_pdf)
    figures = assistant.rag.figures(loaded.doc_id)
    assert [f["page"] for f in figures] == [1, 2, 3] and all(Path(f["path"]).is_file() for f in figures)

    hits = assistant.memory.search("glacier ice flow figure", memory_types=["perceptual"], limit=5)
    assert hits and hits[0].metadata["doc_id"] == loaded.doc_id and hits[0].metadata["page"] == 1
    assert "Figure 1.1" in hits[0].content

    # The viewer outlines the figures of the cited page and names them; a page without figures has none.
    from assistant.pages import FIGURE_OUTLINE
    from rag.types import Citation
    cite = lambda page: Citation(1, loaded.doc_id, "glaciers.pdf", page, page, "c", 1.0,  # noqa: E731
                                 "The speed of the ice changes with the season and the slope.")
    shown = assistant.render_source(cite(1))
    assert [f["label"] for f in shown.figures] == ["Figure 1.1"]
    left, bottom, right, top = shown.figures[0]["bbox"]
    x, y = round((left + right) / 2 * 1.5), round((792 - top) * 1.5)       # the frame's top edge, mid-way
    frame = [shown.image.getpixel((x, y + dy))[:3] for dy in (-1, 0, 1)]
    assert tuple(FIGURE_OUTLINE[:3]) in frame, frame
    assert assistant.render_source(cite(4)).figures == []

    folder = Path(figures[0]["path"]).parent
    assert assistant.delete_document(loaded.doc_id)
    assert not folder.exists()
    assert [m for m in assistant.memory.list(["perceptual"]) if m.metadata.get("doc_id") == loaded.doc_id] == []

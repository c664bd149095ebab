"""PDF → Markdown with a page map, through pypdfium2: the PDF converter MarkItDown uses here.

MarkItDown's own PDF path (pdfminer/pdfplumber) takes ~15 s on a 264-page book and knows nothing
about pages or headings. This reader takes well under a second for the same book and returns:

- the text of every page, cleaned (running headers/footers and page numbers dropped, line-end
  hyphens joined where safe, ligatures and CJK compatibility forms normalised, blank lines
  collapsed, paragraph breaks kept from vertical gaps);
- headings written as `#` lines: from the PDF outline (bookmarks) when it has one, else from
  font sizes (short lines set clearly larger than the body text; bold body-size lines are the
  lowest level);
- where each page's text starts and ends in the Markdown (`PageSpan`s, contiguous);
- the text of scanned pages (no text layer, an image) read by OCR (rag/ocr.py), with their lines'
  boxes, and warnings for pages that stay unreadable.

Everything is sampled per text line (a handful of PDFium calls per line), never per character.
PDFium is not thread-safe, so every use goes through `PDFIUM_LOCK`; OCR runs outside it (a page
takes seconds), so other people's documents and page views are not held up meanwhile.
"""
from __future__ import annotations

import ctypes
import logging
import math
import re
import statistics
import threading
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Callable

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from markitdown import DocumentConverter, DocumentConverterResult, StreamInfo

from core.errors import DocumentError, Notice
from rag import ocr
from rag.convert_worker import report_progress as _report
from rag.tables import Table, apply_tables, find_tables
from rag.types import PageSpan

log = logging.getLogger(__name__)

# PDFium keeps global state and must not be entered from two threads at once (see pypdfium2 docs).
# Anything else in the app that opens PDFs with pypdfium2 (e.g. a page viewer) should take this lock.
PDFIUM_LOCK = threading.RLock()

# progress(stage, done, total): ("pages", i, n) while reading the text, ("ocr", k, m) per scanned page read.
Progress = Callable[[str, int, int], None]

PDF_EXTENSIONS = (".pdf",)
PDF_MIME_PREFIXES = ("application/pdf", "application/x-pdf")

# --- tuning knobs (why each value: see the comment next to it) -------------------------------
HEADING_SIZE_RATIO = 1.15      # a heading is set at least 15 % larger than the body text ...
HEADING_SIZE_MIN_DELTA = 1.0   # ... and at least 1 pt larger (small fonts: 8 pt vs 9 pt is noise)
HEADING_MAX_CHARS = 120        # headings are short
HEADING_MAX_WORDS = 16
HEADING_MAX_LINES = 3          # more consecutive big-font lines is a pull quote / banner, not a heading
MAX_SIZE_LEVELS = 3            # font-size ranks map to #, ##, ###; smaller ranks stay ###
BOLD_HEADING_MAX_WORDS = 12
BOLD_TEXT_MAX_SHARE = 0.25     # if more than 25 % of the text is bold, bold means nothing here
RUNNING_LINE_MIN_PAGES = 3     # a running header/footer repeats on at least 3 pages ...
RUNNING_LINE_MIN_SHARE = 0.25  # ... and (without a page number) on at least a quarter of them
EDGE_LINES = 2                 # lines at the top and bottom of a page that may be headers/footers
# A running head that names the chapter ("User Guide Chapter 7 Tables and TableStyles", "… Chapter 8 Programming
# Flowables"): its opening words repeat at an edge of a quarter of the pages, its tail changes with the chapter. A
# short chapter's head is on too few pages to be caught whole.
RUNNING_FAMILY_WORDS = 3       # the opening words a chapter's running head shares with the others
RUNNING_FAMILY_MIN_LINES = 3   # ... under at least this many different tails (one per chapter)
RUNNING_FAMILY_MAX_WORDS = 12  # a running head is short
# A long line that differs from page to page only in its digits, on half the pages or more, wherever it stands:
# a printer's slug in the margin ("VerDate Sep<11>2014 16:21 … Frm 00003 Fmt 4702 …" on every Federal Register
# page, read into the middle of a sentence), a journal's footer with its page range. A content row ("Total
# 1,234") does not repeat on half of a document's pages.
FURNITURE_MIN_WORDS = 6
FURNITURE_MIN_SHARE = 0.5
FURNITURE_MIN_PAGES = 4
FURNITURE_MIN_NUMBERS = 3      # a slug or footer is mostly numbers; "Unique finding 3: … in region 3." is content
_DIGITS_RUN = re.compile(r"\d+")
PARAGRAPH_GAP_RATIO = 1.45     # a vertical gap this much larger than the usual line pitch = new paragraph

_FONT_BOLD = re.compile(r"bold|black|heavy|semibold|demi|extrabold|ultrabold|[-,]bd\b", re.I)
_PDF_FORCE_BOLD_FLAG = 1 << 18
_PDF_FIXED_PITCH_FLAG = 1 << 0
_FONT_MONO = re.compile(r"courier|mono|consol|menlo|inconsolata|typewriter|cmtt|sftt|lmtt|sourcecode", re.I)
_LETTER = re.compile(r"[^\W\d_]")
_ALNUM = re.compile(r"[^\W_]")
_NON_BMP = re.compile("[\U00010000-\U0010FFFF]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b\ufeff]")
# Compatibility forms PDF fonts love: ligatures (ﬁ), Kangxi radicals (⽠ for 瓜), CJK compatibility ideographs.
_COMPAT = re.compile("[\ufb00-\ufb4f\u2e80-\u2fdf\uf900-\ufaff]")
# Hyphenation only concerns alphabetic scripts (Latin, Greek, Cyrillic), not CJK.
_ALPHA = "A-Za-z\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff"
_WORD = re.compile(f"[{_ALPHA}]+(?:-[{_ALPHA}]+)*")
_HYPHEN_BREAK = re.compile(f"([{_ALPHA}]+)(\ufffe[ \t]*\n?[ \t]*|\u00ad[ \t]*\n?[ \t]*|-\n[ \t]*)([{_ALPHA}]+)")
_MD_SPECIAL_LINE = re.compile(r"^( {0,3})(#{1,6}(?:\s|$)|```|~~~)")
_PAGE_NUMBER_ONLY = re.compile(r"^[-–—\s]*(?:page\s+)?(\d{1,5})(?:\s+(?:of|/)\s+\d{1,5})?[-–—\s]*$", re.I)
_ROMAN_ONLY = re.compile(r"^[ivxlc]{1,6}$")  # front-matter page numbers are lower case
_NUMBER_THEN_TEXT = re.compile(r"^(\d{1,5})\s+(\S.*)$")
_TEXT_THEN_NUMBER = re.compile(r"^(.*\S)\s+(\d{1,5})$")
_CHAPTER_LINE = re.compile(r"^(?:chapter|part|appendix|lecture|lesson|unit)\s*[\divxlc]+\.?$|^第\s*[\d一二三四五六七八九十百零〇]+\s*[章篇部]$", re.I)
_NUMBERING_PREFIX = re.compile(
    r"^(?:chapter|part|section|appendix|lecture|lesson|unit|§|第[\d一二三四五六七八九十百零〇]+[章节篇部])?"
    r"[\divxlc]*[a-z]?\d*$")
# Lines that are large on a cover but are not the document's title (SEC filings, generic labels).
_BOILERPLATE_TITLE = re.compile(
    r"^(?:united states(?: securities(?: and exchange commission.*)?)?|securities and exchange commission.*"
    r"|washington,? d\.?c\.?.*|(?:table of )?contents|form(?:\s+(?:10-?[kq]|8-?k|20-?f|s-1)\b.*)?|annual report"
    r"|quarterly report|untitled.*|cover|exhibit\s+[\d.]+|proxy statement|part\s+[ivx\d]+"
    r"|item\s+\d+[a-z]?\b.*|securities registered pursuant.*)$", re.I)


# --- data --------------------------------------------------------------------------------------

@dataclass
class _Line:
    text: str
    top: float = 0.0            # top of the first character (PDF units, larger = higher)
    end_top: float = 0.0        # top of the last character (differs when PDFium joined two lines)
    left: float = 0.0
    right: float = 0.0          # right edge of the last character
    mono: bool = False          # set in a fixed-pitch font: code, whose indentation we restore
    size: float = 0.0
    bold: bool = False
    drop: bool = False          # running header/footer or folded into a heading
    heading: int = 0            # heading level, 0 = body text
    para_break: bool = False    # a blank line goes before this line


@dataclass
class PdfText:
    """What `read_pdf` returns: Markdown, the page map, a title hint and warnings."""
    markdown: str
    pages: list[PageSpan]
    page_count: int
    title: str | None
    warnings: list[str]
    heading_source: str          # "outline", "font-size" or "none": for logs and reports
    # How each page was read, in page order: "text" (its text layer), "ocr" (a scan read by OCR),
    # "unreadable" (a scan OCR found no text on, or OCR is unavailable) or "empty" (nothing on it).
    page_sources: list[str] = field(default_factory=list)
    ocr_lines: dict[int, list[dict]] = field(default_factory=dict)   # {page: [{"text", "box", "conf"}]}

    @property
    def ocr_pages(self) -> list[int]:
        """1-based numbers of the pages whose text came from OCR."""
        return [i + 1 for i, source in enumerate(self.page_sources) if source == "ocr"]


class PdfConversionResult(DocumentConverterResult):
    """MarkItDown's result, carrying the page map through MarkItDown unchanged."""

    def __init__(self, pdf_text: PdfText):
        super().__init__(markdown=pdf_text.markdown, title=pdf_text.title)
        self.pdf_text = pdf_text


# --- MarkItDown converter ------------------------------------------------------------------------

class PdfiumConverter(DocumentConverter):
    """MarkItDown converter for PDFs: fast pypdfium2 text, a page map and recovered headings."""

    def accepts(self, file_stream: BinaryIO, stream_info: StreamInfo, **kwargs: Any) -> bool:
        extension = (stream_info.extension or "").lower()
        mimetype = (stream_info.mimetype or "").lower()
        return extension in PDF_EXTENSIONS or mimetype.startswith(PDF_MIME_PREFIXES)

    def convert(self, file_stream: BinaryIO, stream_info: StreamInfo, **kwargs: Any) -> PdfConversionResult:
        # MarkItDown hands extra keyword arguments of convert_local() on to the converter.
        name = stream_info.filename or "This PDF"
        return PdfConversionResult(read_pdf(file_stream.read(), name=name, progress=kwargs.get("progress"),
                                            ocr_max_pages=kwargs.get("ocr_max_pages", OCR_MAX_PAGES)))


# --- the reader ----------------------------------------------------------------------------------

OCR_MAX_PAGES = 150   # OCR costs ~5-15 s a page on 2 cores: 150 pages is already half an hour

def read_pdf(data: bytes, name: str = "This PDF", progress: Progress | None = None,
             ocr_max_pages: int = OCR_MAX_PAGES) -> PdfText:
    """Read a PDF given as bytes. Raises DocumentError (one actionable sentence) when it cannot.

    `progress(stage, done, total)` is told how far reading has come: ("pages", i, n) per page of
    text, then ("ocr", k, m) per scanned page read by OCR (seconds each).
    """
    label = f"'{name}'" if name != "This PDF" else name
    if not data:
        raise DocumentError(f"{label} is empty (0 bytes); upload a file that contains the document.",
                            key="err_file_empty", name=name)
    with PDFIUM_LOCK:
        try:
            pdf = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as exc:
            log.info("PDFium could not open %s: %s (err_code=%s)", name, exc, getattr(exc, "err_code", None))
            raise _unopenable(data, label, name) from None
    try:
        return _read_document(pdf, name, label, progress, ocr_max_pages)
    except (DocumentError, MemoryError):
        raise
    except Exception as exc:
        if out_of_memory(exc):
            raise MemoryError(f"reading {name}") from exc
        log.exception("Failed while reading %s", name)
        raise DocumentError(f"{label} could not be read (the PDF may be damaged); re-export it and upload "
                            "it again.", key="err_pdf_unreadable", name=name) from None
    finally:
        with PDFIUM_LOCK:
            pdf.close()


def _unopenable(data: bytes, label: str, name: str) -> DocumentError:
    """Why PDFium refused the file, in one sentence. pypdfium2 also refuses a PDF that parses but has no
    pages, and then reports PDFium's last error code, which is process-global and left over from an earlier
    file (an encrypted upload makes the next zero-page one look password-protected). So the page count is
    checked first, and the encryption sentences need an /Encrypt dictionary in this file's own bytes."""
    if _parses_with_no_pages(data):
        return DocumentError(f"{label} has no pages; export the document again with its pages and upload that "
                             "instead.", key="err_pdf_no_pages", name=name)
    code = pdfium_c.FPDF_GetLastError()     # the load in _parses_with_no_pages just failed: this file's own code
    encrypted = b"/Encrypt" in data          # the trailer (or xref stream) dictionary is never compressed
    if encrypted and code == pdfium_c.FPDF_ERR_PASSWORD:
        return DocumentError(f"{label} is password-protected; save an unlocked copy (without a password) "
                             "and upload that instead.", key="err_pdf_password", name=name)
    if encrypted and code == pdfium_c.FPDF_ERR_SECURITY:
        return DocumentError(f"{label} uses an encryption scheme this app cannot open; save an unlocked "
                             "copy and upload that instead.", key="err_pdf_encryption", name=name)
    return DocumentError(f"{label} is damaged and cannot be opened as a PDF; re-download or re-export it "
                         "and upload it again.", key="err_pdf_damaged", name=name)


def _parses_with_no_pages(data: bytes) -> bool:
    """Whether PDFium itself opens the file and finds zero pages (the caller holds PDFIUM_LOCK)."""
    document = pdfium_c.FPDF_LoadMemDocument64(data, len(data), None)
    if not document:
        return False
    try:
        return pdfium_c.FPDF_GetPageCount(document) == 0
    finally:
        pdfium_c.FPDF_CloseDocument(document)


def _read_document(pdf: pdfium.PdfDocument, name: str, label: str, progress: Progress | None,
                   ocr_max_pages: int) -> PdfText:
    pages: list[list[_Line]] = []
    raw_texts: list[str] = []
    scanned: list[int] = []   # pages without text but with an image: scans
    tables: list[list[Table]] = []   # per page: its tables, as Markdown (rag.tables)
    with PDFIUM_LOCK:
        page_count = len(pdf)
        outline = _outline(pdf, page_count)
        has_outline = len(outline) >= 2
        for index in range(page_count):
            page = pdf[index]
            try:
                textpage = page.get_textpage()
                try:
                    text, lines = _page_lines(textpage, with_bold=not has_outline)
                    tables.append(find_tables(textpage, text) if lines else [])
                finally:
                    textpage.close()
                if not lines and _has_image(page):
                    scanned.append(index)
            finally:
                page.close()
            raw_texts.append(text)
            pages.append(lines)
            _report(progress, "pages", index + 1, page_count)

    # OCR takes seconds a page: a long scan is read up to the limit, and the rest is named, not silently lost.
    read, ocr_available = _ocr_scanned_pages(pdf, scanned[:max(0, ocr_max_pages)], name, progress)
    over_limit = scanned[max(0, ocr_max_pages):]
    ocr_lines: dict[int, list[dict]] = {}
    for index, found in read.items():
        if found:
            pages[index] = [_ocr_line(line) for line in found]
            raw_texts[index] = "\n".join(line.text for line in found)
            ocr_lines[index + 1] = [line.as_dict() for line in found]
    sources = ["text" if lines and i not in read else "ocr" if lines else
               "unreadable" if i in scanned else "empty" for i, lines in enumerate(pages)]

    if not any(pages):
        raise _no_text(label, name, page_count, bool(scanned), ocr_available)
    for index in over_limit:
        sources[index] = "over_limit"
    warnings = _page_warnings(sources, ocr_available, ocr_max_pages)

    body_size = _body_size(pages)
    _drop_running_lines(pages)
    _mark_paragraph_breaks(pages)
    contents = [] if has_outline else printed_contents(pages)
    if has_outline:
        _mark_outline_headings(pages, outline)
        source = "outline"
    elif contents:
        _mark_outline_headings(pages, contents)
        source = "contents"
    else:
        found = _mark_size_headings(pages, body_size)
        source = "font-size" if found else "none"
    _mark_numbered_subheadings(pages)
    _restore_code_indentation(pages)
    # Tables last, so headings, paragraphs and running headers were judged on the lines they replace.
    pages = [apply_tables(lines, page_tables) for lines, page_tables in zip(pages, tables)]

    vocabulary = _vocabulary(raw_texts)
    page_markdown = [_clean(_page_markdown(lines), vocabulary) for lines in pages]
    markdown, spans = _join_pages(page_markdown)

    with PDFIUM_LOCK:
        title = _metadata_title(pdf) or _cover_title(pages, body_size)
    log.info("Read %s: %d pages (%d by OCR), %d chars, headings from %s", name, page_count, len(ocr_lines),
             len(markdown), source)
    return PdfText(markdown=markdown, pages=spans, page_count=page_count, title=title,
                   warnings=warnings, heading_source=source, page_sources=sources, ocr_lines=ocr_lines)


# --- scanned pages: OCR ---------------------------------------------------------------------------------

def _ocr_scanned_pages(pdf: pdfium.PdfDocument, indices: list[int], name: str,
                       progress: Progress | None) -> tuple[dict[int, list[ocr.OcrLine]], bool]:
    """OCR lines of the scanned pages ({page index: lines}) and whether OCR could run at all.

    Each page is rendered under PDFIUM_LOCK, then read with the lock released: recognition takes
    seconds a page, and other people's conversions and page views need PDFium meanwhile.
    """
    if not indices:
        return {}, True
    try:
        ocr.ocr_engine()   # load the model (once per process) before the first page
    except ocr.OcrUnavailable as exc:
        if out_of_memory(exc):       # the model did not fit in the conversion's memory budget
            raise MemoryError("loading the OCR model") from exc
        log.warning("OCR is unavailable, %d scanned pages of %s stay unread: %s", len(indices), name, exc)
        return {}, False
    read: dict[int, list[ocr.OcrLine]] = {}
    _report(progress, "ocr", 0, len(indices))
    for done, index in enumerate(indices, start=1):
        with PDFIUM_LOCK:
            image, scale = _render_for_ocr(pdf, index)
        try:
            read[index] = ocr.ocr_page(image, scale)
        except Exception as exc:  # noqa: BLE001 - one page the model chokes on must not cost the document
            if out_of_memory(exc):    # not the page's fault: the conversion's memory budget ran out
                raise MemoryError(f"OCR of page {index + 1} of {name}") from exc
            log.exception("OCR failed on page %d of %s", index + 1, name)
            read[index] = []
        del image
        _report(progress, "ocr", done, len(indices))
    return read, True


def out_of_memory(exc: BaseException) -> bool:
    """Whether `exc` (or what caused it) is an allocation failure: a MemoryError, or a native library's
    std::bad_alloc (onnxruntime's, wrapped by RapidOCR) when the worker's memory budget ran out."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, MemoryError) or "bad_alloc" in str(exc) or "Failed to allocate memory" in str(exc):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def _render_for_ocr(pdf: pdfium.PdfDocument, index: int) -> tuple[Any, float]:
    """Page `index` as a BGR pixel array at the OCR resolution, and its pixels per point (caller holds the lock)."""
    page = pdf[index]
    try:
        scale = ocr.render_scale(*page.get_size())
        bitmap = page.render(scale=scale)
        try:
            image = bitmap.to_numpy().copy()   # the bitmap's buffer dies with it
        finally:
            bitmap.close()
    finally:
        page.close()
    return image, scale


def _ocr_line(line: ocr.OcrLine) -> _Line:
    """An OCR'd line for the assembly below. Its size stays 0: box heights are not font sizes, and
    must not turn scanned text into headings or skew the body size of the text-layer pages."""
    left, _, right, top = line.box
    return _Line(text=line.text, top=top, end_top=top, left=left, right=right, para_break=line.para_break)


def _no_text(label: str, name: str, page_count: int, scanned: bool, ocr_available: bool) -> DocumentError:
    plural = "s" if page_count != 1 else ""
    if scanned and ocr_available:
        return DocumentError(f"{label} has no text layer on any of its {page_count} page{plural} (it looks scanned) "
                             "and OCR found no readable text in it; upload a clearer scan or a PDF with a text layer.",
                             key="err_pdf_scan_unreadable", name=name)
    if scanned:
        return DocumentError(f"{label} has no text layer on any of its {page_count} page{plural} (it looks scanned) "
                             "and OCR is not available on this server; use a PDF with a text layer.",
                             key="err_pdf_scan_no_ocr", name=name)
    return DocumentError(f"{label} contains no selectable text on any of its {page_count} page{plural}; "
                         "use a PDF with a text layer.", key="err_pdf_no_text", name=name)


def _page_warnings(sources: list[str], ocr_available: bool, ocr_max_pages: int = 0) -> list[str]:
    """What a person should know about pages that were scans: read by OCR, or not readable at all."""
    warnings = []
    skipped = [i + 1 for i, source in enumerate(sources) if source == "over_limit"]
    read = [i + 1 for i, source in enumerate(sources) if source == "ocr"]
    unreadable = [i + 1 for i, source in enumerate(sources) if source == "unreadable"]
    if read:
        one, pages = len(read) == 1, _page_ranges(read)
        warnings.append(Notice(f"{'page' if one else 'pages'} {pages} {'was' if one else 'were'} scanned "
                               f"and read by OCR, so {'its' if one else 'their'} text may contain recognition mistakes",
                               key="notice_pages_ocr", pages=pages))
    if unreadable:
        one, pages = len(unreadable) == 1, _page_ranges(unreadable)
        reason = ("OCR found no readable text on " + ("it" if one else "them") if ocr_available
                  else "OCR is not available")
        warnings.append(Notice(f"{'page' if one else 'pages'} {pages} {'has' if one else 'have'} no "
                               f"text layer (scanned?) and {reason}, so {'it' if one else 'they'} cannot be searched",
                               key="notice_pages_unreadable" if ocr_available else "notice_pages_no_ocr", pages=pages))
    if skipped:
        one, pages = len(skipped) == 1, _page_ranges(skipped)
        warnings.append(Notice(f"{'page' if one else 'pages'} {pages} {'was' if one else 'were'} not read: "
                               f"OCR reads the first {ocr_max_pages} scanned pages of a file; split the file to read "
                               "the rest", key="notice_pages_over_limit", pages=pages, limit=ocr_max_pages))
    return warnings


def utf16_offsets(text: str) -> list[int] | None:
    """PDFium's (UTF-16) index of each character of `text` and of its end; None when they equal
    Python's (no character outside the BMP)."""
    if not _NON_BMP.search(text):
        return None
    offsets, total = [], 0
    for ch in text:
        offsets.append(total)
        total += 2 if ord(ch) > 0xFFFF else 1
    offsets.append(total)
    return offsets


def _page_lines(textpage: pdfium.PdfTextPage, with_bold: bool = True) -> tuple[str, list[_Line]]:
    """The page's raw text and its non-empty lines, each with position, font size and boldness.

    Font size is the median of three characters (first, middle, last); a line is bold when all
    three are. Without `with_bold` (the outline gives the headings) only the middle one is sampled.
    """
    text = textpage.get_text_range()
    if not _ALNUM.search(text):
        return text, []
    # PDFium counts text positions in UTF-16 units; Python counts code points. They differ only
    # when the page has characters outside the BMP (e.g. math italic letters).
    utf16_before = utf16_offsets(text)

    matrix = pdfium_c.FS_MATRIX()
    rect = pdfium_c.FS_RECTF()
    name_buffer = ctypes.create_string_buffer(128)
    bold_fonts: dict[tuple[bytes, int], bool] = {}
    flags = ctypes.c_int()
    get_char_index = pdfium_c.FPDFText_GetCharIndexFromTextIndex

    def char_index(pos: int) -> int:
        return get_char_index(textpage, utf16_before[pos] if utf16_before else pos)

    def size_and_bold(ci: int) -> tuple[float, bool]:
        # The font size PDFium reports ignores the text matrix; scale it to what is on the page.
        font_size = pdfium_c.FPDFText_GetFontSize(textpage, ci)
        if pdfium_c.FPDFText_GetMatrix(textpage, ci, matrix):
            scale = math.hypot(matrix.c, matrix.d)
            if scale > 0:
                font_size *= scale
        if not with_bold:
            return font_size, False
        pdfium_c.FPDFText_GetFontInfo(textpage, ci, name_buffer, len(name_buffer), flags)
        key = (name_buffer.value, flags.value)
        bold = bold_fonts.get(key)
        if bold is None:
            bold = bold_fonts[key] = (bool(_FONT_BOLD.search(key[0].decode("latin-1", "replace")))
                                      or bool(flags.value & _PDF_FORCE_BOLD_FLAG))
        return font_size, bold

    lines = []
    # PDFium ends lines with "\r\n"; a lone "\n" or "\r" is a character of the PDF itself (some
    # producers use it as a word space), so it stays inside the line and reads as a space.
    for match in re.finditer(r"(?:[^\r\n]|\r(?!\n)|(?<!\r)\n)+", text):
        raw = match.group().replace("\r", " ").replace("\n", " ")
        stripped = raw.strip()
        if not stripped:
            continue
        start = match.start() + (len(raw) - len(raw.lstrip()))
        end = start + len(stripped)
        sizes, bolds = [], []
        for pos in (sorted({start, (start + end) // 2, end - 1}) if with_bold else ((start + end) // 2,)):
            ci = char_index(pos)
            if ci < 0:
                continue
            size, bold = size_and_bold(ci)
            sizes.append(size)
            bolds.append(bold)
        line = _Line(text=" ".join(stripped.split()))
        if sizes:
            line.size = round(statistics.median(sizes), 1)
            line.bold = all(bolds)
            ci = char_index(start)
            if ci >= 0 and pdfium_c.FPDFText_GetLooseCharBox(textpage, ci, rect):
                line.top = line.end_top = rect.top
                line.left = line.right = rect.left
            if ci >= 0:
                pdfium_c.FPDFText_GetFontInfo(textpage, ci, name_buffer, len(name_buffer), flags)
                line.mono = (bool(flags.value & _PDF_FIXED_PITCH_FLAG)
                             or bool(_FONT_MONO.search(name_buffer.value.decode("latin-1", "replace"))))
                if line.mono:
                    line.text = stripped   # code: keep the spacing inside the line
            ci = char_index(end - 1)
            if end - 1 > start and ci >= 0 and pdfium_c.FPDFText_GetLooseCharBox(textpage, ci, rect):
                line.end_top = rect.top
                line.right = rect.right
        lines.append(line)
    return text, lines


def _has_image(page: pdfium.PdfPage) -> bool:
    """Whether the page draws an image (looking inside form XObjects, two levels deep)."""
    def contains_image(count: int, get_object, depth: int) -> bool:
        for i in range(max(count, 0)):
            obj = get_object(i)
            kind = pdfium_c.FPDFPageObj_GetType(obj)
            if kind == pdfium_c.FPDF_PAGEOBJ_IMAGE:
                return True
            if kind == pdfium_c.FPDF_PAGEOBJ_FORM and depth < 2 and contains_image(
                    pdfium_c.FPDFFormObj_CountObjects(obj),
                    lambda j, form=obj: pdfium_c.FPDFFormObj_GetObject(form, j), depth + 1):
                return True
        return False

    return contains_image(pdfium_c.FPDFPage_CountObjects(page),
                          lambda i: pdfium_c.FPDFPage_GetObject(page, i), 0)


def _body_size(pages: list[list[_Line]]) -> float:
    """The font size most characters are set in (rounded to half points)."""
    weights: Counter[float] = Counter()
    for lines in pages:
        for line in lines:
            if line.size > 0:
                weights[round(line.size * 2) / 2] += len(line.text)
    return weights.most_common(1)[0][0] if weights else 0.0


# --- running headers / footers --------------------------------------------------------------------

def _edge_indices(lines: list[_Line]) -> set[int]:
    """Lines that may be a header or footer: first/last lines in reading order and on the page."""
    n = len(lines)
    by_stream = set(range(min(EDGE_LINES, n))) | set(range(max(0, n - EDGE_LINES), n))
    by_height = sorted(range(n), key=lambda i: lines[i].top)
    return by_stream | set(by_height[:EDGE_LINES]) | set(by_height[-EDGE_LINES:])


def _page_number_of(text: str) -> tuple[int, str] | None:
    """(number, rest) when the line is a page number, or text with a page number at one end."""
    match = _PAGE_NUMBER_ONLY.match(text)
    if match:
        return int(match.group(1)), ""
    for pattern, number_group, text_group in ((_NUMBER_THEN_TEXT, 1, 2), (_TEXT_THEN_NUMBER, 2, 1)):
        match = pattern.match(text)
        if match and len(match.group(text_group)) <= 120:
            return int(match.group(number_group)), match.group(text_group)
    return None


def _furniture_keys(pages: list[list[_Line]], n_pages: int) -> set[str]:
    """The digit-blind keys of long lines found on at least FURNITURE_MIN_SHARE of the pages (and on at least
    FURNITURE_MIN_PAGES): page furniture wherever it stands on the page."""
    found: dict[str, set[int]] = defaultdict(set)
    for p, lines in enumerate(pages):
        for line in lines:
            if len(line.text.split()) >= FURNITURE_MIN_WORDS and \
                    len(_DIGITS_RUN.findall(line.text)) >= FURNITURE_MIN_NUMBERS:
                found[_DIGITS_RUN.sub("#", line.text.casefold())].add(p)
    least = max(FURNITURE_MIN_PAGES, math.ceil(FURNITURE_MIN_SHARE * n_pages))
    return {key for key, on in found.items() if len(on) >= least}


def _family_of(key: str) -> str:
    """A line's opening words ("user guide chapter") when it reads as a running head: more words than those, at most
    RUNNING_FAMILY_MAX_WORDS, no full stop at its end, no digit among the opening words (lines that differ only in
    their numbers are content: "Unique finding 3: …"); else ""."""
    words = key.split()
    opening = " ".join(words[:RUNNING_FAMILY_WORDS])
    if not RUNNING_FAMILY_WORDS < len(words) <= RUNNING_FAMILY_MAX_WORDS or _DIGITS_RUN.search(opening) or \
            key.rstrip().endswith((".", "。", "!", "?", ":", ";", ",")) or len(_LETTER.findall(opening)) < 3:
        return ""
    return opening


def _drop_running_lines(pages: list[list[_Line]]) -> None:
    """Mark repeated headers/footers and page numbers as dropped. Never touches non-edge lines.

    Four signals, each needing repetition across pages so real content survives:
    - the very same line (at least 3 letters) at an edge of >= 25 % of the pages ("Table of Contents");
    - a number at an edge whose difference from the page index is the same on >= 3 pages
      (printed page numbers, alone or inside a running header like "2 Chapter 1. The way ...");
    - a lone roman numeral at an edge (front-matter page numbers);
    - lines at an edge that open with the same words on >= 25 % of the pages and go on differently, one way per
      chapter ("User Guide Chapter 8 Programming Flowables"): the chapter's running head, however short the chapter.
    Lines that differ only in their digits are NOT merged: "Total 1,234" rows are content.
    """
    n_pages = sum(1 for lines in pages if lines)
    if n_pages < RUNNING_LINE_MIN_PAGES:
        return
    edges = [_edge_indices(lines) for lines in pages]
    key_pages: dict[str, set[int]] = defaultdict(set)
    family_pages: dict[str, set[int]] = defaultdict(set)
    family_lines: dict[str, set[str]] = defaultdict(set)
    offset_pages: dict[int, set[int]] = defaultdict(set)
    numbered: dict[tuple[int, int], int] = {}
    for p, lines in enumerate(pages):
        for i in edges[p]:
            text = lines[i].text
            key = text.casefold()
            if len(_LETTER.findall(key)) >= 3:
                key_pages[key].add(p)
            family = _family_of(key)
            if family:
                family_pages[family].add(p)
                family_lines[family].add(_DIGITS_RUN.sub("#", key))     # tails differing in words, not numbers
            number = _page_number_of(text)
            if number is not None:
                offset = number[0] - (p + 1)
                offset_pages[offset].add(p)
                numbered[(p, i)] = offset
    furniture = _furniture_keys(pages, n_pages)
    min_repeat = max(RUNNING_LINE_MIN_PAGES, math.ceil(RUNNING_LINE_MIN_SHARE * n_pages))
    running_keys = {key for key, found in key_pages.items() if len(found) >= min_repeat}
    families = {family for family, found in family_pages.items()
                if len(found) >= min_repeat and len(family_lines[family]) >= RUNNING_FAMILY_MIN_LINES}
    page_offsets = {off for off, found in offset_pages.items() if len(found) >= RUNNING_LINE_MIN_PAGES}
    dropped = 0
    slugs = [re.compile(r"\d+".join(re.escape(piece) for piece in key.split("#")), re.IGNORECASE) for key in furniture]
    for lines in pages:
        for line in lines:
            if line.drop:
                continue
            if _DIGITS_RUN.sub("#", line.text.casefold()) in furniture:
                line.drop = True
                dropped += 1
                continue
            for slug in slugs:       # PDFium read the slug onto the end of a body line ("Soekarno-VerDate …")
                line.text = slug.sub("", line.text).rstrip("\ufffe").strip() or line.text
    for p, lines in enumerate(pages):
        for i in edges[p]:
            line = lines[i]
            if (line.text.casefold() in running_keys or numbered.get((p, i)) in page_offsets
                    or _ROMAN_ONLY.match(line.text) or _family_of(line.text.casefold()) in families):
                line.drop = True
                dropped += 1
    if dropped:
        log.debug("Dropped %d running header/footer lines", dropped)


# --- headings --------------------------------------------------------------------------------------

def _outline(pdf: pdfium.PdfDocument, page_count: int) -> list[tuple[int, str, int]]:
    """(level 1.., title, page index) for every bookmark that points at a page of this document."""
    items = []
    try:
        for bookmark in pdf.get_toc(max_depth=6):
            title = " ".join(_CONTROL.sub(" ", bookmark.get_title() or "").split())
            dest = bookmark.get_dest()
            index = dest.get_index() if dest is not None else None
            if title and index is not None and 0 <= index < page_count:
                items.append((min(bookmark.level + 1, 6), title, index))
    except Exception:  # a broken outline must not cost us the document
        log.warning("Could not read the PDF outline; falling back to font sizes", exc_info=True)
        return []
    return items


def _norm(text: str) -> str:
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", text).casefold())


def _matches_title(line_norm: str, title_norm: str) -> bool:
    """The line is the title, possibly preceded by numbering ("1.1.", "Chapter 3", "第1章")."""
    if not line_norm.endswith(title_norm):
        return False
    return bool(_NUMBERING_PREFIX.match(line_norm[: len(line_norm) - len(title_norm)]))


def _mark_outline_headings(pages: list[list[_Line]], outline: list[tuple[int, str, int]]) -> None:
    """Find each bookmark's title line on its page and make it a heading; else insert one at the top."""
    by_page: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for level, title, index in outline:
        by_page[index].append((level, title))
    for index, items in by_page.items():
        lines = pages[index]
        norms: dict[int, str] = {}

        def norm_of(line: _Line) -> str:
            key = id(line)
            if key not in norms:
                norms[key] = _norm(line.text)
            return norms[key]

        cursor = 0
        for level, title in items:
            title_norm = _norm(title)
            if not title_norm:
                continue
            found = None
            for i in range(cursor, len(lines)):
                line = lines[i]
                if line.drop or line.heading:
                    continue
                line_norm = norm_of(line)
                if not line_norm:
                    continue
                if _matches_title(line_norm, title_norm):
                    found = (i, 1)
                    break
                nxt = next((j for j in range(i + 1, len(lines)) if not lines[j].drop), None)
                combined = line_norm + norm_of(lines[nxt]) if nxt is not None else ""
                if (nxt is not None and len(line_norm) < len(title_norm) and not lines[nxt].heading
                        and len(combined) - len(title_norm) < len(line_norm)   # title starts on this line
                        and _matches_title(combined, title_norm)):
                    found = (i, 2)
                    break
            if found is None:
                lines.insert(cursor, _Line(text=title, heading=level))
                cursor += 1
                continue
            i, span = found
            line = lines[i]
            if span == 2:
                nxt = next(j for j in range(i + 1, len(lines)) if not lines[j].drop)
                line.text = f"{line.text} {lines[nxt].text}"
                lines[nxt].drop = True
            prev = next((j for j in range(i - 1, -1, -1) if not lines[j].drop), None)
            if prev is not None and not lines[prev].heading and _CHAPTER_LINE.match(lines[prev].text):
                chapter = re.sub(r"^([^\W\d_]+)(?=\d)", r"\1 ", lines[prev].text)   # "Chapter1" -> "Chapter 1"
                line.text = f"{chapter} {line.text}"   # "Chapter 1" + "The way of the program"
                lines[prev].drop = True
            line.heading = level
            cursor = i + 1


# --- numbered headings below the deepest bookmark ----------------------------------------------------------------
# Bookmarks often stop three levels down while the text numbers on in the body's own font: "4.1.5.1 简介",
# "4.1.5.2 服务时间", … under the bookmarked "4.1.5 服务层次协议（SLA）的内容" were plain lines, so the eleven parts of
# an SLA read as one run of text and "what goes into an SLA" had no sections to list. A line numbered as the next
# part of the heading above it, in order from .1 and short, is a heading one level down.
_SECTION_NUMBER = re.compile(r"^(\d+(?:\.\d+)*)(?=[\s.])")
SUBHEADING_MAX_CHARS = 60
_SENTENCE_END = re.compile(r"[.。!！?？;；:：,，]$")


def _numbered_part(text: str, parent: str, expected: int) -> bool:
    """Whether `text` reads as part `expected` of section `parent`: "4.1.5.2 服务时间" under "4.1.5"."""
    m = re.match(rf"{re.escape(parent)}\.(\d+)\.?\s+\S", text)
    return bool(m) and int(m.group(1)) == expected and len(text) <= SUBHEADING_MAX_CHARS \
        and not _SENTENCE_END.search(text)


def _mark_numbered_subheadings(pages: list[list[_Line]]) -> None:
    parent, level, expected = None, 0, 1
    for lines in pages:
        for line in lines:
            if line.drop:
                continue
            if line.heading:
                m = _SECTION_NUMBER.match(line.text)
                parent, level, expected = (m.group(1) if m else None), line.heading, 1
            elif parent is not None and level < 6 and _numbered_part(line.text, parent, expected):
                line.heading = level + 1
                expected += 1


# --- a printed table of contents, when the PDF has no bookmarks ------------------------------------------------
# A tutorial typeset without bookmarks and with section titles in the body's own size ("3. The Remaining PARI
# Types.") had no outline at all: "summarize chapter 3" found no chapter 3. Its contents page lists every section
# with its printed page; that list, placed on the pages it names, is the outline.
_CONTENTS_ENTRY = re.compile(r"^(?P<title>\S.*?\S)\s*(?:[.·…・]\s*){3,}\s*(?P<page>\d{1,4})$")
_ENTRY_NUMBER = re.compile(r"^(?:chapter\s+|第)?(?P<n>\d+(?:\.\d+)*)\.?(?:\s|章|节|$)", re.IGNORECASE)
CONTENTS_PAGES_READ = 20          # a contents page is near the front
CONTENTS_MIN_ENTRIES = 4
CONTENTS_MAX_OFFSET = 40          # the physical page is the printed one plus this at most (front matter)


def printed_contents(pages: list[list[_Line]]) -> list[tuple[int, str, int]]:
    """(level, title, page index) for each entry of the document's printed contents ("12.1. Elements . . . 35"),
    placed by the one page offset under which most entries' titles are found on their pages; [] when there is no
    such list or too few of its titles are found (the caller then reads headings from font sizes)."""
    entries: list[tuple[int, str, int]] = []
    first_body = 0
    for index, lines in enumerate(pages[:CONTENTS_PAGES_READ]):
        found = [m for m in (_CONTENTS_ENTRY.match(line.text.strip()) for line in lines if not line.drop) if m]
        if len(found) < CONTENTS_MIN_ENTRIES and not (entries and index == first_body and found):
            continue
        first_body = index + 1          # a list that runs on to the next page
        for m in found:
            title = " ".join(m.group("title").split()).rstrip(" .")
            number = _ENTRY_NUMBER.match(title)
            level = min(number.group("n").count(".") + 1, 6) if number else 1
            entries.append((level, title, int(m.group("page"))))
    if len(entries) < CONTENTS_MIN_ENTRIES:
        return []
    norms: dict[int, list[str]] = {}      # each page's lines, normalised once for every offset tried
    best, best_found = None, 0
    for offset in range(-1, CONTENTS_MAX_OFFSET + 1):
        found = sum(1 for _, title, printed in entries
                    if _title_on_page(pages, norms, printed - 1 + offset, _norm(title), after=first_body))
        if found > best_found:
            best, best_found = offset, found
    if best is None or best_found < max(CONTENTS_MIN_ENTRIES - 1, len(entries) // 2):
        return []
    placed = [(level, title, printed - 1 + best) for level, title, printed in entries]
    return [entry for entry in placed if first_body <= entry[2] < len(pages)]


def _title_on_page(pages: list[list[_Line]], norms: dict[int, list[str]], index: int, title_norm: str, *,
                   after: int) -> bool:
    """Whether a line of page `index` (a body page, after the contents) is the title, as _mark_outline_headings
    will look for it."""
    if not title_norm or not after <= index < len(pages):
        return False
    if index not in norms:
        norms[index] = [_norm(line.text) for line in pages[index] if not line.drop]
    return any(_matches_title(line, title_norm) for line in norms[index])


def _is_heading_text(text: str, max_words: int) -> bool:
    if len(text) > HEADING_MAX_CHARS or len(text.split()) > max_words:
        return False
    if text.endswith((".", ",", ";")) and not text.endswith("..."):
        return False
    letters = len(_LETTER.findall(text))
    if letters < 2 or letters < len(re.findall(r"\d", text)):
        return False
    return bool(_ALNUM.match(text))  # starts with a letter or digit, not "(", "•", "$"


def _size_heading_runs(lines: list[_Line], is_big) -> list[list[_Line]]:
    """Runs of large lines that read as headings.

    A run is at most HEADING_MAX_LINES consecutive lines of one size (more is a banner or a pull
    quote), and the text after it is smaller or another heading: a large line among equally
    large lines is body text set large (an exhibit in a bigger font), not a heading.
    """
    kept = [line for line in lines if not line.drop]
    runs: list[list[_Line]] = []
    run: list[_Line] = []
    for k in range(len(kept) + 1):
        ok = k < len(kept) and is_big(kept[k])
        if ok and run and abs(run[-1].size - kept[k].size) < 0.6:
            run.append(kept[k])
            continue
        if run and len(run) <= HEADING_MAX_LINES:
            size = run[0].size
            before = kept[k - len(run) - 1] if k - len(run) >= 1 else None
            after = kept[k] if k < len(kept) else None
            if after is not None:
                fits = after.size <= size - 0.5 or ok
            else:
                fits = before is None or before.size <= size - 0.5
            if fits:
                runs.append(run)
        run = [kept[k]] if ok else []
    return runs


def _looks_numeric(text: str) -> bool:
    """A table row: mostly numbers ("Total 1,234 $ 5.6 7%"), or more digits than letters."""
    if len(re.findall(r"\d", text)) > len(_LETTER.findall(text)):
        return True
    tokens = [t for t in text.split() if t not in {"$", "%", "—", "-", "–"}]
    numbers = [t for t in tokens if re.fullmatch(r"[$(]?[-–]?\d[\d,.]*%?\)?", t)]
    return len(numbers) >= 2 and len(numbers) >= 0.4 * len(tokens)


def _mark_size_headings(pages: list[list[_Line]], body_size: float) -> int:
    """Headings from font size: short lines clearly larger than the body; bold body lines below them."""
    if body_size <= 0:
        return 0
    threshold = max(body_size * HEADING_SIZE_RATIO, body_size + HEADING_SIZE_MIN_DELTA)

    def is_big(line: _Line) -> bool:
        return not line.drop and line.size >= threshold and _is_heading_text(line.text, HEADING_MAX_WORDS)

    candidates = [line for lines in pages for run in _size_heading_runs(lines, is_big) for line in run]
    size_classes = sorted({round(line.size * 2) / 2 for line in candidates}, reverse=True)
    level_of = {size: min(rank + 1, MAX_SIZE_LEVELS) for rank, size in enumerate(size_classes)}
    for line in candidates:
        line.heading = level_of[round(line.size * 2) / 2]
    found = len(candidates)

    # Bold lines in the body size are sub-headings in many reports ("Proposed Design Changes"),
    # but only when bold is rare; a document set in bold would otherwise become all headings.
    all_chars = sum(len(line.text) for lines in pages for line in lines if not line.drop)
    bold_chars = sum(len(line.text) for lines in pages for line in lines
                     if line.bold and not line.drop and not line.heading)
    if all_chars and bold_chars <= BOLD_TEXT_MAX_SHARE * all_chars:
        bold_level = min(len(size_classes), MAX_SIZE_LEVELS) + 1

        def is_bold_heading(line: _Line) -> bool:
            if not line.bold or line.heading or line.drop:
                return False
            if _CHAPTER_LINE.match(line.text):
                return True
            body_sized = abs(line.size - body_size) <= max(0.6, 0.08 * body_size)
            return (body_sized and _is_heading_text(line.text, BOLD_HEADING_MAX_WORDS)
                    and not line.text[0].islower())

        for lines in pages:
            found += _mark_bold_runs([line for line in lines if not line.drop], is_bold_heading, bold_level)
    _merge_wrapped_headings(pages)
    return found


def _mark_bold_runs(lines: list[_Line], is_candidate, level: int) -> int:
    """Mark runs of bold heading lines: a run starts after a gap (or a new page/column) and may
    continue over wrapped lines; bold table rows sit tight, so they never start one. A run over
    rows of numbers is a table's column header, and a run of many lines is a bold paragraph."""
    marked = 0
    run: list[_Line] = []

    def close(after: _Line | None) -> int:
        if not run or len(run) > HEADING_MAX_LINES or (after is not None and _looks_numeric(after.text)):
            return 0
        for line in run:
            line.heading = level
        return len(run)

    for k, line in enumerate(lines):
        continues = (run and run[-1] is lines[k - 1] and not line.para_break
                     and abs(run[-1].size - line.size) < 0.6)
        if is_candidate(line) and (line.para_break or continues):
            if not continues:
                marked += close(line)
                run = []
            run.append(line)
        else:
            marked += close(line)
            run = []
    return marked + close(None)


def _merge_wrapped_headings(pages: list[list[_Line]]) -> None:
    """A heading set over two or three lines becomes one heading line."""
    for lines in pages:
        previous = None
        for line in lines:
            if line.drop:
                continue
            if (previous is not None and line.heading and previous.heading == line.heading
                    and abs(previous.size - line.size) < 0.6
                    and 0 < previous.top - line.top <= 1.8 * max(line.size, 1.0)):
                previous.text = f"{previous.text} {line.text}"
                line.drop = True
                continue
            previous = line


# --- paragraphs and assembly ----------------------------------------------------------------------

def _mark_paragraph_breaks(pages: list[list[_Line]]) -> None:
    """Blank line before a line that starts after a clearly larger vertical gap or a new column.

    The first line of a page counts as starting a paragraph (bold headings need a break before).
    """
    for lines in pages:
        kept = [line for line in lines if not line.drop and line.size > 0]
        if kept:
            kept[0].para_break = True
        steps = [a.end_top - b.top for a, b in zip(kept, kept[1:])
                 if 0 < a.end_top - b.top < 3 * max(b.size, 1.0)]
        if not steps:
            continue
        pitch = statistics.median(steps)
        for a, b in zip(kept, kept[1:]):
            step = a.end_top - b.top
            if step > PARAGRAPH_GAP_RATIO * pitch or step < -0.5 * max(b.size, 1.0):
                b.para_break = True


def _restore_code_indentation(pages: list[list[_Line]]) -> None:
    """Indent lines of fixed-pitch text (code) by their offset from the block's leftmost line.

    PDF text has no leading spaces; Python code without its indentation is wrong code.
    """
    for lines in pages:
        block: list[_Line] = []
        for line in lines + [_Line(text="")]:
            if line.drop:
                continue
            if line.mono and not line.heading and line.size > 0:
                block.append(line)
                continue
            widths = [(b.right - b.left) / len(b.text) for b in block if len(b.text) >= 4 and b.right > b.left]
            if widths:
                char_width = statistics.median(widths)
                margin = min(b.left for b in block)
                for b in block:
                    indent = round((b.left - margin) / char_width) if char_width > 0 else 0
                    if 0 < indent <= 40:
                        b.text = " " * indent + b.text
            block = []


def _page_markdown(lines: list[_Line]) -> str:
    out: list[str] = []
    for line in lines:
        if line.drop:
            continue
        if line.heading:
            if out and out[-1]:
                out.append("")
            out.append(f"{'#' * line.heading} {line.text}")
            out.append("")
            continue
        if line.para_break and out and out[-1]:
            out.append("")
        # A code comment "# x" in the PDF is not a heading, nor is a ``` line a code fence.
        text = _MD_SPECIAL_LINE.sub(r"\1\\\2", line.text)
        out.append(text)
    return "\n".join(out)


def _vocabulary(raw_texts: list[str]) -> set[str]:
    """Lower-cased words and hyphenated compounds that occur in the document (to judge hyphens)."""
    words: set[str] = set()
    for text in raw_texts:
        words.update(w.casefold() for w in _WORD.findall(text))
    return words


def _clean(text: str, vocabulary: set[str]) -> str:
    """Join line-end hyphenation where safe, normalise odd characters, tidy whitespace."""
    def join(match: re.Match) -> str:
        left, marker, right = match.groups()
        joined, hyphenated = left + right, f"{left}-{right}"
        if joined.casefold() in vocabulary:
            return joined
        if hyphenated.casefold() in vocabulary:
            return hyphenated
        if min(len(left), len(right)) >= 4 and left.casefold() in vocabulary and right.casefold() in vocabulary:
            return hyphenated   # "problem-solving": both halves are words of this document
        explicit = marker.startswith("-")
        if (left.isupper() and len(left) > 1) or right[0].isupper() or (explicit and not left[-1].islower()):
            return hyphenated
        return joined

    text = _HYPHEN_BREAK.sub(join, text)
    text = text.replace("\ufffe", "-").replace("\u00ad", "")
    text = _COMPAT.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
    text = _CONTROL.sub("", text).replace("\t", " ")
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _join_pages(page_markdown: list[str]) -> tuple[str, list[PageSpan]]:
    """One Markdown string and the page map. Page i runs from its first character to the next
    page's first, so spans touch and cover everything; the blank line between two pages belongs
    to the earlier one, and a page without text gets an empty span where the next text starts."""
    parts: list[str] = []
    starts: list[int | None] = []
    length = 0
    for text in page_markdown:
        if not text:
            starts.append(None)
            continue
        if parts:
            parts.append("\n\n")
            length += 2
        starts.append(length)
        parts.append(text)
        length += len(text)
    markdown = "".join(parts)
    following = len(markdown)
    for i in range(len(starts) - 1, -1, -1):      # empty pages start where the next text starts
        if starts[i] is None:
            starts[i] = following
        following = starts[i]
    if starts:
        starts[0] = 0
    spans = []
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(markdown)
        spans.append(PageSpan(page=i + 1, char_start=start, char_end=end))
    return markdown, spans


# --- titles ---------------------------------------------------------------------------------------

def meaningful_title(title: str | None) -> str | None:
    """The title if it reads like one; None for ids, file names and placeholders."""
    if not title:
        return None
    title = " ".join(_CONTROL.sub(" ", title).split())
    title = re.sub(r"^microsoft (?:word|powerpoint|excel)\s*-\s*", "", title, flags=re.I)
    title = re.sub(r"\.(?:docx?|pdf|pptx?|xlsx?|indd|tex|dvi|rtf|qxd|txt|md)$", "", title, flags=re.I).strip()
    letters = len(_LETTER.findall(title))
    if letters < 3 or letters < len(re.findall(r"\d", title)) or len(title) > 200:
        return None
    if title.endswith(":") or _BOILERPLATE_TITLE.match(title) or re.fullmatch(r"(?:document|slide|page)\s*\d*", title, re.I):
        return None
    return title


def _metadata_title(pdf: pdfium.PdfDocument) -> str | None:
    try:
        return meaningful_title(pdf.get_metadata_value("Title"))
    except Exception:
        return None


def _cover_title(pages: list[list[_Line]], body_size: float) -> str | None:
    """The largest text on the first page with text, when it is clearly larger than the body."""
    first = next((lines for lines in pages if lines), [])
    candidates = [line for line in first
                  if line.size > 0 and len(_LETTER.findall(line.text)) >= 2 and not _BOILERPLATE_TITLE.match(line.text)]
    if not candidates or body_size <= 0:
        return None
    largest = max(line.size for line in candidates)
    if largest < 1.4 * body_size:
        return None
    parts = [line.text for line in candidates if abs(line.size - largest) < 0.6][:3]
    title = " ".join(parts)
    title = re.sub(r"(?<=[\u3400-\u9fff\uf900-\ufaff]) (?=[\u3400-\u9fff\uf900-\ufaff])", "",
                   _COMPAT.sub(lambda m: unicodedata.normalize("NFKC", m.group()), title))
    return meaningful_title(title)


def _page_ranges(numbers: list[int]) -> str:
    """[1, 2, 3, 7] -> "1-3, 7"."""
    ranges, start = [], None
    for i, n in enumerate(numbers):
        if start is None:
            start = n
        if i + 1 == len(numbers) or numbers[i + 1] != n + 1:
            ranges.append(f"{start}-{n}" if n != start else f"{n}")
            start = None
    return ", ".join(ranges)

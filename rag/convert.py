"""Any supported file → `ConvertedDocument` (Markdown + page map + headings + title).

MarkItDown is the front door for every format. For PDFs it runs our `PdfiumConverter`
(rag/pdf_converter.py) instead of its own pdfminer path: ~0.5 s instead of ~15 s for a 264-page
book, with a page map and recovered headings, and scanned pages read by OCR. Every failure a
person can cause (missing, empty, corrupt, encrypted, unreadably scanned, mislabelled or unsupported
file) becomes a `DocumentError` whose message is one sentence saying what to do; the detail goes to
the log.

The conversion runs in a worker process (rag/convert_worker.py) with a time and a memory budget, and can be
stopped: MarkItDown cannot be interrupted, a process can be killed. An Office file's zip directory is
measured before MarkItDown opens it (`check_archive`): too big unpacked, or a zip bomb, is refused at once.
"""
from __future__ import annotations

import logging
import re
import threading
import zipfile
from pathlib import Path

from markitdown import MarkItDown, StreamInfo
from markitdown import FileConversionException, UnsupportedFormatException
from markitdown.converters import PdfConverter as _MarkItDownPdfConverter

from core.errors import DocumentError
from core.settings import Settings, get_settings
from rag.pdf_converter import (OCR_MAX_PAGES, PdfConversionResult, PdfiumConverter, Progress, meaningful_title,
                               out_of_memory)
from rag.types import ConvertedDocument, Heading

log = logging.getLogger(__name__)

# extension -> source_format. Formats MarkItDown reads that make sense as study material.
SUPPORTED_FORMATS = {
    ".pdf": "pdf",
    ".md": "md", ".markdown": "md",
    ".txt": "txt", ".text": "txt",
    ".docx": "docx",
    ".pptx": "pptx",
    ".xlsx": "xlsx",
    ".html": "html", ".htm": "html",
    ".csv": "csv",
    ".epub": "epub",
    ".ipynb": "ipynb",
    ".json": "json",
}
_ZIP_FORMATS = {"docx": "a Word document", "pptx": "a PowerPoint file", "xlsx": "an Excel workbook",
                "epub": "an EPUB book"}
_TEXT_FORMATS = {"md", "txt", "html", "csv", "json"}
_SUPPORTED_HINT = "upload a PDF, Word (.docx), PowerPoint (.pptx), Excel (.xlsx), HTML, Markdown or text file"

# A zip bomb: a part that unpacks to more than BOMB_MIN_BYTES at over BOMB_RATIO times its packed size. Real
# Office XML packs 5-20 to 1; a .docx of 143 KB holding 40 MB of repeated paragraphs packs 290 to 1. (Python's
# zipfile, which every Office reader here uses, stops a part at its declared size: the declared sizes bound
# what can be unpacked.)
BOMB_RATIO = 100
BOMB_MIN_BYTES = 10 * 2**20

_ATX_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")

_markitdown_lock = threading.Lock()
_markitdown_instance: MarkItDown | None = None


def _markitdown() -> MarkItDown:
    """The one MarkItDown instance (built on first use: it loads Magika's model)."""
    global _markitdown_instance
    if _markitdown_instance is None:
        with _markitdown_lock:
            if _markitdown_instance is None:
                md = MarkItDown(enable_plugins=False)
                # Take MarkItDown's pdfminer converter out rather than just out-ranking it: when our
                # converter rejects a PDF (scanned, encrypted, corrupt) MarkItDown would otherwise
                # retry with pdfminer, taking seconds and returning an empty "success".
                registrations = getattr(md, "_converters", None)
                if isinstance(registrations, list):
                    registrations[:] = [r for r in registrations
                                        if not isinstance(r.converter, _MarkItDownPdfConverter)]
                md.register_converter(PdfiumConverter(), priority=-1.0)
                _markitdown_instance = md
    return _markitdown_instance


def convert_file(path: str | Path, progress: Progress | None = None,
                 ocr_max_pages: int = OCR_MAX_PAGES, settings: Settings | None = None) -> ConvertedDocument:
    """Convert one file to Markdown with its page map, headings and title.

    `progress(stage, done, total)`, if given, hears how far a PDF has been read: ("pages", i, n)
    per page, ("ocr", k, m) per scanned page read by OCR (seconds each). Raises DocumentError with
    one actionable sentence when the file cannot be read.

    The quick checks (missing, empty, mislabelled) happen here; the conversion itself runs in a worker
    process (rag.convert_worker) within `settings`' budgets (CONVERT_TIMEOUT_S, CONVERT_MEMORY_MB,
    OFFICE_MAX_UNPACKED_MB; default: get_settings()), stopped early when the caller's stop event is set
    (rag.convert_worker.stop_on).
    """
    from rag import convert_worker
    path = Path(path)
    name = path.name
    if not path.exists():
        raise DocumentError(f"'{name}' was not found; check the file path and try again.",
                            key="err_file_not_found", name=name)
    if not path.is_file():
        raise DocumentError(f"'{name}' is a folder, not a file; choose a document file instead.",
                            key="err_file_is_folder", name=name)
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            head = fh.read(4096)
    except OSError as exc:
        log.warning("Cannot read %s: %s", path, exc)
        raise DocumentError(f"'{name}' cannot be opened ({exc.strerror or 'permission denied'}); "
                            "check the file's permissions and try again.",
                            key="err_file_no_access", name=name) from None
    if size == 0:
        raise DocumentError(f"'{name}' is empty (0 bytes); upload a file that contains the document.",
                            key="err_file_empty", name=name)

    fmt = _detect_format(path, head)
    settings = settings or get_settings()
    return convert_worker.convert(path.absolute(), fmt, name, progress=progress, ocr_max_pages=ocr_max_pages,
                                  timeout_s=settings.convert_timeout_s, memory_mb=settings.convert_memory_mb,
                                  max_unpacked_mb=settings.office_max_unpacked_mb)


def warm_up() -> None:
    """What the first conversion of a process would otherwise wait for: MarkItDown and Magika's model."""
    _markitdown()


def convert_here(path: Path, fmt: str, progress: Progress | None = None, ocr_max_pages: int = OCR_MAX_PAGES,
                 max_unpacked_mb: int = 200) -> ConvertedDocument:
    """The conversion itself, in this process (the worker's side of convert_file): `path` exists, is not
    empty and holds format `fmt`. An Office file is measured before MarkItDown opens it (check_archive).
    A MemoryError is raised as such (the worker's budget ran out), anything else becomes a DocumentError."""
    name = path.name
    if fmt in _ZIP_FORMATS:
        check_archive(path, name, max_unpacked_mb)
    extension = next(ext for ext, f in SUPPORTED_FORMATS.items() if f == fmt)
    try:
        # MarkItDown passes extra keyword arguments on to the converter (our PdfiumConverter reads `progress`).
        result = _markitdown().convert_local(str(path), stream_info=StreamInfo(extension=extension),
                                             progress=progress, ocr_max_pages=ocr_max_pages)
    except (DocumentError, MemoryError):
        raise
    except FileConversionException as exc:
        for attempt in exc.attempts or []:
            if attempt.exc_info and isinstance(attempt.exc_info[1], DocumentError):
                raise attempt.exc_info[1] from None
            if attempt.exc_info and out_of_memory(attempt.exc_info[1]):
                raise MemoryError(f"converting {name}") from None
        log.warning("MarkItDown failed on %s: %s", path, exc)
        raise DocumentError(f"'{name}' could not be read as {_describe(fmt)} (it may be damaged); "
                            "open and re-save it, then upload it again.", key="err_file_damaged", name=name) from None
    except UnsupportedFormatException:
        log.warning("MarkItDown has no converter for %s", path)
        raise DocumentError(f"'{name}' is in a format this app cannot read; {_SUPPORTED_HINT}.",
                            key="err_file_unsupported", name=name) from None
    except Exception as exc:
        if out_of_memory(exc):
            raise MemoryError(f"converting {name}") from None
        log.exception("Unexpected failure converting %s", path)
        raise DocumentError(f"'{name}' could not be converted (it may be damaged); open and re-save it, "
                            "then upload it again.", key="err_file_damaged", name=name) from None

    if fmt == "pdf" and not isinstance(result, PdfConversionResult):
        # Our PDF reader refused the file and MarkItDown moved on to a converter that reads anything
        # (a damaged PDF that happens to be plain ASCII comes back as its own bytes): refuse it.
        log.warning("%s: the PDF reader refused it; %s accepted it instead", name, type(result).__name__)
        raise DocumentError(f"'{name}' is damaged and cannot be opened as a PDF; re-download or re-export it "
                            "and upload it again.", key="err_pdf_damaged", name=name)
    if isinstance(result, PdfConversionResult):
        pdf_text = result.pdf_text
        markdown = pdf_text.markdown
        if result.markdown != markdown:  # MarkItDown normalises whitespace; ours is already normal
            log.warning("MarkItDown changed the PDF Markdown of %s; keeping the page-mapped text", name)
        doc = ConvertedDocument(markdown=markdown, title="", pages=list(pdf_text.pages),
                                page_count=pdf_text.page_count, source_format="pdf",
                                warnings=list(pdf_text.warnings), ocr_pages=pdf_text.ocr_pages,
                                ocr_lines=dict(pdf_text.ocr_lines))
    else:
        markdown = (result.markdown or "").strip("\n")
        doc = ConvertedDocument(markdown=markdown, title="", source_format=fmt)

    if not re.search(r"[^\W_]", doc.markdown):
        raise DocumentError(f"'{name}' contains no readable text; upload a document that has text in it.",
                            key="err_no_readable_text", name=name)
    doc.headings = parse_markdown_headings(doc.markdown)
    title_area = doc.pages[min(2, len(doc.pages) - 1)].char_end if doc.pages else len(doc.markdown)
    doc.title = choose_title(result.title, [h for h in doc.headings if h.char_offset < title_area], path)
    for warning in doc.warnings:
        log.info("%s: %s", name, warning)
    return doc


def check_archive(path: Path, name: str, max_unpacked_mb: int) -> None:
    """Refuse an Office file (a zip archive) whose central directory says it unpacks to more than
    `max_unpacked_mb` in all, or holds a zip bomb; before MarkItDown opens it. A file whose directory cannot
    be read is left to MarkItDown, which says it is damaged, as before."""
    try:
        with zipfile.ZipFile(path) as archive:
            parts = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return
    unpacked = sum(p.file_size for p in parts)
    bomb = next((p for p in parts if p.file_size > BOMB_MIN_BYTES
                 and p.file_size > BOMB_RATIO * max(p.compress_size, 1)), None)
    if bomb is not None:
        log.warning("%s: %s unpacks from %d to %d bytes; refused as a zip bomb", name, bomb.filename,
                    bomb.compress_size, bomb.file_size)
        packed_kb = f"{max(1, round(path.stat().st_size / 1024))}"
        raise DocumentError(f"'{name}' unpacks from {packed_kb} KB to {unpacked / 2**20:.0f} MB, which no real "
                            "document does (a zip bomb), so it was not opened; upload the original document instead.",
                            key="err_file_zip_bomb", name=name, packed_kb=packed_kb, mb=f"{unpacked / 2**20:.0f}")
    if unpacked > max_unpacked_mb * 2**20:
        log.warning("%s unpacks to %d bytes (%d parts), over OFFICE_MAX_UNPACKED_MB=%d", name, unpacked, len(parts),
                    max_unpacked_mb)
        raise DocumentError(f"'{name}' unpacks to {unpacked / 2**20:.0f} MB, over the {max_unpacked_mb} MB an Office "
                            "file may hold; remove large pictures or media, or split it, then upload it again.",
                            key="err_file_unpacked_too_large", name=name, mb=f"{unpacked / 2**20:.0f}",
                            limit=max_unpacked_mb)


def parse_markdown_headings(markdown: str) -> list[Heading]:
    """ATX headings (`# Title`) outside fenced code blocks, with the offset of their line."""
    headings = []
    in_fence: str | None = None
    offset = 0
    for line in markdown.split("\n"):
        fence = _FENCE.match(line)
        if fence:
            if in_fence is None:
                in_fence = fence.group(1)
            elif fence.group(1) == in_fence:
                in_fence = None
        elif in_fence is None:
            match = _ATX_HEADING.match(line)
            if match:
                title = _plain_heading_text(match.group(2))
                if title:
                    headings.append(Heading(level=len(match.group(1)), title=title, char_offset=offset))
        offset += len(line) + 1
    return headings


def choose_title(metadata_title: str | None, headings: list[Heading], path: Path) -> str:
    """Metadata title if meaningful, else the first H1, else the file name made readable.

    For PDFs the "metadata" title is the document's Title entry or, failing that, the largest
    line on its cover, and only headings on the first three pages are considered: a title is
    at the start of a document, not in an exhibit on page 99.
    """
    title = meaningful_title(metadata_title)
    if title:
        return title
    first_h1 = next((t for t in (meaningful_title(h.title) for h in headings if h.level == 1) if t), None)
    if first_h1:
        return first_h1
    return " ".join(re.sub(r"[_\-]+", " ", path.stem).split()) or path.name


def _plain_heading_text(text: str) -> str:
    """Heading text without Markdown decoration: links, emphasis, inline code."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"(\*\*|__|\*|_|`)(.+?)\1", r"\2", text)
    return " ".join(text.split())


def _detect_format(path: Path, head: bytes) -> str:
    """source_format from the extension, checked against the file's first bytes."""
    extension = path.suffix.lower()
    name = path.name
    is_pdf = b"%PDF-" in head[:1024]
    fmt = SUPPORTED_FORMATS.get(extension)
    if fmt == "pdf" and not is_pdf:
        raise DocumentError(f"'{name}' is named .pdf but is not a PDF (it looks like {_sniff(head)}); "
                            "upload the original PDF or rename the file to its real type.",
                            key="err_not_a_pdf", name=name)
    if fmt in _ZIP_FORMATS and not head.startswith(b"PK\x03\x04"):
        raise DocumentError(f"'{name}' is named {extension} but is not {_ZIP_FORMATS[fmt]} "
                            f"(it looks like {_sniff(head)}); upload the original file.",
                            key="err_file_not_its_type", name=name, extension=extension)
    if fmt in _TEXT_FORMATS and not is_pdf:
        kind = _sniff(head)
        if kind not in ("plain text", "an HTML page", "binary data"):   # "binary data" may be UTF-16 text
            raise DocumentError(f"'{name}' is named {extension} but is not a text file (it looks like {kind}); "
                                "upload the original file.",
                                key="err_file_not_its_type", name=name, extension=extension)
    if fmt in _TEXT_FORMATS and is_pdf:
        return "pdf"
    if fmt:
        return fmt
    if is_pdf:
        return "pdf"
    kind = _sniff(head)
    if kind == "plain text" and not extension:
        return "txt"
    shown = f"{extension} file" if extension else "file without an extension"
    raise DocumentError(f"'{name}' is a {shown} ({kind}), which this app cannot read; {_SUPPORTED_HINT}.",
                        key="err_file_unsupported", name=name)


def _sniff(head: bytes) -> str:
    """A human name for what the first bytes of a file look like."""
    signatures = [
        (b"\x89PNG", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"), (b"GIF8", "a GIF image"),
        (b"PK\x03\x04", "a ZIP archive or Office file"), (b"%PDF-", "a PDF"), (b"\x1f\x8b", "a gzip archive"),
        (b"{\\rtf", "an RTF document"), (b"\xd0\xcf\x11\xe0", "an old-style Office file (.doc/.xls/.ppt)"),
        (b"RIFF", "an audio or video file"), (b"ID3", "an MP3 file"),
    ]
    for magic, kind in signatures:
        if head.startswith(magic):
            return kind
    lowered = head[:512].lstrip().lower()
    if lowered.startswith((b"<!doctype html", b"<html")):
        return "an HTML page"
    if b"\x00" not in head:
        try:
            head.decode("utf-8")
            return "plain text"
        except UnicodeDecodeError as exc:
            if exc.start >= len(head) - 4:   # a multi-byte character cut by the 4 KB sample
                return "plain text"
    return "binary data"


def _describe(fmt: str) -> str:
    return {"pdf": "a PDF", "md": "Markdown", "txt": "text", "docx": "a Word document",
            "pptx": "a PowerPoint file", "xlsx": "an Excel workbook", "html": "HTML", "csv": "CSV",
            "epub": "an EPUB book", "ipynb": "a Jupyter notebook", "json": "JSON"}.get(fmt, fmt)

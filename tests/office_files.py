"""Word files made for the conversion tests: real .docx zip archives, built here byte by byte.

`zip_bomb_docx`: 143 KB on disk holding 40 MB of document.xml (repeated paragraphs): the file of the issue,
which MarkItDown worked on for 14 CPU-minutes. `slow_docx`: a legitimate-looking 2 MB document.xml (7 KB
packed, under the zip-bomb floor) that MarkItDown needs 15-40 s for on 2 cores: a conversion a test can
stop. Both repeat one paragraph, which deflate packs about 290 to 1, as in the issue's file (143 KB, 40 MB).
"""
from __future__ import annotations

import io
import zipfile

_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.'
    'wordprocessingml.document.main+xml"/></Types>')
_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
    'officeDocument" Target="word/document.xml"/></Relationships>')
_LINE = "The committee met again and read the same report aloud, paragraph by paragraph."


def docx(paragraphs) -> bytes:
    """A minimal .docx whose body is these paragraphs (deflated at level 9)."""
    body = "".join(f"<w:p><w:r><w:t>{p}</w:t></w:r></w:p>" for p in paragraphs)
    document = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
                '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>'
                + body + "</w:body></w:document>")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        archive.writestr("_rels/.rels", _RELS)
        archive.writestr("word/document.xml", document)
    return buffer.getvalue()


def report_docx(unpacked_bytes: int) -> bytes:
    """About `unpacked_bytes` of document.xml: one paragraph, repeated."""
    paragraph = len(f"<w:p><w:r><w:t>{_LINE}</w:t></w:r></w:p>")
    return docx(_LINE for _ in range(unpacked_bytes // paragraph))


def zip_bomb_docx() -> bytes:
    return report_docx(40 * 2**20)


def slow_docx() -> bytes:
    return report_docx(2 * 2**20)


def unpacked_size(data: bytes) -> int:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return sum(p.file_size for p in archive.infolist())

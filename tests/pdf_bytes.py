"""Serialising hand-built PDF objects for tests that need PDFs with exact, known content."""
from __future__ import annotations


def escape(text: str) -> str:
    """A PDF literal string's body."""
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def serialize_pdf(objs: dict[int, bytes], trailer: str = "", header: bytes = b"%PDF-1.4\n") -> bytes:
    """Objects 1..n (1 = the catalog) as a PDF file with a correct cross-reference table."""
    count = max(objs) + 1
    out = bytearray(header)
    offsets = {}
    for i in range(1, count):
        offsets[i] = len(out)
        out += b"%d 0 obj\n" % i + objs[i] + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % count
    for i in range(1, count):
        out += b"%010d 00000 n \n" % offsets[i]
    out += f"trailer\n<< /Size {count} /Root 1 0 R{trailer} >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def text_string(text: str) -> str:
    """A PDF text string (an outline title, a document title): a literal string when the text is Latin-1,
    else UTF-16BE with its byte-order mark, in hex, as PDF readers expect for other scripts."""
    if all(ord(ch) < 256 for ch in text):
        return f"({escape(text)})"
    return "<FEFF" + text.encode("utf-16-be").hex().upper() + ">"

"""Ingesting real PDFs through RAGTool: pages cited, bad files refused with one sentence, nothing harmed."""
from __future__ import annotations

import pytest

from core.errors import DocumentError
from core.text import MAX_NAME_CHARS, clean_document_name
from rag.tool import RAGTool
from tests.test_convert import body, make_pdf, write

PAGES = [
    body(["Chapter one introduces variables.", "A variable is a name that refers to a value."]),
    body(["Chapter two covers functions.", "A function is a named sequence of statements."]),
    body(["Chapter three covers recursion.", "A recursive function calls itself until a base case."]),
]


def stored_state(tool: RAGTool) -> tuple:
    files = sorted(p.name for p in (tool.settings.data_dir / "files").rglob("*") if p.is_file())
    return ([d.doc_id for d in tool.list_documents()], tool.stats()["chunks"], tool.stats()["vectors"], files)


def test_pdf_answers_cite_the_right_page(settings, tmp_path):
    tool = RAGTool("alice", settings)
    result = tool.add_document(write(tmp_path, "course.pdf", make_pdf(PAGES)))
    assert result.pages == 3 and result.chunks >= 1
    assert set(result.stage_seconds) == {"convert", "chunk", "store_file_and_figures", "embed", "index"}
    hits = tool.search("What does a recursive function do?")
    top = hits[0]
    assert top.doc_name == "course.pdf" and top.chunk.page_start <= 3 <= top.chunk.page_end
    answer = tool.ask("What is a recursive function?")
    cited = answer.citations[0]
    assert cited.page_start <= 3 <= cited.page_end
    assert "p. 3" in cited.label or "pp." in cited.label


def test_reupload_adds_nothing(settings, tmp_path):
    tool = RAGTool("alice", settings)
    path = write(tmp_path, "course.pdf", make_pdf(PAGES))
    first = tool.add_document(path)
    before = stored_state(tool)
    again = tool.add_document(write(tmp_path, "renamed-copy.pdf", path.read_bytes()))
    assert again.already_present and again.doc_id == first.doc_id
    assert stored_state(tool) == before


@pytest.mark.parametrize("name,data,phrase", [
    ("broken.pdf", make_pdf([body(["hello"])])[:40] + b"\x00garbage" * 50, "damaged"),
    ("locked.pdf", make_pdf([body(["secret"])], encrypt=True), "password-protected"),
    ("empty.pdf", b"", "empty"),
    ("notes.pdf", "These are plain notes, not a PDF.\n", "not a PDF"),
    ("scan.pdf", make_pdf(["image", "image"]), "scanned"),
    ("picture.xyz", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, ""),
])
def test_bad_files_are_refused_and_harm_nothing(settings, tmp_path, name, data, phrase):
    tool = RAGTool("alice", settings)
    tool.add_document(write(tmp_path, "course.pdf", make_pdf(PAGES)))
    before = stored_state(tool)
    with pytest.raises(DocumentError) as info:
        tool.add_document(write(tmp_path, name, data))
    message = str(info.value)
    assert phrase in message and name in message
    assert "\n" not in message and "Traceback" not in message
    assert stored_state(tool) == before
    assert tool.search("recursive function")[0].doc_name == "course.pdf"


def test_oversized_upload_is_refused(settings, tmp_path):
    tool = RAGTool("alice", settings.model_copy(update={"max_upload_mb": 0}))
    with pytest.raises(DocumentError, match="over the 0 MB limit"):
        tool.add_document(write(tmp_path, "course.pdf", make_pdf(PAGES)))
    assert tool.list_documents() == []


def test_failure_while_indexing_rolls_back_vectors_and_files(settings, tmp_path, monkeypatch):
    """If the SQLite write fails after vectors were written, the vectors and stored file are removed.
    (The failure is injected into our own store: there is no external boundary to stand in for.)"""
    tool = RAGTool("alice", settings)

    def fail(*args, **kwargs):
        raise OSError("disk full")
    monkeypatch.setattr(tool.store, "add_document", fail)
    with pytest.raises(OSError):
        tool.add_document(write(tmp_path, "course.pdf", make_pdf(PAGES)))
    monkeypatch.undo()
    assert stored_state(tool) == ([], 0, 0, [])


NAMES = [  # given name, stored name
    ("salt\x00.pdf", "salt.pdf"),
    ("../../../etc/passwd.pdf", "passwd.pdf"),
    ("C:\\Users\\ana\\Desktop\\course notes.pdf", "course notes.pdf"),
    ("invoice\u202efdp.exe", "invoicefdp.exe"),                 # a bidi override would show it as "…exe.pdf"
    ("  two\t\nlines   here.pdf ", "two lines here.pdf"),
    ("📚 学习 notes 🧠.pdf", "📚 学习 notes 🧠.pdf"),
    ("\x00\x01\x02", "course.pdf"),                              # nothing left: the file's own name
    ("..", "course.pdf"),
]


@pytest.mark.parametrize("given, stored", NAMES)
def test_document_name_is_cleaned_where_it_enters(given, stored):
    assert clean_document_name(given, fallback="course.pdf") == stored


def test_a_long_document_name_is_capped_keeping_its_extension():
    cleaned = clean_document_name("c" * 296 + ".pdf", fallback="course.pdf")
    assert len(cleaned) == MAX_NAME_CHARS and cleaned.endswith("….pdf") and cleaned.startswith("ccc")


def test_added_documents_and_texts_are_listed_under_clean_names(settings, tmp_path):
    tool = RAGTool("alice", settings)
    loaded = tool.add_document(write(tmp_path, "upload-1.pdf", make_pdf(PAGES)), name="../course\x00\u200b.pdf")
    pasted = tool.add_text("Photosynthesis turns light into sugar.", title="Plants", name="\x07\x00")
    listed = {d.doc_id: d.name for d in tool.list_documents()}
    assert loaded.name == listed[loaded.doc_id] == "course.pdf"
    assert pasted.name == listed[pasted.doc_id] == "Plants.md"
    assert tool.search("recursive function")[0].doc_name == "course.pdf"

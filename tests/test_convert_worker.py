"""rag/convert_worker.py: every conversion runs in a worker process that a timeout, a stop or a crash ends
(the memory budget: tests/reliability/test_conversion_limits.py), and a PDF converts there exactly as in this
process, pages reported as it goes. Real files, real processes (tests/worker_processes.py)."""
from __future__ import annotations

import logging
import os
import pickle
import signal
import threading
import time
from pathlib import Path

import pytest

from core.errors import DocumentError, Notice
from core.settings import Settings
from rag import convert_worker
from rag.convert import convert_file, convert_here
from rag.types import ConvertedDocument, Heading, PageSpan
from tests.office_files import report_docx, slow_docx, unpacked_size
from tests.test_settings import test_an_unusable_setting_is_refused_at_start_in_one_sentence as refused_at_start
from tests.test_convert import body, make_pdf
from tests.worker_processes import busy_pid, gone


def settings(tmp_path: Path, **values) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path / "data", **values)


def write(tmp_path: Path, name: str, data: bytes | str) -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def warm(tmp_path: Path) -> int:
    """A worker waiting for the next file (the one the next conversion gets); its pid."""
    convert_file(write(tmp_path, "warm.md", "# Warm\n\nA worker is started by this file.\n"))
    return convert_worker.idle_pids()[-1]


class Converting:
    """convert_file in a thread: its outcome, how long it took, and the pid of the worker it got."""

    def __init__(self, path: Path, **kwargs):
        self.outcome: dict = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(path, kwargs), daemon=True)
        self.started = time.monotonic()
        self.thread.start()
        self.pid = busy_pid()

    def _run(self, path: Path, kwargs: dict) -> None:
        try:
            with convert_worker.stop_on(self.stop):
                self.outcome["doc"] = convert_file(path, **kwargs)
        except DocumentError as exc:
            self.outcome["error"] = exc
        self.outcome["seconds"] = time.monotonic() - self.started

    def error(self, timeout: float = 60) -> DocumentError:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the conversion did not end"
        assert "error" in self.outcome, self.outcome
        return self.outcome["error"]


def test_a_converted_document_pickles_with_its_notices():
    notice = Notice("page 2 was scanned and read by OCR, so its text may contain recognition mistakes",
                    key="warn_ocr_pages", pages="2")
    doc = ConvertedDocument(markdown="# T\n\ntext", title="T", pages=[PageSpan(1, 0, 4), PageSpan(2, 4, 10)],
                            headings=[Heading(1, "T", 0)], page_count=2, source_format="pdf", warnings=[notice],
                            ocr_pages=[2], ocr_lines={2: [{"text": "text", "box": [1, 2, 3, 4], "conf": 0.9}]})
    back = pickle.loads(pickle.dumps(doc))
    assert back == doc
    assert isinstance(back.warnings[0], Notice) and back.warnings[0].key == "warn_ocr_pages"
    assert back.warnings[0].values == {"pages": "2"}


def test_a_pdf_converts_in_a_worker_exactly_as_here_and_reports_each_page(tmp_path):
    pages = [body(["# Rivers", f"Page {n} is about rivers and the sea they reach."]) for n in range(1, 4)]
    path = write(tmp_path, "rivers.pdf", make_pdf(pages))
    calls: list[tuple] = []
    doc = convert_file(path, progress=lambda *call: calls.append(call))
    assert doc == convert_here(path, "pdf")
    assert calls == [("pages", n, 3) for n in (1, 2, 3)]
    worker = convert_worker.idle_pids()
    assert worker and os.getpid() not in worker


def test_two_files_convert_at_once_in_two_workers(tmp_path):
    paths = [write(tmp_path, f"{name}.pdf", make_pdf([body([f"# {name}", f"All about {name}, page one."])] * 2))
             for name in ("owls", "bats")]
    results: dict = {}

    def convert(path: Path) -> None:
        calls: list = []
        results[path.stem] = (convert_file(path, progress=lambda *c: calls.append(c)), calls)

    threads = [threading.Thread(target=convert, args=(p,)) for p in paths]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    for name in ("owls", "bats"):
        doc, calls = results[name]
        assert f"All about {name}" in doc.markdown and calls == [("pages", 1, 2), ("pages", 2, 2)]


def test_the_workers_log_lines_reach_this_process(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    good = make_pdf([body(["# Sample", "A short page of text that is long enough to be a real document."])])
    with pytest.raises(DocumentError) as caught:
        convert_file(write(tmp_path, "truncated.pdf", good[:len(good) // 2]))
    assert caught.value.key == "err_pdf_damaged"
    lines = [r for r in caplog.records if "PDFium could not open truncated.pdf" in r.getMessage()]
    assert lines and lines[0].name == "rag.pdf_converter"


def test_a_conversion_without_progress_is_stopped_by_the_timeout(tmp_path):
    warm(tmp_path)
    path = write(tmp_path, "minutes.docx", slow_docx())
    running = Converting(path, settings=settings(tmp_path, convert_timeout_s=2))
    error = running.error()
    assert error.key == "err_convert_timeout" and error.values == {"name": "minutes.docx", "seconds": "2"}
    assert str(error) == ("'minutes.docx' was still being read after 2 seconds without progress, so reading it was "
                          "stopped; save it as a PDF or split it into smaller files, then upload it again.")
    assert running.outcome["seconds"] >= 2, running.outcome         # the budget is not cut short
    assert gone(running.pid) and running.pid not in convert_worker.idle_pids()
    assert "Warm" in convert_file(tmp_path / "warm.md").markdown       # the next file converts


def test_a_stop_ends_the_conversion_at_once_and_its_worker(tmp_path):
    warm(tmp_path)
    running = Converting(write(tmp_path, "minutes.docx", slow_docx()))
    time.sleep(0.5)
    running.stop.set()
    error = running.error()          # the stop's own sentence: the file was not converted to its end
    assert error.key == "err_convert_cancelled"
    assert str(error) == "Reading 'minutes.docx' was stopped as you asked; it was not added."
    assert gone(running.pid)
    assert "Warm" in convert_file(tmp_path / "warm.md").markdown


def test_a_crashed_worker_is_one_sentence_and_the_next_file_converts(tmp_path):
    warm(tmp_path)
    running = Converting(write(tmp_path, "minutes.docx", slow_docx()))
    time.sleep(0.3)
    os.kill(running.pid, signal.SIGSEGV)       # what a crash in a native library looks like
    error = running.error()
    assert error.key == "err_file_damaged" and "'minutes.docx' could not be converted" in str(error)
    assert gone(running.pid)
    assert "Warm" in convert_file(tmp_path / "warm.md").markdown


def test_an_office_file_unpacking_past_the_limit_is_refused_before_it_is_opened(tmp_path):
    data = report_docx(3 * 2**20)
    assert unpacked_size(data) > 2**20 * 3 - 200 and len(data) < 20_000
    path = write(tmp_path, "report.docx", data)
    with pytest.raises(DocumentError) as caught:
        convert_file(path, settings=settings(tmp_path, office_max_unpacked_mb=2))
    assert caught.value.key == "err_file_unpacked_too_large"
    assert str(caught.value) == ("'report.docx' unpacks to 3 MB, over the 2 MB an Office file may hold; remove large "
                                 "pictures or media, or split it, then upload it again.")


def test_a_stop_before_the_conversion_starts_no_worker(tmp_path):
    stop = threading.Event()
    stop.set()
    with convert_worker.stop_on(stop), pytest.raises(DocumentError) as caught:
        convert_file(write(tmp_path, "notes.md", "# Notes\n\nSome notes.\n"))
    assert caught.value.key == "err_convert_cancelled" and not convert_worker.running_pids()


@pytest.mark.parametrize("name, value, phrase", [
    ("CONVERT_TIMEOUT_S", "0", "CONVERT_TIMEOUT_S=0.0 must be from 1 to 86400 seconds"),
    ("CONVERT_MEMORY_MB", "512", "CONVERT_MEMORY_MB=512 must be at least 1024"),
    ("OFFICE_MAX_UNPACKED_MB", "0", "OFFICE_MAX_UNPACKED_MB=0 must be at least 1"),
    ("STALE_UPLOAD_MINUTES", "0", "STALE_UPLOAD_MINUTES=0 must be at least 1 minute"),
])
def test_a_budget_out_of_range_is_refused_at_start_in_one_sentence(monkeypatch, name, value, phrase):
    refused_at_start(monkeypatch, name, value, phrase)

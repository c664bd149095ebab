"""Hostile files and a busy machine against conversion: a zip bomb, a Word file that converts for minutes, a
conversion that needs too much memory, a crashing converter, a cancel, and uploads nobody ingested.

Conversion runs in a worker process (rag/convert_worker.py) that a time budget (CONVERT_TIMEOUT_S), a memory
budget (CONVERT_MEMORY_MB), a cancel or the Stop button ends; an Office file's zip directory is measured before
it is opened (OFFICE_MAX_UNPACKED_MB, and a zip-bomb ratio). Each case runs through the facade the UI calls
(with one small document loaded first, which must stay listed), and the cancel, the Stop button, the timeout
and the stale-upload timer also through the real app (python app.py) over HTTP as a browser or script would.
A worker process that is gone is checked with os.kill(pid, 0); every file is generated here (tests/office_files.py:
the zip bomb is 143 KB written with zipfile, never a file in the repository). Each refusal is one sentence in
English and in Chinese (tests/test_error_text.py's check). Durations are recorded as figures, not asserted: a
busy machine stretches them; what is asserted is which sentence came and that the worker is gone.
"""
from __future__ import annotations

import html
import json
import os
import re
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from assistant import files as served
from assistant.facade import PDFLearningAssistant
from core.errors import DocumentError
from core.settings import Settings
from rag import convert_worker
from tests.app_process import AppDidNotStart, app_process
from tests.browser.pdfgen import AVIATION, make_pdf
from tests.office_files import report_docx, slow_docx, unpacked_size, zip_bomb_docx
from tests.reliability.test_access import file_data, start_call, upload
from tests.test_error_text import assert_shown_in_both
from tests.worker_processes import busy_pid, gone

TIMEOUT_S = 3            # the facade's CONVERT_TIMEOUT_S
APP_TIMEOUT_S = 20       # the app's: long enough to cancel or stop a conversion first
UNPACKED_MB = 3          # the facade's OFFICE_MAX_UNPACKED_MB


def one_sentence(error: DocumentError, key: str) -> str:
    """The error is `key`'s one sentence, shown in Chinese too; both, quoted for the table."""
    message = str(error)
    assert "\n" not in message and "Traceback" not in message and message.endswith("."), message
    assert message.count(". ") == 0, message
    chinese = assert_shown_in_both(error, key)
    return f"“{message}” (zh: “{chinese}”)"


# -- through the facade ---------------------------------------------------------------------------------------

@dataclass
class Library:
    assistant: PDFLearningAssistant
    folder: Path

    def write(self, name: str, data: bytes | str) -> Path:
        path = self.folder / name
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        return path

    def stored(self) -> list[Path]:
        return sorted(p for p in (self.assistant.settings.data_dir / "files").rglob("*") if p.is_file())

    def unharmed(self) -> str:
        names = [d.name for d in self.assistant.list_documents()]
        assert "flight.pdf" in names, names
        return f"flight.pdf still listed ({len(names)} documents)"

    def refused(self, path: Path, key: str) -> tuple[str, float]:
        """Loading `path` fails with `key`'s sentence and stores nothing: the sentences, and how long it took."""
        docs, files = self.assistant.list_documents(), self.stored()
        started = time.monotonic()
        with pytest.raises(DocumentError) as caught:
            self.assistant.load_document(path)
        seconds = time.monotonic() - started
        said = one_sentence(caught.value, key)
        assert self.assistant.list_documents() == docs and self.stored() == files, "something was stored"
        return said, seconds

    def refused_meanwhile(self, name: str, data: bytes, key: str, meanwhile: Callable[[int], None]) -> tuple[str, float, int]:
        """Load `data` with a worker already waiting, and call `meanwhile(pid)` once the worker has the file;
        the refusal's sentences, how long it took, and that worker's pid (gone when this returns)."""
        self.assistant.load_document(self.write("warm.md", "# Warm\n\nThe worker is started by this file.\n"))
        thread, outcome = in_thread(lambda: self.refused(self.write(name, data), key))
        pid = busy_pid()
        meanwhile(pid)
        thread.join(120)
        assert "value" in outcome, outcome
        assert gone(pid)
        return (*outcome["value"], pid)


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> Library:
    folder = tmp_path_factory.mktemp("conversion")
    settings = Settings(_env_file=None, data_dir=folder / "data", llm_backend="none", convert_timeout_s=TIMEOUT_S,
                        office_max_unpacked_mb=UNPACKED_MB)
    lib = Library(PDFLearningAssistant("learner", settings), folder)
    lib.assistant.load_document(lib.write("flight.pdf", make_pdf(AVIATION, title="Flight Control Notes")))
    return lib


def in_thread(call) -> tuple[threading.Thread, dict]:
    outcome: dict = {}

    def run() -> None:
        started = time.monotonic()
        try:
            outcome["value"] = call()
        except Exception as exc:  # noqa: BLE001 - the test reads it
            outcome["error"] = exc
        outcome["seconds"] = time.monotonic() - started

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def test_a_word_zip_bomb_is_refused_before_it_is_opened(library, reliability):
    data = zip_bomb_docx()
    assert len(data) < 150_000 and unpacked_size(data) >= 40 * 2**20
    said, seconds = library.refused(library.write("minutes.docx", data), "err_file_zip_bomb")
    reliability.record("Hostile input", f".docx of {len(data) / 1000:.0f} KB holding {unpacked_size(data) / 2**20:.0f} MB "
                                        "of document.xml (a zip bomb; it held MarkItDown for 14 CPU-minutes)",
                       f"refused in {seconds:.2f} s before MarkItDown opened it: {said} Nothing stored; "
                       f"{library.unharmed()}.")


def test_an_office_file_over_the_unpacked_limit_is_refused(library, reliability):
    data = report_docx(4 * 2**20)
    said, seconds = library.refused(library.write("report.docx", data), "err_file_unpacked_too_large")
    reliability.record("Limits", f".docx of {len(data) / 1000:.0f} KB unpacking to {unpacked_size(data) / 2**20:.0f} MB, "
                                 f"OFFICE_MAX_UNPACKED_MB={UNPACKED_MB}",
                       f"refused in {seconds:.2f} s: {said} Nothing stored; {library.unharmed()}.")


def test_a_conversion_without_progress_is_stopped_by_the_timeout(library, reliability):
    said, seconds, _ = library.refused_meanwhile("minutes.docx", slow_docx(), "err_convert_timeout", lambda pid: None)
    assert seconds >= TIMEOUT_S, seconds                     # the budget is not cut short
    added = library.assistant.load_document(library.write("after.md", "# After\n\nAdded after the timeout.\n"))
    assert added.chunks and not added.already_present
    reliability.record("Limits", f"Word file whose conversion takes 15-40 s (2 MB of XML), CONVERT_TIMEOUT_S={TIMEOUT_S}",
                       f"stopped after {seconds:.1f} s: {said} Its worker process is gone (os.kill(pid, 0) raises); "
                       f"nothing stored; the next file is added; {library.unharmed()}.")


def test_a_conversion_over_the_memory_budget_is_refused(library, reliability):
    # The budget is handed to the worker directly: CONVERT_MEMORY_MB must be at least 1024, and a file needing more
    # than that takes minutes to get there; 700 MB leaves the worker ~250 MB for a 150 MB line of text.
    path = library.write("one-line.txt", "word " * 30_000_000)
    thread, outcome = in_thread(lambda: convert_worker.convert(path, "txt", path.name, progress=None, ocr_max_pages=0,
                                                               timeout_s=120, memory_mb=700, max_unpacked_mb=200))
    pid = busy_pid()
    thread.join(120)
    error = outcome["error"]
    assert isinstance(error, DocumentError) and error.values == {"name": "one-line.txt", "limit": 700}, error
    assert str(error) == ("'one-line.txt' needs more than the 700 MB of memory a conversion may use; split it into "
                          "smaller files and upload those.")
    said = one_sentence(error, "err_convert_memory")
    assert gone(pid)
    path.unlink()
    added = library.assistant.load_document(library.write("later.md", "# Later\n\nConverted by a new worker.\n"))
    assert added.chunks
    reliability.record("Limits", "150 MB text file on one line, worker memory budget 700 MB (RLIMIT_AS)",
                       f"refused after {outcome['seconds']:.1f} s: {said} The worker is replaced (the old one is "
                       f"gone); the next file is added; {library.unharmed()}.")


def test_a_crashing_converter_costs_one_sentence(library, reliability):
    def crash(pid: int) -> None:
        time.sleep(0.3)
        os.kill(pid, signal.SIGSEGV)           # what a crash in a native library looks like

    said, seconds, _ = library.refused_meanwhile("minutes.docx", slow_docx(), "err_file_damaged", crash)
    added = library.assistant.load_document(library.write("next.md", "# Next\n\nAdded after the crash.\n"))
    assert added.chunks
    reliability.record("Fault", "the conversion worker crashes (SIGSEGV) mid-file",
                       f"{said} after {seconds:.1f} s; nothing stored; the next file is added; {library.unharmed()}.")


def test_stale_uploads_are_removed_by_the_timer(tmp_path, reliability):
    settings = Settings(_env_file=None, data_dir=tmp_path / "data", stale_upload_minutes=1)
    uploads = served.user_folder(settings, "alice") / "uploads"

    def upload_copy(digest: str, name: str, age_s: float) -> Path:
        path = uploads / digest / name
        path.parent.mkdir(parents=True)
        path.write_text("# Notes\n\nNever ingested.\n", encoding="utf-8")
        for entry in (path, path.parent):
            os.utime(entry, (time.time() - age_s, time.time() - age_s))
        return path

    forgotten = upload_copy("d1", "forgotten.md", 120)
    fresh = upload_copy("d2", "fresh.md", 0)
    in_use = upload_copy("d3", "being-ingested.md", 120)
    stop = served.start_sweeping(settings)
    started = time.monotonic()
    try:
        with served.holding([in_use]):
            while forgotten.exists() and time.monotonic() - started < 30:
                time.sleep(0.1)
            seconds = time.monotonic() - started
            assert not forgotten.parent.exists() and fresh.is_file() and in_use.is_file()
    finally:
        stop.set()
    reliability.record("Limits", "uploads never ingested, STALE_UPLOAD_MINUTES=1 (files dated 2 minutes back)",
                       f"the one 2 minutes old removed by the timer after {seconds:.1f} s (it looks every 6 s for a "
                       "1-minute age, every minute for the default 60); a fresh one and an old one an upload is "
                       "ingesting stay")


# -- through the app ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def app(tmp_path_factory):
    work = tmp_path_factory.mktemp("conversion-app")
    try:
        # LOG_LEVEL=INFO: a stopped conversion is logged at INFO, and the cancel test reads which stop it was
        with app_process(work, LLM_BACKEND="none", CONVERT_TIMEOUT_S=str(APP_TIMEOUT_S),
                         STALE_UPLOAD_MINUTES="1", LOG_LEVEL="INFO") as running:
            with httpx.Client(base_url=running.url, timeout=120) as client:
                yield running, client
    except AppDidNotStart as exc:
        pytest.fail(str(exc))


def workers_of(pid: int) -> set[int]:
    """The app's conversion workers: its child processes running rag.convert_worker."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if parent == pid and b"rag.convert_worker" in (entry / "cmdline").read_bytes():
                found.add(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def wait_gone(pids: set[int], within_s: float = 30) -> float:
    started = time.monotonic()
    while not all(gone(p) for p in pids) and time.monotonic() - started < within_s:
        time.sleep(0.05)
    assert all(gone(p) for p in pids), pids
    return time.monotonic() - started


class Event:
    """One upload event through the call API, its stream read in a thread: how many "generating" messages came,
    and the final data. The stream carries every event of its session (the Stop button's too): the upload's
    result is the one with its six outputs."""

    def __init__(self, client: httpx.Client, files: list[str], session: str):
        started = start_call(client, "upload", [[file_data(p) for p in files]], session)
        assert started.status_code == 200, started.text
        self.event_id = started.json()["event_id"]
        self.client, self.session = client, session
        self.kind, self.data, self.generating = None, None, 0
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        kind = None
        with self.client.stream("GET", f"/gradio_api/call/upload/{self.event_id}") as stream:
            for line in stream.iter_lines():
                if line.startswith("event:"):
                    kind = line[6:].strip()
                    self.generating += kind == "generating"
                elif line.startswith("data:") and kind in ("complete", "error"):
                    data = json.loads(line[5:])
                    if kind == "complete" and isinstance(data, list) and len(data) != 6:
                        continue                                     # another event of the session
                    self.kind, self.data = kind, data
                    return

    def result(self, within_s: float = 120):
        self.thread.join(within_s)
        assert not self.thread.is_alive(), "the upload event did not end"
        return self.kind, self.data

    def wait_converting(self, pids: set[int]) -> None:
        """Until the upload is working on its file (two messages: the table, then the file marked working)
        and a worker of the app exists; then a moment more, so the conversion is under way."""
        deadline = time.monotonic() + 60
        while (self.generating < 2 or not pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)


def rows(table_html: str) -> list[str]:
    return re.findall(r"<tr class=\"file-[a-z]+\" data-state=\"[a-z]+\"><td>[^<]*</td><td>.*?</td><td>([^<]*)</td>",
                      html.unescape(table_html))


def add_small(app, name: str) -> str:
    running, client = app
    event = Event(client, [upload(client, name, f"# {name}\n\nA small file the app adds.\n".encode())], "s-" + name)
    kind, result = event.result()
    assert kind == "complete" and "1 of 1 files added" in result[1], result
    return result[1]


def test_the_app_stops_a_conversion_at_its_timeout_and_keeps_serving(app, reliability):
    running, client = app
    add_small(app, "warm.md")                                    # the conversion worker is up and waiting
    workers = workers_of(running.proc.pid)
    assert len(workers) == 1, workers
    started = time.monotonic()
    kind, result = Event(client, [upload(client, "minutes.docx", report_docx(8 * 2**20))], "timeout-tab").result()
    seconds = time.monotonic() - started
    said = rows(result[0])
    assert kind == "complete" and "was still being read after 20 seconds" in said[0], result
    assert "0 of 1 files added" in result[1] and seconds >= APP_TIMEOUT_S
    assert all(gone(p) for p in workers)
    after = add_small(app, "after-timeout.md")
    reliability.record("Limits", f"Word file converting for minutes (8 MB of XML) through the app, "
                                 f"CONVERT_TIMEOUT_S={APP_TIMEOUT_S}",
                       f"the upload ended after {seconds:.1f} s with “{said[0]}” Its worker process is gone; the next "
                       f"upload: “{after}”")


def fn_index(client: httpx.Client, api_name: str) -> int:
    config = client.get("/config").json()
    return next(d["id"] for d in config["dependencies"] if d.get("api_name") == api_name)


def test_a_gradio_cancel_stops_the_conversion_at_once(app, reliability):
    running, client = app
    add_small(app, "warm-cancel.md")
    workers = workers_of(running.proc.pid)
    path = upload(client, "minutes.docx", report_docx(8 * 2**20))
    event = Event(client, [path], "cancel-tab")
    event.wait_converting(workers)
    started = time.monotonic()
    answer = client.post("/gradio_api/cancel", json={"session_hash": "cancel-tab", "fn_index": fn_index(client, "upload"),
                                                     "event_id": event.event_id})
    cancelled = time.monotonic() - started
    assert answer.status_code == 200, answer.text
    killed = cancelled + wait_gone(workers)
    event.result(30)
    assert not Path(path).exists()
    # the cancel stopped it, not the timeout (the app's log says which)
    assert "conversion of minutes.docx stopped by its caller" in running.log.read_text(errors="replace")
    after = add_small(app, "after-cancel.md")
    reliability.record("Fault", "Gradio cancel (/gradio_api/cancel) of an upload mid-conversion (a Word file of 8 MB "
                                "of XML)",
                       f"the cancel was answered in {cancelled:.1f} s (it used to wait for the conversion, 14 minutes "
                       f"for the zip bomb) and the worker process was gone {killed:.1f} s after it was sent; the upload "
                       f"copy is removed; the next upload: “{after}”")


def test_the_stop_button_stops_the_file_and_leaves_the_rest_out(app, reliability):
    running, client = app
    add_small(app, "warm-stop.md")
    workers = workers_of(running.proc.pid)
    paths = [upload(client, "minutes.docx", report_docx(8 * 2**20)), upload(client, "queued.md", b"# Queued\n\nNext.\n")]
    event = Event(client, paths, "stop-tab")
    event.wait_converting(workers)
    started = time.monotonic()
    start_call(client, "stop_uploads", [], "stop-tab")
    kind, result = event.result(30)
    seconds = time.monotonic() - started
    said = rows(result[0])
    assert kind == "complete" and said == ["Reading 'minutes.docx' was stopped as you asked; it was not added.",
                                           "Not added: the upload was stopped."], result
    assert result[1] == "Stopped: 0 of 2 files added; 0 already there; the others were not added."
    assert all(gone(p) for p in workers) and not any(Path(p).exists() for p in paths)
    reliability.record("Fault", "Stop button while the first of two uploaded files converts",
                       f"ended {seconds:.1f} s after the click: “{said[0]}” / “{said[1]}” / “{result[1]}” The "
                       "worker process is gone; both upload copies are removed")


def test_an_upload_nobody_ingests_is_removed_by_the_apps_timer(app, reliability):
    running, client = app
    forgotten = Path(upload(client, "forgotten.md", b"# Forgotten\n\nUploaded by a script, never ingested.\n"))
    fresh = Path(upload(client, "fresh.md", b"# Fresh\n\nJust uploaded.\n"))
    for entry in (forgotten, forgotten.parent):
        os.utime(entry, (time.time() - 120, time.time() - 120))
    started = time.monotonic()
    while forgotten.exists() and time.monotonic() - started < 30:
        time.sleep(0.1)
    seconds = time.monotonic() - started
    assert not forgotten.exists() and fresh.is_file()
    reliability.record("Limits", "an upload nobody ingests (a bare POST to /gradio_api/upload) through the app, "
                                 "STALE_UPLOAD_MINUTES=1, dated 2 minutes back",
                       f"removed by the app's timer {seconds:.1f} s later (before, it stayed until the same person "
                       "uploaded again); a fresh upload stays")

"""Every conversion runs in a worker process, with a time budget, a memory budget and a way to stop it.

MarkItDown and the libraries under it (mammoth, python-pptx, openpyxl, BeautifulSoup, PDFium, the OCR model)
cannot be interrupted, and a hostile file can keep them busy as long as it likes: a .docx of 143 KB holding
40 MB of XML ran for 14 CPU-minutes inside the app's own process, where no timeout and no cancel could reach
it. A process can be killed, so conversion happens in one:

- The worker is `python -c "from rag.convert_worker import main; main()"`: a fresh interpreter that imports
  the converters once, then converts one file at a time, asked over a socket pair (multiprocessing's
  Connection: pickled messages). It sends each page read ("pages"/"ocr" progress, so the upload table moves
  as before), its log records (so the app's log and the tests' caplog see them as before), and then the
  ConvertedDocument or the DocumentError's sentence, key and values (so the UI translates it as before).
  A fresh interpreter, not multiprocessing's spawn or forkserver: those run the app's main script (app.py,
  which imports Gradio) again in every child; and not fork, which would copy the app's threads and locks.
- Its address space is capped with RLIMIT_AS at CONVERT_MEMORY_MB: an allocation past it fails (MemoryError),
  the person is told in one sentence, and that worker is replaced.
- The caller polls the socket every POLL_S. When CONVERT_TIMEOUT_S pass without the conversion finishing or
  reading another page (each page read, and each scanned page read by OCR, starts the budget again; a new
  worker's start, up to START_S, is not counted), or when the caller's stop event is set (`stop_on`: the
  Documents tab's Stop button, or Gradio cancelling the upload), the worker is killed (SIGKILL) and reaped
  before the caller hears one sentence.
- Up to IDLE_KEPT workers wait for the next file, so a conversion costs only the pickling and the socket
  (Think Python: see bench/convert_worker.py). One idle for IDLE_REUSE_S is not reused but stopped; one
  whose app is gone, or that waited IDLE_EXIT_S, exits by itself.

`convert` is called by rag.convert.convert_file, which has made the quick checks (missing, empty,
mislabelled) first; `serve` is the worker's side, running rag.convert.convert_here.
"""
from __future__ import annotations

import contextvars
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from multiprocessing.connection import Connection, Pipe
from pathlib import Path
from typing import Callable, Iterator

from core.errors import DocumentError

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[1]
POLL_S = 0.1            # how soon a stop or a timeout is noticed
IDLE_KEPT = 2           # workers kept for the next file: the Documents tab converts at most two files at once
IDLE_REUSE_S = 300      # a worker idle longer than this is stopped rather than reused ...
IDLE_EXIT_S = 900       # ... and one idle this long exits by itself (no caller came to stop it)
READY_EXIT = 3          # the exit status of a worker whose imports failed (e.g. a memory budget too small)
START_S = 120           # how long a new worker may take to import the converters before it counts as broken

Progress = Callable[[str, int, int], None]

_stop: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("convert_stop", default=None)
_pool_lock = threading.Lock()
_idle: list["_Worker"] = []
_busy: set["_Worker"] = set()


@contextmanager
def stop_on(event: threading.Event) -> Iterator[threading.Event]:
    """Conversions started in this thread (or context) inside the block are stopped when `event` is set:

        with stop_on(stop):
            assistant.load_document(path)      # stop.set() from another thread ends its conversion

    A context variable, so the facade and RAGTool between the caller and the conversion need no new argument."""
    token = _stop.set(event)
    try:
        yield event
    finally:
        _stop.reset(token)


def running_pids() -> list[int]:
    """Process ids of the workers converting a file right now (for tests and the log)."""
    with _pool_lock:
        return sorted(w.proc.pid for w in _busy)


def idle_pids() -> list[int]:
    with _pool_lock:
        return sorted(w.proc.pid for w in _idle)


def shutdown() -> None:
    """Stop the idle workers (busy ones are stopped by their callers' budgets)."""
    with _pool_lock:
        workers, _idle[:] = list(_idle), []
    for worker in workers:
        worker.kill()


# -- the caller's side ----------------------------------------------------------------------------------------

class _Worker:
    """One worker process and the caller's end of its socket."""

    def __init__(self, memory_mb: int):
        ours, theirs = Pipe(duplex=True)
        code = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
                "from rag.convert_worker import main; main()")
        # Two malloc arenas, not glibc's eight a core: each reserves 64 MB of address space it rarely uses, and
        # the address space is what the budget counts (the converters and the OCR model then take ~900 MB of it).
        env = {"MALLOC_ARENA_MAX": "2", **os.environ}
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", code, str(theirs.fileno()), str(memory_mb), str(os.getpid())],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, env=env)
        finally:
            theirs.close()
        self.conn: Connection = ours
        self.memory_mb = memory_mb
        self.ready = False
        self.idle_since = time.monotonic()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL and reap: when this returns, the process is gone."""
        try:
            self.proc.kill()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:   # a process in uninterruptible sleep (a dying disk): the log says so
            log.error("conversion worker %d did not exit after SIGKILL", self.proc.pid)
        self.conn.close()


def _take(memory_mb: int) -> _Worker:
    now = time.monotonic()
    stale: list[_Worker] = []
    worker = None
    with _pool_lock:
        while _idle:
            candidate = _idle.pop()
            if (candidate.memory_mb == memory_mb and candidate.alive()
                    and now - candidate.idle_since < IDLE_REUSE_S):
                worker = candidate
                break
            stale.append(candidate)
    for old in stale:
        old.kill()
    if worker is None:
        worker = _Worker(memory_mb)
    with _pool_lock:
        _busy.add(worker)
    return worker


def _give_back(worker: _Worker, reusable: bool) -> None:
    with _pool_lock:
        _busy.discard(worker)
        keep = reusable and worker.alive() and len(_idle) < IDLE_KEPT
        if keep:
            worker.idle_since = time.monotonic()
            _idle.append(worker)
    if not keep:
        worker.kill()


def convert(path: Path, fmt: str, name: str, *, progress: Progress | None, ocr_max_pages: int,
            timeout_s: float, memory_mb: int, max_unpacked_mb: int):
    """Convert `path` (already checked to exist and be of format `fmt`) in a worker; the ConvertedDocument.
    Raises DocumentError: the worker's own refusal, or one sentence when the time or memory budget ran out,
    the caller's stop event was set, or the worker died."""
    stop = _stop.get()
    if stop is not None and stop.is_set():
        raise _cancelled(name)
    try:
        worker = _take(memory_mb)
    except OSError as exc:
        log.error("cannot start a conversion worker: %s", exc)
        raise _unavailable() from None
    reusable = False
    try:
        request = ("convert", str(path), fmt, ocr_max_pages, max_unpacked_mb, logging.getLogger().getEffectiveLevel())
        try:
            worker.conn.send(request)
        except OSError:
            raise _died(worker, name) from None
        # A new worker's start (imports: 2 s, far more on a busy machine) is not the file's time.
        deadline = time.monotonic() + (timeout_s if worker.ready else START_S)
        while True:
            if stop is not None and stop.is_set():
                log.info("conversion of %s stopped by its caller; worker %d killed", name, worker.proc.pid)
                raise _cancelled(name)
            left = deadline - time.monotonic()
            if left <= 0 and not worker.ready:
                log.error("conversion worker %d did not start within %d s", worker.proc.pid, START_S)
                raise _unavailable()
            if left <= 0:
                log.warning("conversion of %s ran %g s without progress; worker %d killed", name, timeout_s,
                            worker.proc.pid)
                raise DocumentError(
                    f"'{name}' was still being read after {timeout_s:g} seconds without progress, so reading it "
                    "was stopped; save it as a PDF or split it into smaller files, then upload it again.",
                    key="err_convert_timeout", name=name, seconds=f"{timeout_s:g}")
            if not worker.conn.poll(min(POLL_S, left)):
                continue
            try:
                message = worker.conn.recv()
            except (EOFError, OSError):
                raise _died(worker, name) from None
            kind = message[0]
            if kind == "progress":
                deadline = max(deadline, time.monotonic() + timeout_s)
                report_progress(progress, *message[1:])
            elif kind == "log":
                _relay(*message[1:])
            elif kind == "ready":
                worker.ready = True
                deadline = time.monotonic() + timeout_s
            elif kind == "done":
                reusable = True
                return message[1]
            elif kind == "refused":
                reusable = True
                sentence, key, values = message[1:]
                raise DocumentError(sentence, key=key, **values)
            elif kind == "memory":
                log.warning("conversion of %s ran out of its %d MB; worker %d replaced", name, memory_mb,
                            worker.proc.pid)
                raise _out_of_memory(name, memory_mb)
            else:
                log.error("conversion worker %d failed on %s: %s", worker.proc.pid, name, message[1:])
                raise _damaged(name)
    finally:
        _give_back(worker, reusable)


def report_progress(progress: Progress | None, stage: str, done: int, total: int) -> None:
    """Tell the caller how far reading has come; a failing progress display must not cost the document."""
    if progress is None:
        return
    try:
        progress(stage, done, total)
    except Exception:  # noqa: BLE001 - the caller's code
        log.warning("The progress callback failed at %s %d/%d", stage, done, total, exc_info=True)


def _relay(level: int, logger: str, message: str) -> None:
    logging.getLogger(logger).log(level, "%s", message)


def _cancelled(name: str) -> DocumentError:
    return DocumentError(f"Reading '{name}' was stopped as you asked; it was not added.",
                         key="err_convert_cancelled", name=name)


def _unavailable() -> DocumentError:
    return DocumentError("The document converter could not be started on this server; try again in a minute.",
                         key="err_convert_unavailable")


def _out_of_memory(name: str, memory_mb: int) -> DocumentError:
    return DocumentError(f"'{name}' needs more than the {memory_mb} MB of memory a conversion may use; split it "
                         "into smaller files and upload those.", key="err_convert_memory", name=name, limit=memory_mb)


def _damaged(name: str) -> DocumentError:
    return DocumentError(f"'{name}' could not be converted (it may be damaged); open and re-save it, then upload "
                         "it again.", key="err_file_damaged", name=name)


def _died(worker: _Worker, name: str) -> DocumentError:
    """The worker's socket closed mid-conversion: it crashed (PDFium, a native library), was killed by the
    system, or could not even import the converters."""
    try:
        status = worker.proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        status = None
    log.error("conversion worker %d ended (status %s) while converting %s", worker.proc.pid, status, name)
    if not worker.ready:
        return _unavailable()
    if status == -signal.SIGKILL:       # the kernel's out-of-memory killer, most likely
        return _out_of_memory(name, worker.memory_mb)
    return _damaged(name)


# -- the worker's side ------------------------------------------------------------------------------------------

class _Forward(logging.Handler):
    """Log records go to the caller, which logs them under the same logger name."""

    def __init__(self, conn: Connection):
        super().__init__()
        self.conn = conn

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
            if record.exc_info:
                message += "\n" + logging.Formatter().formatException(record.exc_info)
            self.conn.send(("log", record.levelno, record.name, message))
        except Exception:  # noqa: BLE001 - logging must never fail the conversion
            pass


def _exit_with_parent(parent: int) -> None:
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(0)


def main() -> None:
    """The worker process: argv = socket fd, memory budget (MB), the app's pid."""
    fd, memory_mb, parent = (int(a) for a in sys.argv[1:4])
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # Ctrl-C is for the app; it takes its workers along
    if memory_mb > 0:
        import resource
        limit = memory_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    conn = Connection(fd)
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()
    root = logging.getLogger()
    root.handlers[:] = [_Forward(conn)]
    try:
        from rag import convert
        convert.warm_up()
    except MemoryError:
        os._exit(READY_EXIT)
    conn.send(("ready", os.getpid()))
    while True:
        try:
            if not conn.poll(IDLE_EXIT_S):
                return
            request = conn.recv()
        except (EOFError, OSError):
            return
        serve(conn, convert, request)


def serve(conn: Connection, convert, request: tuple) -> None:
    """One conversion; exactly one reply ("done", "refused", "memory" or "failed") after any progress and logs."""
    _, path, fmt, ocr_max_pages, max_unpacked_mb, log_level = request
    logging.getLogger().setLevel(log_level)

    def progress(stage: str, done: int, total: int) -> None:
        conn.send(("progress", stage, done, total))

    try:
        reply = ("done", convert.convert_here(Path(path), fmt, progress=progress, ocr_max_pages=ocr_max_pages,
                                              max_unpacked_mb=max_unpacked_mb))
    except DocumentError as exc:
        reply = ("refused", str(exc), exc.key, dict(exc.values))
    except MemoryError:
        reply = ("memory",)
    except Exception as exc:  # noqa: BLE001 - convert_here turns failures into DocumentError; this is a bug
        log.exception("conversion of %s failed", path)
        reply = ("failed", type(exc).__name__)
    try:
        conn.send(reply)
    except MemoryError:          # pickling a result too big for the budget
        conn.send(("memory",))

"""Reconcile: remove what a crash left behind — vectors and stored files of documents that have no row.

A document exists when its row does. The rows (document, chunks, BM25) are written last at ingest and
removed first at delete, each time in one transaction, so a crash can never leave a listed document
that cannot be searched; it can only leave orphans: vectors in the user's collections (main and
multilingual, rag.dense) and files under DATA_DIR/files/<collection>/ (the stored file, its OCR
sidecar, its figures folder, half-written temporary files) of a document with no row.

This pass removes them for one user, once per process, when that user's first RAGTool is made, before
their first search. Once per user rather than for every user at app start: collection names cannot be
turned back into user ids, every orphan is unseen by everyone but its owner (collections and folders are
per user), and a person who never returns costs nothing.

An ingest in flight has no row yet. It records a pending entry (rag.store) before it writes a vector or
a file, and reconcile keeps the documents of pending entries whose process is alive. It decides and
removes while holding the database's write lock, so no new ingest can register (and start writing)
meanwhile, in this process or another one sharing a Qdrant server. Entries of dead processes are
cleared.
"""
from __future__ import annotations

import logging
import os
import shutil
import socket
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

# A pending entry from another machine cannot be checked; it is kept this long, then cleared.
FOREIGN_PENDING_TTL_S = 24 * 3600


@dataclass
class ReconcileReport:
    vectors: int = 0                                   # orphan chunk vectors removed (both spaces)
    files: int = 0                                     # orphan files and folders removed
    stale_pending: int = 0                             # entries of dead ingests cleared
    doc_ids: list[str] = field(default_factory=list)   # the orphan documents

    @property
    def clean(self) -> bool:
        return not (self.vectors or self.files or self.stale_pending)


# -- which process is writing -----------------------------------------------------------------------------

def _start_ticks(pid: int) -> str | None:
    """When the process started (clock ticks since boot, Linux), which tells it from a later one with the
    same pid; None where /proc is missing or the process is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]   # field 22; the name in (...) may hold spaces


def process_identity() -> str:
    pid = os.getpid()
    return f"{socket.gethostname()}|{pid}|{_start_ticks(pid) or '-'}"


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def owner_alive(owner: str, started_at: float) -> bool:
    """Whether the process that recorded a pending ingest still runs (so it may still be writing)."""
    try:
        host, pid_text, ticks = owner.split("|")
        pid = int(pid_text)
    except ValueError:
        return False
    if host != socket.gethostname():
        return time.time() - started_at < FOREIGN_PENDING_TTL_S
    if ticks != "-":
        return _start_ticks(pid) == ticks
    return _pid_exists(pid)


# -- what is stored -----------------------------------------------------------------------------------------

def stored_doc_id(entry: Path) -> str:
    """The document a stored entry belongs to: '<doc_id>.pdf', '<doc_id>.pdf.ocr.json',
    '<doc_id>.figures/', '<doc_id>.pdf.ocr.json1a2b.tmp' all start with it."""
    return entry.name.split(".", 1)[0]


def stored_entries(files_dir: Path) -> dict[str, list[Path]]:
    """doc_id -> the files and folders stored for it."""
    out: dict[str, list[Path]] = {}
    if files_dir.is_dir():
        for entry in files_dir.iterdir():
            out.setdefault(stored_doc_id(entry), []).append(entry)
    return out


def remove_entry(entry: Path) -> None:
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry, ignore_errors=True)
    else:
        entry.unlink(missing_ok=True)


# -- the pass ---------------------------------------------------------------------------------------------

def reconcile(store, dense, files_dir: Path, user_id: str) -> ReconcileReport:
    """Remove the orphan vectors and files of one user and clear the pending entries of dead ingests.

    `store` is rag.store.DocumentStore, `dense` rag.dense.DenseSpaces. The scan runs without locks; only
    when it finds something unknown does the pass take the write lock, look again and remove."""
    in_vectors = [(space, dense.vectors.payload_values(space.collection, "doc_id")) for space in dense.spaces]
    in_files = stored_entries(files_dir)
    seen = set().union(*(doc_ids for _, doc_ids in in_vectors), in_files)
    if seen <= store.doc_ids(user_id) and not store.pending_ingests(user_id):
        return ReconcileReport()
    report = ReconcileReport()
    with store.exclusive():
        pending = store.pending_ingests(user_id)
        stale = [p for p in pending if not owner_alive(p.owner, p.started_at)]
        keep = store.doc_ids(user_id) | {p.doc_id for p in pending if p not in stale}
        orphans = sorted(seen - keep)
        for space, doc_ids in in_vectors:
            for doc_id in doc_ids - keep:
                report.vectors += dense.chunks_in(space, doc_id)       # chunks, not sentence windows
                dense.vectors.delete(space.collection, where={"doc_id": doc_id})
        for doc_id in orphans:
            for entry in in_files.get(doc_id, []):
                remove_entry(entry)
                report.files += 1
        store.drop_pending([p.ingest_id for p in stale])
        report.stale_pending, report.doc_ids = len(stale), orphans
    if not report.clean:
        log.warning("reconciled %s: removed %d orphan vectors and %d orphan files of %d documents, "
                    "cleared %d dead ingests", user_id, report.vectors, report.files, len(orphans), len(stale))
    return report


_done: "weakref.WeakKeyDictionary[object, set[tuple[str, str]]]" = weakref.WeakKeyDictionary()
_done_lock = threading.Lock()


def reconcile_once(store, dense, files_dir: Path, user_id: str) -> ReconcileReport | None:
    """`reconcile` the first time this user is seen with this open vector store (so once per process, and
    again after the store is closed and reopened); None when it already ran. A failure is logged, never
    raised: it must not keep the person from their documents, and the next RAGTool tries again."""
    key = (str(files_dir), user_id)
    with _done_lock:
        done = _done.setdefault(dense.vectors, set())
        if key in done:
            return None
        done.add(key)
    try:
        return reconcile(store, dense, files_dir, user_id)
    except Exception:  # noqa: BLE001
        log.warning("reconciling the documents of %s failed; will try again", user_id, exc_info=True)
        with _done_lock:
            _done.get(dense.vectors, set()).discard(key)
        return None

"""Backups of the data folder's SQLite stores, and repairing a damaged store from them.

What: every SQLite store of a data folder (core.sqlite.STORES): documents.sqlite (the documents, their
passages, the BM25 index, summaries), memory/memories.sqlite3 (notes, the question history, every memory with
its embedding), study/cards.sqlite3 (cards, reviews, quiz answers), memory/graph.sqlite3 (the concept graph,
embedded mode) and memory/graph_outbox.sqlite3 (graph writes waiting for a Neo4j server). Every person's rows
are in these shared files, so one backup covers every user of the folder.

Not covered: the vectors (DATA_DIR/qdrant, or a Qdrant server; memories' vectors are served from the
embeddings memories.sqlite3 keeps, documents' are made again by `python -m rag reindex`), the stored
uploads (DATA_DIR/files: the person's own files; too big to copy every few hours), the embedding cache (a
cache: rebuilt by itself when damaged), a Neo4j server's graph, and anything outside DATA_DIR. A backup
is a copy on the same disk: it guards against a damaged file, not against losing the disk.

How: SQLite's online backup API (sqlite3.Connection.backup), a consistent copy of a store in use taken in
one read transaction (writers go on: WAL). A copy counts only once PRAGMA quick_check passes on it; a store
found damaged is not copied, so its good backups stay.

When: a minute after the first assistant of a data folder starts (models load first), then every
EVERY_HOURS hours while the app runs; `python -m assistant backup` takes one now. A store unchanged since
its last backup (same size and time of its file and its write-ahead log) is not copied again.

Where and how many: DATA_DIR/backups/<store file name>/<UTC time>.sqlite, with <UTC time>.json beside it
(the rows it holds); the last KEEP of each store are kept. A damaged file that repair replaced is kept in
DATA_DIR/backups/damaged/<UTC time>/.

The backups folder is also how the app knows a store existed (core.sqlite): a missing store file with
backups is damage, not a first run.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from core.sqlite import (MAGIC, STORES, StoreKind, damage_of, described, header_damage, quick_check, sidecars)

log = logging.getLogger(__name__)

FOLDER = "backups"
DAMAGED = "damaged"
EVERY_HOURS = 6.0
KEEP = 5
FIRST_DELAY_S = 60.0
SUFFIX = ".sqlite"


def backup_root(data_dir: Path) -> Path:
    return Path(data_dir) / FOLDER


def backups_of(data_dir: Path, kind: StoreKind) -> list[Path]:
    """The backups of one store, newest first."""
    folder = backup_root(data_dir) / kind.name
    if not folder.is_dir():
        return []
    return sorted((p for p in folder.iterdir() if p.suffix == SUFFIX and p.is_file()), reverse=True)


def _stamp(now: datetime | None = None) -> str:
    return f"{(now or datetime.now(timezone.utc)):%Y%m%dT%H%M%S.%f}Z"      # sorts as it was taken


def taken_at(backup: Path) -> str:
    """'2025-03-02 10:15 UTC', from the backup's name."""
    try:
        moment = datetime.strptime(backup.stem, "%Y%m%dT%H%M%S.%fZ")
    except ValueError:
        return backup.stem
    return f"{moment:%Y-%m-%d %H:%M} UTC"


def _meta(backup: Path) -> dict:
    try:
        return json.loads(backup.with_suffix(".json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _signature(path: Path) -> list:
    """What changes when a store is written: the size and time of its file and its write-ahead log."""
    out = []
    for p in (path, path.with_name(path.name + "-wal")):
        try:
            st = p.stat()
            out += [st.st_size, st.st_mtime_ns]
        except OSError:
            out += [0, 0]
    return out


def _counts(conn: sqlite3.Connection, kind: StoreKind) -> dict[str, int]:
    have = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in kind.counted if t in have}


def _rows(n: int, table: str) -> str:
    """'41 cards', '1 card', '1 graph entity'."""
    name = table.replace("_", " ")
    if n == 1 and name.endswith("ies"):
        name = name[:-3] + "y"
    elif n == 1 and name.endswith("s"):
        name = name[:-1]
    return f"{n} {name}"


def counts_text(counts: dict[str, int]) -> str:
    """'41 cards, 3 reviews': the first table's rows always, the others' when there are any."""
    return ", ".join(_rows(n, table) for i, (table, n) in enumerate(counts.items()) if n or not i)


def _copy(source: sqlite3.Connection, target_path: Path, kind: StoreKind) -> tuple[str | None, dict]:
    """Copy an open database into `target_path` (a new file) with the backup API; (what quick_check found
    wrong with the copy or None, its row counts)."""
    for p in (target_path, *sidecars(target_path)):
        p.unlink(missing_ok=True)
    target = sqlite3.connect(str(target_path), isolation_level=None)
    try:
        source.backup(target)
        problem = quick_check(target)
        counts = {} if problem else _counts(target, kind)
        if not problem:
            target.execute("PRAGMA journal_mode=DELETE")     # one self-contained file
    finally:
        target.close()
    return problem, counts


# -- taking backups --------------------------------------------------------------------------------------------

@dataclass
class Outcome:
    store: str             # the store's file under the data folder
    done: str              # "backed up", "unchanged", "skipped", "whole", "restored", "fixed", "set aside", ...
    sentence: str
    counts: dict = field(default_factory=dict)

    def __str__(self) -> str:
        return self.sentence


def back_up(data_dir: Path, *, keep: int = KEEP, force: bool = False) -> list[Outcome]:
    """Copy every store of the data folder that changed since its last backup (all of them with `force`) into
    DATA_DIR/backups, keeping the last `keep` of each. A damaged store is not copied (its backups stay)."""
    data_dir = Path(data_dir)
    out: list[Outcome] = []
    for kind in STORES:
        src = data_dir / kind.file
        if not src.is_file():
            continue
        reason = header_damage(src)
        if reason:
            log.warning("not backing up %s: it is damaged (%s)", src, described(reason))
            out.append(Outcome(kind.file, "skipped", f"{kind.file}: not backed up, it is damaged "
                                                     f"({described(reason)}); run `python -m assistant repair`."))
            continue
        signature = _signature(src)
        existing = backups_of(data_dir, kind)
        if existing and not force and _meta(existing[0]).get("source") == signature:
            out.append(Outcome(kind.file, "unchanged", f"{kind.file}: unchanged since the backup of "
                                                       f"{taken_at(existing[0])}."))
            continue
        root = backup_root(data_dir)
        root.mkdir(exist_ok=True)                      # never makes a data folder that was removed meanwhile
        (root / kind.name).mkdir(exist_ok=True)
        stamp = _stamp()
        final = root / kind.name / f"{stamp}{SUFFIX}"
        partial = final.with_suffix(".partial")
        try:
            source = sqlite3.connect(f"file:{src}?mode=rw", uri=True, timeout=30.0, isolation_level=None)
            try:
                problem, counts = _copy(source, partial, kind)
            finally:
                source.close()
        except sqlite3.Error as exc:
            problem, counts = str(exc), {}
        if problem:
            partial.unlink(missing_ok=True)
            log.warning("not backing up %s: it fails SQLite's integrity check (%s)", src, problem)
            out.append(Outcome(kind.file, "skipped", f"{kind.file}: not backed up, it is damaged "
                                                     f"({described(problem)}); run `python -m assistant repair`."))
            continue
        os.replace(partial, final)
        final.with_suffix(".json").write_text(json.dumps(
            {"store": kind.file, "taken": datetime.now(timezone.utc).isoformat(timespec="seconds"),
             "bytes": final.stat().st_size, "counts": counts, "source": signature}), encoding="utf-8")
        for old in backups_of(data_dir, kind)[keep:]:
            old.unlink(missing_ok=True)
            old.with_suffix(".json").unlink(missing_ok=True)
        log.info("backed up %s to %s (%s)", src, final, counts_text(counts))
        out.append(Outcome(kind.file, "backed up", f"{kind.file}: backed up ({counts_text(counts) or 'empty'}).",
                           counts))
    return out


_schedules: dict[str, threading.Event] = {}
_schedules_lock = threading.Lock()


def schedule(data_dir: Path, *, every_hours: float = EVERY_HOURS, first_delay_s: float = FIRST_DELAY_S) -> None:
    """Back up this data folder `first_delay_s` from now and every `every_hours` after, in a background
    thread, once per data folder per process (later calls do nothing)."""
    key = str(Path(data_dir).resolve())
    with _schedules_lock:
        if key in _schedules:
            return
        stop = _schedules[key] = threading.Event()
    threading.Thread(target=_every, args=(Path(key), stop, every_hours, first_delay_s), daemon=True,
                     name="backups").start()


def _every(data_dir: Path, stop: threading.Event, every_hours: float, first_delay_s: float) -> None:
    wait = first_delay_s
    while not stop.wait(wait):
        if not data_dir.is_dir():
            return
        try:
            back_up(data_dir)
        except Exception:  # noqa: BLE001 - a failed backup is logged; the next one tries again
            log.exception("backing up %s failed", data_dir)
        wait = every_hours * 3600


def stop_schedules() -> None:
    with _schedules_lock:
        stops = list(_schedules.values())
        _schedules.clear()
    for stop in stops:
        stop.set()


# -- repairing -------------------------------------------------------------------------------------------------

def _set_aside(path: Path, folder: Path) -> Path:
    """Move a damaged store and its write-ahead log into `folder` (kept, never deleted); the new path."""
    folder.mkdir(parents=True, exist_ok=True)
    for p in (path, *sidecars(path)):
        if p.exists():
            shutil.move(str(p), str(folder / p.name))
    return folder / path.name


def _put_in_place(source: sqlite3.Connection, path: Path, kind: StoreKind) -> tuple[str | None, dict]:
    """Write the database open as `source` to `path` (whose old file and log are gone), whole or not at all."""
    tmp = path.with_name(f".{path.name}.restoring")
    problem, counts = _copy(source, tmp, kind)
    if problem:
        tmp.unlink(missing_ok=True)
        return problem, {}
    os.replace(tmp, path)
    return None, counts


def _fixed_header(aside: Path, path: Path, kind: StoreKind) -> dict | None:
    """When only the 16 bytes naming the file as SQLite are garbled (the rest of the header is sound), put
    them back on a copy; the store at `path` with nothing lost, or None when that is not enough."""
    with open(aside, "rb") as f:
        head = f.read(100)
    if len(head) < 100 or head[21:24] != b"\x40\x20\x20":      # fixed payload fractions: a real header
        return None
    trial = aside.with_name(aside.name + ".header-fixed")
    shutil.copyfile(aside, trial)
    wal = aside.with_name(aside.name + "-wal")
    if wal.exists():
        shutil.copyfile(wal, trial.with_name(trial.name + "-wal"))
    with open(trial, "r+b") as f:
        f.write(MAGIC)
    try:
        if damage_of(trial):
            return None
        source = sqlite3.connect(str(trial), isolation_level=None)
        try:
            problem, counts = _put_in_place(source, path, kind)
        finally:
            source.close()
        return None if problem else counts
    except sqlite3.Error:
        return None
    finally:
        for p in (trial, *sidecars(trial)):
            p.unlink(missing_ok=True)


def restore_backup(data_dir: Path, kind: StoreKind, backup: Path) -> dict:
    """Put `backup` in place of the store (whose file and log must be gone); its row counts."""
    source = sqlite3.connect(f"file:{backup}?mode=ro", uri=True)
    try:
        problem, counts = _put_in_place(source, Path(data_dir) / kind.file, kind)
    finally:
        source.close()
    if problem:
        raise sqlite3.DatabaseError(problem)
    return counts


def _good_backup(data_dir: Path, kind: StoreKind, chosen: str | None = None) -> tuple[Path | None, list[Path]]:
    """The newest backup that passes quick_check (or the one named `chosen`), and the damaged ones met."""
    bad = []
    for backup in backups_of(data_dir, kind):
        if chosen and chosen not in backup.stem:
            continue
        if damage_of(backup) is None:
            return backup, bad
        bad.append(backup)
    return None, bad


def _keep_unlisted_files(data_dir: Path, aside_dir: Path) -> int:
    """After documents.sqlite was restored: the stored files of documents it does not list (loaded after the
    backup) are moved into `aside_dir` rather than left for rag.reconcile to delete; how many documents."""
    from rag.reconcile import stored_doc_id
    conn = sqlite3.connect(f"file:{Path(data_dir) / 'documents.sqlite'}?mode=ro", uri=True)
    try:
        listed = {r[0] for r in conn.execute("SELECT doc_id FROM documents UNION SELECT doc_id FROM pending_ingests")}
    finally:
        conn.close()
    moved: set[str] = set()
    files = Path(data_dir) / "files"
    for collection in (files.iterdir() if files.is_dir() else []):
        if not collection.is_dir() or not collection.name.startswith("rag"):
            continue
        for entry in list(collection.iterdir()):
            doc_id = stored_doc_id(entry)
            if doc_id not in listed:
                target = aside_dir / "files" / collection.name
                target.mkdir(parents=True, exist_ok=True)
                shutil.move(str(entry), str(target / entry.name))
                moved.add(f"{collection.name}/{doc_id}")
    return len(moved)


def _files_kept(data_dir: Path, kind: StoreKind, aside_dir: Path, sentence: str) -> str:
    """The sentence of a restore, ended; for documents.sqlite, with the stored files set aside (see below)."""
    if kind.name == "documents.sqlite":
        n = _keep_unlisted_files(data_dir, aside_dir)
        if n:
            sentence += (f"; the stored files of {_rows(n, 'documents')} loaded after the backup were moved to "
                         f"{aside_dir / 'files'}: load {'it' if n == 1 else 'them'} again")
    return sentence + "."


def repair(data_dir: Path, *, embedding_cache: Path | None = None) -> list[Outcome]:
    """Check every store; each damaged one is set aside (kept) and replaced: by itself with its header put
    back when only that was garbled, else by its newest backup that passes quick_check, else (no good backup)
    it starts again empty. A damaged embedding cache is removed (it is rebuilt). What was done, one sentence
    a store."""
    data_dir = Path(data_dir)
    out: list[Outcome] = []
    stamp = _stamp()
    aside_dir = backup_root(data_dir) / DAMAGED / stamp
    for kind in STORES:
        path = data_dir / kind.file
        if path.exists():
            reason = damage_of(path)
        else:
            reason = "missing" if backups_of(data_dir, kind) else None
        if reason is None:
            if path.exists():
                out.append(Outcome(kind.file, "whole", f"{kind.file}: whole, nothing to do."))
            continue
        log.info("repairing %s: %s", path, described(reason))
        aside = _set_aside(path, aside_dir) if path.exists() else None
        kept = f"; the damaged file is kept in {aside_dir}" if aside else ""
        if aside is not None and reason == "header":
            counts = _fixed_header(aside, path, kind)
            if counts is not None:
                out.append(Outcome(kind.file, "fixed", f"{kind.file}: {described(reason)}; put its header back, "
                                                       f"nothing lost ({counts_text(counts)}){kept}.", counts))
                continue
        backup, bad = _good_backup(data_dir, kind)
        if backup is not None:
            counts = restore_backup(data_dir, kind, backup)
            sentence = (f"{kind.file}: {described(reason)}; restored the backup of {taken_at(backup)} "
                        f"({counts_text(counts) or 'empty'}); changes made after it are lost{kept}")
            out.append(Outcome(kind.file, "restored", _files_kept(data_dir, kind, aside_dir, sentence), counts))
            continue
        for b in bad:     # damaged backups would make the missing store look as if it existed
            _set_aside(b, aside_dir / "bad-backups" / kind.name)
            b.with_suffix(".json").unlink(missing_ok=True)
        out.append(Outcome(kind.file, "set aside",
                           f"{kind.file}: {described(reason)}; there is no good backup to restore, so it starts "
                           f"again empty{kept}."))
    cache = Path(embedding_cache) if embedding_cache else data_dir / "embedding_cache.sqlite"
    if cache.exists() and damage_of(cache):
        for p in (cache, *sidecars(cache)):
            p.unlink(missing_ok=True)
        out.append(Outcome(cache.name, "removed", f"{cache.name}: damaged; removed (the cache is rebuilt as "
                                                  "passages are embedded again)."))
    return out


def restore(data_dir: Path, kind: StoreKind, chosen: str | None = None) -> Outcome:
    """Put a backup (the newest good one, or the one whose time starts with `chosen`) in place of a store,
    damaged or not (e.g. after deleting cards by mistake); the current file is set aside first."""
    data_dir = Path(data_dir)
    backup, _ = _good_backup(data_dir, kind, chosen)
    if backup is None:
        which = f"backup of it taken at {chosen}" if chosen else "good backup of it"
        return Outcome(kind.file, "none", f"{kind.file}: there is no {which}; nothing was changed.")
    aside_dir = backup_root(data_dir) / DAMAGED / _stamp()
    path = data_dir / kind.file
    aside = _set_aside(path, aside_dir) if path.exists() else None
    counts = restore_backup(data_dir, kind, backup)
    kept = f"; the file it replaced is kept in {aside_dir}" if aside else ""
    sentence = f"{kind.file}: restored the backup of {taken_at(backup)} ({counts_text(counts) or 'empty'}){kept}"
    return Outcome(kind.file, "restored", _files_kept(data_dir, kind, aside_dir, sentence), counts)


def listing(data_dir: Path) -> list[str]:
    """One line per backup, newest first per store."""
    lines = []
    for kind in STORES:
        for backup in backups_of(data_dir, kind):
            lines.append(f"{kind.file}  {backup.stem}  {taken_at(backup)}  "
                         f"{counts_text(_meta(backup).get('counts', {})) or '-'}")
    return lines

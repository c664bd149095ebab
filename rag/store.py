"""The document store: SQLite (WAL) rows for documents and chunks, plus a per-user FTS5 index for BM25.

FTS5 gives a persisted, incremental BM25 index (no rebuild per query or per upload). Its tokenizer
cannot segment Chinese, so we store our own tokens (jieba for CJK) space-joined and query with them.
Each user has their own FTS table, so BM25 statistics and results never mix users.

One connection writes (under a lock, each change one transaction); reads use connections of their own
from a small pool, so with WAL a reader sees the last committed state and never a document whose chunks
are still being inserted, and never waits for a long write.

`pending_ingests` records each ingest in flight before it writes a vector or a file; the row goes in
the same transaction as the document's rows. rag.reconcile keeps what a live ingest is writing and
removes what a dead one left.
"""
from __future__ import annotations

import json
import logging
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from core.errors import DiskFull
from core.sqlite import DOCUMENTS, another_connection, is_damaged, open_database
from core.text import bm25_tokens, one_edit_apart, stem, with_fiscal_years
from rag.chunk import document_context, index_fields
from rag.types import Chunk

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    user_id TEXT NOT NULL, doc_id TEXT NOT NULL, name TEXT NOT NULL, title TEXT NOT NULL,
    file_path TEXT, source_format TEXT, pages INTEGER, chunks INTEGER, size_bytes INTEGER,
    warnings TEXT, created_at REAL NOT NULL, PRIMARY KEY (user_id, doc_id));
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY, user_id TEXT NOT NULL, doc_id TEXT NOT NULL, chunk_id TEXT NOT NULL,
    ordinal INTEGER, text TEXT NOT NULL, heading_path TEXT, page_start INTEGER, page_end INTEGER,
    char_start INTEGER, char_end INTEGER, tokens INTEGER, page_breaks TEXT, context_prefix TEXT,
    UNIQUE (user_id, chunk_id));
CREATE INDEX IF NOT EXISTS chunks_by_doc ON chunks (user_id, doc_id);
CREATE TABLE IF NOT EXISTS fts_tables (user_id TEXT PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS summaries (
    user_id TEXT NOT NULL, doc_id TEXT NOT NULL, scope TEXT NOT NULL, method TEXT NOT NULL, text TEXT NOT NULL,
    created_at REAL NOT NULL, PRIMARY KEY (user_id, doc_id, scope, method));
CREATE TABLE IF NOT EXISTS pending_ingests (
    ingest_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, doc_id TEXT NOT NULL, owner TEXT NOT NULL,
    started_at REAL NOT NULL);
"""
# BM25 tables of this layout (a heading and a body field, words stemmed by core.text.bm25_tokens) end with
# this; a table without it was written by an older version and is rebuilt when the store opens.
FTS_SUFFIX = "_hb"
# What SQLite says when a reader reloads a schema another connection is changing: with ten people asking at once,
# one person's first question (its term counts' table) made two others' searches fail with the first.
SCHEMA_RACE = ("vtable constructor failed", "database schema has changed")
SCHEMA_RACE_RETRIES = 3
MAX_COUNTED_TERMS = 64   # term_document_counts looks up at most this many distinct terms of a question
# a shorter word one letter off a library word is as likely another word ("qnorm" beside R's "qqnorm", "cat"/"car")
MIN_RESPELLED_LETTERS = 6


def _begins_words(term: str, word_prefix: int) -> bool:
    """Whether a query term is searched as the start of words too: a reader writes "host" and "user" where a manual
    writes "hostname" and "username" (closed compounds). Only English words long enough not to begin everything."""
    return bool(word_prefix) and len(term) >= word_prefix and term.isascii() and term.isalpha()


def _quoted(tokens: list[str]) -> str:
    """Tokens as one FTS5 phrase (adjacent, in order)."""
    return '"' + " ".join(tokens).replace('"', '""') + '"'


def _bm25_fields(context: str, heading_path: list[str], text: str, prefix: str) -> tuple[str, str]:
    """The (heading, body) tokens a chunk is indexed with."""
    where, what = index_fields(context, heading_path, text, prefix)
    return " ".join(bm25_tokens(where)), " ".join(bm25_tokens(what))


# Seconds a write waits for another process's write lock (e.g. a reconcile pass removing orphans).
BUSY_TIMEOUT_S = 30.0


@dataclass
class DocumentRecord:
    doc_id: str
    name: str
    title: str
    file_path: str | None
    source_format: str
    pages: int
    chunks: int
    size_bytes: int
    warnings: list[str]
    created_at: float


@dataclass
class PendingIngest:
    ingest_id: str
    doc_id: str
    owner: str          # the process writing it (rag.reconcile.process_identity)
    started_at: float


class DocumentStore:
    def __init__(self, path: Path):
        self._path = path
        # A damaged file opens as a connection that refuses every use in one sentence (core.sqlite): the
        # store exists, so notes and cards go on while the documents wait for `python -m assistant repair`.
        self._conn = open_database(path, SCHEMA, kind=DOCUMENTS, timeout=BUSY_TIMEOUT_S, unavailable=(
            f"Cannot open the documents database {path}; check the data folder is writable."))
        if not is_damaged(self._conn):
            self._migrate()
        self._lock = threading.RLock()
        self._idle_readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()

    @property
    def damaged(self) -> bool:
        return is_damaged(self._conn)

    def _connect(self) -> sqlite3.Connection:
        return another_connection(self._conn, timeout=BUSY_TIMEOUT_S)

    def _read(self, sql: str, params=()) -> list[tuple]:
        """All rows of one query, on a reader connection of its own: the last committed state. A read that
        meets another connection changing the schema (a new person's BM25 table) is made again on a fresh
        connection (SCHEMA_RACE)."""
        for attempt in range(SCHEMA_RACE_RETRIES + 1):
            with self._readers_lock:
                conn = self._idle_readers.pop() if self._idle_readers else None
            if conn is None:
                conn = self._connect()
            try:
                rows = conn.execute(sql, params).fetchall()
            except sqlite3.OperationalError as exc:
                conn.close()
                if attempt == SCHEMA_RACE_RETRIES or not any(s in str(exc) for s in SCHEMA_RACE):
                    raise
                log.info("a read met a schema change (%s); reading again", exc)
                time.sleep(0.05 * (attempt + 1))
                continue
            with self._readers_lock:
                self._idle_readers.append(conn)
            return rows
        raise AssertionError("unreachable")

    def _migrate(self) -> None:
        """Bring a store written by an older version up to this schema (columns are only ever added)."""
        columns = {row[1] for row in self._conn.execute("PRAGMA table_info(chunks)")}
        if "page_breaks" not in columns:
            self._conn.execute("ALTER TABLE chunks ADD COLUMN page_breaks TEXT")
        if "context_prefix" not in columns:
            self._conn.execute("ALTER TABLE chunks ADD COLUMN context_prefix TEXT")
        self._rebuild_old_indexes()
        for (name,) in self._conn.execute("SELECT name FROM fts_tables").fetchall():
            self._conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {name}_vocab USING fts5vocab({name}, 'row')")

    # -- documents -----------------------------------------------------------------------------
    def get_document(self, user_id: str, doc_id: str) -> DocumentRecord | None:
        rows = self._read(
            "SELECT doc_id, name, title, file_path, source_format, pages, chunks, size_bytes, warnings, "
            "created_at FROM documents WHERE user_id=? AND doc_id=?", (user_id, doc_id))
        return self._record(rows[0]) if rows else None

    def list_documents(self, user_id: str) -> list[DocumentRecord]:
        rows = self._read(
            "SELECT doc_id, name, title, file_path, source_format, pages, chunks, size_bytes, warnings, "
            "created_at FROM documents WHERE user_id=? ORDER BY created_at", (user_id,))
        return [self._record(r) for r in rows]

    def doc_ids(self, user_id: str) -> set[str]:
        return {r[0] for r in self._read("SELECT doc_id FROM documents WHERE user_id=?", (user_id,))}

    @staticmethod
    def _record(row) -> DocumentRecord:
        return DocumentRecord(row[0], row[1], row[2], row[3], row[4] or "", row[5] or 0, row[6] or 0,
                              row[7] or 0, json.loads(row[8] or "[]"), row[9])

    def add_document(self, user_id: str, record: DocumentRecord, chunks: list[Chunk],
                     ingest_id: str | None = None) -> None:
        """Document row, chunk rows and BM25 entries in ONE transaction: all land or none do. The ingest's
        pending entry (`ingest_id`) goes in the same transaction: the document is never both or neither."""
        fts = self._fts_table(user_id, create=True)
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.execute(
                    "INSERT INTO documents VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (user_id, record.doc_id, record.name, record.title, record.file_path, record.source_format,
                     record.pages, record.chunks, record.size_bytes, json.dumps(record.warnings, ensure_ascii=False),
                     record.created_at or time.time()))
                context = document_context(record.name, record.title)
                for chunk in chunks:
                    cur = self._conn.execute(
                        "INSERT INTO chunks (user_id, doc_id, chunk_id, ordinal, text, heading_path, page_start, "
                        "page_end, char_start, char_end, tokens, page_breaks, context_prefix) "
                        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (user_id, chunk.doc_id, chunk.chunk_id, chunk.ordinal, chunk.text,
                         json.dumps(chunk.heading_path, ensure_ascii=False), chunk.page_start, chunk.page_end,
                         chunk.char_start, chunk.char_end, chunk.token_count, json.dumps(chunk.page_breaks),
                         chunk.context_prefix))
                    self._conn.execute(f"INSERT INTO {fts} (rowid, heading, body) VALUES (?, ?, ?)",
                                       (cur.lastrowid, *_bm25_fields(context, chunk.heading_path, chunk.text,
                                                                  chunk.context_prefix)))
                if ingest_id:
                    self._conn.execute("DELETE FROM pending_ingests WHERE ingest_id=?", (ingest_id,))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def remove_document(self, user_id: str, doc_id: str) -> bool:
        fts = self._fts_table(user_id, create=False)
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                if fts:
                    self._conn.execute(
                        f"DELETE FROM {fts} WHERE rowid IN (SELECT id FROM chunks WHERE user_id=? AND doc_id=?)",
                        (user_id, doc_id))
                self._conn.execute("DELETE FROM chunks WHERE user_id=? AND doc_id=?", (user_id, doc_id))
                self._conn.execute("DELETE FROM summaries WHERE user_id=? AND doc_id=?", (user_id, doc_id))
                n = self._conn.execute("DELETE FROM documents WHERE user_id=? AND doc_id=?",
                                       (user_id, doc_id)).rowcount
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        return n > 0

    # -- chunks ---------------------------------------------------------------------------------
    def get_chunks(self, user_id: str, chunk_ids: list[str]) -> dict[str, Chunk]:
        out: dict[str, Chunk] = {}
        for i in range(0, len(chunk_ids), 500):
            part = chunk_ids[i:i + 500]
            rows = self._read(
                "SELECT chunk_id, doc_id, ordinal, text, heading_path, page_start, page_end, char_start, char_end, "
                f"tokens, page_breaks, context_prefix FROM chunks WHERE user_id=? AND chunk_id IN ({','.join('?' * len(part))})",
                [user_id, *part])
            out.update((r[0], self._chunk(r)) for r in rows)
        return out

    def texts_holding(self, user_id: str, literal: str, limit: int, doc_ids: list[str] | None = None) -> dict[str, str]:
        """{chunk_id: text} of at most `limit` of this user's chunks whose text holds `literal` as written (quoted
        syntax, rag.syntax), in document order."""
        only = f"AND doc_id IN ({','.join('?' * len(doc_ids))})" if doc_ids else ""
        rows = self._read(f"SELECT chunk_id, text FROM chunks WHERE user_id=? AND instr(text, ?) > 0 {only} "
                          "ORDER BY doc_id, ordinal LIMIT ?", [user_id, literal, *(doc_ids or []), limit])
        return dict(rows)

    def chunks_of(self, user_id: str, doc_id: str) -> list[Chunk]:
        rows = self._read(
            "SELECT chunk_id, doc_id, ordinal, text, heading_path, page_start, page_end, char_start, char_end, "
            "tokens, page_breaks, context_prefix FROM chunks WHERE user_id=? AND doc_id=? ORDER BY ordinal", (user_id, doc_id))
        return [self._chunk(r) for r in rows]

    @staticmethod
    def _chunk(r) -> Chunk:
        return Chunk(chunk_id=r[0], doc_id=r[1], ordinal=r[2], text=r[3], heading_path=json.loads(r[4] or "[]"),
                     page_start=r[5], page_end=r[6], char_start=r[7], char_end=r[8], token_count=r[9],
                     page_breaks=[tuple(b) for b in json.loads(r[10] or "[]")], context_prefix=r[11] or "")

    def count_chunks(self, user_id: str) -> int:
        return self._read("SELECT COUNT(*) FROM chunks WHERE user_id=?", (user_id,))[0][0]

    # -- summaries (rag.summary): what a model wrote about a scope, kept so asking again is instant ---------
    def get_summary(self, user_id: str, doc_id: str, scope: str, method: str) -> str | None:
        rows = self._read("SELECT text FROM summaries WHERE user_id=? AND doc_id=? AND scope=? AND method=?",
                          (user_id, doc_id, scope, method))
        return rows[0][0] if rows else None

    def put_summary(self, user_id: str, doc_id: str, scope: str, method: str, text: str) -> None:
        with self._lock:
            if self.get_document(user_id, doc_id) is None:
                return      # removed meanwhile: nothing to keep a summary of
            self._conn.execute("INSERT OR REPLACE INTO summaries VALUES (?, ?, ?, ?, ?, ?)",
                               (user_id, doc_id, scope, method, text, time.time()))

    # -- BM25 -------------------------------------------------------------------------------------
    def bm25_search(self, user_id: str, query: str, limit: int, doc_ids: list[str] | None = None,
                    heading_weight: float = 1.0, word_prefix: int = 0) -> list[tuple[str, float]]:
        """(chunk_id, score) best first; score = -bm25 so higher is better. `doc_ids` limits the search;
        `heading_weight` is how much a word of the chunk's document title and section path counts against
        one of its text; an English word of `word_prefix` letters or more (0: none) also finds the words it
        begins ("host" finds "hostname")."""
        fts = self._fts_table(user_id, create=False)
        terms = with_fiscal_years(list(dict.fromkeys(bm25_tokens(query))))
        if not fts or not terms:
            return []
        return self._ranked(fts, " OR ".join(_quoted([t]) + ("*" if _begins_words(t, word_prefix) else "")
                                             for t in terms[:64]), limit, doc_ids, heading_weight)

    def heading_search(self, user_id: str, query: str, phrases: list[list[str]], limit: int,
                       doc_ids: list[str] | None = None, excluded: list[list[str]] | None = None
                       ) -> list[tuple[str, float]]:
        """bm25_search among the chunks whose document title or section path holds one of `phrases`
        (bm25_tokens, adjacent) and none of `excluded`."""
        fts = self._fts_table(user_id, create=False)
        terms = with_fiscal_years(list(dict.fromkeys(bm25_tokens(query))))
        if not fts or not terms or not phrases:
            return []
        match = (f"heading : ({' OR '.join(_quoted(p) for p in phrases)}) AND "
                 f"({' OR '.join(_quoted([t]) for t in terms[:64])})")
        if excluded:
            match += f" NOT heading : ({' OR '.join(_quoted(p) for p in excluded)})"
        return self._ranked(fts, match, limit, doc_ids)

    def _ranked(self, fts: str, match: str, limit: int, doc_ids: list[str] | None,
                heading_weight: float = 1.0) -> list[tuple[str, float]]:
        """(chunk_id, -bm25) of an FTS5 match expression, best first, optionally within documents."""
        only = f"AND c.doc_id IN ({','.join('?' * len(doc_ids))})" if doc_ids else ""
        rows = self._read(
            f"SELECT c.chunk_id, -bm25({fts}, ?, 1.0) AS s FROM {fts} JOIN chunks c ON c.id = {fts}.rowid "
            f"WHERE {fts} MATCH ? {only} ORDER BY s DESC LIMIT ?",
            (float(heading_weight), match, *(doc_ids or []), limit))
        return [(r[0], float(r[1])) for r in rows]

    def term_document_counts(self, user_id: str, terms: list[str]) -> tuple[int, dict[str, int]]:
        """(number of this user's chunks, {term: chunks containing its stem}) for search_tokens terms: the IDF
        that tells a question's rare words from its common ones (rag.evidence)."""
        n = self.count_chunks(user_id)
        fts = self._fts_table(user_id, create=False)
        terms = list(dict.fromkeys(t for t in terms if t))[:MAX_COUNTED_TERMS]
        if not fts or not terms:
            return n, {}
        vocab = f"{fts}_vocab"
        with self._lock:
            try:
                self._conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {vocab} USING fts5vocab({fts}, 'row')")
            except DiskFull:   # made at a user's first question: on a full disk, that one goes without IDF
                log.warning("no room to make the term counts of one user; this question is weighed without them")
                return n, {}
        counts = {}
        for term in terms:   # one indexed lookup each; an IN (...) list would scan the whole vocabulary
            rows = self._read(f"SELECT doc FROM {vocab} WHERE term = ?", (stem(term),))
            if rows:
                counts[term] = int(rows[0][0])
        return n, counts

    def spelled_alike(self, user_id: str, word: str) -> str | None:
        """The word of this person's chunks that `word` (a word no chunk holds) is a slip for: one letter off
        its stem ("recyling" -> "recycling"), the most used such word, as the chunk writes it; None when no
        indexed word is that close. Words are scanned from the same first letter on (typos rarely hit it)."""
        fts = self._fts_table(user_id, create=False)
        target = stem(word.lower())
        if not fts or len(word) < MIN_RESPELLED_LETTERS:
            return None
        rows = self._read(f"SELECT term, doc FROM {fts}_vocab WHERE term >= ? AND term < ? "
                          "AND length(term) BETWEEN ? AND ?",
                          (target[0], chr(ord(target[0]) + 1), len(target) - 1, len(target) + 1))
        close = sorted(((int(n), term) for term, n in rows if one_edit_apart(target, term)), reverse=True)
        if not close:
            return None
        found = close[0][1]
        texts = self._read(f"SELECT c.text FROM {fts} JOIN chunks c ON c.id = {fts}.rowid WHERE {fts} MATCH ? "
                           "LIMIT 1", (_quoted([found]),))
        for surface in re.findall(r"[A-Za-z]+", texts[0][0] if texts else ""):
            if stem(surface.lower()) == found:
                return surface.lower()
        return None

    def _fts_table(self, user_id: str, *, create: bool) -> str | None:
        rows = self._read("SELECT name FROM fts_tables WHERE user_id=?", (user_id,))
        if rows:
            return rows[0][0]
        if not create:
            return None
        name = "fts_" + uuid.uuid5(uuid.NAMESPACE_URL, user_id).hex + FTS_SUFFIX
        with self._lock:
            self._create_fts(name)
            self._conn.execute("INSERT OR IGNORE INTO fts_tables VALUES (?, ?)", (user_id, name))
        return name

    def _create_fts(self, name: str) -> None:
        """A person's BM25 table and its term counts (made with it, not at their first question: a schema change
        while others read is what SCHEMA_RACE is about)."""
        self._conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {name} USING fts5(heading, body, "
                           "tokenize='unicode61 remove_diacritics 0')")
        self._conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {name}_vocab USING fts5vocab({name}, 'row')")

    def _rebuild_old_indexes(self) -> None:
        """A BM25 table written by an older version (one field, words not stemmed) is rebuilt from the
        stored chunk rows, one transaction per user: nothing is converted or embedded again."""
        for user_id, old in self._conn.execute("SELECT user_id, name FROM fts_tables").fetchall():
            if old.endswith(FTS_SUFFIX):
                continue
            new = old + FTS_SUFFIX
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._create_fts(new)
                names = {d: document_context(n, t) for d, n, t in self._conn.execute(
                    "SELECT doc_id, name, title FROM documents WHERE user_id=?", (user_id,))}
                rows = self._conn.execute(
                    "SELECT id, doc_id, text, heading_path, context_prefix FROM chunks WHERE user_id=?",
                    (user_id,)).fetchall()
                self._conn.executemany(
                    f"INSERT INTO {new} (rowid, heading, body) VALUES (?, ?, ?)",
                    [(rowid, *_bm25_fields(names.get(doc_id, ""), json.loads(path or "[]"), text, prefix or ""))
                     for rowid, doc_id, text, path, prefix in rows])
                self._conn.execute("UPDATE fts_tables SET name=? WHERE user_id=?", (new, user_id))
                self._conn.execute(f"DROP TABLE IF EXISTS {old}_vocab")
                self._conn.execute(f"DROP TABLE {old}")
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            log.info("rebuilt the BM25 index of one user (%d chunks)", len(rows))

    def clear_user(self, user_id: str) -> None:
        fts = self._fts_table(user_id, create=False)
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                if fts:
                    self._conn.execute(f"DELETE FROM {fts}")
                self._conn.execute("DELETE FROM chunks WHERE user_id=?", (user_id,))
                self._conn.execute("DELETE FROM summaries WHERE user_id=?", (user_id,))
                self._conn.execute("DELETE FROM documents WHERE user_id=?", (user_id,))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    # -- ingests in flight, and holding writers off (rag.reconcile) -----------------------------------
    def begin_ingest(self, user_id: str, doc_id: str, owner: str) -> str:
        """Record an ingest before it writes any vector or file; returns its id."""
        ingest_id = uuid.uuid4().hex
        with self._lock:
            self._conn.execute("INSERT INTO pending_ingests VALUES (?,?,?,?,?)",
                               (ingest_id, user_id, doc_id, owner, time.time()))
        return ingest_id

    def end_ingest(self, ingest_id: str) -> None:
        """Forget a pending ingest (a no-op once its document's rows committed, which removed it)."""
        self.drop_pending([ingest_id])

    def pending_ingests(self, user_id: str) -> list[PendingIngest]:
        rows = self._read("SELECT ingest_id, doc_id, owner, started_at FROM pending_ingests WHERE user_id=?",
                          (user_id,))
        return [PendingIngest(*r) for r in rows]

    def drop_pending(self, ingest_ids: list[str]) -> None:
        if not ingest_ids:
            return
        with self._lock:
            self._conn.execute(f"DELETE FROM pending_ingests WHERE ingest_id IN ({','.join('?' * len(ingest_ids))})",
                               list(ingest_ids))

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the database's write lock for the block: no writer, in this process or another, can commit
        (e.g. register an ingest) meanwhile. Writes made in the block commit together at its end."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def close(self) -> None:
        with self._readers_lock:
            readers, self._idle_readers = self._idle_readers, []
        for conn in readers:
            conn.close()
        self._conn.close()

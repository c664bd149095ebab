"""Crash safety, proven with kill -9 on real processes, and the concurrency around it.

An ingest (`python -m rag ingest --progress`, real conversion, embedding model, SQLite and local Qdrant)
is killed during conversion, during embedding after some batches, and right after its rows commit; each
time a new RAGTool on the same data folder (what a restart makes) must find nothing listed that cannot be
searched, no vector or file of an unlisted document, and must take the same file again. A burst of note
writes is killed too: every note whose id was printed (its add returned) must be there after; before
that, while it holds the folder, a second process is refused in one sentence. Readers never see half a
document; memory consolidation run twice promotes nothing twice.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from core.settings import Settings
from core.vectors import close_vector_store
from rag.tool import RAGTool
from tests.reliability.library import assert_consistent, large_pdf, library_state
from tests.reliability.note_writer import note_text

ROOT = Path(__file__).resolve().parents[2]
USER = "crash"
# ~one chunk a page, 16 a batch: a 48-page book has several batches, each quick, and little to wait for
CHUNKS = {"CHUNK_SIZE": "80", "CHUNK_OVERLAP": "10", "EMBEDDING_BATCH_SIZE": "16"}
BATCH = int(CHUNKS["EMBEDDING_BATCH_SIZE"])
_PROGRESS = re.compile(r"^([\w-]+): (\d+)/(\d+)$")


def environment(data_dir: Path) -> dict:
    env = {**os.environ, "DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1", "LLM_BACKEND": "none",
           "PYTHONUNBUFFERED": "1", **CHUNKS}
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "QDRANT_URL", "NEO4J_URI", "EMBEDDING_BASE_URL",
                 "EMBEDDING_CACHE"):
        env.pop(name, None)
    return env


def settings_for(data_dir: Path) -> Settings:
    return Settings(_env_file=None, data_dir=data_dir, llm_backend="none",
                    chunk_size=int(CHUNKS["CHUNK_SIZE"]), chunk_overlap=int(CHUNKS["CHUNK_OVERLAP"]))


_started: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def no_process_left():
    """A failed test must not leave a process behind (still running, or stopped by SIGSTOP)."""
    yield
    for proc in _started:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    _started.clear()


class Running:
    """A real process whose stdout lines and stderr progress ("embed: 64/132") are collected as they come."""

    def __init__(self, args: list[str], data_dir: Path):
        self.proc = subprocess.Popen([sys.executable, *args], cwd=ROOT, env=environment(data_dir),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _started.append(self.proc)
        self.lines: list[str] = []
        self.events: list[tuple[str, int, int]] = []
        self.errors: list[str] = []
        self._changed = threading.Condition()
        self._readers = [threading.Thread(target=self._read_stdout, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for reader in self._readers:
            reader.start()

    def _read_stdout(self) -> None:
        for raw in self.proc.stdout:
            with self._changed:
                self.lines.append(raw.decode("utf-8", "replace").rstrip("\n"))
                self._changed.notify_all()

    def _read_stderr(self) -> None:
        pending = ""
        while chunk := self.proc.stderr.read1(4096):
            pending += chunk.decode("utf-8", "replace")
            *pieces, pending = re.split(r"[\r\n]", pending)
            with self._changed:
                for piece in pieces:
                    match = _PROGRESS.match(piece.strip())
                    if match:
                        self.events.append((match[1], int(match[2]), int(match[3])))
                    elif piece.strip():
                        self.errors.append(piece.strip())
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def last(self, stage: str) -> tuple[int, int] | None:
        return next(((d, t) for s, d, t in reversed(self.events) if s == stage), None)

    def wait_for(self, condition, timeout: float = 300) -> bool:
        """Wait until condition(self) holds (True) or the process ended without it (False). The timeout
        only guards against a hung run; nothing is asserted about how long it took."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not condition(self):
                if self.proc.poll() is not None and not any(r.is_alive() for r in self._readers):
                    return condition(self)
                if time.monotonic() > deadline:
                    return False
                self._changed.wait(0.2)
        return True

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.finish()

    def finish(self, timeout: float = 300) -> int:
        """Wait for the process to end and for its output to be read; its exit status."""
        code = self.proc.wait(timeout=timeout)
        for reader in self._readers:
            reader.join(timeout=10)
        return code

    def where(self) -> str:
        stage, done, total = self.events[-1] if self.events else ("start", 0, 0)
        return f"{stage} {done}/{total}"


def ingest(pdf: Path, data_dir: Path) -> Running:
    return Running(["-m", "rag", "ingest", str(pdf), "--user", USER, "--progress"], data_dir)


def restart(settings: Settings):
    """What a restarted app sees: a new RAGTool on the folder (its reconcile pass runs first), and the
    library counted from every store. The folder is released again for the next process."""
    try:
        tool = RAGTool(USER, settings)
        return tool.reconciled, library_state(tool)
    finally:
        close_vector_store(settings)


def removed(report) -> str:
    return (f"restart removed {report.vectors} orphan vectors, {report.files} orphan files, "
            f"{report.stale_pending} dead ingest entries")


@pytest.fixture(scope="module")
def survey_pdf(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("crash") / "survey.pdf"
    path.write_bytes(large_pdf(pages=48))
    return path


# -- kill -9 during ingest ----------------------------------------------------------------------------------

@pytest.mark.slow
def test_ingest_killed_at_each_stage_restarts_clean_and_takes_the_file_again(survey_pdf, tmp_path, reliability):
    data = tmp_path / "data"
    settings = settings_for(data)

    run = ingest(survey_pdf, data)
    assert run.wait_for(lambda r: (r.last("pages") or (0, 0))[0] >= 5), run.errors
    run.kill()
    assert not run.last("embed"), "the kill meant for conversion came after it"
    report, state = restart(settings)
    assert_consistent(state)
    assert state.documents == []
    reliability.record("Crash", "kill -9 during conversion",
                       f"last progress seen: {run.where()}; {removed(report)}; then {state.summary()}")

    run = ingest(survey_pdf, data)
    assert run.wait_for(lambda r: (e := r.last("embed")) is not None and BATCH <= e[0] < e[1]), run.errors
    run.kill()
    killed_at = run.where()
    report, state = restart(settings)
    assert report.vectors >= BATCH and report.files >= 1 and report.stale_pending == 1, report
    assert_consistent(state)
    assert state.documents == [] and state.vectors == 0 and state.files == []
    reliability.record("Crash", "kill -9 during embedding, after some batches",
                       f"last progress seen: {killed_at}; {removed(report)}; then {state.summary()}")

    run = ingest(survey_pdf, data)
    assert run.wait_for(lambda r: any(" chunks in " in line for line in r.lines)), run.errors
    run.kill()
    doc_id = next(line for line in run.lines if " chunks in " in line).split()[1]
    report, state = restart(settings)
    assert report.clean, report
    assert_consistent(state)
    assert state.documents == [doc_id] and state.chunks > 2 * BATCH and state.files
    reliability.record("Crash", "kill -9 right after the rows commit (the same file ingested again)",
                       f"{removed(report)}; {state.summary()}; the document is found by BM25 and dense search")


# -- a burst of note writes: a second process refused meanwhile, then kill -9 ------------------------------------

def added(run: Running) -> dict[int, str]:
    """note number -> memory id, of the notes the writer printed as saved."""
    return {int(line.split()[1]): line.split()[2] for line in run.lines if line.startswith("added ")}


def refused_others(data: Path) -> dict[str, tuple[str, str, int]]:
    """The command line and the assistant the app uses, started on a folder another process holds:
    name -> (stdout, stderr, exit status)."""
    others = {"the command line (python -m rag list)": ["-m", "rag", "list", "--user", USER],
              "the assistant the app uses (python -m assistant report)": ["-m", "assistant", "report", "--user", USER]}
    started = {name: subprocess.Popen([sys.executable, *args], cwd=ROOT, env=environment(data), text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
               for name, args in others.items()}
    _started.extend(started.values())
    return {name: proc.communicate(timeout=300) + (proc.returncode,) for name, proc in started.items()}


@pytest.mark.slow
def test_note_writes_go_on_past_a_refused_second_process_and_survive_kill_9(tmp_path, reliability):
    from memory.manager import MemoryManager, close_memory_stores
    data = tmp_path / "data"
    writer = Running(["-m", "tests.reliability.note_writer", USER, "500"], data)
    assert writer.wait_for(lambda r: len(added(r)) >= 1), writer.errors
    os.kill(writer.proc.pid, signal.SIGSTOP)   # it holds the folder, mid-burst, however slowly the others start
    refusals = refused_others(data)
    before = len(added(writer))
    os.kill(writer.proc.pid, signal.SIGCONT)
    for name, (out, err, code) in refusals.items():
        message = err.strip().removeprefix("error: ")
        assert code != 0 and out == "", (name, out, err)
        assert "\n" not in message and "in use by another process" in message and "QDRANT_URL" in message, err
    assert writer.wait_for(lambda r: len(added(r)) >= before + 12), writer.errors   # it went on writing
    writer.kill()
    printed = added(writer)

    settings = settings_for(data)
    try:
        manager = MemoryManager(settings, USER)
        missing = [n for n, memory_id in printed.items() if manager.get(memory_id) is None]
        last = max(printed)
        hits = manager.search(note_text(last), memory_type="semantic", limit=3)
        stats = manager.stats()
    finally:
        close_memory_stores(settings)
    assert missing == []
    assert printed[last] in [h.id for h in hits]
    rows, vectors = stats.counts["semantic"], stats.vectors["semantic"]
    assert rows >= len(printed)
    reliability.record("Isolation and access", "a second process (the CLI, and the assistant the app uses) on a "
                       "data folder in use", f"both refused with exit {sorted({c for _, _, c in refusals.values()})}: "
                       f"'{message}'; the first process went on writing notes")
    reliability.record("Crash", "kill -9 during a burst of note writes",
                       f"{len(printed)} notes printed as saved, {len(missing)} missing after restart "
                       f"({rows} note rows, {vectors} note vectors); the last printed note is found by search")


# -- readers and writers ----------------------------------------------------------------------------------------

def test_a_reader_never_sees_a_half_inserted_document(tmp_path, reliability):
    from rag.store import DocumentRecord, DocumentStore
    from rag.types import Chunk
    store = DocumentStore(tmp_path / "documents.sqlite")
    done = threading.Event()
    torn: list[tuple[str, int, int]] = []
    reads = 0

    def chunks_of(doc_id: str) -> list[Chunk]:
        return [Chunk(f"{doc_id}:{i}", doc_id, i, f"moraine {doc_id} passage {i}", [], 1, 1, 0, 10, 4)
                for i in range(400)]

    def write() -> None:
        try:
            for k in range(25):
                doc_id = f"doc{k:02d}"
                chunks = chunks_of(doc_id)
                record = DocumentRecord(doc_id, f"{doc_id}.md", doc_id, None, "text", 0, len(chunks), 1, [], time.time())
                store.add_document("reader", record, chunks)
        finally:
            done.set()

    def read() -> None:
        nonlocal reads
        while not done.is_set():
            for record in store.list_documents("reader"):
                rows = len(store.chunks_of("reader", record.doc_id))
                bm25 = len(store.bm25_search("reader", record.doc_id, 1000))
                reads += 1
                if rows != record.chunks or bm25 != record.chunks:
                    torn.append((record.doc_id, rows, bm25))

    threads = [threading.Thread(target=write), threading.Thread(target=read), threading.Thread(target=read)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    store.close()
    assert torn == [] and reads > 0
    reliability.record("Isolation and access", "reads while a document is being inserted (2 readers, 1 writer, "
                       "25 documents of 400 chunks)", f"{reads} document reads, {len(torn)} saw a partial document")


# -- a failure midway ---------------------------------------------------------------------------------------------

def test_an_ingest_failing_after_some_batches_leaves_nothing(tmp_path, reliability):
    """The upload's progress display raising (as a closed browser tab's may) in the second embedding batch."""
    settings = Settings(_env_file=None, data_dir=tmp_path / "data", llm_backend="none", chunk_size=40,
                        chunk_overlap=5, multilingual_embedding_model="none")
    tool = RAGTool(USER, settings)
    text = "\n\n".join(f"## Station {i}\n\nThe survey station st{i:03d}x measured the moraine and the fjord ice. "
                       "The crew logged the snow depth, the wind and the temperature before noon." for i in range(90))

    class Gone(Exception):
        pass

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "embed" and done > 64:
            raise Gone("the page was closed")
    notes = tmp_path / "stations.md"
    notes.write_text(text, encoding="utf-8")
    with pytest.raises(Gone):
        tool.add_document(notes, progress=progress)
    state = library_state(tool)
    assert state.vectors == 0 and state.documents == [] and state.files == [] and state.pending == 0
    reliability.record("Fault", "ingest fails in its second embedding batch",
                       f"rolled back: {state.summary()}")


# -- consolidation ----------------------------------------------------------------------------------------------

def test_consolidating_twice_promotes_nothing_twice(tmp_path, reliability):
    from memory.manager import MemoryManager
    manager = MemoryManager(settings_for(tmp_path / "data"), USER)
    for n in range(3):
        manager.add(f"Working thought {n} about glacier flow rates.", "working", 0.9)
        manager.add(f"Episode {n}: measured the moraine at station {n}.", "episodic", 0.85)
    first = manager.consolidate()
    counts_after_first = manager.counts()
    second = manager.consolidate()
    counts_after_second = manager.counts()
    sources = [m.metadata.get("consolidated_from") for m in manager.list(["episodic", "semantic"])
               if m.metadata.get("consolidated_from")]
    assert second.promoted == 0 and counts_after_second == counts_after_first
    assert len(sources) == len(set(sources)) == first.promoted
    reliability.record("Crash", "consolidate run twice (as a retry would)",
                       f"first run {first.promoted} promotions, second {second.promoted}; counts unchanged "
                       f"{counts_after_second}")



def _episodes(manager, n: int) -> list:
    return [manager.add(f"Episode {i}: Ana measured the moraine of the Rhone Glacier at station {i}.", "episodic",
                        0.85) for i in range(n)]


def _thoughts(manager, n: int) -> list:
    """Working memories important enough (0.9) to become episodes, and then semantic memories."""
    return [manager.add(f"Working thought {i}: the Aletsch Glacier retreats each summer.", "working", 0.9)
            for i in range(n)]


def _promotion_state(manager) -> dict:
    """What promotion left in every store: rows, Qdrant points, graph links, and provenance."""
    copies = [m for m in manager.list(["semantic"]) if m.metadata.get("consolidated_from")]
    episodes = manager.list(["episodic"])
    return {"semantic copies": len(copies),
            "distinct sources": len({m.metadata["consolidated_from"] for m in copies}),
            "semantic vectors": manager.stats().vectors["semantic"],
            "episodes from working": sum(1 for m in episodes if m.metadata.get("consolidated_from_type") == "working"),
            "unmarked episodes": sum(1 for m in episodes if not m.metadata.get("consolidated_to")),
            "graph": manager.semantic.graph.stats(manager.user_id)}


def _consolidated_alone(data_dir: Path, episodes: int, thoughts: int) -> dict:
    """The same memories consolidated once by one manager in a folder of their own: one copy each."""
    from memory.manager import MemoryManager
    manager = MemoryManager(settings_for(data_dir), USER)
    _episodes(manager, episodes)
    _thoughts(manager, thoughts)
    manager.consolidate()
    return _promotion_state(manager)


def test_two_managers_consolidating_at_once_promote_each_memory_once(tmp_path, reliability):
    from memory.manager import MemoryManager
    settings = settings_for(tmp_path / "data")
    first, second = MemoryManager(settings, USER), MemoryManager(settings, USER)
    _episodes(first, 10)
    thoughts = _thoughts(first, 3)
    start = threading.Barrier(2)
    results, errors = [], []

    def consolidate(manager):
        start.wait()
        try:
            results.append(manager.consolidate())
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=consolidate, args=(m,)) for m in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [], errors
    promoted = [p.source_id for result in results for p in result.promotions]
    state = _promotion_state(first)
    # 3 thoughts → 3 episodes, then 13 episodes → 13 semantic copies: 16 promotions between the two managers
    assert len(promoted) == len(set(promoted)) == 16 and set(promoted) >= {t.id for t in thoughts}, promoted
    assert state["semantic copies"] == state["distinct sources"] == state["semantic vectors"] == 13, state
    assert state["episodes from working"] == 3 and state["unmarked episodes"] == 0, state
    assert state == _consolidated_alone(tmp_path / "alone", 10, 3), state
    reliability.record("Crash", "two managers of one user consolidate at once (threads, one data folder)",
                       f"{len(promoted)} promotions between them ({' + '.join(str(r.promoted) for r in results)}), "
                       f"each source once: {state['semantic copies']} semantic copies, "
                       f"{state['semantic vectors']} vectors, graph {state['graph']}, as one run alone leaves")


def test_a_consolidation_stopped_before_marking_is_not_promoted_again(tmp_path, reliability):
    from memory.manager import MemoryManager, close_memory_stores, promoted_id
    settings = settings_for(tmp_path / "data")
    manager = MemoryManager(settings, USER)
    episodes = _episodes(manager, 3)
    copy = manager.promote(episodes[0], "semantic")     # what consolidate stores first; it stopped before
    assert copy is not None and copy.id == promoted_id(episodes[0].id)   # marking the source
    close_memory_stores(settings)                       # the process is gone; a new one starts
    restarted = MemoryManager(settings, USER)
    result = restarted.consolidate()
    state = _promotion_state(restarted)
    assert sorted(p.source_id for p in result.promotions) == sorted(e.id for e in episodes[1:])
    assert restarted.get(episodes[0].id).metadata["consolidated_to"] == copy.id
    assert state["semantic copies"] == state["distinct sources"] == state["semantic vectors"] == 3, state
    assert state["unmarked episodes"] == 0 and state == _consolidated_alone(tmp_path / "alone", 3, 0), state
    reliability.record("Crash", "consolidation stopped after storing a copy, before marking its source",
                       f"the next run marked it and promoted only the other {result.promoted}: "
                       f"{state['semantic copies']} semantic copies, {state['semantic vectors']} vectors, "
                       f"graph {state['graph']}, as one run alone leaves")

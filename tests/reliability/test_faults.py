"""Faults of what the assistant depends on, through the facade the UI calls: the LLM endpoint (closed,
hanging, HTTP 500, a garbage reply), a Qdrant server that is configured but not there, and a Neo4j
server that is down at start or goes away mid-run (a real Bolt server, stopped and started again).

Each fault must give the person one clear sentence and leave what works working: a failing LLM gives
the extractive answer with a notice, a failing graph server never costs a document answer or a note.
Durations are measured and recorded, not asserted (the machine is shared).
"""
from __future__ import annotations

import contextlib
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from assistant.facade import PDFLearningAssistant
from assistant.types import AskResult, RecallFilters
from core.errors import StoreUnavailable
from core.settings import Settings
from rag.types import SourcesEvent
from tests import bolt_server as bolt
from tests.browser.pdfgen import AVIATION, make_pdf
from tests.llm_server import FakeLLM

SECTION = "Fault"
QUESTION = "What happens when the two angle of attack sensors disagree?"
CITED = "flight.pdf · p. 1"
LLM_TIMEOUT_S = 3.0


class BrokenLLM(FakeLLM):
    """tests/llm_server.FakeLLM, plus the reply of a misconfigured endpoint: mode "garbage" answers
    200 OK with an HTML page (what a proxy in front of a dead server sends)."""

    def _handler(self):
        fake, base = self, super()._handler()

        class Handler(base):
            def do_POST(self):
                if fake.mode != "garbage":
                    return super().do_POST()
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                fake.requests.append({"path": self.path, "body": {}})
                page = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

        return Handler


def free_port() -> int:
    return bolt.free_port()


def learner(data_dir: Path, **settings) -> PDFLearningAssistant:
    """An assistant with flight.pdf loaded, on its own data folder."""
    a = PDFLearningAssistant("learner", Settings(_env_file=None, data_dir=data_dir / "data", **settings))
    pdf = data_dir / "flight.pdf"
    pdf.write_bytes(make_pdf(AVIATION, title="Flight Control Notes"))
    a.load_document(pdf)
    return a


def timed_ask(a: PDFLearningAssistant, question: str = QUESTION) -> tuple[AskResult, float, float]:
    """The answer, seconds in all, and seconds from the passages being shown to the answer's end (the LLM's part)."""
    started = time.perf_counter()
    shown = None
    result = None
    for item in a.ask(question):
        if isinstance(item, SourcesEvent) and shown is None:
            shown = time.perf_counter()
        elif isinstance(item, AskResult):
            result = item
    ended = time.perf_counter()
    return result, ended - started, ended - (shown or started)


def cites_flight(result: AskResult) -> bool:
    return any(CITED in label for label in result.source_labels)


def one_message(message: str) -> str:
    assert message and "\n" not in message and "Traceback" not in message and len(message) <= 400, message
    return message


# -- the LLM endpoint ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def broken_llm():
    server = BrokenLLM().start()
    # an answer flight.pdf backs: the support check leaves out sentences their passages do not back
    server.answer = ("If the two sensors disagree by more than the threshold, the stabilizer trim system is disabled "
                     "for the remainder of the flight [1].")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def with_llm(tmp_path_factory, broken_llm):
    broken_llm.mode = "ok"
    a = learner(tmp_path_factory.mktemp("llm-faults"), openai_base_url=broken_llm.base_url, openai_api_key="test-key",
                llm_model="fake-model", llm_timeout_s=LLM_TIMEOUT_S)
    result, _, _ = timed_ask(a)       # warms up the router; the endpoint works here
    assert result.mode == "llm"
    return a


LLM_FAULTS = [("LLM endpoint returns HTTP 500", "error", "HTTP 500"),
              ("LLM endpoint hangs (no reply for 10 s)", "stall", f"within {LLM_TIMEOUT_S:g} s"),
              ("LLM endpoint sends garbage (an HTML page, 200 OK)", "garbage", "cannot read")]


@pytest.mark.parametrize("case, mode, words", LLM_FAULTS, ids=[m for _, m, _ in LLM_FAULTS])
def test_a_failing_llm_endpoint_gives_the_extractive_answer_with_a_notice(with_llm, broken_llm, reliability,
                                                                        case, mode, words):
    broken_llm.mode, broken_llm.stall_seconds = mode, 10.0
    try:
        result, seconds, llm_seconds = timed_ask(with_llm)
    finally:
        broken_llm.mode = "ok"
    assert result.mode == "extractive" and result.llm == "none" and cites_flight(result), result
    assert words in one_message(result.notice) and "Showing the passages" in result.notice, result.notice
    reliability.record(SECTION, case, f"extractive answer citing {result.source_labels[0]}, notice: “{result.notice}” "
                                      f"The answer ended {llm_seconds:.1f} s after its passages were shown "
                                      f"({seconds:.1f} s in all; LLM_TIMEOUT_S={LLM_TIMEOUT_S:g}).")


def test_a_closed_llm_endpoint_gives_the_extractive_answer_with_a_notice(tmp_path, reliability):
    closed = f"http://127.0.0.1:{free_port()}/v1"                 # nothing listens there
    a = learner(tmp_path, openai_base_url=closed, openai_api_key="test-key", llm_model="fake-model",
                llm_timeout_s=LLM_TIMEOUT_S)
    result, seconds, llm_seconds = timed_ask(a)
    assert result.mode == "extractive" and cites_flight(result), result
    assert "Cannot reach the language model" in one_message(result.notice), result.notice
    reliability.record(SECTION, "LLM endpoint closed (nothing listening)",
                       f"extractive answer citing {result.source_labels[0]}, notice: “{result.notice}” The answer "
                       f"ended {llm_seconds:.1f} s after its passages were shown ({seconds:.1f} s in all).")


# -- Qdrant ------------------------------------------------------------------------------------------

def test_a_configured_qdrant_server_that_is_not_there_is_one_sentence(tmp_path, reliability):
    url = f"http://127.0.0.1:{free_port()}"
    settings = Settings(_env_file=None, data_dir=tmp_path / "data", llm_backend="none", qdrant_url=url)
    started = time.perf_counter()
    with pytest.raises(StoreUnavailable) as caught:
        PDFLearningAssistant("learner", settings)
    seconds = time.perf_counter() - started
    message = one_message(str(caught.value))
    assert url in message and "QDRANT_URL" in message
    reliability.record(SECTION, "QDRANT_URL set, nothing listening",
                       f"the assistant does not start for the user: “{message}” ({seconds:.1f} s).")


# -- Neo4j -------------------------------------------------------------------------------------------

def neo4j_settings(uri: str, password: str = "unused-password", database: str | None = None) -> dict:
    return {"llm_backend": "none", "neo4j_uri": uri, "neo4j_username": "root", "neo4j_password": password,
            "neo4j_database": database}


def test_neo4j_down_at_start_refuses_notes_in_one_sentence_and_answers_on(tmp_path, reliability):
    uri = f"bolt://127.0.0.1:{free_port()}"
    a = learner(tmp_path, **neo4j_settings(uri))
    started = time.perf_counter()
    with pytest.raises(StoreUnavailable) as caught:
        a.add_note("Chlorophyll absorbs red and blue light.", "Photosynthesis")
    first = time.perf_counter() - started
    message = one_message(str(caught.value))
    started = time.perf_counter()
    with pytest.raises(StoreUnavailable) as again:        # within the backoff: the same sentence, no network wait
        a.add_note("Chlorophyll absorbs red and blue light.", "Photosynthesis")
    second = time.perf_counter() - started
    assert str(again.value) == message and uri in message
    assert a.list_notes() == []                             # nothing half-written
    result, _, _ = timed_ask(a)
    assert cites_flight(result)
    recalled = a.recall("angle of attack sensors", RecallFilters(limit=5))
    assert recalled, "recall must still answer from the other memories"
    reliability.record(SECTION, "NEO4J_URI set, server down at start",
                       f"a note is refused: “{message}” ({first:.2f} s; again within the backoff: {second * 1000:.0f} ms, "
                       f"no network wait); no note half-written; questions still cite {result.source_labels[0]}; "
                       f"recall still finds {len(recalled)} memories.")


@contextlib.contextmanager
def bolt_server_on(port: int, password: str, database: str = "graph"):
    """tests/bolt_server.py's ArcadeDB Bolt server on a port we choose, so a restarted server has the same
    address (bolt_server() picks a new free port each time)."""
    root = Path(tempfile.mkdtemp(prefix="arcadedb-bolt-"))
    log = open(root / bolt.LOG_FILE, "wb")
    proc = subprocess.Popen([sys.executable, bolt.__file__, "--child", str(root), password, str(free_port()),
                             str(port), database, "512m"],
                            stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    try:
        bolt._wait_until_ready(proc, root, port, 90.0)
        yield f"bolt://127.0.0.1:{port}"
    finally:
        bolt._stop(proc)
        log.close()
        shutil.rmtree(root, ignore_errors=True)


def concept_names(a: PDFLearningAssistant) -> set[str]:
    return {n["name"] for n in a.concept_graph().nodes}


def wait_for(condition, timeout: float) -> float:
    """Seconds until `condition()` held (polling); fails the test after `timeout`."""
    started = time.perf_counter()
    while not condition():
        if time.perf_counter() - started > timeout:
            pytest.fail(f"still not done after {timeout:.0f} s")
        time.sleep(0.25)
    return time.perf_counter() - started


def test_neo4j_going_away_mid_run_keeps_the_note_and_writes_its_concept_when_back(tmp_path, reliability):
    port, password = free_port(), "pw-" + secrets.token_hex(8)
    settings = neo4j_settings(f"bolt://127.0.0.1:{port}", password, "graph")
    with bolt_server_on(port, password):
        a = learner(tmp_path, **settings)
        while_up = a.add_note("Chlorophyll absorbs red and blue light.", "Photosynthesis")
        assert "Photosynthesis" in concept_names(a) and while_up.notice == ""
    # The server is gone (stopped, its process ended).
    started = time.perf_counter()
    note = a.add_note("Mitochondria make ATP from glucose and oxygen.", "Cell respiration")
    saved_in = time.perf_counter() - started
    graph = a.memory.semantic.graph
    waiting = graph.pending_writes("learner")
    assert waiting >= 1 and any(n.id == note.memory_id for n in a.list_notes())
    notice = one_message(note.notice)                                  # told, not a bare "Note saved"
    assert "graph server is away" in notice and "concept view" in notice, notice
    hits = a.recall("mitochondria ATP", RecallFilters(memory_types=["semantic"], limit=5))
    assert hits and hits[0].id == note.memory_id                       # found by its vector meanwhile
    shown_meanwhile = concept_names(a)
    result, _, _ = timed_ask(a)
    assert cites_flight(result)
    stats = a.memory.stats().graph
    with bolt_server_on(port, password):                                # back, at the same address
        back = time.perf_counter()
        replayed_in = wait_for(lambda: graph.pending_writes("learner") == 0, timeout=90)
        assert "Cell respiration" in concept_names(a)
        after_back = time.perf_counter() - back
        assert a.add_note("Ribosomes build proteins.", "Cell biology").notice == ""   # nothing waits any more
    reliability.record(SECTION, "Neo4j server stopped mid-run, then started again at the same address",
                       f"a note written while it was down is saved at once ({saved_in:.2f} s) with the notice "
                       f"“{notice}”, found by recall, and "
                       f"its graph writes wait in the outbox ({waiting}; memory stats say {stats}); the concept "
                       f"graph meanwhile shows {len(shown_meanwhile)} concepts, questions still cite "
                       f"{result.source_labels[0]}; {replayed_in:.1f} s after the server was back the waiting writes "
                       f"were replayed (backoff 1 s → 30 s) and “Cell respiration” is in the graph "
                       f"({after_back:.1f} s after restart).")

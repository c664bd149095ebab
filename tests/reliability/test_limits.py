"""Limits by design, each stated in one sentence and measured: the longest question, memory search and
note; the cap on episodic memory (old everyday episodes rolled up into one summary per day); and the
LLM timeout bounding a whole answer, against a server that drips one word a second.
"""
from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone

import pytest

from assistant.ask import MAX_QUESTION_CHARS
from assistant.facade import MAX_NOTE_CHARS, PDFLearningAssistant
from assistant.types import AskResult, RecallFilters
from core.errors import InvalidRequest
from core.settings import Settings
from memory.manager import MAX_QUERY_CHARS, MemoryManager
from memory.rollup import EPISODIC_CAP, ROLLUP_KIND
from memory.tool import MemoryTool
from rag.types import SourcesEvent
from tests.browser.pdfgen import AVIATION, make_pdf
from tests.llm_server import FakeLLM

SECTION = "Limits"
QUESTION = "What happens when the two angle of attack sensors disagree?"
LLM_TIMEOUT_S = 3.0


class DrippingLLM(FakeLLM):
    """tests/llm_server.FakeLLM whose streamed answers come one word a second (mode "drip"): a server
    that never trips a read timeout but would take 20 s to finish."""

    def _handler(self):
        fake, base = self, super()._handler()

        class Handler(base):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                fake.requests.append({"path": self.path, "body": body})
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for n in range(20):
                    chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m",
                             "choices": [{"index": 0, "delta": {"content": f"word{n} "}, "finish_reason": None}]}
                    try:
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        return                                  # the client stopped listening: as it should
                    time.sleep(1.0)

        return Handler


@pytest.fixture(scope="module")
def dripping_llm():
    server = DrippingLLM().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def limits(tmp_path_factory, dripping_llm) -> PDFLearningAssistant:
    folder = tmp_path_factory.mktemp("limits")
    a = PDFLearningAssistant("learner", Settings(
        _env_file=None, data_dir=folder / "data", openai_base_url=dripping_llm.base_url, openai_api_key="test-key",
        llm_model="fake-model", llm_timeout_s=LLM_TIMEOUT_S))
    pdf = folder / "flight.pdf"
    pdf.write_bytes(make_pdf(AVIATION, title="Flight Control Notes"))
    a.load_document(pdf)
    a.warm_up()             # the first question's model loading is not what these rows measure
    return a


def refusal(call) -> str:
    with pytest.raises(InvalidRequest) as caught:
        call()
    message = str(caught.value)
    assert "\n" not in message and message.endswith("."), message
    return message


def answer(a: PDFLearningAssistant, question: str) -> tuple[AskResult, float, float, int]:
    """The answer; seconds in all; seconds from the passages being shown to the end; words the LLM streamed."""
    started, shown, words, result = time.perf_counter(), None, 0, None
    for item in a.ask(question):
        if isinstance(item, SourcesEvent) and shown is None:
            shown = time.perf_counter()
        elif isinstance(item, str) and item.startswith("word"):
            words += 1
        elif isinstance(item, AskResult):
            result = item
    ended = time.perf_counter()
    return result, ended - started, ended - (shown or started), words


def test_the_llm_timeout_bounds_a_whole_dripping_answer(limits, reliability):
    result, seconds, llm_seconds, words = answer(limits, QUESTION)
    assert result.mode == "extractive" and result.citations, result
    assert f"did not finish its answer within {LLM_TIMEOUT_S:g} s" in result.notice, result.notice
    reliability.record(SECTION, f"LLM answer dripping one word a second, LLM_TIMEOUT_S={LLM_TIMEOUT_S:g}",
                       f"the answer stopped after {words} streamed words, {llm_seconds:.1f} s after its passages "
                       f"were shown ({seconds:.1f} s in all), then the extractive answer citing "
                       f"{result.source_labels[0]} with the notice “{result.notice}”")


def test_a_question_has_a_stated_maximum(limits, reliability):
    message = refusal(lambda: limits.ask_once("x" * (MAX_QUESTION_CHARS + 1)))
    assert f"{MAX_QUESTION_CHARS:,}" in message
    longest = ((QUESTION + " ") * 100)[:MAX_QUESTION_CHARS - 1] + "?"
    result, seconds, _, _ = answer(limits, longest)
    assert result.citations, result
    reliability.record(SECTION, f"question of {MAX_QUESTION_CHARS + 1:,} characters (the maximum is "
                                f"{MAX_QUESTION_CHARS:,})",
                       f"refused: “{message}” A question of {len(longest):,} characters is answered "
                       f"({seconds:.1f} s, citing {result.source_labels[0]}).")


def test_a_memory_search_has_a_stated_maximum(limits, reliability):
    message = refusal(lambda: limits.recall("y" * (MAX_QUERY_CHARS + 1)))
    assert f"{MAX_QUERY_CHARS:,}" in message
    tool = MemoryTool("learner", manager=limits.memory).execute("search", query="y" * (MAX_QUERY_CHARS + 1))
    assert tool.ok is False and tool.message == message
    started = time.perf_counter()
    found = limits.recall(("angle of attack sensors " * 50)[:MAX_QUERY_CHARS], RecallFilters(limit=5))
    seconds = time.perf_counter() - started
    reliability.record(SECTION, f"recall query of {MAX_QUERY_CHARS + 1:,} characters (the maximum is "
                                f"{MAX_QUERY_CHARS:,}), in the app and through MemoryTool.execute('search')",
                       f"refused, both ways: “{message}” A query of {MAX_QUERY_CHARS:,} characters is searched "
                       f"({len(found)} memories, {seconds:.2f} s).")


def test_a_note_has_a_stated_maximum(limits, reliability):
    message = refusal(lambda: limits.add_note("z" * (MAX_NOTE_CHARS + 1)))
    assert f"{MAX_NOTE_CHARS:,}" in message
    longest = ("Trim cutout switches stop runaway stabilizer trim. " * 100)[:MAX_NOTE_CHARS]
    started = time.perf_counter()
    note = limits.add_note(longest, "Trim")
    seconds = time.perf_counter() - started
    assert any(n.id == note.memory_id for n in limits.list_notes())
    reliability.record(SECTION, f"note of {MAX_NOTE_CHARS + 1:,} characters (the maximum is {MAX_NOTE_CHARS:,})",
                       f"refused: “{message}” A note of {len(longest):,} characters is saved ({seconds:.2f} s).")


# -- the episodic cap --------------------------------------------------------------------------------

DAYS = ["glaciers", "volcanoes", "herons", "tides", "comets"]
START = datetime(2024, 3, 1, 12, 0, tzinfo=timezone.utc)    # noon UTC: the same calendar day in most zones


def asked(day: int, n: int, *, minutes: int | None = None, importance: float = 0.6) -> dict:
    topic = DAYS[day]
    question = f"Question {n}: how do {topic} change over a season?"
    return {"content": f"Asked: {question}\nAnswer: The notes on {topic} explain it on page {n + 1}.",
            "timestamp": START + timedelta(days=day, minutes=n if minutes is None else minutes),
            "importance": importance,
            "metadata": {"kind": "qa", "question": question, "cited_labels": [f"[1] {topic}.pdf · p. {n + 1}"]}}


def rollups(mm: MemoryManager) -> list:
    return [it for it in mm.list(["episodic"]) if it.metadata.get("kind") == ROLLUP_KIND]


def test_episodic_memory_is_capped_by_rolling_old_days_into_one_summary(tmp_path, limits, reliability):
    assert limits.memory.episodic_cap == EPISODIC_CAP == 5000       # what the app uses
    settings = Settings(_env_file=None, data_dir=tmp_path / "data", llm_backend="none")
    cap = 40                                                       # the same rule at a size a test can fill
    mm = MemoryManager(settings, "learner", episodic_cap=cap)
    important = [asked(0, 90 + k, importance=0.9) for k in range(2)]
    mm.add_many([asked(day, n) for day in range(len(DAYS)) for n in range(10)] + important, "episodic")
    after_first = mm.counts()["episodic"]
    summaries = sorted(rollups(mm), key=lambda it: it.timestamp)
    assert after_first <= int(cap * 0.9) and [s.metadata["day"] for s in summaries] == ["2024-03-01", "2024-03-02"]
    assert summaries[0].content.startswith("On 1 March 2024, 10 earlier activities: Asked: Question 0: how do glaciers")
    kept = {it.content for it in mm.list(["episodic"])}
    assert all(e["content"] in kept for e in important)            # important episodes are never rolled up
    assert all(asked(day, n)["content"] in kept for day in (2, 3, 4) for n in range(10))   # newer days untouched
    hits = mm.search("how do glaciers change over a season", memory_type="episodic", limit=3)
    assert summaries[0].id in [h.id for h in hits]                 # a rolled-up day is still found
    # Later episodes of an already rolled-up day merge into its summary: one summary per day.
    mm.add_many([asked(0, 20 + n, minutes=600 + n) for n in range(7)], "episodic")
    merged = sorted(rollups(mm), key=lambda it: it.timestamp)
    assert [s.metadata["day"] for s in merged] == ["2024-03-01", "2024-03-02"]
    assert merged[0].metadata["rolled_up"] == 17 and merged[0].content.startswith("On 1 March 2024, 17 earlier")
    reliability.record(SECTION, f"episodic memory cap ({EPISODIC_CAP:,} per user in the app; {cap} here)",
                       f"52 episodes over 5 days → {after_first}: the 2 oldest days rolled into one summary each "
                       f"(“{summaries[0].content[:95]}…”), the 2 important episodes and the 3 newest days kept as "
                       f"they were; a search for that day's topic finds its summary; 7 later episodes of the first "
                       f"day merged into its summary ({merged[0].metadata['rolled_up']} activities), "
                       f"{mm.counts()['episodic']} episodes in all.")


def test_questions_of_rolled_up_days_still_count_in_stats_activity_and_report(tmp_path, reliability):
    from assistant.report import validate_report
    settings = Settings(_env_file=None, data_dir=tmp_path / "data", llm_backend="none")
    mm = MemoryManager(settings, "learner", episodic_cap=40)         # another manager of the same person, as an
    important = [asked(0, 90 + k, importance=0.9) for k in range(2)]   # agent's would be, with a small cap
    mm.add_many([asked(day, n) for day in range(len(DAYS)) for n in range(10)] + important, "episodic")
    summaries = rollups(mm)
    rolled = sum(s.metadata["questions"] for s in summaries)
    assert len(summaries) == 2 and rolled == 20, [s.metadata for s in summaries]
    a = PDFLearningAssistant("learner", settings)
    stats, report = a.get_stats(), a.generate_report()
    per_day = {d["date"]: d["questions"] for d in a._activity()}
    expected = {(START + timedelta(days=day)).astimezone().date().isoformat(): 10 for day in range(len(DAYS))}
    expected[START.astimezone().date().isoformat()] += len(important)
    assert stats["questions"] == report["summary"]["questions"] == 52, stats
    assert per_day == expected and {d["date"]: d["questions"] for d in report["activity"]} == expected, per_day
    assert stats["active_days"] == len(DAYS)
    validate_report(report)
    reliability.record(SECTION, "questions counted after old days were rolled up (cap 40, 52 questions over 5 days)",
                       f"{rolled} of them live only in {len(summaries)} day summaries; stats and the report still "
                       f"count {stats['questions']} questions, {stats['active_days']} active days, per day "
                       f"{list(per_day.values())}")

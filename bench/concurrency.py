"""Nobody blocked: question latency for other users while one user ingests a book (issue 10's target:
10 users' questions p95 <= 5 s while Think Python, 264 pages, is ingested).

One process, as the app runs: a PDFLearningAssistant per user. User "reader-k" (k = 1..N) each have a
small notes document and ask questions about it in a loop; user "ingester" loads the book. The script
measures the readers' questions twice, without and during the ingest, and prints p50/p95 and errors.
No LLM by default (extractive answers): the figures measure retrieval, evidence and locks. With `--llm local`
the packaged model writes every answer, one person at a time by design: the others see their passages and a
queue notice, so the script prints when the passages came (the first SourcesEvent) beside when the answer did.

    python bench/concurrency.py [--readers 10] [--book PATH] [--quiet-seconds 30] [--llm none|local]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.errors import AssistantError  # noqa: E402
from core.settings import Settings  # noqa: E402

BOOK = Path(__file__).resolve().parents[2] / "shared" / "data" / "docs" / "pdfs_en" / "thinkpython2.pdf"
NOTES = """# Glaciers

A glacier is a persistent body of dense ice that is constantly moving under its own weight.
Glaciers form where the accumulation of snow exceeds its ablation over many years.

# Volcanoes

A volcano is a rupture in the crust of a planet that allows hot lava, volcanic ash and gases to escape.
Shield volcanoes are built almost entirely of fluid lava flows.
"""
QUESTIONS = ["What is a glacier?", "How do glaciers form?", "What is a volcano?",
             "What are shield volcanoes built of?"]


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def ask_in_a_loop(assistant, stop: threading.Event, seconds: list[float], errors: list[str],
                  passages: list[float]) -> None:
    from assistant.types import AskResult
    from rag.types import SourcesEvent
    i = 0
    while not stop.is_set():
        started = time.perf_counter()
        shown = None
        try:
            result = None
            for item in assistant.ask(QUESTIONS[i % len(QUESTIONS)], session_id=f"bench-{i}"):
                if isinstance(item, SourcesEvent) and shown is None:
                    shown = time.perf_counter() - started
                elif isinstance(item, AskResult):
                    result = item
            if result is None or not result.citations:
                errors.append(f"no citation for {QUESTIONS[i % len(QUESTIONS)]!r}")
        except AssistantError as exc:
            errors.append(str(exc))
        except Exception as exc:  # noqa: BLE001 - a failure a person would meet is an error here, not a dead thread
            errors.append(f"{type(exc).__name__}: {exc}")
        seconds.append(time.perf_counter() - started)
        passages.append(shown if shown is not None else seconds[-1])
        i += 1


def measure(readers: list, stop_when) -> tuple[list[float], list[str], list[float]]:
    """Every reader asks in its own thread until `stop_when()` returns (it blocks): the answers' seconds, the
    errors, and the seconds until each question's passages were shown."""
    stop = threading.Event()
    seconds: list[float] = []
    errors: list[str] = []
    passages: list[float] = []
    threads = [threading.Thread(target=ask_in_a_loop, args=(a, stop, seconds, errors, passages)) for a in readers]
    for thread in threads:
        thread.start()
    try:
        stop_when()
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    return seconds, errors, passages


def report(label: str, seconds: list[float], errors: list[str], passages: list[float], extra: str = "") -> None:
    print(f"{label:<28} questions {len(seconds):>4}  p50 {percentile(seconds, 0.5):6.2f} s  "
          f"p95 {percentile(seconds, 0.95):6.2f} s  max {max(seconds, default=float('nan')):6.2f} s  "
          f"errors {len(errors)}{extra}")
    print(f"{'':<28} passages shown after p50 {percentile(passages, 0.5):6.2f} s  p95 {percentile(passages, 0.95):6.2f} s")
    for message in errors[:3]:
        print(f"    {message}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--readers", type=int, default=10)
    parser.add_argument("--book", type=Path, default=BOOK)
    parser.add_argument("--quiet-seconds", type=float, default=30.0, help="length of the baseline without ingest")
    parser.add_argument("--llm", choices=("none", "local"), default="none",
                        help="who writes the answers: nobody (extractive) or the packaged local model")
    args = parser.parse_args()
    if not args.book.is_file():
        raise SystemExit(f"{args.book} is missing: pass --book with a PDF of a few hundred pages")

    from assistant import get_assistant
    with tempfile.TemporaryDirectory(prefix="bench-concurrency-") as tmp:
        settings = Settings(_env_file=None, data_dir=Path(tmp), llm_backend=args.llm)
        readers = []
        for k in range(1, args.readers + 1):
            a = get_assistant(f"reader-{k}", settings)
            a.rag.add_text(NOTES, title="Earth science notes", name="earth.md")
            a.warm_up()
            readers.append(a)
        ingester = get_assistant("ingester", settings)
        ingester.warm_up()
        print(f"{args.readers} readers, each asking in a loop; book: {args.book.name}")

        quiet, quiet_errors, quiet_passages = measure(readers, lambda: time.sleep(args.quiet_seconds))
        report("without ingest", quiet, quiet_errors, quiet_passages)

        outcome: dict = {}

        def ingest() -> None:
            started = time.perf_counter()
            loaded = ingester.load_document(args.book)
            outcome.update(seconds=time.perf_counter() - started, chunks=loaded.chunks)

        busy, busy_errors, busy_passages = measure(readers, ingest)
        report("while one user ingests", busy, busy_errors, busy_passages,
               f"  (ingest {outcome.get('seconds', float('nan')):.0f} s, {outcome.get('chunks', 0)} chunks)")
        print(f"slowdown p50 x{statistics.median(busy) / statistics.median(quiet):.2f}")


if __name__ == "__main__":
    main()

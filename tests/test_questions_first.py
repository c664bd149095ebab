"""The embedding model's turns: a question's embedding goes before a waiting ingest batch (core.embeddings
.QuestionsFirstLock), so passages are shown while a book is being ingested."""
from __future__ import annotations

import threading
import time

from core.embeddings import QuestionsFirstLock, background_work


def _wait_until(condition, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_a_question_waiting_goes_before_a_waiting_ingest_batch():
    lock = QuestionsFirstLock()
    order: list[str] = []
    release_first = threading.Event()

    def ingest_batch(name: str, hold: threading.Event | None = None):
        with background_work(), lock:
            order.append(name)
            if hold is not None:
                hold.wait(5)

    def question():
        with lock:
            order.append("question")

    first = threading.Thread(target=ingest_batch, args=("batch 1", release_first))
    first.start()
    _wait_until(lambda: order == ["batch 1"])
    second = threading.Thread(target=ingest_batch, args=("batch 2",))
    second.start()
    time.sleep(0.2)                       # batch 2 is waiting for the model
    asker = threading.Thread(target=question)
    asker.start()
    _wait_until(lambda: lock._questions_waiting == 1)
    release_first.set()
    for thread in (first, second, asker):
        thread.join(5)
    assert order == ["batch 1", "question", "batch 2"]


def test_one_holder_at_a_time_and_background_ends_with_its_block():
    lock = QuestionsFirstLock()
    inside, most = [0], [0]

    def work(background: bool):
        for _ in range(50):
            if background:
                with background_work(), lock:
                    inside[0] += 1
                    most[0] = max(most[0], inside[0])
                    inside[0] -= 1
            else:
                with lock:
                    inside[0] += 1
                    most[0] = max(most[0], inside[0])
                    inside[0] -= 1

    threads = [threading.Thread(target=work, args=(n % 2 == 0,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert most[0] == 1
    import core.embeddings as embeddings
    assert getattr(embeddings._background, "on", False) is False

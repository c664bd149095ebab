"""The command line, the evaluation command, other embedding/vector back-ends and concurrency."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from core.errors import StoreUnavailable
from core.settings import Settings, get_settings
from rag.tool import RAGTool
from tests.test_convert import body, make_pdf, write
from tests.test_rag_core import NOTES

ROOT = Path(__file__).resolve().parents[1]


def run(args: list[str], data_dir: Path, **env) -> subprocess.CompletedProcess:
    environment = {**os.environ, "DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1", "LLM_BACKEND": "none", **env}
    environment.pop("OPENAI_BASE_URL", None)
    environment.pop("OPENAI_API_KEY", None)
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=environment, capture_output=True, text=True,
                          timeout=300)


def two_page_course() -> bytes:
    """Two pages long enough to be chunked apart (a chunk is at most CHUNK_SIZE tokens)."""
    filler = [f"Line {i} of the chapter adds more words to this page." for i in range(25)]
    return make_pdf([body(["Recursion: a function that calls itself."] + filler),
                     body(["A tuple is an immutable sequence of values."] + filler)])


def cli(args: list[str], data_dir: Path, monkeypatch, capsys) -> tuple[int, str, str]:
    """`python -m rag ARGS` run in this process (one model load for every command); the process entry
    itself is exercised once, by a subprocess, in the test below."""
    from rag.__main__ import main
    for name, value in {"DATA_DIR": str(data_dir), "LLM_BACKEND": "none"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    get_settings.cache_clear()      # the environment set here, not whatever filled the process's cache before
    capsys.readouterr()
    status = main(args)
    out = capsys.readouterr()
    return status, out.out, out.err


def test_cli_ingest_search_ask_list_remove(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LLM_BACKEND", "local")
    assert get_settings().llm_backend == "local"     # an earlier reader of the settings left them cached
    pdf = write(tmp_path, "course.pdf", two_page_course())
    data = tmp_path / "data"
    out = run(["-m", "rag", "ingest", str(pdf), "--user", "cli"], tmp_path / "entry")   # the real entry point
    assert out.returncode == 0, out.stderr
    assert "course.pdf" in out.stdout and "2 pages" in out.stdout
    status, first, _ = cli(["ingest", str(pdf), "--user", "cli"], data, monkeypatch, capsys)
    assert status == 0 and "course.pdf" in first and "2 pages" in first
    status, again, _ = cli(["ingest", str(pdf), "--user", "cli"], data, monkeypatch, capsys)
    assert status == 0 and "already present" in again
    status, found, _ = cli(["search", "immutable sequence", "--user", "cli"], data, monkeypatch, capsys)
    assert status == 0 and "course.pdf p. 2" in found
    status, answer, _ = cli(["ask", "What is a tuple?", "--user", "cli"], data, monkeypatch, capsys)
    assert status == 0 and "[1] course.pdf · p. 2" in answer
    assert "No language model is available" in answer and "Answered by: no language model" in answer
    _, listing, _ = cli(["list", "--user", "cli"], data, monkeypatch, capsys)
    doc_id = listing.split()[0]
    assert cli(["list", "--user", "someone-else"], data, monkeypatch, capsys)[1] == ""
    assert cli(["remove", doc_id, "--user", "cli"], data, monkeypatch, capsys)[1].strip() == "removed"
    assert cli(["list", "--user", "cli"], data, monkeypatch, capsys)[1] == ""


def test_cli_reports_a_bad_file_in_one_line(tmp_path, monkeypatch, capsys):
    bad = write(tmp_path, "notes.pdf", "plain text, not a pdf\n")
    status, _, err = cli(["ingest", str(bad)], tmp_path / "data", monkeypatch, capsys)
    assert status == 1
    assert err.strip().count("\n") == 0 and "not a PDF" in err


def test_eval_prints_the_metrics_json_last(tmp_path, monkeypatch, capsys):
    dataset = tmp_path / "tiny"
    (dataset / "docs").mkdir(parents=True)
    write(dataset / "docs", "course.pdf", make_pdf([body(["Recursion: a function that calls itself."]),
                                                      body(["A tuple is an immutable sequence of values."])]))
    (dataset / "docs" / "notes.md").write_text(NOTES, encoding="utf-8")
    questions = [
        {"id": "q1", "question": "What is an immutable sequence?", "answer": "tuple",
         "gold": [{"doc": "course.pdf", "page": 2}]},
        {"id": "q2", "question": "What maps keys to values?", "answer": "dictionary",
         "gold": [{"doc": "notes.md", "text": "A dictionary maps keys to values"}]},
        {"id": "q3", "question": "What is recursion?", "answer": "x", "gold": [{"doc": "missing.pdf", "page": 1}]},
    ]
    (dataset / "questions.jsonl").write_text("\n".join(json.dumps(q) for q in questions), encoding="utf-8")
    from rag.eval import main as evaluate
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "unused"))
    capsys.readouterr()
    evaluate([str(dataset), "--quiet"])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["set"] == "tiny" and result["n"] == 3
    assert result["hit@1"] == pytest.approx(2 / 3, abs=1e-3)   # q3's gold document does not exist
    assert result["hit@10"] == pytest.approx(2 / 3, abs=1e-3)
    assert result["chunks"] >= 2 and result["mode"] == "hybrid"
    assert {"hit@5", "mrr@10", "ingest_s", "query_p50_ms", "query_p95_ms"} <= set(result)
    assert not (tmp_path / "unused").exists()                   # a temporary data folder, never DATA_DIR


def test_openai_compatible_embedding_endpoint(tmp_path, fake_llm):
    fake_llm.mode = "ok"
    s = Settings(_env_file=None, data_dir=tmp_path / "data", embedding_base_url=fake_llm.base_url,
                 embedding_api_model="fake-embedder")
    tool = RAGTool("alice", s)
    assert tool.embedder.model_id.startswith("openai:") and tool.embedder.dim == 8
    tool.add_text(NOTES, title="notes")
    assert tool.stats()["vectors"] >= 1
    assert any(r["path"].endswith("/embeddings") and r["body"]["model"] == "fake-embedder"
               for r in fake_llm.requests)
    assert tool.search("dictionary keys values")                # BM25 + the endpoint's vectors


def test_unreachable_qdrant_server_is_one_clear_error(tmp_path):
    from core.vectors import get_vector_store
    s = Settings(_env_file=None, data_dir=tmp_path, qdrant_url="http://127.0.0.1:9")
    with pytest.raises(StoreUnavailable, match="Cannot reach the Qdrant server at http://127.0.0.1:9"):
        get_vector_store(s)


def test_concurrent_ingest_and_search_lose_nothing(settings):
    """Gradio runs handlers in threads; local Qdrant is not thread-safe, so the store serialises."""
    tool = RAGTool("alice", settings)
    texts = [f"# Topic {i}\n\n" + " ".join(f"Fact {j} about subject {i} is recorded here." for j in range(60))
             for i in range(8)]
    errors: list[Exception] = []

    def ingest(i: int):
        try:
            RAGTool("alice", settings).add_text(texts[i], title=f"t{i}")
            tool.search(f"subject {i}")
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)
    threads = [threading.Thread(target=ingest, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    stats = tool.stats()
    assert stats["documents"] == 8
    assert stats["vectors"] == stats["chunks"] > 8

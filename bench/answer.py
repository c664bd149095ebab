"""Answer benchmark with the local model: time to first token and tokens/s, p50/p95, English and Chinese.

Ingests Think Python (English) and the Pumpkin Book (Chinese) into a fresh data folder, then streams
`RAGTool.ask_stream` for a few questions of each language, the way the app does (retrieval, evidence,
the packed local prompt, the model). Per question: first token (from the question; and from the
passages being shown, i.e. the model's own share), pieces per second after the first (one piece is one
token from llama.cpp), the whole answer, and the answer's opening. The model is loaded before timing.

    python bench/answer.py [--model qwen2.5-coder-0.5b] [--data-dir DIR] [--questions 6] [--summaries 4]

--summaries N then asks for chapters 1..N of each book summarized the way a study guide's "Summarize chapter 2 of
Think Python" does, each for the first time (no summary of it made yet), and prints when its first line is shown.

--data-dir keeps the ingested books (and the joined model) for a second run; default: a temp folder.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.settings import Settings  # noqa: E402

DOCS = Path(__file__).resolve().parents[2] / "shared" / "data" / "docs"
BOOKS = {"en": DOCS / "pdfs_en" / "thinkpython2.pdf", "zh": DOCS / "pdfs_zh" / "pumpkin_book_1.9.9.pdf"}
QUESTIONS = {   # one of each kind a learner asks (rag.kinds): lookup, explain, why, compare, example, how-to, summary
    "en": ["What is a function?", "Explain what recursion is.", "Why are strings immutable?",
           "What is the difference between a list and a tuple?", "Show me an example of a for loop.",
           "How do you read a file line by line?", "Summarize chapter 10.", "What is a dictionary?"],
    "zh": ["什么是假设空间？", "解释一下什么是归纳偏好。", "为什么决策树要剪枝？", "过拟合和欠拟合有什么区别？",
           "举个例子说明什么是支持向量。", "如何进行 K 折交叉验证？", "总结一下第3章。", "什么是信息熵？"],
}


class _Counter(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.looped = 0

    def emit(self, record):
        if "repeating" in record.getMessage():
            self.looped += 1


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return round(values[min(len(values) - 1, max(0, round(q * (len(values) - 1))))], 2)


def cell(value) -> str:
    """A table cell: '-' for a figure the answer has none of (extractive, or no timings from the server)."""
    return "-" if value is None else str(value)


def timed_stream(tool, question: str) -> dict:
    """One question streamed as the app does; seconds from the question to: anything shown (its passages or
    text), the first and last text piece, the first whole line (a newline after some text); the pieces, the answer."""
    from rag.types import Answer, SourcesEvent
    started = time.perf_counter()
    out = {"shown": None, "first": None, "last": None, "line": None, "pieces": 0, "answer": None}
    text = ""
    for item in tool.ask_stream(question):
        now = time.perf_counter() - started
        if isinstance(item, SourcesEvent):
            out["shown"] = out["shown"] or now
        elif isinstance(item, Answer):
            out["answer"] = item
        elif isinstance(item, str) and item:
            out["pieces"] += 1
            out["first"] = out["first"] or now
            out["last"] = now
            text += item
            if out["line"] is None and "\n" in text.strip():
                out["line"] = now
    out["total"] = time.perf_counter() - started
    return out


def run_question(tool, question: str) -> dict:
    timed = timed_stream(tool, question)
    answer, first, last, pieces = timed["answer"], timed["first"], timed["last"], timed["pieces"]
    composed = answer is not None and answer.mode == "llm"
    row = {"question": question, "mode": answer.mode if answer else "?", "refused": bool(answer and answer.refused),
           "total_s": round(timed["total"], 2), "pieces": pieces,
           "notice": (answer.notice if answer else "")[:120],
           "text": (answer.text if answer else "").replace("\n", " ")[:90]}
    if composed and first is not None:
        row["ttft_s"] = round(first, 2)
        row["model_ttft_s"] = round(first - (timed["shown"] or 0.0), 2)
        row["tok_s"] = round((pieces - 1) / (last - first), 1) if pieces > 1 and last > first else None
        timings = getattr(tool.llm, "last_timings", {}) or {}
        row["prompt_tokens"] = timings.get("prompt_n", 0) + timings.get("cache_n", 0)
        row["cached_tokens"] = timings.get("cache_n")
        row["read_tok_s"] = round(timings["prompt_per_second"], 1) if timings.get("prompt_per_second") else None
        row["write_tok_s"] = round(timings["predicted_per_second"], 1) if timings.get("predicted_per_second") else None
    return row


def first_line_s(tool, question: str) -> dict:
    """A chapter summary asked for the first time: when something is shown and when its first whole line is."""
    timed = timed_stream(tool, question)
    answer, end = timed["answer"], timed["total"]
    shown = min(t for t in (timed["shown"], timed["first"], end) if t is not None)
    return {"question": question, "refused": bool(answer and answer.refused),
            "mode": answer.mode if answer else "?",
            "shown_s": round(shown, 2), "first_line_s": round(timed["line"] or end, 2),
            "total_s": round(end, 2), "opening": (answer.text if answer else "")[:80].replace("\n", " ")}


def summary_questions(tool, chapters: int) -> dict[str, list[str]]:
    """The guide's own phrasing of a chapter summary for each book (assistant.guide_questions)."""
    from assistant.guide_questions import document_label, phrasings
    out = {}
    for lang, pdf in BOOKS.items():
        record = next(d for d in tool.list_documents() if d.name == pdf.name)
        label = document_label(record.name, record.title)
        out[lang] = [phrasings(lang)["chapter"].format(number=n, doc=label) for n in range(1, chapters + 1)]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="qwen2.5-coder-0.5b")
    ap.add_argument("--data-dir", type=Path)
    ap.add_argument("--questions", type=int, default=6, help="questions per language")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--summaries", type=int, default=0, help="chapters per book summarized for the first time")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    counter = _Counter()
    logging.getLogger("core.llm").addHandler(counter)

    load_start = os.getloadavg()[0]
    tmp = None
    if args.data_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="bench-answer-")
        args.data_dir = Path(tmp.name)
    settings = Settings(_env_file=None, data_dir=args.data_dir, llm_backend="local", llm_local_model=args.model,
                        llm_threads=args.threads)
    from core.llm import llm_status
    from rag.tool import RAGTool

    t = time.perf_counter()
    tool = RAGTool("bench", settings)                 # also joins and verifies the model on first use
    setup = {"open_s": round(time.perf_counter() - t, 1)}   # stores, embedder, model file check
    print(llm_status(settings), flush=True)
    setup["load_s"] = round(tool.llm.load(), 1)
    for lang, pdf in BOOKS.items():
        t = time.perf_counter()
        result = tool.add_document(pdf)
        setup[f"ingest_{lang}_s"] = round(time.perf_counter() - t, 1)
        setup[f"chunks_{lang}"] = result.chunks
    print("setup", json.dumps(setup), flush=True)

    rows = {"en": [], "zh": []}
    header = (f"{'lang':4} {'ttft':>6} {'model':>6} {'tok/s':>6} {'total':>6} {'prompt':>6} {'cached':>6} "
              f"{'read/s':>6} {'mode':8} answer")
    print(header)
    print("-" * len(header))
    for lang in ("en", "zh"):
        for question in QUESTIONS[lang][:args.questions]:
            row = run_question(tool, question)
            rows[lang].append(row)
            mode = "refused" if row["refused"] else row["mode"]
            if row["notice"] and "did not finish" in row["notice"]:
                mode = "timeout"
            cells = [cell(row.get(k)) for k in ("ttft_s", "model_ttft_s", "tok_s", "total_s", "prompt_tokens",
                                                 "cached_tokens", "read_tok_s")]
            print(f"{lang:4} " + " ".join(f"{c:>6}" for c in cells) + f" {mode:8} {question} → {row['text']}",
                  flush=True)

    engine = getattr(tool.llm, "_engine", None)
    summary = {"model": tool.llm.model, "threads": settings.llm_threads or "auto",
               "threads_read_write": [getattr(engine, "batch_threads", None), getattr(engine, "threads", None)],
               **setup}
    for lang, rs in rows.items():
        ttft = [r["ttft_s"] for r in rs if "ttft_s" in r]
        model_ttft = [r["model_ttft_s"] for r in rs if "model_ttft_s" in r]
        tok_s = [r["tok_s"] for r in rs if r.get("tok_s")]
        summary[lang] = {"questions": len(rs), "composed": len(ttft),
                         "refused": sum(r["refused"] for r in rs),
                         "ttft_p50_s": pct(ttft, 0.5), "ttft_p95_s": pct(ttft, 0.95),
                         "model_ttft_p50_s": pct(model_ttft, 0.5), "model_ttft_p95_s": pct(model_ttft, 0.95),
                         "tok_s_p50": pct(tok_s, 0.5), "tok_s_p95_low": pct(tok_s, 0.05),
                         "total_p50_s": pct([r["total_s"] for r in rs], 0.5),
                         "prompt_tokens_p50": pct([r["prompt_tokens"] for r in rs if r.get("prompt_tokens")], 0.5),
                         "read_tok_s_p50": pct([r["read_tok_s"] for r in rs if r.get("read_tok_s")], 0.5)}
    if args.summaries:
        print("\nchapter summaries, each asked for the first time:")
        summaries = {}
        for lang, questions in summary_questions(tool, args.summaries).items():
            got = [first_line_s(tool, q) for q in questions]
            for r in got:
                print(f"{lang:4} shown {r['shown_s']:>6} first line {r['first_line_s']:>6} total {r['total_s']:>6} "
                      f"{'refused' if r['refused'] else r['mode']:8} {r['question']} → {r['opening']}", flush=True)
            summaries[lang] = {"chapters": len(got), "refused": sum(r["refused"] for r in got),
                               "shown_p50_s": pct([r["shown_s"] for r in got], 0.5),
                               "first_line_p50_s": pct([r["first_line_s"] for r in got], 0.5),
                               "first_line_p95_s": pct([r["first_line_s"] for r in got], 0.95)}
        summary["summaries"] = summaries
    summary["looped_answers"] = counter.looped
    summary["loadavg_1min"] = [round(load_start, 1), round(os.getloadavg()[0], 1)]   # start, end: was the machine busy?
    summary["cpus"] = os.cpu_count()
    print()
    for lang in ("en", "zh"):
        s = summary[lang]
        print(f"{lang}: first token p50 {s['ttft_p50_s']} s, p95 {s['ttft_p95_s']} s "
              f"(model's share p50 {s['model_ttft_p50_s']} s); {s['tok_s_p50']} tok/s p50; "
              f"{s['composed']}/{s['questions']} composed, {s['refused']} refused")
    print(json.dumps(summary, ensure_ascii=False))
    if tmp is not None:
        tool = None
        tmp.cleanup()


if __name__ == "__main__":
    main()

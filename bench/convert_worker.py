"""What converting in a worker process costs: the same PDF converted in this process (rag.convert.convert_here,
the code the worker runs) and through the worker (rag.convert.convert_file), alternately, so that a busy
machine slows both alike. Reports the median wall time of each, their difference (the worker's cost per
file: pickling the result, the socket, the progress messages), the worker's own CPU time, and the first
conversion of a fresh worker (its start: importing MarkItDown, PDFium and Magika).

    python bench/convert_worker.py [--pdf ../shared/data/docs/pdfs_en/thinkpython2.pdf] [--rounds 5]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag import convert_worker  # noqa: E402
from rag.convert import _detect_format, convert_file, convert_here  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")     # utime + stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf", type=Path, default=SHARED / "docs" / "pdfs_en" / "thinkpython2.pdf")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    path = args.pdf.resolve()
    fmt = _detect_format(path, path.read_bytes()[:4096])

    convert_worker.shutdown()
    started = time.perf_counter()
    first = convert_file(path)
    cold = time.perf_counter() - started
    pid = convert_worker.idle_pids()[0]
    convert_here(path, fmt)                      # this process's own first run (imports, Magika) is not measured

    here, worker, worker_cpu = [], [], []
    for _ in range(args.rounds):
        started = time.perf_counter()
        doc_here = convert_here(path, fmt, progress=lambda *_: None)
        here.append(time.perf_counter() - started)
        cpu = cpu_seconds(pid)
        started = time.perf_counter()
        doc_worker = convert_file(path, progress=lambda *_: None)
        worker.append(time.perf_counter() - started)
        worker_cpu.append(cpu_seconds(pid) - cpu)
        assert convert_worker.idle_pids() == [pid], "the worker was replaced"
        assert doc_worker == doc_here == first, "the worker's document differs from this process's"
    report = {
        "file": path.name, "pages": first.page_count, "markdown_chars": len(first.markdown), "rounds": args.rounds,
        "in_process_median_s": round(statistics.median(here), 3),
        "worker_median_s": round(statistics.median(worker), 3),
        "worker_added_median_s": round(statistics.median(w - h for w, h in zip(worker, here)), 3),
        "worker_cpu_median_s": round(statistics.median(worker_cpu), 3),
        "first_conversion_of_a_fresh_worker_s": round(cold, 2),
        "load_average": os.getloadavg()[0],
    }
    print(json.dumps(report, indent=2))
    convert_worker.shutdown()


if __name__ == "__main__":
    main()

"""Every bad setting is refused at start: `python app.py` and `python -m rag list` run as real processes,
each with one bad setting in its environment (no .env: they start in an empty folder), and must exit
non-zero with one sentence that names the setting, before serving anything.

The processes run a few at a time in one module fixture; each row records the sentence, the exit code
and how long the program took to say it.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.app_process import free_port, stop

SECTION = "Settings"
ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = {"app.py": [str(ROOT / "app.py")], "python -m rag list": ["-m", "rag", "list"]}
START_TIMEOUT_S = 120.0

# (program, setting, bad value) the settings refuse (core.settings._RULES and the field types). Both programs
# take the issue's list and the values later rules refuse; the other values go through the same check, so the
# quick CLI alone proves them. Both check the settings before importing anything heavy (app.py: Gradio).
ISSUE_LIST = [("TOP_K", "-3"), ("RETRIEVAL_MODE", "bogus"), ("RRF_K", "-61"), ("CHUNK_SIZE", "5"),
              ("CHUNK_OVERLAP", "200"),                # = CHUNK_SIZE's default: the overlap must be smaller
              ("CANDIDATES", "0"), ("LLM_TIMEOUT_S", "-5"), ("APP_PORT", "99999")]
# Once accepted: a DATA_DIR that is a file ended in a traceback, a non-Bolt NEO4J_URI was refused only at the
# first note, and the others had no rule at all.
LATER_RULES = [("DATA_DIR", "<a file>"), ("NEO4J_URI", "http://localhost:7474"), ("WORKING_MEMORY_CAPACITY", "-1"),
               ("LLM_TEMPERATURE", "-3")]
MORE = [("TOP_K", "three"), ("LLM_TIMEOUT_S", "nan"), ("LLM_BACKEND", "gpt"), ("MAX_UPLOAD_MB", "0"),
        ("ANSWER_MIN_SUPPORT", "1.5"), ("EMBEDDING_BATCH_SIZE", "0"), ("NEO4J_URI", "localhost:7687"),
        ("WORKING_MEMORY_TTL_MINUTES", "0"), ("LLM_TEMPERATURE", "nan"), ("CONSOLIDATE_WORKING_THRESHOLD", "1.5"),
        ("CONSOLIDATE_EPISODIC_THRESHOLD", "-0.1")]
REFUSED = ([(program, name, value) for name, value in ISSUE_LIST + LATER_RULES for program in PROGRAMS]
           + [("python -m rag list", name, value) for name, value in MORE])


@dataclass
class Run:
    code: int | None          # None: it was still running (it served) and was stopped
    output: str
    seconds: float
    served: bool


def answers(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def environment(work: Path, name: str, value: str, port: int) -> dict[str, str]:
    """The developer's environment without any app setting, a data folder in `work`, then the bad one."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "QDRANT_", "NEO4J_", "APP_", "EMBEDDING_", "LLM_", "GRADIO_", "DATA_DIR"))}
    env.update(PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", DATA_DIR=str(work / "data"),
               APP_HOST="127.0.0.1", APP_PORT=str(port), LLM_BACKEND="none", GRADIO_ANALYTICS_ENABLED="False")
    if name == "DATA_DIR":
        blocker = work / "not-a-folder"
        blocker.write_text("a file where the data folder should be")
        value = str(blocker)
    env[name] = value
    return env


def run(program: str, name: str, value: str, work: Path) -> Run:
    """Start the program with the bad setting; wait until it exits or serves (then stop it)."""
    work.mkdir(parents=True)
    port = free_port()
    log = work / "output.txt"
    started = time.perf_counter()
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, *PROGRAMS[program]], cwd=work, stdout=out, stderr=subprocess.STDOUT,
                                env=environment(work, name, value, port))
    served = False
    while proc.poll() is None and time.perf_counter() - started < START_TIMEOUT_S:
        if program == "app.py" and answers(port):
            served = True
            break
        time.sleep(0.1)
    seconds = time.perf_counter() - started
    if proc.poll() is None:
        stop(proc)
        return Run(None, log.read_text(errors="replace"), seconds, served)
    return Run(proc.returncode, log.read_text(errors="replace"), seconds, served)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[tuple[str, str, str], Run]:
    """Every program with every bad setting, three processes at a time (most of each is Python importing)."""
    root = tmp_path_factory.mktemp("settings")
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {job: pool.submit(run, *job, root / f"run-{i}") for i, job in enumerate(REFUSED)}
    return {job: future.result() for job, future in futures.items()}


def refused_in_one_sentence(result: Run, name: str) -> str:
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.code not in (None, 0) and not result.served, result
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    sentence = lines[0].removeprefix("error: ")
    assert name in sentence and sentence.endswith("."), sentence
    return sentence


@pytest.mark.parametrize("program, name, value", REFUSED, ids=[f"{n}={v}-{p}" for p, n, v in REFUSED])
def test_a_bad_setting_is_refused_at_start_in_one_sentence(runs, reliability, program, name, value):
    result = runs[(program, name, value)]
    sentence = refused_in_one_sentence(result, name)
    reliability.record(SECTION, f"{name}={value} → {program}",
                       f"exit {result.code} after {result.seconds:.1f} s, nothing served: “{sentence}”")

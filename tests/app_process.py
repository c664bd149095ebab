"""The real app (python app.py) as a subprocess on a free loopback port, for tests and benchmarks.

It starts in `work` (so a developer's .env cannot leak in) with its data folder in `work/data` and none
of the developer's LLM/store/app settings; `extra_env` adds what a caller needs (APP_USERS, …).
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


class AppDidNotStart(RuntimeError):
    """The app exited or did not answer in time; the message ends with its log."""


@dataclass
class AppProcess:
    url: str
    proc: subprocess.Popen
    log: Path
    data: Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def app_env(work: Path, port: int, **extra: str) -> dict[str, str]:
    """The app's environment: nothing of the developer's LLM/store/app settings, a data folder in `work`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "QDRANT_", "NEO4J_", "APP_", "EMBEDDING_", "LLM_", "GRADIO_"))}
    env.update(PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", DATA_DIR=str(work / "data"),
               APP_HOST="127.0.0.1", APP_PORT=str(port), GRADIO_ANALYTICS_ENABLED="False", LOG_LEVEL="WARNING")
    env.update(extra)
    return env


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def _started(proc: subprocess.Popen, url: str, timeout: float) -> bool:
    """Whether the app answers at `url` within `timeout` seconds; False as soon as it has exited."""
    deadline = time.monotonic() + timeout
    while not _answers(url):
        if proc.poll() is not None or time.monotonic() > deadline:
            return False
        time.sleep(0.5)
    return True


# Gradio's words when the port it was given is taken: the port was free when free_port picked it, and
# another process (a test server, an outgoing connection) took it before the app bound it
_PORT_TAKEN = "Cannot find empty port"


@contextmanager
def app_process(work: Path, *, start_timeout: float = 120, stop_timeout: float = 15, attempts: int = 3,
                first_port: int | None = None, **extra_env: str):
    """Start the app, yield an AppProcess once it answers, stop it after. AppDidNotStart if it cannot.

    A start that fails only because its port was taken in the meantime is tried again on another port
    (`first_port` gives the first try's port, for the test of that)."""
    log_path = work / "app.log"
    for attempt in range(1, attempts + 1):
        port = first_port if attempt == 1 and first_port else free_port()
        with open(log_path, "wb") as log:
            proc = subprocess.Popen([sys.executable, str(ROOT / "app.py")], cwd=work,
                                    env=app_env(work, port, **extra_env), stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            started = _started(proc, url, start_timeout)
        except BaseException:
            stop(proc, stop_timeout)
            raise
        if started:
            break
        stop(proc, stop_timeout)
        output = log_path.read_text(errors="replace")
        if _PORT_TAKEN not in output or attempt == attempts:
            raise AppDidNotStart("the app did not start:\n" + output[-3000:])
    try:
        yield AppProcess(url, proc, log_path, work / "data")
    finally:
        stop(proc, stop_timeout)


def stop(proc: subprocess.Popen, timeout: float = 15) -> None:
    """End a process this test started: terminate, and kill it if it has not ended within `timeout`."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()

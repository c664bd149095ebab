"""What only the machine can say about the settings is checked when the app starts (core.settings.start_problems):
`python app.py` runs as a real process with one such setting and must exit non-zero with one sentence that
names it, before serving anything: a model setting naming a model this machine does not have (nothing is
ever downloaded: the model hub is a recording server here, and must hear nothing), a DATA_DIR this user
cannot write, and an APP_USERS that names a person twice. And the model libraries are offline from the
first import, whatever the environment says.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.app_process import app_env, free_port, stop

SECTION = "Settings"
ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 120.0


class RecordingHub:
    """A stand-in for the Hugging Face hub (HF_ENDPOINT): answers 404 to everything and records each request."""

    def __init__(self):
        self.requests: list[str] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                hub.requests.append(f"{self.command} {self.path}")
                self.send_response(404)
                self.end_headers()

            do_HEAD = do_POST = do_GET

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def stop(self):
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture(scope="module")
def hub():
    server = RecordingHub()
    yield server
    server.stop()


def start(work: Path, hub: RecordingHub, **settings: str) -> tuple[int | None, str, float]:
    """python app.py with these settings, HF_HUB_OFFLINE and TRANSFORMERS_OFFLINE unset and the hub pointed
    at `hub`: (exit code or None if it served, its output, seconds)."""
    work.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = app_env(work, port, LLM_BACKEND="none", HF_ENDPOINT=hub.url, **settings)
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        env.pop(name, None)
    log = work / "output.txt"
    started = time.perf_counter()
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, str(ROOT / "app.py")], cwd=work, env=env, stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        proc.wait(timeout=START_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pass
    seconds = time.perf_counter() - started
    if proc.poll() is None:
        stop(proc)
        return None, log.read_text(errors="replace"), seconds
    return proc.returncode, log.read_text(errors="replace"), seconds


def one_sentence(code: int | None, output: str, *names: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert code not in (None, 0), output
    assert len(lines) == 1 and "Traceback" not in output, output
    sentence = lines[0].removeprefix("error: ")
    assert all(name in sentence for name in names) and sentence.endswith("."), sentence
    return sentence


MODEL_SETTINGS = [
    ("EMBEDDING_MODEL", "no-such-model"),
    ("MULTILINGUAL_EMBEDDING_MODEL", "no-such-multilingual-model"),
    ("RERANKER_MODEL", "someone/no-such-reranker"),
    ("LLM_LOCAL_MODEL", "qwen-9000"),
    ("LLM_MODEL_PATH", "/nowhere/model.gguf"),
    ("SUPPORT_JUDGE", "qwen-9000"),
]


@pytest.mark.parametrize("name, value", MODEL_SETTINGS, ids=[n for n, _ in MODEL_SETTINGS])
def test_a_model_setting_naming_a_missing_model_is_refused_at_start_without_asking_the_hub(
        reliability, tmp_path, hub, name, value):
    before = len(hub.requests)
    code, output, seconds = start(tmp_path, hub, **{name: value})
    sentence = one_sentence(code, output, name)
    asked = hub.requests[before:]
    assert asked == [], asked
    reliability.record(SECTION, f"{name}={value} → app.py (HF_HUB_OFFLINE unset)",
                       f"exit {code} after {seconds:.1f} s, nothing served, {len(asked)} requests to the model "
                       f"hub: “{sentence}”")


def test_the_model_libraries_are_offline_from_the_first_import(reliability, tmp_path, hub):
    """Gradio imports huggingface_hub, which reads HF_HUB_OFFLINE once: importing the app sets it first."""
    env = app_env(tmp_path, free_port(), HF_ENDPOINT=hub.url)
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        env.pop(name, None)
    probe = ("import app, huggingface_hub.constants as c, gradio; "
             "print(c.HF_HUB_OFFLINE, 'huggingface_hub' in __import__('sys').modules)")
    result = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["True", "True"], result.stdout
    kept = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env={**env, "HF_HUB_OFFLINE": "0"},
                          capture_output=True, text=True, timeout=300)
    assert kept.stdout.split() == ["False", "True"], kept.stdout      # a deliberate HF_HUB_OFFLINE=0 is kept
    reliability.record(SECTION, "HF_HUB_OFFLINE unset, then `import app` (Gradio imports huggingface_hub)",
                       "huggingface_hub is offline from its first import (HF_HUB_OFFLINE=1 set before it); "
                       "an explicit HF_HUB_OFFLINE=0 is kept")


@contextmanager
def unwritable_folder(folder: Path):
    """A folder this process's user cannot write in: read-only for a user, immutable (chattr +i) for root,
    whom permissions do not stop."""
    folder.mkdir(parents=True)
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(folder)], check=True)
    else:
        folder.chmod(0o555)
    try:
        yield folder
    finally:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        else:
            folder.chmod(0o755)


def test_an_unwritable_data_dir_is_refused_at_start_in_one_sentence(reliability, tmp_path, hub):
    with unwritable_folder(tmp_path / "locked") as locked:
        for data_dir in (locked, locked / "data"):                  # the folder itself, or one to be made in it
            code, output, seconds = start(tmp_path / f"run-{data_dir.name}", hub, DATA_DIR=str(data_dir))
            sentence = one_sentence(code, output, "DATA_DIR")
            assert "cannot be written" in sentence, sentence
            assert list(locked.iterdir()) == []
            where = "an unwritable folder" if data_dir == locked else "a folder to be made inside an unwritable one"
            reliability.record(SECTION, f"DATA_DIR={where} → app.py",
                               f"exit {code} after {seconds:.1f} s, nothing served, no traceback: “{sentence}”")


@pytest.mark.parametrize("users, shown", [("alice:pw1,bob:pw2,bob:pw3", "'bob' twice"),
                                          ("alice:pw1,Bob:pw2,bob:pw3", "'Bob' and 'bob'")],
                         ids=["same-name", "same-name-in-another-case"])
def test_a_name_given_twice_in_app_users_is_refused_at_start(reliability, tmp_path, hub, users, shown):
    code, output, seconds = start(tmp_path, hub, APP_USERS=users)
    sentence = one_sentence(code, output, "APP_USERS", shown)
    assert not any(password in output for password in ("pw1", "pw2", "pw3"))   # no password is repeated
    reliability.record(SECTION, f"APP_USERS naming {shown.replace(chr(39), '')} → app.py",
                       f"exit {code} after {seconds:.1f} s, nothing served, no password shown: “{sentence}”")

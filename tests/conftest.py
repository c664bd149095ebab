"""Shared fixtures: a fresh data folder per test, the real embedding model, a loopback LLM server."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# Every test (and every app or CLI process a test starts) joins the packaged local model into ONE folder,
# once per machine, instead of copying 491 MB into each temporary data folder.
os.environ.setdefault("LLM_MODEL_DIR", os.path.join(tempfile.gettempdir(), "pdf-learning-assistant-test-models"))

from core.settings import Settings, get_settings  # noqa: E402
from tests.reliability import table as reliability_table  # noqa: E402

CHROMIUM = "/usr/bin/chromium"     # Debian's chromium; Playwright never downloads a browser here
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(autouse=True)
def fresh_settings_cache():
    """get_settings() is cached for the process: a test whose code reads it under its own environment (a
    conversion without settings, the in-process CLI) must not hand that environment to the next test in the
    same worker (the CLI test once answered with the local model because an earlier test had filled it)."""
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.fixture
def settings(tmp_path) -> Settings:
    """Settings with their own data folder and no LLM (whatever the developer's .env says)."""
    return Settings(_env_file=None, data_dir=tmp_path / "data", llm_backend="none")


@pytest.fixture(scope="session")
def fake_llm():
    from tests.llm_server import FakeLLM
    server = FakeLLM().start()
    yield server
    server.stop()


@pytest.fixture
def llm_settings(tmp_path, fake_llm) -> Settings:
    fake_llm.reset()
    return Settings(_env_file=None, data_dir=tmp_path / "data", openai_base_url=fake_llm.base_url,
                    openai_api_key="test-key", llm_model="fake-model", llm_timeout_s=2.0)


@pytest.fixture(scope="session")
def extractive_app(tmp_path_factory):
    """The app with no language model at all (no endpoint, LLM_BACKEND=none), started once per worker, with a
    login for each test module that needs a library of its own (tests.browser.conftest.READERS)."""
    from tests.browser.conftest import READERS, running_app
    with running_app(tmp_path_factory.mktemp("extractive-app"), LLM_BACKEND="none",
                     APP_USERS=",".join(f"{u}:{p}" for u, p in READERS.items())) as url:
        yield url


@pytest.fixture(scope="session")
def local_model_dir(tmp_path_factory) -> Path:
    """The packaged local model (installed by `make install`) joined and verified once per session, in a
    folder every test shares. Missing packages fail the run: a skip would hide a broken install."""
    from core import local_model
    folder = Path(os.environ["LLM_MODEL_DIR"])
    s = Settings(_env_file=None, data_dir=tmp_path_factory.mktemp("local-model-data"), llm_model_dir=folder)
    reason = local_model.unavailable_reason(s)
    if reason:
        pytest.fail(f"the packaged local model is not installed: {reason}")
    assert local_model.model_file(s) is not None
    return folder


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium driven by Playwright. Missing, it fails the run: a skip would hide it."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run scripts/system-deps.sh (it names the apt-get command)", pytrace=False)
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def pytest_sessionfinish(session, exitstatus):
    """The reliability table (tests/reliability/table.py): written by this process, or, in an xdist worker,
    sent to the controller, which alone loads this conftest's hooks for the whole run."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["reliability"] = reliability_table.seen()
    else:
        reliability_table.write()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """An xdist worker has finished: its reliability rows join the controller's table."""
    seen = getattr(node, "workeroutput", {}).get("reliability")
    if seen:
        reliability_table.merge(seen)

"""Browser fixtures: the real app (python app.py) on a free loopback port, Debian's Chromium via Playwright.

The app runs as a subprocess with its own data folder; it starts in a temporary working directory so a
developer's .env cannot leak in. `live_app` has two logins (APP_USERS) and the loopback OpenAI-compatible
test server as its LLM; `extractive_app` (tests/conftest.py) has no language model and a login per test module that
needs a library of its own (READERS). Screenshots go to test-artefacts/ (git-ignored) for a reviewer.
"""
from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.app_process import AppDidNotStart, app_process

ROOT = Path(__file__).resolve().parents[2]
ARTEFACTS = ROOT / "test-artefacts"
USERS = {"alice": "alice-pw", "bob": "bob-pw"}
# The no-model app's logins: one app per worker serves every module below, each in a library of its own
# (an app start under load costs up to a minute; a login costs a second).
READERS = {name: f"{name}-pw" for name in ("reader", "mei", "guide", "cards", "scripts")}
# Every wait of a page (a selector, a function): generous, because on 2 cores a render or an answer can
# queue behind a local model or an ingest in the same run; a wait that succeeds returns at once anyway.
BROWSER_WAIT_MS = 90_000


@contextmanager
def running_app(work: Path, **extra_env: str):
    """python app.py in `work` with `extra_env`; yields its URL once it answers. The log is printed if it
    fails to start and kept in test-artefacts/ with KEEP_APP_LOG=1."""
    try:
        with app_process(work, **extra_env) as app:
            yield app.url
    except AppDidNotStart as exc:
        pytest.fail(str(exc))
    finally:
        if os.environ.get("KEEP_APP_LOG") and (work / "app.log").exists():
            ARTEFACTS.mkdir(exist_ok=True)
            shutil.copy(work / "app.log", ARTEFACTS / f"{work.name}.log")


@pytest.fixture(scope="session")
def live_app(tmp_path_factory, fake_llm):
    """The app with two logins (APP_USERS) and the loopback fake LLM as its OpenAI-compatible endpoint."""
    with running_app(tmp_path_factory.mktemp("app"), APP_USERS=",".join(f"{u}:{p}" for u, p in USERS.items()),
                     OPENAI_BASE_URL=fake_llm.base_url, OPENAI_API_KEY="test-key", LLM_MODEL="fake-model",
                     LLM_TIMEOUT_S="30") as url:
        yield url


@pytest.fixture(scope="session")
def artefacts() -> Path:
    ARTEFACTS.mkdir(exist_ok=True)
    return ARTEFACTS


def login(browser, url: str, user: str, *, locale: str = "en-US", bypass_csp: bool = False,
          headers: dict[str, str] | None = None):
    """A fresh browser context logged in as `user` (USERS or READERS); returns (context, page) on the app's main
    view. `bypass_csp`: the page's Content-Security-Policy is not enforced (a test of what escaping alone holds)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale=locale, accept_downloads=True,
                                  bypass_csp=bypass_csp, extra_http_headers=headers or {})
    context.set_default_timeout(BROWSER_WAIT_MS)
    page = context.new_page()
    page.goto(url + "/")
    page.fill("input[type=text]", user)
    page.fill("input[type=password]", {**USERS, **READERS}[user])
    page.press("input[type=password]", "Enter")   # the login button's text follows the language
    page.wait_for_selector("#tabs")
    # The first visitor waits for the models to load behind on_load; the who-line says it is done.
    page.wait_for_function("document.querySelector('#who') && document.querySelector('#who').innerText.includes("
                           f"'{user}')", timeout=120_000)
    return context, page


def upload(page, *files: Path) -> None:
    """Upload `files` at once in the Documents tab and wait until each one's row says it is done (other files may
    be listed). Several files go in one drop: a second drop right after the first can land while the upload box
    is still being reset, and is lost."""
    page.set_input_files("#upload input[type=file]", [str(f) for f in files])
    try:
        page.wait_for_function("names => names.every(name => [...document.querySelectorAll("
                               "'#upload-progress tr[data-state=done]')].some(r => r.innerText.includes(name)))",
                               arg=[f.name for f in files], timeout=120_000 * len(files))
    except Exception:
        ARTEFACTS.mkdir(exist_ok=True)      # what the page showed instead, for whoever reads the failure
        page.screenshot(path=str(ARTEFACTS / f"upload-timeout-{files[0].stem}.png"), full_page=True)
        raise


def open_tab(page, label: str) -> None:
    """Switch to the tab labelled `label`. A click that lands while a dropdown's list is open only closes
    the list, so the switch is confirmed (aria-selected) and the click repeated once after Escape."""
    tab = f"button[role=tab]:has-text('{label}')"
    for attempt in range(2):
        page.click(tab)
        try:
            page.wait_for_selector(f"{tab}[aria-selected=true]", timeout=10_000)
            return
        except Exception:  # noqa: BLE001 - the second attempt raises
            if attempt:
                raise
            page.keyboard.press("Escape")


# Gradio 6 draws a status tracker (div[data-testid=status-tracker]) in each output of an event (unless the event has
# show_progress="hidden"); from the moment the event is triggered (pending, queued, processing) until its outputs
# are applied, the tracker lacks the class `hide`.
# It goes busy a frame or two after the click that triggers it, so "no busy tracker" right after a click proves
# nothing: the watch is set before the action, records that the tracker went busy (now, or in a class change the
# observer saw), and the wait ends only when it has and is idle again.
WATCH_TRACKER = """s => {
  const tracker = () => document.querySelector(`${s} [data-testid=status-tracker]`);
  const busy = t => !!t && !t.classList.contains('hide');
  const watch = {seen: busy(tracker())};
  watch.observer = new MutationObserver(records => {
    if (busy(tracker()) || records.some(r => r.target.matches && r.target.matches('[data-testid=status-tracker]')
        && r.target.closest(s) && r.oldValue !== null && !r.oldValue.split(' ').includes('hide'))) watch.seen = true;
  });
  watch.observer.observe(document.body, {subtree: true, childList: true, attributes: true, attributeFilter: ['class'],
                                          attributeOldValue: true});
  (window.__watched = window.__watched || {})[s] = watch;
}"""
TRACKER_SETTLED = """s => {
  const watch = window.__watched[s], t = document.querySelector(`${s} [data-testid=status-tracker]`);
  if (!watch.seen || !t || !t.classList.contains('hide')) return false;
  watch.observer.disconnect();
  return true;
}"""


@contextmanager
def settled(page, selector: str):
    """Wait, after the block, until an event the block triggered that updates `selector` has been applied. A page's
    text cannot tell: the old text stays on screen (and in the DOM) until the update lands."""
    page.evaluate(WATCH_TRACKER, selector)
    yield
    try:
        page.wait_for_function(TRACKER_SETTLED, arg=selector)
    except PlaywrightTimeout as exc:
        seen = page.evaluate("s => window.__watched[s].seen", selector)
        raise AssertionError(f"no event updating {selector} " + ("finished" if seen else "started")) from exc

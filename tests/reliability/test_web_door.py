"""The HTTP door of the real app (python app.py with two logins, MAX_UPLOAD_MB=8 and the loopback LLM):
uploads over the limit are refused before they are stored, every response carries a Content-Security-Policy
under which the whole app still works in Chromium (and injected script, remote images and frames do not),
and an empty question over the API gets one sentence. See webauth.py.
"""
from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.app_process import AppDidNotStart, app_process
from tests.browser.pdfgen import NOTICE, make_pdf

USERS = {"alice": "alice-pw", "bob": "bob-pw"}
MAX_UPLOAD_MB = 8
MB = 1024 * 1024
BOUNDARY = "door-test-boundary"


@pytest.fixture(scope="module")
def app(tmp_path_factory, fake_llm):
    work = tmp_path_factory.mktemp("door-app")
    try:
        with app_process(work, APP_USERS=",".join(f"{u}:{p}" for u, p in USERS.items()),
                         MAX_UPLOAD_MB=str(MAX_UPLOAD_MB), OPENAI_BASE_URL=fake_llm.base_url,
                         OPENAI_API_KEY="test-key", LLM_MODEL="fake-model", LLM_TIMEOUT_S="30") as running:
            yield {"url": running.url, "data": running.data, "log": running.log}
    except AppDidNotStart as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="module")
def alice(app):
    client = httpx.Client(base_url=app["url"], timeout=120)
    assert client.post("/login", data={"username": "alice", "password": USERS["alice"]}).status_code == 200
    yield client
    client.close()


def served_files(app) -> dict[str, int]:
    """Every file under DATA_DIR/web (Gradio's upload folder and the users' served folders), with its size."""
    root = app["data"] / "web"
    return {str(p): p.stat().st_size for p in root.rglob("*") if p.is_file()} if root.is_dir() else {}


class DiskWatch:
    """The most bytes DATA_DIR/web held while the watch ran (sampled every 10 ms)."""

    def __init__(self, app):
        self.app, self.peak, self._stop = app, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            try:
                self.peak = max(self.peak, sum(served_files(self.app).values()))
            except OSError:                 # a file went while it was measured
                pass
            time.sleep(0.01)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def multipart_head(name: str) -> bytes:
    return (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"{name}\"\r\n"
            "Content-Type: application/pdf\r\n\r\n").encode()


TAIL = f"\r\n--{BOUNDARY}--\r\n".encode()


def detail(response: httpx.Response) -> str:
    return response.json()["detail"]


# -- uploads at the door -------------------------------------------------------------------------------------

def test_an_upload_with_a_content_length_over_the_limit_is_refused_before_its_body_is_read(reliability, app, alice):
    """The issue's 300 MB POST: only its headers and 10 bytes are sent, and the answer comes at once."""
    before = served_files(app)
    size = 300 * MB
    cookie = "; ".join(f"{k}={v}" for k, v in alice.cookies.items())
    host, port = app["url"].removeprefix("http://").split(":")
    head = (f"POST /gradio_api/upload HTTP/1.1\r\nHost: {host}:{port}\r\nCookie: {cookie}\r\n"
            f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\nContent-Length: {size}\r\n\r\n").encode()
    started = time.perf_counter()
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(head + multipart_head("huge.pdf")[:10])
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    seconds = time.perf_counter() - started
    status_line, _, rest = answer.partition(b"\r\n")
    sentence = json.loads(rest.split(b"\r\n\r\n", 1)[1])["detail"]
    assert status_line.startswith(b"HTTP/1.1 413"), answer[:300]
    assert f"larger than the {MAX_UPLOAD_MB} MB limit" in sentence and sentence.endswith(".")
    assert served_files(app) == before
    reliability.record("Limits", f"upload POST declaring 300 MB (Content-Length; MAX_UPLOAD_MB={MAX_UPLOAD_MB})",
                       f"413 after its headers and 10 bytes, in {seconds:.2f} s (the body is never read, the "
                       f"connection closes), nothing written: “{sentence}”")


def test_a_chunked_upload_is_counted_as_it_arrives_and_stopped_at_the_limit(reliability, app, alice):
    before = served_files(app)
    sent = 0

    def body():                          # no Content-Length: httpx sends it chunked
        nonlocal sent
        yield multipart_head("stream.pdf")
        block = b"%PDF" + b"x" * (MB - 4)
        for _ in range(300):
            sent += len(block)
            yield block
        yield TAIL

    with DiskWatch(app) as disk:
        response = alice.post("/gradio_api/upload", content=body(),
                              headers={"content-type": f"multipart/form-data; boundary={BOUNDARY}"})
    assert response.status_code == 413 and "content-length" not in response.request.headers
    assert f"larger than the {MAX_UPLOAD_MB} MB limit" in detail(response)
    assert served_files(app) == before
    assert disk.peak <= (MAX_UPLOAD_MB + 1) * MB and sent < 100 * MB, (disk.peak, sent)
    reliability.record("Limits", "upload POST of 300 MB sent chunked (no Content-Length)",
                       f"413 once the body passed the limit ({sent / MB:.0f} MB of 300 sent before the connection "
                       f"closed); what Gradio had begun to write (at most {disk.peak / MB:.1f} MB) was deleted, "
                       f"nothing is left: “{detail(response)}”")


def test_one_file_over_the_limit_in_a_request_under_it_is_refused_too(reliability, app, alice):
    before = served_files(app)
    content = b"%PDF" + b"y" * (MAX_UPLOAD_MB * MB + 200_000)
    response = alice.post("/gradio_api/upload", files={"files": ("big.pdf", content)})
    assert response.status_code == 413 and f"{MAX_UPLOAD_MB} MB limit" in detail(response), response.text
    assert served_files(app) == before
    reliability.record("Limits", f"one file of {len(content) / MB:.1f} MB (the limit: {MAX_UPLOAD_MB} MB a file)",
                       f"413, nothing stored: “{detail(response)}”")


def test_an_upload_under_the_limit_is_stored_for_its_uploader(reliability, app, alice):
    content = b"%PDF" + b"z" * (MAX_UPLOAD_MB * MB - 100_000)
    response = alice.post("/gradio_api/upload", files={"files": ("fits.pdf", content)})
    assert response.status_code == 200, response.text
    path = Path(response.json()[0])
    assert path.is_file() and path.stat().st_size == len(content) and "/users/alice-" in str(path)
    path.unlink()
    reliability.record("Limits", f"one file of {len(content) / MB:.1f} MB (under the {MAX_UPLOAD_MB} MB limit)",
                       "200: stored, in alice's own uploads folder")


# -- the Content-Security-Policy -----------------------------------------------------------------------------

def policy_of(response: httpx.Response) -> dict[str, list[str]]:
    header = response.headers["content-security-policy"]
    return {d.split()[0]: d.split()[1:] for d in (x.strip() for x in header.split(";")) if d}


def test_every_response_carries_the_content_security_policy(reliability, app, alice):
    page = alice.get("/")
    policy = policy_of(page)
    nonce = next(s for s in policy["script-src"] if s.startswith("'nonce-"))[7:-1]
    scripts = page.text.count("<script")
    assert scripts >= 3 and page.text.count(f'<script nonce="{nonce}"') == scripts
    assert policy["default-src"] == ["'self'"] and policy["frame-src"] == ["'none'"]
    assert policy["object-src"] == ["'none'"] and "'unsafe-inline'" not in policy["script-src"]
    for directive, sources in policy.items():       # no remote host anywhere
        assert all(s.startswith("'") or s in ("data:", "blob:") for s in sources), (directive, sources)
    assert alice.get("/").headers["content-security-policy"] != page.headers["content-security-policy"]
    upload = alice.post("/gradio_api/upload", files={"files": ("tiny.md", b"# tiny\n")})
    served = alice.get(f"/gradio_api/file={upload.json()[0]}")
    api = alice.get("/config")
    for response in (upload, served, api):
        assert "'nonce-" not in response.headers["content-security-policy"]
        assert policy_of(response)["default-src"] == ["'self'"] and response.headers["x-content-type-options"] == "nosniff"
    Path(upload.json()[0]).unlink()
    shown = page.headers["content-security-policy"].replace(nonce, "…")
    reliability.record("Hostile input", "the Content-Security-Policy of the app's page, its files and its API",
                       f"on every response; the page's {scripts} inline and bundled scripts carry a fresh nonce "
                       f"per response, served files and API answers get no nonce: “{shown}”")


def test_an_empty_question_over_the_api_gets_one_sentence(reliability, app, alice):
    for question in ("", "   \n  "):
        started = alice.post("/gradio_api/call/ask", json={"data": [question, False, False]})
        assert started.status_code == 200, started.text
        kind, data = None, None
        with alice.stream("GET", f"/gradio_api/call/ask/{started.json()['event_id']}") as stream:
            for line in stream.iter_lines():
                if line.startswith("event:"):
                    kind = line[6:].strip()
                elif line.startswith("data:") and kind in ("complete", "error"):
                    data = json.loads(line[5:])
                    break
        assert kind == "complete", (kind, data)
        said = [x for x in data if isinstance(x, str) and x]
        assert said == ["Type a question first."], data
    reliability.record("Hostile input", "empty and blank question over the API (/gradio_api/call/ask)",
                       f"completes with one sentence in the answer notice: “{said[0]}” (it was Gradio's "
                       "“didn't return enough output values” error)")


# -- the whole app in Chromium under the policy -------------------------------------------------------------

WATCH_POLICY = """window.__csp = [];
document.addEventListener('securitypolicyviolation', e => window.__csp.push(
  [e.violatedDirective, e.blockedURI, (e.sourceFile || '') + ':' + e.lineNumber]));"""

WATCH_CHAT = """() => {
  window.__answers = [];
  new MutationObserver(() => {            // the whole page: a tab switch may mount the chat anew
    const bots = document.querySelectorAll('#chat [data-testid="bot"]');
    if (bots.length) {
      const text = bots[bots.length - 1].innerText.trim();
      if (window.__answers[window.__answers.length - 1] !== text) window.__answers.push(text);
    }
  }).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""

INJECT = """() => {
  const s = document.createElement('script'); s.textContent = 'window.__ran = "inline script"';
  document.body.appendChild(s);
  const d = document.createElement('div');
  d.innerHTML = '<img src="x" onerror="window.__ran = \\'onerror\\'">';
  document.body.appendChild(d);
  const i = document.createElement('img'); i.src = 'https://example.com/tracker.png'; document.body.appendChild(i);
  const f = document.createElement('iframe'); f.src = 'https://example.com/'; document.body.appendChild(f);
}"""


def refused_in_page(page, too_big) -> str:
    """The file over the limit chosen in the upload box, and the last line of the page's refusal. The page reads
    the file before it says no; beside the whole suite the refusal once never came in 90 s (alone it comes in
    seconds), as if the box had not taken the second choice while it finished the first upload: chosen again."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    def choose_and_read() -> str:
        page.set_input_files("#upload input[type=file]", [str(too_big)])
        return page.wait_for_selector(".toast-body", timeout=45_000).inner_text().strip().splitlines()[-1]

    try:
        return choose_and_read()
    except PlaywrightTimeout:
        page.set_input_files("#upload input[type=file]", [])
        return choose_and_read()


def test_the_whole_app_works_in_chromium_under_the_policy(reliability, app, browser, fake_llm, tmp_path):
    from tests.browser.conftest import open_tab
    from tests.browser.test_app_browser import download_report
    pdf = tmp_path / "directive.pdf"
    pdf.write_bytes(make_pdf(NOTICE, title="Airworthiness Directives"))
    too_big = tmp_path / "too-big.pdf"
    too_big.write_bytes(b"%PDF" + b"q" * (MAX_UPLOAD_MB * MB + 100_000))
    url = app["url"]
    off_origin: list[str] = []
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    context.set_default_timeout(90_000)
    context.add_init_script(WATCH_POLICY)
    page = context.new_page()
    page.on("request", lambda r: off_origin.append(r.url) if not r.url.startswith((url, "data:", "blob:")) else None)
    done = []
    try:
        page.goto(url + "/")
        page.fill("input[type=text]", "bob")
        page.fill("input[type=password]", USERS["bob"])
        page.press("input[type=password]", "Enter")
        page.wait_for_function("document.querySelector('#who') && document.querySelector('#who').innerText.includes('bob')",
                               timeout=120_000)
        done.append("login")
        page.set_input_files("#upload input[type=file]", [str(pdf)])
        page.wait_for_selector("#upload-progress tr[data-state=done]", timeout=180_000)
        done.append("upload")
        before = served_files(app)
        uploads = []
        page.on("request", lambda r: uploads.append(r.url) if r.url.split("?")[0].endswith("/gradio_api/upload") else None)
        toast = refused_in_page(page, too_big)                              # Gradio's own check, in the page
        assert "exceed the maximum allowed size of 8.0 Mb" in toast and uploads == [], (toast, uploads)
        assert served_files(app) == before
        done.append("a file over the limit refused in the page")
        for label in ("Q&A", "Notes", "Recall", "Review", "Reports", "Documents"):
            open_tab(page, label)
        done.append("every tab")
        fake_llm.mode, fake_llm.stall_seconds = "stall_midstream", 1.5       # a pause mid-answer: visible streaming
        fake_llm.answer = ("If the two sensors disagree by more than the threshold, the stabilizer trim system is "
                           "disabled for the remainder of the flight [1].")       # the document's words: it stays
        try:
            open_tab(page, "Q&A")
            page.evaluate(WATCH_CHAT)
            page.fill("#question textarea", "What does the AOA sensor disagreement threshold depend on?")
            page.click("#ask")
            page.wait_for_function("/Answered by|Quoted from/.test(document.querySelector('#answer-notice').innerText)",
                                   timeout=90_000)
        finally:
            fake_llm.reset()
        answers, notice = page.evaluate("window.__answers"), page.inner_text("#answer-notice").strip()
        drafts = {a for a in answers[:-1] if a.startswith("If the two sensors")}   # the model's text, as it came
        assert len(drafts) >= 2, (answers, notice)
        done.append(f"a streamed answer ({len(drafts)} drafts, then “{notice[:40]}…”)")
        page.click("#sources label >> nth=0")
        page.wait_for_selector("#page-view img")
        assert page.evaluate("document.querySelector('#page-view img').naturalWidth") > 0
        done.append("the cited page's image")
        open_tab(page, "Notes")
        page.fill("#concept input", "MCAS")
        page.keyboard.press("Escape")
        page.fill("#note-text textarea", "MCAS is disabled when the two AOA sensors disagree.")
        page.click("#note-save")
        page.wait_for_function("document.querySelector('#concept-graph svg .concept-node')")
        done.append("the concept graph")
        assert download_report(page, tmp_path)["user"]["id"] == "bob"      # and it fits the report schema
        done.append("the report download")
        violations, remote = page.evaluate("window.__csp"), list(off_origin)
        page.evaluate(INJECT)
        page.wait_for_timeout(1500)
        ran = page.evaluate("window.__ran || null")
        blocked = page.evaluate("window.__csp")[len(violations):]
    finally:
        context.close()
    assert violations == [] and remote == [], (violations, remote)
    reliability.record("Hostile input", "the whole app in Chromium under its Content-Security-Policy",
                       f"{', '.join(done)}: all work, with {len(violations)} policy violations and "
                       f"{len(remote)} requests off the app's origin")
    reliability.record("Limits", f"a file over MAX_UPLOAD_MB={MAX_UPLOAD_MB} chosen in the browser",
                       f"the page refuses it before sending anything (no upload request): “{toast}”")
    directives = sorted({v[0] for v in blocked})
    assert ran is None and {"script-src-elem", "script-src-attr", "img-src", "frame-src"} <= set(directives), blocked
    reliability.record("Hostile input", "an inline script, an onerror handler, a remote image and a remote frame "
                                        "added to the page (as an injection would)",
                       f"none ran or loaded: {len(blocked)} violations reported ({', '.join(directives)})")

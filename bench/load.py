"""Load: N concurrent sessions over HTTP against the running app, for a bounded time.

    python bench/load.py [--sessions 20] [--seconds 120] [--users 5] [--seed 7]

Starts the real app (python app.py in a subprocess, a temporary DATA_DIR, APP_USERS with --users logins,
LLM_BACKEND=none so answers are extractive and the figures measure the app, not a language model). Each
session is a thread with its own httpx client and login cookie, logged in by a real POST /login, that
drives the app through the same Gradio API calls the UI makes (/gradio_api/upload, then
/gradio_api/call/<api_name>): it opens the page (on_load), then until the time is up, with a short
think time between actions: now and then uploads a small generated document (PDF or Markdown), asks
questions about its user's documents (its own or a sibling session's), opens a cited source, saves notes
with a unique marker, recalls them, lists notes and documents, refreshes the report. Sessions
i and i + users share a login, so the same person has several tabs open at once.

Every document and note carries a marker ("qz" + 8 hex digits) registered to its user before it is sent;
any marker of another user in any answer the app gives a session is an isolation failure. Afterwards
every session lists its documents and notes: its user's documents exactly, every note whose save
returned OK, and nothing of any other user's.

Prints: requests served per kind, errors (and the first few), p50/p95 latency per kind ("first open" is
each tab's first page load, the first of which waits for the models), the answers that quoted the asked
fact, recalls of a note by its marker (a miss is asked again once the app is idle, to tell ranking from
load), notes found/expected, isolation leaks, and the app's health afterwards (process, page, a tab's
answer, ERROR lines in its log, memory). Figures only: nothing here asserts on time
(tests/reliability/test_load.py runs the same code in a short mode and asserts the rest).
"""
from __future__ import annotations

import argparse
import json
import math
import random
import re
import secrets
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.app_process import app_process  # noqa: E402
from tests.browser.pdfgen import make_pdf  # noqa: E402

MARKER = re.compile(r"qz[0-9a-f]{8}")
MEMORY_TYPES = ["working", "episodic", "semantic", "perceptual"]
KINDS = ("first open", "open", "upload", "ask", "show_source", "save_note", "recall", "refresh_notes",
         "refresh_documents",          "probe", "report", "check")
ANSWERED = ("Quoted from your documents", "Searched your documents", "Listed from your learning history",
            "Answered by")
SYLLABLES = ("vor", "lan", "ix", "ta", "mer", "qu", "sol", "den", "bra", "kit", "ul", "fen", "oro", "zan",
             "pel", "tri", "ga", "mos", "rhu", "dal", "nek", "sy", "po", "wen")
PEOPLE = ("Ada Brenner", "Tomas Oyelaran", "Mirela Stanic", "Jun Takeda", "Priya Raman", "Olaf Lindqvist",
          "Nadia Haddad", "Colm Reilly", "Ines Carvalho", "Kofi Mensah")
FILLER = ("Field stations in remote valleys keep a logbook of every visit, the weather and the state of the "
          "instruments.", "Each station is inspected twice a year; the inspector signs the logbook and "
          "replaces the batteries of the sensors.", "Visitors must register at the valley office before "
          "walking to a station, and leave by the same path.")
# The ask event's outputs come back in ui/qa_tab.py's ask outputs order, its gr.State values included.
ASK_SOURCES, ASK_NOTICE = 3, 6
# Mix of actions after the page is open: (kind, weight). An upload always comes first for a session
# whose user has no document yet.
MIX = (("ask", 38), ("save_note", 22), ("recall", 10), ("upload", 8), ("refresh_notes", 6),
       ("refresh_documents", 6), ("probe", 5), ("report", 3), ("open", 2))


class CallFailed(Exception):
    """A request that was not served: an HTTP error, an error event, no result, or a failure sentence."""


# -- the app -------------------------------------------------------------------------------------------------

@dataclass
class RunningApp:
    url: str
    proc: subprocess.Popen
    log: Path
    data: Path

    def rss_mb(self) -> float | None:
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            return None
        return None

    def log_errors(self) -> list[str]:
        """ERROR lines and tracebacks the app logged (LOG_LEVEL=WARNING)."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return [line for line in text.splitlines() if " ERROR " in line or line.startswith("Traceback")]


def make_users(n: int) -> dict[str, str]:
    return {f"learner{i + 1}": secrets.token_hex(6) for i in range(n)}


@contextmanager
def started_app(work: Path, users: dict[str, str], *, start_timeout: float = 180):
    """python app.py in `work` (DATA_DIR=work/data) with these logins and no language model."""
    with app_process(work, start_timeout=start_timeout, stop_timeout=20, LLM_BACKEND="none",
                     APP_USERS=",".join(f"{u}:{p}" for u, p in users.items())) as app:
        yield RunningApp(app.url, app.proc, app.log, app.data)


# -- what the sessions share ----------------------------------------------------------------------------------

@dataclass
class Doc:
    user: str
    name: str
    topic: str
    marker: str
    builder: str
    pdf: bool


@dataclass
class Ledger:
    """Markers, documents and notes, as the sessions made them; every request's outcome and latency."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    owners: dict[str, str] = field(default_factory=dict)           # marker -> user
    names: set[str] = field(default_factory=set)
    docs: dict[str, list[Doc]] = field(default_factory=lambda: defaultdict(list))   # user -> uploaded OK
    notes: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # user -> markers saved OK
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[tuple[str, str, str]] = field(default_factory=list)      # (session, kind, message)
    leaks: list[str] = field(default_factory=list)
    facts: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # asked / quoted / sibling …
    recalls: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    attempts: dict[str, int] = field(default_factory=lambda: defaultdict(int))    # kind -> requests made
    saved: dict[str, tuple[float, str]] = field(default_factory=dict)   # note marker -> (when saved, by which tab)
    recall_misses: list[tuple] = field(default_factory=list)   # (tab, marker, what it saw)

    def new_marker(self, user: str, rng: random.Random) -> str:
        with self.lock:
            while True:
                marker = "qz" + "".join(rng.choice("0123456789abcdef") for _ in range(8))
                if marker not in self.owners:
                    self.owners[marker] = user
                    return marker

    def new_name(self, rng: random.Random) -> str:
        with self.lock:
            while True:
                name = "".join(rng.choice(SYLLABLES) for _ in range(3)).capitalize()
                if name not in self.names:
                    self.names.add(name)
                    return name

    def served(self, kind: str, seconds: float) -> None:
        with self.lock:
            self.latencies[kind].append(seconds)

    def failed(self, session: str, kind: str, message: str) -> None:
        with self.lock:
            self.errors.append((session, kind, " ".join(message.split())[:300]))

    def check_markers(self, session: str, user: str, kind: str, payload: str) -> None:
        """Any marker of another user in what the app gave this session is a leak."""
        for marker in set(MARKER.findall(payload)):
            owner = self.owners.get(marker)
            if owner != user:
                with self.lock:
                    self.leaks.append(f"{session} ({user}) {kind}: {marker} of {owner or 'nobody'}")

    def user_docs(self, user: str) -> list[Doc]:
        with self.lock:
            return list(self.docs[user])

    def user_notes(self, user: str) -> list[str]:
        with self.lock:
            return list(self.notes[user])

    def count(self, table: dict, key: str, n: int = 1) -> None:
        with self.lock:
            table[key] += n


# -- one session: a browser tab of one user --------------------------------------------------------------------

def document_for(doc: Doc) -> tuple[str, bytes]:
    """A small document about one made-up station: its access code (the marker) and who built it."""
    code = f"The {doc.topic} station uses access code {doc.marker}."
    built = f"The {doc.topic} station was built by {doc.builder}."
    if doc.pdf:
        content = make_pdf([[f"# The {doc.topic} station", FILLER[0], FILLER[1]],
                            ["# Access and history", code, built, FILLER[2]]], title=f"{doc.topic} station")
    else:
        content = (f"# The {doc.topic} station\n\n{FILLER[0]} {FILLER[1]}\n\n## Access and history\n\n"
                   f"{code} {built}\n\n{FILLER[2]}\n").encode()
    return doc.name, content


class Session(threading.Thread):
    def __init__(self, index: int, url: str, user: str, password: str, ledger: Ledger, seed: int,
                 think: tuple[float, float], timeout: float):
        super().__init__(name=f"session-{index}", daemon=True)
        self.index, self.user, self.ledger = index, user, ledger
        self.label = f"s{index:02d}"
        self.rng = random.Random(seed * 1000 + index)
        self.think = think
        self.tab = f"load-{index}-{uuid.uuid4().hex[:10]}"     # the session_hash a browser tab would send
        self.client = httpx.Client(base_url=url, timeout=timeout)
        self.password = password
        self.deadline = 0.0
        self.last_citations = False
        self.uploaded: list[Doc] = []      # the documents this tab added (its user's other tabs add more)
        self.asked = self.asked_sibling = False

    # -- HTTP -----------------------------------------------------------------------------------------------
    def login(self) -> None:
        response = self.client.post("/login", data={"username": self.user, "password": self.password})
        if response.status_code != 200:
            raise CallFailed(f"login {response.status_code}: {response.text[:200]}")

    def call(self, endpoint: str, data: list) -> list:
        """One event through /gradio_api/call/<endpoint> in this tab; the last output values."""
        started = self.client.post(f"/gradio_api/call/{endpoint}", json={"data": data, "session_hash": self.tab})
        if started.status_code != 200:
            raise CallFailed(f"{endpoint}: HTTP {started.status_code} {started.text[:200]}")
        event_id = started.json()["event_id"]
        kind = None
        with self.client.stream("GET", f"/gradio_api/call/{endpoint}/{event_id}") as stream:
            if stream.status_code != 200:
                raise CallFailed(f"{endpoint}: HTTP {stream.status_code} on its result stream")
            for line in stream.iter_lines():
                if line.startswith("event:"):
                    kind = line[6:].strip()
                elif line.startswith("data:") and kind == "complete":
                    return json.loads(line[5:])
                elif line.startswith("data:") and kind == "error":
                    raise CallFailed(f"{endpoint}: error event {line[5:].strip()[:200]}")
        raise CallFailed(f"{endpoint}: the stream ended without a result")

    def timed(self, kind: str, action) -> object | None:
        """Run one action; its latency when served, its message when not. Returns its value or None."""
        self.ledger.count(self.ledger.attempts, kind)
        start = time.perf_counter()
        try:
            value = action()
        except Exception as exc:  # noqa: BLE001 - every failure is counted, whatever it was
            self.ledger.failed(self.label, kind, f"{type(exc).__name__}: {exc}")
            return None
        self.ledger.served(kind, time.perf_counter() - start)
        return value

    # -- actions, each checked the way a person would read the screen ------------------------------------------
    def open_page(self) -> None:
        said = self.call("on_load", [])
        self.ledger.check_markers(self.label, self.user, "open", json.dumps(said))
        if not str(said[0]).startswith(f"Signed in as **{self.user}**"):
            raise CallFailed(f"on_load said {said[0]!r}")

    def upload(self) -> None:
        doc = Doc(self.user, "", self.ledger.new_name(self.rng), "", self.rng.choice(PEOPLE), self.rng.random() < 0.4)
        doc.marker = self.ledger.new_marker(self.user, self.rng)
        doc.name = f"{doc.topic.lower()}-{doc.marker}.{'pdf' if doc.pdf else 'md'}"
        name, content = document_for(doc)
        response = self.client.post("/gradio_api/upload", files={"files": (name, content)})
        if response.status_code != 200:
            raise CallFailed(f"upload POST: HTTP {response.status_code} {response.text[:200]}")
        path = response.json()[0]
        result = self.call("upload", [[{"path": path, "orig_name": name, "meta": {"_type": "gradio.FileData"}}]])
        self.ledger.check_markers(self.label, self.user, "upload", json.dumps(result))
        if result[1] != "1 of 1 files added; 0 already there; 0 failed.":
            raise CallFailed(f"upload said {result[1]!r}: {re.sub(r'<[^>]+>', ' ', str(result[0]))[:200]}")
        with self.ledger.lock:
            self.ledger.docs[self.user].append(doc)
        self.uploaded.append(doc)

    def ask(self) -> None:
        docs = self.ledger.user_docs(self.user)
        theirs = [d for d in docs if d not in self.uploaded]
        # A tab's first question goes to a document another tab of its person added, when there is one: a
        # person who uploads in one tab and asks in another is the sharing this run must see happen.
        doc = self.rng.choice(theirs if theirs and not self.asked_sibling else docs)
        self.asked, self.asked_sibling = True, self.asked_sibling or doc in theirs
        if self.rng.random() < 0.5:
            question, expected = f"What access code does the {doc.topic} station use?", doc.marker
        else:
            question, expected = f"Who built the {doc.topic} station?", doc.builder
        result = self.call("ask", [question, False, False])
        payload = json.dumps(result)
        self.ledger.check_markers(self.label, self.user, "ask", payload)
        notice = str(result[ASK_NOTICE] or "")
        if not notice.startswith(ANSWERED):
            raise CallFailed(f"ask: no answer, the notice says {notice!r}")
        answer = result[0][-1]["content"]
        text = json.dumps(answer)
        self.ledger.count(self.ledger.facts, "asked")
        self.ledger.count(self.ledger.facts, "quoted", int(expected in text))
        self.ledger.count(self.ledger.facts, "sibling", int(doc not in self.uploaded))   # another tab's upload
        self.last_citations = bool((result[ASK_SOURCES] or {}).get("choices"))

    def show_source(self) -> None:
        result = self.call("show_source", ["0"])
        self.ledger.check_markers(self.label, self.user, "show_source", json.dumps(result))
        image, section, status = result[0], result[1], result[-1]   # the passage panel sits between them
        shown = (image or {}).get("value") or (section or {}).get("value")
        if status or not shown:
            raise CallFailed(f"show_source showed nothing: {status!r}")
        if isinstance(shown, dict) and shown.get("path"):       # a PDF page: fetch the image as the browser does
            got = self.client.get(f"/gradio_api/file={shown['path']}")
            if got.status_code != 200 or not got.content:
                raise CallFailed(f"page image: HTTP {got.status_code}")

    def save_note(self) -> None:
        marker = self.ledger.new_marker(self.user, self.rng)
        docs = self.ledger.user_docs(self.user)
        topic = self.rng.choice(docs).topic if docs else "field work"
        text = f"Reminder {marker}: check the {topic} station logbook before the next inspection."
        result = self.call("save_note", [topic, text])
        self.ledger.check_markers(self.label, self.user, "save_note", json.dumps(result))
        if not str(result[0]).startswith("Saved the note"):
            raise CallFailed(f"save_note said {result[0]!r}")
        with self.ledger.lock:
            self.ledger.notes[self.user].append(marker)
            self.ledger.saved[marker] = (time.monotonic(), self.label)

    def recall(self) -> None:
        notes = self.ledger.user_notes(self.user)
        marker = self.rng.choice(notes) if notes else None
        query = f"{marker} logbook" if marker else "station logbook"
        result = self.call("recall", [query, MEMORY_TYPES, None, None])
        payload = json.dumps(result)
        self.ledger.check_markers(self.label, self.user, "recall", payload)
        if not str(result[1]).startswith("Memories found"):
            raise CallFailed(f"recall said {result[1]!r}")
        if marker:
            self.ledger.count(self.ledger.recalls, "asked")
            self.ledger.count(self.ledger.recalls, "found", int(marker in payload))
            if marker not in payload:
                saved_at, by = self.ledger.saved[marker]
                rows = result[0].get("data") or []
                said = (f"{self.label} ({self.user}) missed {marker}, saved {time.monotonic() - saved_at:.1f} s before "
                        f"by {'this tab' if by == self.label else by}; {len(rows)} rows, top 2: "
                        f"{[(r[0], r[4], r[5][:40]) for r in rows[:2]]}")
                with self.ledger.lock:
                    self.ledger.recall_misses.append((self, marker, said))

    def probe(self) -> None:
        """Ask about another user's station, or recall another user's note by its words: nothing of
        theirs may come back (check_markers); the probe itself names no marker."""
        with self.ledger.lock:
            docs = [d for user, ds in self.ledger.docs.items() if user != self.user for d in ds]
        if not docs:
            return self.ask() if self.ledger.user_docs(self.user) else None
        doc = self.rng.choice(docs)
        if self.rng.random() < 0.5:
            result = self.call("ask", [f"What access code does the {doc.topic} station use?", False, False])
            if not str(result[ASK_NOTICE] or "").startswith(ANSWERED):
                raise CallFailed(f"probe ask: no answer, the notice says {result[ASK_NOTICE]!r}")
        else:
            result = self.call("recall", [f"check the {doc.topic} station logbook", MEMORY_TYPES, None, None])
            if not str(result[1]).startswith("Memories found"):
                raise CallFailed(f"probe recall said {result[1]!r}")
        self.ledger.check_markers(self.label, self.user, "probe", json.dumps(result))
        self.ledger.count(self.ledger.facts, "probes")

    def refresh_notes(self) -> list[str]:
        result = self.call("refresh_notes", [])
        payload = json.dumps(result)
        self.ledger.check_markers(self.label, self.user, "refresh_notes", payload)
        return [row[2] for row in result[1]["data"]]

    def refresh_documents(self) -> list[str]:
        result = self.call("refresh_documents", [])
        self.ledger.check_markers(self.label, self.user, "refresh_documents", json.dumps(result))
        return [row[0] for row in result[0]["data"]]

    def report(self) -> None:
        result = self.call("refresh_report", [])
        self.ledger.check_markers(self.label, self.user, "report", json.dumps(result))
        if not str(result[-1]).startswith("Report ready"):      # the status line is the last output
            raise CallFailed(f"report said {result[-1]!r}")

    # -- the session ------------------------------------------------------------------------------------------
    def start_page(self) -> bool:
        try:
            self.login()
        except (CallFailed, httpx.HTTPError) as exc:
            self.ledger.failed(self.label, "login", str(exc))
            return False
        return self.timed("first open", self.open_page) is not None

    def run(self) -> None:
        kinds, weights = zip(*MIX)
        actions = {"ask": self.ask, "save_note": self.save_note, "recall": self.recall, "upload": self.upload,
                   "probe": self.probe,
                   "refresh_notes": self.refresh_notes, "refresh_documents": self.refresh_documents,
                   "report": self.report, "open": self.open_page}
        kind = "upload"                          # every tab starts by adding a document
        while time.monotonic() < self.deadline:
            if kind == "ask" and not self.ledger.user_docs(self.user):
                kind = "upload"
            self.timed(kind, actions[kind])
            if kind == "ask" and self.last_citations and self.rng.random() < 0.35 and time.monotonic() < self.deadline:
                self.last_citations = False
                self.timed("show_source", self.show_source)
            time.sleep(self.rng.uniform(*self.think))
            first_question = kind == "upload" and len(self.uploaded) == 1 and not self.asked
            kind = "ask" if first_question else self.rng.choices(kinds, weights)[0]   # asks once it has a document


# -- the run -----------------------------------------------------------------------------------------------------

@dataclass
class LoadResult:
    sessions: int
    users: int
    seconds: float                     # the load phase, as it ran (until the last action in flight ended)
    served: dict[str, int]
    attempts: dict[str, int]          # requests made per kind (each one served or an error)
    hung: list[str]                   # tabs still waiting for an answer when the run ended
    latency: dict[str, tuple[float, float]]     # kind -> (p50, p95) seconds
    errors: list[tuple[str, str, str]]
    leaks: list[str]
    notes_saved: int                   # distinct notes whose save returned OK
    notes_expected: int
    notes_found: int                   # counted over every session's notes list (each user's notes x its tabs)
    notes_missing: list[str]
    docs_expected: int
    docs_mismatch: list[str]
    facts: dict[str, int]
    recalls: dict[str, int]
    recall_misses: list[str]          # recalls during the load that missed the note asked for …
    recall_missed_idle: int            # … and how many of those the idle app misses too (ranking, not load)
    healthy: str
    log_errors: list[str]
    rss_mb: tuple[float | None, float | None]

    @property
    def requests(self) -> int:
        return sum(self.served.values())


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def run_load(app: RunningApp, users: dict[str, str], *, sessions: int = 20, seconds: float = 120, seed: int = 7,
             think: tuple[float, float] = (0.2, 1.0), timeout: float = 180) -> LoadResult:
    ledger = Ledger()
    names = list(users)
    tabs = [Session(i, app.url, names[i % len(names)], users[names[i % len(names)]], ledger, seed, think, timeout)
            for i in range(sessions)]
    rss_before = app.rss_mb()
    # Every tab logs in and opens the page (the first opening waits for the models to load); the clock
    # starts once every tab is open.
    opening = [threading.Thread(target=tab.start_page) for tab in tabs]
    for t in opening:
        t.start()
    for t in opening:
        t.join()
    started = time.monotonic()
    for tab in tabs:
        tab.deadline = started + seconds
        tab.start()
    for tab in tabs:
        tab.join(seconds + 3 * timeout)      # a tab still waiting after that is reported as hung
    elapsed = time.monotonic() - started
    served = {kind: len(v) for kind, v in ledger.latencies.items()}
    attempts = dict(ledger.attempts)
    hung = [tab.label for tab in tabs if tab.is_alive()]

    # Afterwards: every tab lists its documents and notes; its user's exactly, nobody else's.
    notes_expected = notes_found = docs_expected = 0
    missing: list[str] = []
    mismatch: list[str] = []
    for tab in tabs:
        listed = tab.timed("check", tab.refresh_notes) or []
        expected = ledger.user_notes(tab.user)
        notes_expected += len(expected)
        found = [m for m in expected if any(m in row for row in listed)]
        notes_found += len(found)
        missing += [f"{tab.label} ({tab.user}): {m}" for m in expected if m not in found]
        docs = tab.timed("check", tab.refresh_documents)
        want = sorted(d.name for d in ledger.user_docs(tab.user))
        docs_expected += len(want)
        if docs is None or sorted(docs) != want:
            listed_docs = set(docs or [])
            mismatch.append(f"{tab.label} ({tab.user}): listed {len(listed_docs)}, uploaded {len(want)}; extra "
                            f"{sorted(listed_docs - set(want))[:3]}, missing {sorted(set(want) - listed_docs)[:3]}")
    recall_misses, missed_idle = [], 0
    for tab, marker, said in ledger.recall_misses:      # a note recall missed: asked again, the app now idle
        try:
            again = tab.call("recall", [f"{marker} logbook", MEMORY_TYPES, None, None])
            missed = marker not in json.dumps(again)
            missed_idle += missed
            again = "missed again" if missed else "found"
        except (CallFailed, httpx.HTTPError) as exc:
            again = f"failed: {exc}"
        recall_misses.append(f"{said}; asked again after the load: {again}")
    healthy = health(app, tabs[0] if tabs else None)
    for tab in tabs:
        tab.client.close()
    latency = {kind: (percentile(v, 50), percentile(v, 95)) for kind, v in ledger.latencies.items() if v}
    notes_saved = sum(len(ledger.user_notes(user)) for user in users)
    return LoadResult(sessions, len(users), elapsed, served, attempts, hung, latency, list(ledger.errors),
                      list(ledger.leaks), notes_saved, notes_expected, notes_found, missing, docs_expected,
                      mismatch, dict(ledger.facts), dict(ledger.recalls), recall_misses, missed_idle, healthy,
                      app.log_errors(), (rss_before, app.rss_mb()))


def health(app: RunningApp, tab: Session | None) -> str:
    """'ok' when the process runs, the page loads and a tab still answers; else what failed."""
    if app.proc.poll() is not None:
        return f"the app exited with code {app.proc.returncode}"
    try:
        page = httpx.get(app.url + "/", timeout=30)
        if page.status_code != 200:
            return f"GET / answered {page.status_code}"
        if tab is not None:
            tab.open_page()
    except (CallFailed, httpx.HTTPError) as exc:
        return f"not answering: {exc}"
    return "ok"


# -- printing --------------------------------------------------------------------------------------------------

def latency_summary(result: LoadResult, kinds=("ask", "upload", "save_note", "recall")) -> str:
    return ", ".join(f"{k} {result.latency[k][0]:.2f}/{result.latency[k][1]:.2f} s" for k in kinds
                     if k in result.latency)


def report_lines(result: LoadResult) -> list[str]:
    lines = [f"{result.sessions} sessions ({result.users} users) for {result.seconds:.0f} s: "
             f"{result.requests} requests served, {len(result.errors)} errors",
             "", f"{'kind':<18}{'served':>8}{'p50 s':>9}{'p95 s':>9}"]
    for kind in KINDS:
        if kind in result.served:
            p50, p95 = result.latency[kind]
            lines.append(f"{kind:<18}{result.served[kind]:>8}{p50:>9.2f}{p95:>9.2f}")
    lines.append("")
    per_kind = defaultdict(int)
    for _, kind, _ in result.errors:
        per_kind[kind] += 1
    lines.append(f"errors: {len(result.errors)}" + (f" ({dict(per_kind)})" if per_kind else ""))
    lines += [f"  {s} {k}: {m}" for s, k, m in result.errors[:5]]
    facts = result.facts
    lines.append(f"requests made: {sum(result.attempts.values())}; tabs still waiting: {len(result.hung)}")
    lines.append(f"probes of another user's station or note: {facts.get('probes', 0)}")
    lines.append(f"answers quoting the asked fact: {facts.get('quoted', 0)}/{facts.get('asked', 0)} "
                 f"({facts.get('sibling', 0)} about a document another tab "
                 "of the same user uploaded)")
    recalls = result.recalls
    lines.append(f"recall of a saved note by its marker: {recalls.get('found', 0)}/{recalls.get('asked', 0)}"
                 + (f"; of the {len(result.recall_misses)} misses, {result.recall_missed_idle} also missed by the idle "
                    "app afterwards (notes are searched by meaning: semantic memory is dense-only)"
                    if result.recall_misses else ""))
    lines += [f"  {m}" for m in result.recall_misses[:5]]
    lines.append(f"notes found afterwards: {result.notes_found}/{result.notes_expected} in the tabs' notes lists "
                 f"({result.notes_saved} notes saved, each looked for in every tab of its user)")
    lines += [f"  missing {m}" for m in result.notes_missing[:5]]
    lines.append(f"documents listed afterwards: {'exactly as uploaded' if not result.docs_mismatch else 'MISMATCH'} "
                 f"({result.docs_expected} over all tabs)")
    lines += [f"  {m}" for m in result.docs_mismatch[:5]]
    lines.append(f"another user's marker in an answer: {len(result.leaks)}")
    lines += [f"  {m}" for m in result.leaks[:5]]
    before, after = result.rss_mb
    rss = f", RSS {before:.0f} -> {after:.0f} MB" if before and after else ""
    lines.append(f"app afterwards: {result.healthy}; {len(result.log_errors)} ERROR lines in its log{rss}")
    lines += [f"  {line[:200]}" for line in result.log_errors[:5]]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--users", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--think", type=float, nargs=2, default=(0.2, 1.0), metavar=("MIN", "MAX"),
                        help="seconds a session waits between actions (uniform)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (data and app.log)")
    args = parser.parse_args(argv)
    users = make_users(max(1, args.users))
    work = Path(tempfile.mkdtemp(prefix="load-"))
    print(f"app in {work}; {args.sessions} sessions, {len(users)} users, {args.seconds:.0f} s", flush=True)
    with started_app(work, users) as app:
        result = run_load(app, users, sessions=args.sessions, seconds=args.seconds, seed=args.seed,
                          think=tuple(args.think))
    print("\n".join(report_lines(result)))
    if not args.keep:
        import shutil
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

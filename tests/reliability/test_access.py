"""Isolation and access: one person never gets another's files, sessions or rows, and passwords cannot
be guessed at speed.

The real app (python app.py) runs in a subprocess with three logins on a free loopback port and its own
DATA_DIR; the tests log in with real POSTs to /login and drive it over HTTP the way a browser or a
script would: /gradio_api/upload, the documented /gradio_api/call/<endpoint> API, /gradio_api/file= URLs,
the heartbeat a tab keeps open. The tools are checked in-process on a data folder of their own (the
app's embedded vector store is locked by its process). See webauth.py and assistant/files.py.
"""
from __future__ import annotations

import html
import json
import re
import time
import uuid
from pathlib import Path

import httpx
import pytest

from tests.app_process import AppDidNotStart, app_process
from tests.browser.pdfgen import make_pdf

SECTION = "Isolation and access"
USERS = {"alice": "alice-pw", "bob": "bob-pw", "carol": "carol-pw"}   # carol: the name failed from 5 addresses
SECRET = "The vault code for the bakery is tulip seven."


# -- the app ------------------------------------------------------------------------------------------------

LOCKOUT = 4     # LOGIN_LOCKOUT_S: the first lock (60 s by default), short so a lock can be waited out

@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """The app's URL and data folder. A file left in the served folder by an earlier run is there at start."""
    work = tmp_path_factory.mktemp("access-app")
    stale = work / "data" / "web" / "users" / "bob-0000" / "reports" / "old-tab" / "learning-report-old.json"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}", encoding="utf-8")
    try:
        with app_process(work, LLM_BACKEND="none", APP_USERS=",".join(f"{u}:{p}" for u, p in USERS.items()),
                         LOGIN_LOCKOUT_S=str(LOCKOUT)) as running:
            yield {"url": running.url, "data": running.data, "stale": stale}
    except AppDidNotStart as exc:
        pytest.fail(str(exc))


def logged_in(app, user: str) -> httpx.Client:
    client = httpx.Client(base_url=app["url"], timeout=120)
    response = client.post("/login", data={"username": user, "password": USERS[user]})
    assert response.status_code == 200, response.text
    return client


@pytest.fixture(scope="module")
def alice(app):
    client = logged_in(app, "alice")
    yield client
    client.close()


@pytest.fixture(scope="module")
def bob(app):
    client = logged_in(app, "bob")
    yield client
    client.close()


# -- Gradio's HTTP API ----------------------------------------------------------------------------------------

def upload(client: httpx.Client, name: str, content: bytes) -> str:
    """POST /gradio_api/upload as the browser does; the server path of the received file."""
    response = client.post("/gradio_api/upload", files={"files": (name, content)})
    assert response.status_code == 200, response.text
    return response.json()[0]


def file_data(path: str) -> dict:
    return {"path": path, "orig_name": Path(path).name, "meta": {"_type": "gradio.FileData"}}


def start_call(client: httpx.Client, endpoint: str, data: list, session: str | None = None) -> httpx.Response:
    body = {"data": data, **({"session_hash": session} if session else {})}
    return client.post(f"/gradio_api/call/{endpoint}", json=body)


def call(client: httpx.Client, endpoint: str, data: list, session: str | None = None):
    """Run one event through the documented call API; ("complete" | "error", its data)."""
    started = start_call(client, endpoint, data, session)
    assert started.status_code == 200, started.text
    event_id = started.json()["event_id"]
    kind = None
    with client.stream("GET", f"/gradio_api/call/{endpoint}/{event_id}") as stream:
        for line in stream.iter_lines():
            if line.startswith("event:"):
                kind = line[6:].strip()
            elif line.startswith("data:") and kind in ("complete", "error"):
                return kind, json.loads(line[5:])
    raise AssertionError(f"{endpoint} ended without a result")


def file_url(path: str) -> str:
    return f"/gradio_api/file={path}"


def outcome(response: httpx.Response) -> str:
    """What a person or script got: the status and, for a refusal, its sentence."""
    if response.status_code < 300:
        return str(response.status_code)
    try:
        return f"{response.status_code} {response.json().get('detail')!r}"
    except ValueError:
        return str(response.status_code)


@pytest.fixture(scope="module")
def bobs_things(app, bob):
    """Bob's library (a PDF and his notes), a question, the cited page shown, a report — in one tab."""
    tab = "bob-tab-" + uuid.uuid4().hex[:8]
    pdf = make_pdf([["Bob's ledger", SECRET], ["Rye flour needs more water than wheat flour."]], title="Bob ledger")
    kind, result = call(bob, "upload", [[file_data(upload(bob, "ledger.pdf", pdf)),
                                         file_data(upload(bob, "bob-notes.md", b"# Bob\n\nSourdough starter.\n"))]],
                        tab)
    assert kind == "complete" and "2 of 2 files added" in result[1], result
    doc_ids = {label.split(" (")[0]: doc_id for label, doc_id in result[3]["choices"]}
    kind, answer = call(bob, "ask", ["What is the vault code for the bakery?", False, False], tab)
    assert kind == "complete"
    kind, shown = call(bob, "show_source", ["0"], tab)
    assert kind == "complete" and shown[0]["value"], shown
    kind, report = call(bob, "refresh_report", [], tab)
    assert kind == "complete"
    return {"tab": tab, "doc_ids": doc_ids, "page": shown[0]["value"]["path"], "report": report[-2]["value"]["path"],
            "pending_upload": upload(bob, "waiting.md", b"# Waiting\n\nBob has not ingested this yet.\n")}


# -- file URLs ---------------------------------------------------------------------------------------------

def test_without_a_login_files_uploads_and_sessions_are_401(reliability, app, bobs_things):
    with httpx.Client(base_url=app["url"], timeout=30) as anonymous:
        cases = {
            "no cookie: bob's report URL": anonymous.get(file_url(bobs_things["report"])),
            "no cookie: upload a file": anonymous.post("/gradio_api/upload", files={"files": ("x.md", b"# x\n")}),
            "no cookie: an event in bob's tab": start_call(anonymous, "refresh_documents", [], bobs_things["tab"]),
            "no cookie: the heartbeat of bob's tab": anonymous.get(f"/gradio_api/heartbeat/{bobs_things['tab']}"),
        }
    for case, response in cases.items():
        assert response.status_code == 401, (case, response.status_code)
        reliability.record(SECTION, case, outcome(response))


def test_a_file_url_is_served_to_its_owner_only(reliability, app, alice, bob, bobs_things):
    for what, key in (("upload copy", "pending_upload"), ("cited page image", "page"), ("report", "report")):
        path = bobs_things[key]
        own = bob.get(file_url(path))
        assert own.status_code == 200 and own.content
        other = alice.get(file_url(path))
        assert other.status_code == 404, other.text
        reliability.record(SECTION, f"alice fetches bob's {what} URL", f"{outcome(other)} (bob: {outcome(own)})")
    assert json.loads(bob.get(file_url(bobs_things["report"])).text)["user"]["id"] == "bob"


def test_no_path_trick_reaches_another_persons_or_stored_files(reliability, app, alice, bob, bobs_things):
    report = Path(bobs_things["report"])
    bob_key = report.parents[3].name                                # DATA_DIR/web/users/<bob's key>/reports/…
    dotted = str(report).replace(f"/{bob_key}/", f"/alice-x/%2E%2E/{bob_key}/")   # '..' the client keeps
    assert bob.get(file_url(dotted)).status_code == 200            # Gradio itself would serve this path
    stored = next((app["data"] / "files").rglob("*.pdf"))           # bob's stored PDF in DATA_DIR/files
    tricks = {
        "alice: '..' from another folder into bob's report": alice.get(file_url(dotted)),
        "alice: bob's report by the older /file/ route": alice.get(f"/gradio_api/file/{report}"),
        "alice: bob's report, percent-encoded": alice.get("/gradio_api/file=" + str(report).replace("/", "%2F")),
        "bob: his own stored PDF in DATA_DIR/files": bob.get(file_url(str(stored))),
        "bob: the documents database": bob.get(file_url(str(app["data"] / "documents.sqlite"))),
        "bob: /etc/passwd": bob.get(file_url("/etc/passwd")),
        "bob: a deep link of his tab's values": bob.get(f"/gradio_api/deep_link?session_hash={bobs_things['tab']}"),
    }
    for case, response in tricks.items():
        assert response.status_code == 404, (case, response.status_code)
        reliability.record(SECTION, case, outcome(response))


# -- uploads -----------------------------------------------------------------------------------------------

def test_an_api_upload_of_another_persons_file_path_is_refused(reliability, app, alice, bob, bobs_things):
    pending = bobs_things["pending_upload"]
    kind, result = call(alice, "upload", [[file_data(pending)]])
    assert kind == "complete" and "was not uploaded by you" in result[0] and "0 of 1 files added" in result[1]
    _, listed = call(alice, "refresh_documents", [])
    assert listed[0]["data"] == []                                  # nothing added to alice's library
    assert Path(pending).is_file()                                  # and bob's upload is left alone
    said = re.search(r"<td>([^<]*was not uploaded by you[^<]*)</td>", html.unescape(result[0])).group(1)
    reliability.record(SECTION, "alice passes bob's upload path to the upload API",
                       f"refused: {said} (her library stays empty, bob's upload untouched)")


def test_an_upload_copy_is_removed_once_ingested_or_refused(reliability, app, bob, bobs_things):
    pending = bobs_things["pending_upload"]
    kind, result = call(bob, "upload", [[file_data(pending)]])
    assert kind == "complete" and "1 of 1 files added" in result[1]
    assert not Path(pending).exists()
    broken = upload(bob, "broken.pdf", b"%PDF-1.4 not really a PDF")
    kind, result = call(bob, "upload", [[file_data(broken)]])
    assert kind == "complete" and "1 failed" in result[1]
    assert not Path(broken).exists()
    uploads = Path(pending).parents[1]
    assert not any(uploads.iterdir())
    reliability.record(SECTION, "upload copy after ingest, and after a refused file",
                       "both removed; bob's uploads folder is empty")


def test_a_report_lasts_until_the_next_one_or_the_tab_closes(reliability, app, bob, bobs_things):
    tab = "bob-closing-" + uuid.uuid4().hex[:8]
    with bob.stream("GET", f"/gradio_api/heartbeat/{tab}") as heartbeat:     # the open tab's connection
        first = call(bob, "refresh_report", [], tab)[1][-2]["value"]["path"]
        second = call(bob, "refresh_report", [], tab)[1][-2]["value"]["path"]
        # the one before the newest stays (a download started from its link finishes), older ones go
        assert Path(first).is_file() and Path(second).is_file()
        time.sleep(1.1)            # folder times are compared; the filesystem's may count whole seconds
        third = call(bob, "refresh_report", [], tab)[1][-2]["value"]["path"]
        assert not Path(first).exists() and Path(second).is_file() and Path(third).is_file()
        kind, answer = call(bob, "ask", ["What is the vault code for the bakery?", False, False], tab)
        page = call(bob, "show_source", ["0"], tab)[1][0]["value"]["path"]
        assert Path(page).is_file()
        next(heartbeat.iter_lines())
    deadline = time.monotonic() + 30                                # Gradio runs unload once it sees the close
    while (Path(second).exists() or Path(third).exists() or Path(page).exists()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not Path(second).exists() and not Path(third).exists() and not Path(page).exists()
    assert Path(bobs_things["report"]).is_file()                   # bob's other tab keeps its report
    reliability.record(SECTION, "report files after two more reports", "the one before the newest is kept (a started "
                       "download finishes), older ones are removed")
    reliability.record(SECTION, "report and page images after the tab closes", "removed (other tabs keep theirs)")


def test_the_served_folder_is_emptied_at_start(reliability, app):
    assert not app["stale"].exists()
    reliability.record(SECTION, "a report left in DATA_DIR/web by an earlier run", "removed when the app starts")


# -- events and sessions -------------------------------------------------------------------------------------

def test_alices_events_never_return_bobs_data(reliability, app, alice, bob, bobs_things):
    ledger_id = bobs_things["doc_ids"]["ledger.pdf"]
    _, listed = call(alice, "refresh_documents", [])
    assert listed[0]["data"] == [] and listed[1]["choices"] == []
    reliability.record(SECTION, "alice lists her library", "empty: none of bob's documents")

    kind, refused = call(alice, "delete_document", [ledger_id])
    assert kind == "error"
    _, bobs = call(bob, "refresh_documents", [])
    assert ledger_id in [doc_id for _, doc_id in bobs[1]["choices"]]
    reliability.record(SECTION, "alice deletes bob's document by its id",
                       f"refused ({refused.get('error', refused)!r}); bob still has it")

    kind, answer = call(alice, "ask", ["What is the vault code for the bakery?", False, False])
    assert kind == "complete" and "tulip" not in json.dumps(answer)
    reliability.record(SECTION, "alice asks about bob's document", "no passage of bob's in the answer or sources")

    kind, recalled = call(alice, "recall", ["vault code bakery ledger", ["working", "episodic", "semantic",
                                                                      "perceptual"], None, None])
    assert kind == "complete" and "ledger" not in json.dumps(recalled) and "tulip" not in json.dumps(recalled)
    reliability.record(SECTION, "alice recalls memories about bob's ledger", "none of bob's memories")

    _, report = call(alice, "refresh_report", [])
    mine = alice.get(file_url(report[-2]["value"]["path"])).text
    assert json.loads(mine)["user"]["id"] == "alice" and json.loads(mine)["documents"] == []
    assert "tulip" not in mine and "ledger" not in mine
    reliability.record(SECTION, "alice's report", "her own: no documents, nothing of bob's")


def test_another_persons_session_and_events_are_refused(reliability, app, alice, bob, bobs_things):
    tab = bobs_things["tab"]
    bobs_event = start_call(bob, "refresh_documents", [], tab).json()["event_id"]
    cases = {
        "alice runs an event in bob's tab (his session hash)": start_call(alice, "refresh_documents", [], tab),
        "alice reads the results of bob's event": alice.get(f"/gradio_api/call/refresh_documents/{bobs_event}"),
        "alice reads bob's tab's queue stream": alice.get(f"/gradio_api/queue/data?session_hash={tab}"),
        "alice closes bob's tab (its heartbeat)": alice.get(f"/gradio_api/heartbeat/{tab}"),
    }
    for case, response in cases.items():
        assert response.status_code == 403, (case, response.status_code)
        reliability.record(SECTION, case, outcome(response))
    kind, result = call(bob, "refresh_documents", [], tab)                # bob's tab still works for bob
    assert kind == "complete" and result[1]["choices"]


def test_the_tools_for_alice_never_return_bobs_rows(reliability, settings):
    from memory.tool import MemoryTool
    from rag.tool import RAGTool
    bob_doc = RAGTool("bob", settings).add_text(f"# Ledger\n\n{SECRET}", title="ledger")
    bob_memory = MemoryTool("bob", settings).execute("add", content=f"Bob noted: {SECRET}", memory_type="semantic",
                                                     importance=0.9).data
    rag, memory = RAGTool("alice", settings), MemoryTool("alice", settings)
    assert rag.list_documents() == [] and rag.get_document(bob_doc.doc_id) is None
    assert rag.search("vault code for the bakery") == [] and rag.execute("search", query="tulip seven") == []
    assert rag.remove_document(bob_doc.doc_id) is False and rag.figures(bob_doc.doc_id) == []
    assert RAGTool("bob", settings).get_document(bob_doc.doc_id) is not None
    reliability.record(SECTION, "RAGTool for alice: list, get, search, remove bob's document", "nothing of bob's")
    found = memory.execute("search", query="vault code bakery tulip")
    assert found.ok and found.data == []
    assert not memory.execute("get", memory_id=bob_memory.id).ok
    assert not memory.execute("remove", memory_id=bob_memory.id).ok
    assert "tulip" not in memory.execute("summary").message and memory.execute("stats").data.total == 0
    assert MemoryTool("bob", settings).execute("get", memory_id=bob_memory.id).ok
    reliability.record(SECTION, "MemoryTool for alice: search, get, remove, summary of bob's memory",
                       "nothing of bob's; get/remove refused: no such memory for alice")


# -- login -------------------------------------------------------------------------------------------------

def try_login(app, user: str, password: str, address: str) -> httpx.Response:
    """A login POST from another loopback address (127.0.0.0/8), as a client elsewhere would make it."""
    with httpx.Client(base_url=app["url"], timeout=30,
                      transport=httpx.HTTPTransport(local_address=address)) as client:
        return client.post("/login", data={"username": user, "password": password})


def test_failed_logins_lock_a_name_only_where_they_came_from(reliability, app):
    """Guessing bob's password from one address locks bob there, not everywhere: an attacker cannot lock
    a person out. Both directions: the guesser is stopped, bob (and anyone else) still gets in."""
    attempts = [try_login(app, "bob", f"guess-{i}", "127.0.0.9") for i in range(5)]
    assert [r.status_code for r in attempts] == [400] * 5
    locked = try_login(app, "bob", USERS["bob"], "127.0.0.9")
    assert locked.status_code == 429 and f"try again in {LOCKOUT} seconds" in locked.json()["detail"]
    assert locked.headers["retry-after"] == str(LOCKOUT)
    reliability.record(SECTION, "6th login for bob from the address that failed 5 times (right password)",
                       f"{outcome(locked)} (this app: LOGIN_LOCKOUT_S={LOCKOUT}; 60 s by default)")
    elsewhere = try_login(app, "bob", USERS["bob"], "127.0.0.1")
    assert elsewhere.status_code == 200
    reliability.record(SECTION, "bob logs in from his own address meanwhile", outcome(elsewhere))
    typo = try_login(app, "bob", "bob-typo", "127.0.0.2")
    assert typo.status_code == 400
    reliability.record(SECTION, "a wrong password for bob from a third address meanwhile",
                       f"{outcome(typo)} (a wrong password, not a lock: bob is locked only where the guesses came from)")
    other = try_login(app, "alice", USERS["alice"], "127.0.0.9")
    assert other.status_code == 200
    reliability.record(SECTION, "alice logs in from the guessing address meanwhile", outcome(other))

    spread = [try_login(app, "carol", f"guess-{i}", f"127.0.1.{i + 1}") for i in range(5)]
    assert [r.status_code for r in spread] == [400] * 5
    carol = try_login(app, "carol", USERS["carol"], "127.0.1.50")
    assert carol.status_code == 200
    reliability.record(SECTION, "carol's right password after 5 failures for her name from 5 other addresses",
                       f"{outcome(carol)} (it was 429: anyone could lock her out everywhere)")

    typos = [try_login(app, "alice", "alice-typo", "127.0.2.1") for _ in range(4)]
    assert [r.status_code for r in typos] == [400] * 4
    recovered = try_login(app, "alice", USERS["alice"], "127.0.2.1")
    assert recovered.status_code == 200
    reliability.record(SECTION, "alice logs in after 4 typos", outcome(recovered))


def test_an_address_guessing_many_names_is_locked_for_all_of_them(reliability, app):
    from webauth import ADDRESS_FAILURES
    spray = [try_login(app, f"name-{i}", "password1", "127.0.3.1") for i in range(ADDRESS_FAILURES)]
    assert [r.status_code for r in spray] == [400] * ADDRESS_FAILURES
    locked = try_login(app, "alice", USERS["alice"], "127.0.3.1")
    assert locked.status_code == 429 and "from your address" in locked.json()["detail"]
    reliability.record(SECTION, f"a login from an address with {ADDRESS_FAILURES} failures for {ADDRESS_FAILURES} "
                                "names (alice's right password)", outcome(locked))
    elsewhere = try_login(app, "alice", USERS["alice"], "127.0.3.2")
    assert elsewhere.status_code == 200
    reliability.record(SECTION, "alice from another address meanwhile", outcome(elsewhere))


def test_each_further_lock_lasts_twice_as_long(reliability, app):
    """The same name from the same address, locked again once the first lock ends: LOCKOUT, then twice that."""
    first = [try_login(app, "bob", f"again-{i}", "127.0.4.1") for i in range(5)]
    assert [r.status_code for r in first] == [400] * 5
    locked = try_login(app, "bob", USERS["bob"], "127.0.4.1")
    assert locked.status_code == 429 and locked.headers["retry-after"] == str(LOCKOUT)
    time.sleep(LOCKOUT + 0.5)                                       # the first lock ends
    second = [try_login(app, "bob", f"again-{i}", "127.0.4.1") for i in range(5)]
    assert [r.status_code for r in second] == [400] * 5             # it may try again, and fails again
    longer = try_login(app, "bob", USERS["bob"], "127.0.4.1")
    assert longer.status_code == 429 and longer.headers["retry-after"] == str(2 * LOCKOUT), outcome(longer)
    assert try_login(app, "bob", USERS["bob"], "127.0.4.2").status_code == 200
    reliability.record(SECTION, "5 more failures for bob from the same address after the first lock ended",
                       f"locked again for twice as long: {outcome(longer)} (Retry-After {longer.headers['retry-after']}; "
                       f"the first lock: {locked.headers['retry-after']}); bob from elsewhere: 200")


def test_the_login_page_says_how_logging_in_pauses(reliability, app):
    # Gradio's login form shows nothing of a 429, so the page itself says that logging in pauses.
    said = httpx.get(app["url"] + "/config").json()["detail"]["auth_message"]
    assert f"5 wrong passwords, logging in with that name from this address pauses for {LOCKOUT} seconds" in said
    reliability.record(SECTION, "what the login page says about the pause", said)

"""webauth's login limiter on a simulated clock: failures count per (name, address) pair and per address, a
name is locked only where its failures came from, and each further lock of a pair lasts twice as long (up to
an hour). The same over HTTP against the real app: tests/reliability/test_access.py. And the two ASGI pieces
of the door: a body counted as it arrives, the policy and its nonce added to a page
(tests/reliability/test_web_door.py: the same in the real app)."""
from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest

from webauth import LoginLimiter, UploadTooLarge, counted, with_security_policy


def run_alone(coroutine):
    """asyncio.run in a thread of its own: Playwright's sync API leaves an event loop running in the main
    thread when browser tests ran earlier in the same session."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def limiter(clock) -> LoginLimiter:
    return LoginLimiter(failures=5, window_s=900, lockout_s=60, address_failures=20, max_lockout_s=3600,
                        strikes_kept_s=86400, clock=clock)


def fail(limiter: LoginLimiter, name: str, address: str, times: int = 1) -> None:
    for _ in range(times):
        limiter.failed(name, address)


def test_a_name_is_locked_only_from_the_address_that_failed(limiter):
    fail(limiter, "bob", "10.0.0.9", 4)
    assert limiter.refused_for("bob", "10.0.0.9") == (0, "")
    fail(limiter, "bob", "10.0.0.9")
    assert limiter.refused_for("bob", "10.0.0.9") == (60, "pair")
    assert limiter.refused_for("Bob ", "10.0.0.9") == (60, "pair")          # the same name as Gradio reads it
    assert limiter.refused_for("bob", "10.0.0.1") == (0, "")                # bob from elsewhere
    assert limiter.refused_for("alice", "10.0.0.9") == (0, "")              # another name from there


def test_failures_from_many_addresses_never_lock_the_name(limiter):
    for i in range(50):
        fail(limiter, "carol", f"10.0.1.{i}", 4)
    assert limiter.refused_for("carol", "10.0.2.1") == (0, "")


def test_an_address_failing_for_many_names_is_locked_for_every_name(limiter):
    for i in range(19):
        fail(limiter, f"name-{i}", "10.0.3.1")
    assert limiter.refused_for("alice", "10.0.3.1") == (0, "")
    fail(limiter, "name-19", "10.0.3.1")
    assert limiter.refused_for("alice", "10.0.3.1") == (60, "address")
    assert limiter.refused_for("alice", "10.0.3.2") == (0, "")


def test_each_further_lock_of_a_pair_doubles_up_to_an_hour_and_a_quiet_day_starts_afresh(limiter, clock):
    locks = []
    for _ in range(9):
        fail(limiter, "bob", "10.0.0.9", 5)
        wait, _ = limiter.refused_for("bob", "10.0.0.9")
        locks.append(wait)
        clock.now += wait + 1
    assert locks == [60, 120, 240, 480, 960, 1920, 3600, 3600, 3600]
    clock.now += 86400 + 1
    fail(limiter, "bob", "10.0.0.9", 5)
    assert limiter.refused_for("bob", "10.0.0.9") == (60, "pair")


def test_failures_older_than_the_window_are_forgotten(limiter, clock):
    fail(limiter, "bob", "10.0.0.9", 4)
    clock.now += 901
    fail(limiter, "bob", "10.0.0.9")
    assert limiter.refused_for("bob", "10.0.0.9") == (0, "")


def test_a_successful_login_clears_its_pair_only(limiter, clock):
    fail(limiter, "bob", "10.0.0.9", 5)
    clock.now += 61
    limiter.succeeded("bob", "10.0.0.9")
    fail(limiter, "bob", "10.0.0.9", 5)
    assert limiter.refused_for("bob", "10.0.0.9") == (60, "pair")           # the doubling started afresh
    fail(limiter, "alice", "10.0.0.8", 4)
    limiter.succeeded("bob", "10.0.0.8")
    fail(limiter, "alice", "10.0.0.8")
    assert limiter.refused_for("alice", "10.0.0.8") == (60, "pair")


def test_a_body_is_counted_as_it_arrives():
    messages = [{"type": "http.request", "body": b"x" * 600, "more_body": True}] * 3

    async def receive():
        return messages.pop(0)

    async def read_all():
        given = counted(receive, 1000)
        await given()
        with pytest.raises(UploadTooLarge) as raised:
            await given()
        return raised.value

    error = run_alone(read_all())
    assert "maximum allowed size" in error.message           # the words Gradio's upload route answers 413 to


def test_the_page_gets_a_policy_with_a_nonce_and_its_scripts_carry_it():
    sent = []

    async def send(message):
        sent.append(message)

    async def respond(page: bool, kind: bytes, body: bytes):
        sent.clear()
        out = with_security_policy(send, page=page)
        await out({"type": "http.response.start", "status": 200,
                   "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode())]})
        await out({"type": "http.response.body", "body": body[:10], "more_body": True})
        await out({"type": "http.response.body", "body": body[10:]})
        headers = dict(sent[0]["headers"])
        return headers, b"".join(m.get("body", b"") for m in sent[1:])

    html = b'<html><script>window.x = 1</script><script type="module" src="a.js"></script><scripts></html>'
    headers, body = run_alone(respond(True, b"text/html; charset=utf-8", html))
    policy = headers[b"content-security-policy"].decode()
    nonce = policy.split("'nonce-")[1].split("'")[0]
    assert body.count(f'<script nonce="{nonce}"'.encode()) == 2 and b"<scripts>" in body
    assert headers[b"content-length"] == str(len(body)).encode()
    assert "default-src 'self'" in policy and "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0]
    headers, body = run_alone(respond(False, b"text/html", html))          # a served file: no nonce, body as is
    assert body == html and "'nonce-" not in headers[b"content-security-policy"].decode()

"""Who may see what over HTTP: an ASGI middleware in front of Gradio's own routes (`guard_middleware`).

Gradio checks only that a visitor is logged in. This adds, per person:

- file URLs (/gradio_api/file=…) are served only from the requester's own folder (assistant.files);
  any other path is 404 — another person's upload, page image or report included;
- uploads (/gradio_api/upload): each received file moves into the uploader's folder at once, and the
  answer names it there, so an upload is never a path someone else can use;
- a Gradio session (the hash a tab sends with each event) and an event id belong to the person who used
  them first; anyone else naming them gets 403, so no one can read or drive another person's tab;
- /gradio_api/deep_link (a shareable snapshot of a tab's values, which this app does not offer) is 404;
- uploads are limited at the door: a body over MAX_UPLOAD_MB (plus the form's overhead) is refused with 413
  and one sentence, by its Content-Length before a byte of it is read, and a body without one (chunked) as
  it arrives: at the limit the upload stops and the part Gradio had received is deleted;
- POST /login: LOGIN_FAILURES failures for one name from one client address lock that name there (only
  there: the right password from elsewhere still works), ADDRESS_FAILURES failures from one address for
  any names lock the address; each lock of the same pair (or address) lasts twice the one before, from
  LOCKOUT_S up to MAX_LOCKOUT_S. A locked attempt gets 429 and one sentence (Retry-After says when);
- every response carries a Content-Security-Policy: the app's pages load scripts, styles, images, fonts
  and connections from their own origin only, and no frames; the page's own inline scripts carry a nonce.

The logged-in name is read the way Gradio's own `get_current_user` reads it: the access-token cookie,
looked up in the Gradio app's `tokens`.
"""
from __future__ import annotations

import json
import logging
import math
import re
import secrets
import threading
import time
from collections import OrderedDict, deque
from urllib.parse import parse_qs

from starlette.formparsers import MultiPartException
from starlette.middleware import Middleware
from starlette.requests import Request

from assistant import files
from assistant.files import AccessDenied
from core.settings import Settings

log = logging.getLogger(__name__)

API = "/gradio_api"
FILE_ROUTES = (f"{API}/file=", f"{API}/file/")
EVENT_ROUTES = (f"{API}/queue/join", f"{API}/call/")       # their answer names a new event id
LOGIN_FAILURES = 5            # for one name from one address
ADDRESS_FAILURES = 20         # from one address, for any names
LOGIN_WINDOW_S = 15 * 60      # failures older than this are forgotten
LOCKOUT_S = 60                # the first lock; each next lock of the same pair or address lasts twice as long
MAX_LOCKOUT_S = 60 * 60
STRIKES_KEPT_S = 24 * 60 * 60   # a day without a lock starts the doubling afresh
MAX_EVENT_BODY = 8 * 1024 * 1024
MAX_LOGIN_BODY = 64 * 1024
FORM_OVERHEAD = 1024 * 1024   # an upload's multipart headers and boundaries, beyond its files' bytes

# Scripts, styles, images, fonts, media and connections from the app's own origin only; no frames, plugins
# or remote form targets. Gradio 6 needs: inline styles (its components set style attributes), data:/blob:
# images (icons, previews), and eval for the `js=` snippets of launch() and events (it runs them through
# `new Function`). Its page's own inline scripts (the config) get the response's nonce; no other inline
# script runs.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'{nonce} 'unsafe-eval'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self'; "
    "worker-src 'self' blob:; frame-src 'none'; object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors 'self'")
SCRIPT_TAG = re.compile(rb"<script(?=[\s>])", re.IGNORECASE)


def guard_middleware(settings: Settings, *, auth_enabled: bool) -> Middleware:
    """For launch(app_kwargs={"middleware": [...]}): Gradio passes app_kwargs to its FastAPI app."""
    return Middleware(AccessGuard, settings=settings, auth_enabled=auth_enabled)


class LoginLimiter:
    """Failed logins counted per (name, client address) pair and per address, so that no one can lock a
    person out by failing logins in their name from somewhere else.

    A pair with `failures` failures inside `window_s` is locked (that name, from that address only); an
    address with `address_failures` failures for any names is locked for every name. The first lock lasts
    `lockout_s`, each next lock of the same pair or address twice the one before, up to `max_lockout_s`
    (the doubling starts afresh after a day without a lock). A successful login clears its pair."""

    def __init__(self, failures: int = LOGIN_FAILURES, window_s: float = LOGIN_WINDOW_S,
                 lockout_s: float = LOCKOUT_S, *, address_failures: int = ADDRESS_FAILURES,
                 max_lockout_s: float = MAX_LOCKOUT_S, strikes_kept_s: float = STRIKES_KEPT_S,
                 clock=time.monotonic):
        self.failures, self.window_s, self.lockout_s, self.clock = failures, window_s, lockout_s, clock
        self.address_failures, self.max_lockout_s, self.strikes_kept_s = address_failures, max_lockout_s, strikes_kept_s
        self._failed: dict[str, deque] = {}
        self._locked_until: dict[str, float] = {}
        self._strikes: dict[str, tuple[int, float]] = {}      # key -> (locks so far, when the last began)
        self._lock = threading.Lock()

    @staticmethod
    def _keys(name: str, address: str) -> tuple[str, str]:
        return f"pair:{address} {name.strip().lower()}", f"address:{address}"   # an address has no space

    def refused_for(self, name: str, address: str) -> tuple[int, str]:
        """(seconds until this name may try again from this address, "pair" or "address": which is locked);
        (0, "") when it may try now."""
        now = self.clock()
        with self._lock:
            left, which = max((self._locked_until.get(key, 0.0) - now, key.split(":", 1)[0])
                              for key in self._keys(name, address))
        return (math.ceil(left), which) if left > 0 else (0, "")

    def failed(self, name: str, address: str) -> None:
        now = self.clock()
        with self._lock:
            for key, limit in zip(self._keys(name, address), (self.failures, self.address_failures)):
                recent = self._failed.setdefault(key, deque())
                recent.append(now)
                while recent and recent[0] <= now - self.window_s:
                    recent.popleft()
                if len(recent) >= limit:
                    self._locked_until[key] = now + self._lock_length(key, now)
                    recent.clear()
            self._forget_old(now)

    def _lock_length(self, key: str, now: float) -> float:
        strikes, last = self._strikes.get(key, (0, now))
        strikes = 1 if now - last > self.strikes_kept_s else strikes + 1
        self._strikes[key] = (strikes, now)
        return min(self.lockout_s * 2 ** (strikes - 1), self.max_lockout_s)

    def succeeded(self, name: str, address: str) -> None:
        pair = self._keys(name, address)[0]
        with self._lock:
            self._failed.pop(pair, None)
            self._strikes.pop(pair, None)

    def _forget_old(self, now: float) -> None:
        if len(self._failed) + len(self._locked_until) + len(self._strikes) < 10_000:
            return
        self._failed = {k: q for k, q in self._failed.items() if q and q[-1] > now - self.window_s}
        self._locked_until = {k: t for k, t in self._locked_until.items() if t > now}
        self._strikes = {k: v for k, v in self._strikes.items() if now - v[1] <= self.strikes_kept_s}


class Owners:
    """The person who first used each session hash or event id (the oldest are forgotten past `limit`)."""

    def __init__(self, limit: int = 200_000):
        self.limit = limit
        self._owner: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def claim(self, key: str, user: str) -> bool:
        """True when `user` owns `key` (claiming it if no one has yet)."""
        with self._lock:
            owner = self._owner.setdefault(key, user)
            if len(self._owner) > self.limit:
                self._owner.popitem(last=False)
            return owner == user


class AccessGuard:
    def __init__(self, app, *, settings: Settings, auth_enabled: bool, limiter: LoginLimiter | None = None):
        self.app = app
        self.settings = settings
        self.auth_enabled = auth_enabled
        self.limiter = limiter or LoginLimiter(lockout_s=settings.login_lockout_s)
        self.owners = Owners()
        self.max_upload = upload_limit(settings)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path, method = route_path(scope), scope["method"]
        send = with_security_policy(send, page=not path.startswith(FILE_ROUTES))
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None:              # any request, an upload above all: refused before it is read
            if not declared.strip().isdigit():
                return await respond(send, 400, "The request's Content-Length is not a number.")
            if int(declared) > self.max_upload:
                log.warning("a request of %s bytes to %s refused (limit %d)", declared.decode(), path, self.max_upload)
                return await self.refuse_upload(send)
        answer = Started(send)
        try:           # a body without a Content-Length (chunked) is counted as it arrives
            return await self.guarded(scope, counted(receive, self.max_upload), answer.send, path, method)
        except UploadTooLarge:
            if answer.started:
                raise
            log.warning("a request to %s refused: its body passed %d bytes", path, self.max_upload)
            return await self.refuse_upload(send)

    async def guarded(self, scope, receive, send, path: str, method: str):
        if method == "POST" and path.rstrip("/") == "/login":
            return await self.login(scope, receive, send)
        if not path.startswith(API + "/"):
            return await self.app(scope, receive, send)
        if path.rstrip("/") == f"{API}/deep_link":
            return await respond(send, 404, "Not found.")
        file_request = path.startswith(FILE_ROUTES)
        upload = method == "POST" and path.rstrip("/") == f"{API}/upload"
        new_event = method == "POST" and path.startswith(EVENT_ROUTES)
        keys, receive = ([], receive) if file_request or upload else await named_sessions(scope, receive, path)
        if not (file_request or upload or new_event or keys):
            return await self.app(scope, receive, send)
        user = self.user_of(scope)
        if user is None:   # fail closed, even where Gradio itself would not ask (its heartbeat)
            return await respond(send, 401, "Please log in.")
        if file_request:
            return await self.serve_file(scope, receive, send, user, path)
        if upload:
            return await self.upload(scope, receive, send, user)
        for key in keys:
            if not self.owners.claim(key, user):
                log.warning("user %r named a session or event of another user (%s %s)", user, method, path)
                return await respond(send, 403, "This session belongs to someone else.")
        if new_event:
            return await self.record_event(scope, receive, send, user)
        return await self.app(scope, receive, send)

    def user_of(self, scope) -> str | None:
        """The logged-in name (as gradio.routes' get_current_user finds it), or the local user without login."""
        if not self.auth_enabled:
            return self.settings.default_user
        app = scope.get("app")
        cookie_id, tokens = getattr(app, "cookie_id", None), getattr(app, "tokens", None)
        if cookie_id is None or not isinstance(tokens, dict):
            log.error("the Gradio app has no login tokens; refusing the request")
            return None
        cookies = Request(scope).cookies
        token = cookies.get(f"access-token-{cookie_id}") or cookies.get(f"access-token-unsecure-{cookie_id}")
        return tokens.get(token) if token else None

    async def serve_file(self, scope, receive, send, user: str, path: str):
        requested = next(path[len(prefix):] for prefix in FILE_ROUTES if path.startswith(prefix))
        if not files.owns(self.settings, user, requested):
            log.warning("user %r asked for a file that is not theirs: %s", user, requested)
            return await respond(send, 404, "Not found.")
        return await self.app(scope, receive, send)

    async def upload(self, scope, receive, send, user: str):
        """Let Gradio receive the files (no more than the limit), then move them into the uploader's folder
        and name them there."""
        answer = CapturedResponse()
        await self.app(scope, receive, answer.send)
        if answer.status == 413:                # counted() stopped it, or a file was over Gradio's max_file_size
            log.warning("upload by %r refused: over %d bytes", user, self.max_upload)
            return await self.refuse_upload(send)
        if answer.status != 200:
            return await answer.forward(send)
        try:
            moved = [files.claim_upload(self.settings, user, p) for p in json.loads(answer.body)]
        except (ValueError, TypeError, OSError, AccessDenied):
            log.exception("moving an upload of %r into their folder failed", user)
            return await respond(send, 500, "The upload could not be stored; please upload the file again.")
        return await answer.forward(send, json.dumps(moved).encode())

    async def refuse_upload(self, send):
        """413 and one sentence; the connection closes, so the rest of the body is never read."""
        return await respond(send, 413, f"This upload is larger than the {self.settings.max_upload_mb} MB limit "
                                        "and was not stored; upload fewer or smaller files at a time.",
                             headers=[(b"connection", b"close")])

    async def record_event(self, scope, receive, send, user: str):
        """An event joins the queue: its id (which streams its results) is the joiner's."""
        answer = CapturedResponse()
        await self.app(scope, receive, answer.send)
        if answer.status == 200:
            try:
                event_id = json.loads(answer.body).get("event_id")
            except (ValueError, AttributeError):
                event_id = None
            if event_id:
                self.owners.claim(str(event_id), user)
        return await answer.forward(send)

    async def login(self, scope, receive, send):
        try:
            body = await read_body(receive, MAX_LOGIN_BODY)
        except BodyTooLarge:
            return await respond(send, 413, "The login form is too large.")
        name = await login_name(scope, body)
        address = (scope.get("client") or ("unknown",))[0]
        wait, which = self.limiter.refused_for(name, address)
        if wait:
            log.warning("login refused for %r from %s: too many failures (%s)", name, address, which)
            whose = "from your address" if which == "address" else "for this name from your address"
            return await respond(send, 429, f"Too many failed logins {whose}; try again in {wait} seconds.",
                                 headers=[(b"retry-after", str(wait).encode())])
        status: dict[str, int] = {}

        async def observe(message):
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        await self.app(scope, replay(body, receive), observe)
        if status.get("code") == 200:
            self.limiter.succeeded(name, address)
        elif status.get("code") in (400, 401):
            log.info("failed login for %r from %s", name, address)
            self.limiter.failed(name, address)


# -- ASGI helpers ------------------------------------------------------------------------------------------

class BodyTooLarge(Exception):
    pass


class UploadTooLarge(MultiPartException):
    """Raised into Gradio's upload parser when the body passes the limit: the parser deletes the files it
    has begun and the route answers 413 (its test is the words "maximum allowed size")."""

    def __init__(self, limit: int):
        super().__init__(f"The upload exceeded the maximum allowed size of {limit} bytes.")


def upload_limit(settings: Settings) -> int:
    """The most bytes one upload request may carry: MAX_UPLOAD_MB and the form around the files."""
    return settings.max_upload_mb * 1024 * 1024 + FORM_OVERHEAD


def counted(receive, limit: int):
    """A `receive` that raises UploadTooLarge once the body it has given passes `limit` bytes."""
    size = 0

    async def receive_counted():
        nonlocal size
        message = await receive()
        if message["type"] == "http.request":
            size += len(message.get("body", b""))
            if size > limit:
                raise UploadTooLarge(limit)
        return message
    return receive_counted


def with_security_policy(send, *, page: bool):
    """A `send` that adds the Content-Security-Policy (and nosniff) to the response. For the app's own HTML
    pages (`page`; not served files) each <script> tag gets the nonce the policy names."""
    state: dict = {}

    async def send_with_policy(message):
        if message["type"] == "http.response.start":
            headers = [(k, v) for k, v in message.get("headers", [])
                       if k.lower() not in (b"content-security-policy", b"x-content-type-options")]
            kind = next((v for k, v in headers if k.lower() == b"content-type"), b"")
            encoded = any(k.lower() == b"content-encoding" for k, _ in headers)
            nonce = secrets.token_urlsafe(18) if page and kind.startswith(b"text/html") and not encoded else ""
            policy = CONTENT_SECURITY_POLICY.format(nonce=f" 'nonce-{nonce}'" if nonce else "")
            headers += [(b"content-security-policy", policy.encode()), (b"x-content-type-options", b"nosniff")]
            message = {**message, "headers": headers}
            if nonce:                      # held until its body is complete: the tags change its length
                state.update(start=message, nonce=nonce.encode(), body=bytearray())
                return
            return await send(message)
        if message["type"] == "http.response.body" and "start" in state:
            state["body"] += message.get("body", b"")
            if message.get("more_body"):
                return
            start = state.pop("start")
            if not state["body"]:          # HEAD: the length of the page it would have sent stays
                await send(start)
                return await send(message)
            body = SCRIPT_TAG.sub(b'<script nonce="' + state["nonce"] + b'"', bytes(state["body"]))
            headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(body)).encode()))
            await send({**start, "headers": headers})
            return await send({"type": "http.response.body", "body": body})
        return await send(message)
    return send_with_policy


def route_path(scope) -> str:
    """The request path below the app's root path (what Gradio's routes match)."""
    path, root = scope.get("path", ""), scope.get("root_path", "")
    return path[len(root):] if root and path.startswith(root) else path


async def read_body(receive, limit: int) -> bytes:
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge()
        chunks.append(chunk)
        if not message.get("more_body"):
            break
    return b"".join(chunks)


def replay(body: bytes, receive):
    """A `receive` that gives the app the body already read, then whatever the client sends next."""
    given = False

    async def again():
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()
    return again


async def named_sessions(scope, receive, path: str) -> tuple[list[str], object]:
    """The session hashes and event ids a request names (Gradio's queue, call, stream, cancel and heartbeat
    routes), and a `receive` that still holds the request body."""
    method, parts = scope["method"], path[len(API) + 1:].rstrip("/").split("/")
    keys: list[str] = []
    if method in ("GET", "HEAD"):
        keys += parse_qs(scope.get("query_string", b"").decode("latin-1")).get("session_hash", [])
        if parts[0] == "heartbeat" and len(parts) == 2:
            keys.append(parts[1])
        elif parts[0] == "call" and len(parts) >= 3:
            keys.append(parts[-1])                                  # /call/[v2/]<api>/<event id>
        elif parts[0] == "stream" and len(parts) >= 2:
            keys.append(parts[1])
    elif method == "POST" and parts[0] in ("queue", "call", "cancel", "run", "api", "stream"):
        if parts[0] == "stream" and len(parts) >= 2:
            keys.append(parts[1])                                   # /stream/<event id>[/close]
        try:
            body = await read_body(receive, MAX_EVENT_BODY)
        except BodyTooLarge:
            body = b""
            keys.append("\0too-large")                              # no one owns it: refused below
        receive = replay(body, receive)
        try:
            fields = json.loads(body) if body else {}
        except ValueError:
            fields = {}
        if isinstance(fields, dict):
            keys += [str(fields[k]) for k in ("session_hash", "event_id") if fields.get(k)]
    return [k for k in keys if k], receive


async def login_name(scope, body: bytes) -> str:
    """The username field of a login form (multipart, as Gradio's page sends it, or urlencoded)."""
    request = Request(scope, receive=replay(body, _nothing))
    try:
        form = await request.form()
        name = str(form.get("username") or "")
        await form.close()
        return name.strip()
    except Exception:  # noqa: BLE001 - an unreadable form still counts against its address
        log.debug("unreadable login form", exc_info=True)
        return ""


async def _nothing():
    return {"type": "http.disconnect"}


class Started:
    """A `send` that notes whether the response has begun."""

    def __init__(self, send):
        self._send, self.started = send, False

    async def send(self, message):
        self.started = self.started or message["type"] == "http.response.start"
        await self._send(message)


class CapturedResponse:
    """A small response held back so its body can be read (and changed) before it is sent."""

    def __init__(self):
        self.start: dict | None = None
        self.body = bytearray()

    @property
    def status(self) -> int | None:
        return self.start["status"] if self.start else None

    async def send(self, message):
        if message["type"] == "http.response.start":
            self.start = message
        elif message["type"] == "http.response.body":
            self.body += message.get("body", b"")

    async def forward(self, send, body: bytes | None = None):
        body = bytes(self.body) if body is None else body
        headers = [(k, v) for k, v in (self.start or {}).get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": self.status or 500, "headers": headers})
        await send({"type": "http.response.body", "body": body})


async def respond(send, status: int, sentence: str, headers: list | None = None):
    body = json.dumps({"detail": sentence}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": body})

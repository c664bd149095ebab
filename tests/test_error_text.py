"""The sentence a learner reads when something fails is in their language: real errors from the real facade,
shown through ui.common.failure for a Chinese and an English browser; and every message key the code uses
has both languages in static/i18n.json with the same {placeholders}."""
from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from assistant import get_assistant
from core.errors import AssistantError, DocumentError, InvalidRequest
from core.text import has_cjk
from ui.common import TEXT, failure, stored_text

ROOT = Path(__file__).resolve().parents[1]
SOURCE_DIRS = ("assistant", "study", "rag", "core", "memory", "ui")


class _Request:
    def __init__(self, language: str):
        self.headers = {"accept-language": language}


ZH, EN = _Request("zh-CN,zh;q=0.9"), _Request("en-US,en;q=0.9")


def assert_shown_in_both(exc: AssistantError, key: str) -> str:
    """The Chinese sentence (no English sentence left in it) and the raise site's own English one."""
    assert exc.key == key
    zh = failure(ZH, exc)
    assert has_cjk(zh), zh
    assert not re.search(r"[A-Za-z]{2,} [A-Za-z]{2,} [A-Za-z]{2,}", zh), zh   # no English words in a row
    assert failure(EN, exc) == str(exc)
    return zh


@pytest.fixture
def learner(settings):
    return get_assistant("learner", settings)


def test_an_empty_note_is_refused_in_chinese(learner):
    with pytest.raises(InvalidRequest) as caught:
        learner.add_note("   ")
    assert str(caught.value) == "The note is empty; write something first."
    assert assert_shown_in_both(caught.value, "err_note_empty") == "笔记是空的，请先写点内容。"


def test_a_duplicate_note_names_when_it_was_saved(learner):
    learner.add_note("Entropy measures disorder.")
    with pytest.raises(InvalidRequest) as caught:
        learner.add_note("Entropy measures disorder.")
    zh = assert_shown_in_both(caught.value, "err_note_duplicate")
    saved = re.search(r"\(saved (.+)\)", str(caught.value)).group(1)
    assert saved in zh


@pytest.mark.parametrize("name, data, key", [
    ("broken.pdf", b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog", "err_pdf_damaged"),
    ("photo.pdf", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, "err_not_a_pdf"),
    ("empty.pdf", b"", "err_file_empty"),
    ("archive.xyz", b"\x1f\x8b\x08" + b"\x00" * 64, "err_file_unsupported"),
], ids=["corrupt", "mislabelled", "empty", "unsupported"])
def test_a_bad_upload_is_explained_in_chinese(learner, tmp_path, name, data, key):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(DocumentError) as caught:
        learner.load_document(path)
    zh = assert_shown_in_both(caught.value, key)
    assert name in zh and name in str(caught.value)


def test_an_error_without_a_key_or_translation_stays_english():
    plain = InvalidRequest("Something went wrong in a way nobody translated.")
    unknown = InvalidRequest("A sentence with a key nobody wrote.", key="err_no_such_key")
    assert failure(ZH, plain) == str(plain)
    assert failure(ZH, unknown) == str(unknown)


def test_a_days_summary_in_recall_is_chinese():
    content = "On 2 March 2025, 37 earlier activities: Asked: what is entropy?; and 30 more."
    shown = stored_text(ZH, content)
    assert shown.startswith("2025年3月2日，更早的 37 项活动："), shown
    assert stored_text(EN, content) == content


# -- the catalogue --------------------------------------------------------------------------------------------

def _keys_used() -> set[str]:
    """Every message key in the source: key="err_…" at a raise, and the keys _friendly picks in core/llm.py."""
    found: set[str] = set()
    for folder in SOURCE_DIRS:
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            found |= set(re.findall(r'\bkey="(\w+)"', text))
            if path.name == "llm.py":     # msg, hint, key = (..., "err_llm_timeout")
                found |= set(re.findall(r'"(err_llm_\w+)"', text))
    return found


def _placeholders(template: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}


def test_the_scan_finds_the_keys():
    used = _keys_used()
    assert {"err_note_empty", "err_pdf_damaged", "err_llm_busy", "err_session_no_user"} <= used
    assert len(used) > 60


@pytest.mark.parametrize("key", sorted(_keys_used()))
def test_every_key_has_both_languages_with_the_same_placeholders(key):
    assert key in TEXT["en"], f"{key} is used in the code but missing from the English text"
    assert key in TEXT["zh-CN"], f"{key} is used in the code but has no Chinese text"
    assert _placeholders(TEXT["en"][key]) == _placeholders(TEXT["zh-CN"][key]), key
    assert has_cjk(TEXT["zh-CN"][key]), key


# -- a failing language model: the error and the notice on the answer --------------------------------------

ZH_NOTES = ("# 函数\n\n函数是一段有名字的代码，它接受参数，执行计算，并返回一个结果。"
            "调用函数时，程序会跳到函数体执行，然后带着返回值回到调用处。\n")


def test_a_failing_language_model_is_explained_in_chinese(llm_settings, fake_llm):
    from core.llm import get_llm
    from rag.tool import RAGTool
    fake_llm.mode = "error"
    with pytest.raises(AssistantError) as caught:
        "".join(get_llm(llm_settings).stream([{"role": "user", "content": "你好"}]))
    assert_shown_in_both(caught.value, "err_llm_failed")

    tool = RAGTool("learner", llm_settings)
    tool.add_text(ZH_NOTES, title="函数")
    answer = tool.ask("什么是函数？")
    assert answer.mode == "extractive" and answer.citations, answer
    assert "语言模型这次没能写出回答" in answer.notice and "Showing" not in answer.notice, answer.notice

"""What a learner reads, in English and in Chinese: stored English labels and sentences shown in the
person's language, page references, the report plots' axes (whole numbers, translated titles, short names
under the bars), and no setting name in any UI text."""
from __future__ import annotations

import re
from types import SimpleNamespace

import pandas as pd

from assistant.views import report_frames
from rag.types import Citation
from ui.common import TEXT, citation_label, pages_ref, stored, stored_text
from ui.recall_tab import FORGET_STRATEGIES, MEMORY_TYPES
from ui.reports_tab import LABEL_CHARS, PLOTS, plot_update, x_label

EN = SimpleNamespace(headers={"accept-language": "en-US,en;q=0.9"})
ZH = SimpleNamespace(headers={"accept-language": "zh-CN,zh;q=0.9"})
SETTING = re.compile(r"\b[A-Z][A-Z0-9]+_[A-Z0-9_]+\b")      # APP_USERS, OPENAI_BASE_URL, STUDY_CLOCK_FILE …
HAN = re.compile(r"[\u4e00-\u9fff]")

REPORT = {"activity": [{"date": "2024-05-08", "documents": 1, "questions": 2, "notes": 0}],
          "documents": [{"name": "a-very-long-file-name-of-lecture-notes-week-12.pdf", "questions": 2}],
          "concepts": {"nodes": [{"name": "MCAS", "memories": 2}], "edges": []},
          "memory": {"counts": {"working": 1, "episodic": 3, "semantic": 0, "perceptual": 0}},
          "study": {"mastery": [{"concept": "tuple", "level": "weak", "score": 0.424},
                                {"concept": "memo", "level": "strong", "score": 0.91}],
                    "coverage": [{"doc_name": "a.pdf", "chapter": "Chapter 12 Files, folders and the operating system",
                                  "pages": 12, "studied_pages": 3}]}}


def test_no_setting_name_in_any_ui_text_in_any_language():
    for lang, texts in TEXT.items():
        for key, value in texts.items():
            assert not SETTING.search(value), (lang, key, value)


def test_every_english_text_has_a_chinese_one_with_the_same_placeholders():
    assert set(TEXT["en"]) == set(TEXT["zh-CN"])
    for key, english in TEXT["en"].items():
        assert set(re.findall(r"\{(\w+)\}", english)) == set(re.findall(r"\{(\w+)\}", TEXT["zh-CN"][key])), key


def test_stored_labels_are_shown_in_the_readers_language():
    for name in MEMORY_TYPES:
        assert stored(EN, "mem_type", name) == name                      # English keeps the word it stores
        assert HAN.search(stored(ZH, "mem_type", name)), name
    for name in FORGET_STRATEGIES:
        assert "_" not in stored(EN, "forget_rule", name) and HAN.search(stored(ZH, "forget_rule", name))
    for kind in ("qa", "question", "note", "preference", "document_loaded", "document_removed", "episodes_rollup"):
        assert HAN.search(stored(ZH, "mem_kind", kind)), kind
    for level in ("strong", "learning", "weak", "new"):
        assert HAN.search(stored(ZH, "mastery", level)), level
    assert stored(ZH, "mem_kind", "something_new") == "something_new"   # an unknown value is shown as it is


def test_the_assistants_own_sentences_in_a_memory_are_translated_the_persons_words_kept():
    asked = "Asked: What is a tuple?\nNot found in the documents."
    assert stored_text(EN, asked) == asked
    assert stored_text(ZH, asked) == "提问：What is a tuple?\n文档中没有找到。"
    assert stored_text(ZH, "Asked: 元组\nAnswer: A tuple is a sequence [1].") == \
        "提问：元组\n回答：A tuple is a sequence [1]."
    assert stored_text(ZH, "Loaded the document 'b.pdf' (Tuples; 3 pages).") == \
        "载入了文档“b.pdf”（Tuples; 3 页）。"
    assert stored_text(ZH, "Removed the document 'b.pdf'.") == "删除了文档“b.pdf”。"
    assert stored_text(ZH, "Asked: x\nSources: [1] b.pdf · p. 3; [2] c.pdf · pp. 4-5") == \
        "提问：x\n来源：[1] b.pdf · 第 3 页; [2] c.pdf · 第 4–5 页"
    assert stored_text(ZH, "My own note: Asked: nothing.") == "My own note: Asked: nothing."


def test_page_references_follow_the_language():
    def cite(n, name, first, last):
        return Citation(n=n, doc_id="d", doc_name=name, page_start=first, page_end=last, chunk_id="c", score=0.0,
                        quote="q")
    one, two, none = cite(1, "b.pdf", 3, 3), cite(2, "b.pdf", 3, 4), cite(3, "b.md", None, None)
    assert [citation_label(EN, c) for c in (one, two, none)] == [c.label for c in (one, two, none)]
    assert [citation_label(ZH, c) for c in (one, two, none)] == \
        ["[1] b.pdf · 第 3 页", "[2] b.pdf · 第 3–4 页", "[3] b.md"]
    assert pages_ref(ZH, 7) == "第 7 页" and pages_ref(EN, 7) == "p. 7" and pages_ref(EN, None) == ""


def test_report_plots_count_in_whole_numbers_with_titles_in_the_readers_language():
    frames = report_frames(REPORT)
    for name, (x, y, color, titles, _series) in PLOTS.items():
        update = plot_update(ZH, name, frames[name])
        assert update["y_axis_format"] == "d", name                  # d3: integer tick labels
        low, top = update["y_lim"]
        # ~8 ticks over at least 0-10: steps of 1 or more; a chapter's 12 pages (3 + 9 stacked) reach 12
        assert low == 0 and top == {"mastery": 100, "coverage": 12}.get(name, 10), (name, top)
        for key in ("x_title", "y_title") + (("color_title",) if color else ()):
            assert HAN.search(update[key]), (name, key, update[key])
        value = update["value"]
        assert all(len(label) <= LABEL_CHARS for label in value[x].astype(str)), (name, value[x].tolist())
        if color:
            assert all(HAN.search(label) for label in value[color]), (name, value[color].tolist())
        assert value[y].map(lambda n: float(n).is_integer()).all(), name
    assert plot_update(EN, "memory_by_type", frames["memory_by_type"])["value"]["type"].tolist() == \
        ["working", "episodic", "semantic", "perceptual"]
    assert plot_update(ZH, "memory_by_type", frames["memory_by_type"])["value"]["type"].tolist() == \
        ["工作记忆", "情景记忆", "语义记忆", "感知记忆"]


def test_a_count_above_the_floor_sets_the_axis_and_an_empty_plot_still_has_whole_ticks():
    busy = pd.DataFrame([{"date": "2024-05-08", "kind": k, "count": 9} for k in ("documents", "questions")])
    assert plot_update(EN, "activity", busy)["y_lim"] == [0, 18]        # the stacked day, not one series
    empty = pd.DataFrame(columns=["document", "questions"])
    assert plot_update(ZH, "questions_per_document", empty)["y_lim"] == [0, 10]


def test_long_names_under_bars_keep_their_start_and_end():
    assert x_label("Chapter 2 Dictionaries") == "Chapter 2 Dictionaries"
    label = x_label("Chapter 12 Files, folders and the operating system")
    assert len(label) == LABEL_CHARS and label.startswith("Chapter 12") and label.endswith("system") and "…" in label
    covered = plot_update(ZH, "coverage", report_frames(REPORT)["coverage"])["value"]
    assert not any("a.pdf" in label for label in covered["chapter"])   # one document: its chapters alone


# -- the notices under an answer: each a keyed sentence, shown in the reader's language -------------------------

ANSWER_NOTICE_KEYS = ("notice_expansion_needs_llm", "notice_expansion_skipped", "notice_queued", "notice_llm_failed",
                      "notice_llm_failed_general", "notice_unsupported", "notice_advanced_search_needs_llm",
                      "notice_listing_records", "notice_not_saved", "notice_memory_unsupported")
NOTES = ("# Functions\n\nA function is a named block of code that takes arguments, computes something and returns "
         "a result. Calling a function jumps to its body and comes back with the return value.\n")
ENGLISH_RUN = re.compile(r"[A-Za-z]{2,} [A-Za-z]{2,} [A-Za-z]{2,}")   # three English words in a row


def assert_keyed(notice, key: str) -> str:
    """The notice is a Notice with this key; shown to a Chinese reader it is Chinese, to an English one itself."""
    from core.errors import Notice
    from ui.common import said
    assert isinstance(notice, Notice) and notice.key == key, (notice, getattr(notice, "key", None))
    zh = said(ZH, notice)
    assert HAN.search(zh) and not ENGLISH_RUN.search(zh), zh
    assert said(EN, notice) == str(notice)
    return zh


def test_every_answer_notice_key_has_chinese_text():
    for key in ANSWER_NOTICE_KEYS:
        assert key in TEXT["en"] and key in TEXT["zh-CN"], key
        assert HAN.search(TEXT["zh-CN"][key]), key
        assert set(re.findall(r"\{(\w+)\}", TEXT["en"][key])) == set(re.findall(r"\{(\w+)\}", TEXT["zh-CN"][key]))


def test_query_expansion_notices_are_keyed_and_the_errors_own_sentence_is_translated():
    from core.errors import LLMError
    from rag.retrieve import Retriever

    class FailingLLM:
        def complete(self, *args, **kwargs):
            raise LLMError("The language model failed; try again later.", key="err_llm_failed")

    options = SimpleNamespace(mqe=True, hyde=True, also=())
    warnings: list[str] = []
    Retriever._expand(SimpleNamespace(llm=None, settings=SimpleNamespace(mqe_queries=2)), "q", options, warnings)
    assert warnings == ["Query expansion (MQE/HyDE) needs a language model; searched with the question only."]
    assert_keyed(warnings[0], "notice_expansion_needs_llm")

    warnings = []
    Retriever._expand(SimpleNamespace(llm=FailingLLM(), settings=SimpleNamespace(mqe_queries=2)), "q", options,
                      warnings)
    assert warnings == ["Query expansion was skipped: The language model failed; try again later."]
    assert assert_keyed(warnings[0], "notice_expansion_skipped") == "已跳过查询扩展：语言模型出错了，请稍后再试。"


def test_fixed_answer_notices_are_shown_in_chinese():
    from core.errors import Notice
    from rag import prompts
    from ui.common import said
    assert assert_keyed(Notice(prompts.UNSUPPORTED_NOTICE, key="notice_unsupported"), "notice_unsupported") \
        == prompts.UNSUPPORTED_NOTICE_ZH
    assert assert_keyed(Notice(prompts.LLM_FAILED_NOTICE_ZH, key="notice_llm_failed_general"),
                        "notice_llm_failed_general") == prompts.LLM_FAILED_NOTICE_ZH
    queued = Notice(prompts.QUEUED.format(n=2), key="notice_queued", n=2)
    assert "2" in assert_keyed(queued, "notice_queued")
    plain = Notice("A sentence nobody translated.")                  # no key: English, in either language
    assert said(ZH, plain) == str(plain)


def test_a_failing_model_gives_keyed_notices_on_the_answer(llm_settings, fake_llm, monkeypatch):
    from rag.tool import RAGTool
    from rag.types import Answer, SourcesEvent
    tool = RAGTool("learner", llm_settings)
    tool.add_text(NOTES, title="Functions")
    fake_llm.mode = "error"
    monkeypatch.setattr(tool.llm, "waiting", lambda: 2)       # two questions ahead: this one is queued
    items = list(tool.ask_stream("What does a function return?", mqe=True))
    event = next(i for i in items if isinstance(i, SourcesEvent))
    assert "answering 2 other question(s)" in event.waiting_for
    assert "2" in assert_keyed(event.waiting_for, "notice_queued")
    answer = items[-1]
    assert isinstance(answer, Answer) and answer.mode == "extractive", answer
    keys = [n.key for n in answer.notices]
    assert keys == ["notice_expansion_skipped", "notice_llm_failed"], answer.notices
    for notice in answer.notices:
        assert_keyed(notice, notice.key)
    assert answer.notice == " ".join(answer.notices)             # the CLI and the memories read the joined text
    assert answer.notice.endswith("Showing the passages that answer it best instead.")


def test_the_assistants_own_notices_are_keyed(settings, monkeypatch):
    from assistant import get_assistant
    from assistant.types import AskResult
    from core.errors import StoreUnavailable
    learner = get_assistant("learner", settings)
    learner.rag.add_text(NOTES, title="Functions")
    remember = learner._remember

    def failing(content, memory_type, *args, **kwargs):
        if memory_type == "episodic":
            raise StoreUnavailable("The memory store cannot be opened.")
        return remember(content, memory_type, *args, **kwargs)

    monkeypatch.setattr(learner, "_remember", failing)
    result = list(learner.ask("What does a function return?", use_advanced_search=True))[-1]
    assert isinstance(result, AskResult)
    keys = [n.key for n in result.notices if getattr(n, "key", None)]
    assert keys == ["notice_advanced_search_needs_llm", "notice_not_saved"], result.notices
    for notice in result.notices:
        if getattr(notice, "key", None):
            assert_keyed(notice, notice.key)
    assert result.notice.endswith("This exchange could not be saved to your history.")

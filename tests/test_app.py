"""app.py without a browser: login settings, loopback binding, the no-LLM controls, the UI text, and how
answers are shown (assistant.views.chat_markdown: quotes, code, HTML, [n] links)."""
from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

import app
from assistant.types import AskResult
from assistant.views import chat_markdown, graph_svg, progress_table, reflow_quotes, report_frames
from rag.types import Citation

ROOT = Path(__file__).resolve().parents[1]


def components_by_id(demo) -> dict[str, dict]:
    return {c["props"].get("elem_id"): c for c in demo.config["components"] if c["props"].get("elem_id")}


def test_app_users_parse_and_reject_malformed_entries():
    assert app.parse_users("alice:pw1, bob:pw:2") == [("alice", "pw1"), ("bob", "pw:2")]
    assert app.parse_users(None) == [] and app.parse_users(" ") == []
    with pytest.raises(SystemExit, match="name:password"):
        app.parse_users("alice")


def test_without_login_the_app_binds_to_loopback_only(settings):
    exposed = settings.model_copy(update={"app_host": "0.0.0.0", "app_port": 7999})
    options = app.launch_options(exposed)
    assert options["server_name"] == "127.0.0.1" and options["server_port"] == 7999 and options["auth"] is None
    with_login = settings.model_copy(update={"app_host": "0.0.0.0", "app_users": "alice:pw"})
    options = app.launch_options(with_login)
    assert options["server_name"] == "0.0.0.0" and options["auth"] == [("alice", "pw")]
    data = settings.data_dir.resolve()                # stored files and stores: never servable; only DATA_DIR/web is
    assert {str(data / "files"), str(data / "memory")} <= set(options["blocked_paths"])
    assert str(data / "web") not in options["blocked_paths"]


def test_no_llm_disables_expansion_and_shows_the_extractive_note(settings):
    ids = components_by_id(app.build_app(settings))
    for name in ("mqe", "hyde"):
        assert ids[name]["props"]["interactive"] is False
        assert "needs_llm" in str(ids[name]["props"]["info"])
    assert ids["llm-notice"]["props"]["visible"] is True
    for needed in ("upload", "doc-table", "chat", "sources", "page-view", "concept", "concept-graph",
                   "recall-types", "recall-from", "forget-preview", "consolidate-preview", "report-download",
                   "plot-activity", "plot-questions", "plot-concepts", "plot-memory"):
        assert needed in ids, needed
    assert "logout" not in ids


def test_a_local_model_also_enables_the_toggles(settings, local_model_dir):
    local = settings.model_copy(update={"llm_backend": "local", "llm_model_dir": local_model_dir})
    ids = components_by_id(app.build_app(local))            # no endpoint, yet a model answers
    assert ids["mqe"]["props"]["interactive"] is True and ids["hyde"]["props"]["interactive"] is True
    assert ids["llm-notice"]["props"]["visible"] is False


def test_with_an_llm_the_toggles_are_live(llm_settings):
    ids = components_by_id(app.build_app(llm_settings, auth_enabled=True))
    assert ids["mqe"]["props"]["interactive"] is True and ids["hyde"]["props"]["interactive"] is True
    assert ids["llm-notice"]["props"]["visible"] is False
    assert "logout" in ids


def test_every_ui_text_key_exists_in_english_and_chinese():
    text = json.loads((ROOT / "static" / "i18n.json").read_text(encoding="utf-8"))
    assert set(text["en"]) == set(text["zh-CN"])
    source = "\n".join(p.read_text(encoding="utf-8") for p in [ROOT / "app.py", *sorted((ROOT / "ui").glob("*.py"))])
    used = set(re.findall(r'_\("([a-z_]+)"\)', source)) | set(re.findall(r't\(request, "([a-z_]+)"', source))
    used |= {f"metric_{k}" for k in re.findall(r'\("([a-z]+)", "[a-z_]+"\)', source)}
    used |= {f"col_{k}" for k in ("name", "title", "pages", "chunks", "added", "when", "concept", "note", "type",
                                  "kind", "importance", "score", "content", "target")}
    used |= set(re.findall(r'"((?:msg|answered|sources|strength)_[a-z_]+)"', source))
    used |= {f"strength_{k}" for k in ("strong", "partial", "weak")}
    missing = sorted(k for k in used if k not in text["en"])
    assert not missing, missing
    for key, value in text["en"].items():   # placeholders match across languages
        assert set(re.findall(r"{(\w+)", value)) == set(re.findall(r"{(\w+)", text["zh-CN"][key])), key
    for lang in ("en", "zh-CN"):            # a learner reads no setting names (OPENAI_BASE_URL, LLM_BACKEND …)
        names = {k: v for k, v in text[lang].items() if re.search(r"\b[A-Z]{2,}_[A-Z_]{2,}\b", v)}
        assert not names, names


class _Request:
    def __init__(self, language: str = "en-US"):
        self.headers = {"accept-language": language}


def _citation(n: int, support: float | None = 0.9, page: int | None = 3) -> Citation:
    return Citation(n=n, doc_id="d", doc_name="notes.pdf", page_start=page, page_end=page, chunk_id=f"d:{n}",
                    score=0.0331, quote="q", support=support)


def test_sources_read_as_a_match_word_never_a_score():
    request = _Request()
    assert app.source_choice(request, _citation(1, 0.9)) == "[1] notes.pdf · p. 3 — strong match"
    assert app.source_choice(request, _citation(2, 0.5)) == "[2] notes.pdf · p. 3 — partial match"
    assert app.source_choice(request, _citation(3, 0.1)) == "[3] notes.pdf · p. 3 — weak match"
    assert app.source_choice(request, _citation(4, None, None)) == "[4] notes.pdf"
    assert "0.033" not in app.source_choice(request, _citation(1))


def test_the_page_caption_names_the_outlined_figures_in_the_readers_language():
    from assistant.pages import RenderedPage
    page = RenderedPage(None, 3, 12, figures=[{"label": "Figure 1.1", "caption": "Figure 1.1: Ice flow at the front."},
                                              {"label": "", "caption": ""}])
    assert app.page_caption(_Request(), _citation(1), page) == \
        "[1] notes.pdf · p. 3 — page 3 of 12 · figures outlined: Figure 1.1 (Ice flow at the front.); Figure 2"
    zh = app.page_caption(_Request("zh-CN,zh;q=0.9"), _citation(1), RenderedPage(None, 3, 12))
    assert zh == "[1] notes.pdf · 第 3 页 — 第 3 页，共 12 页"


def test_each_answer_says_who_wrote_it():
    request = _Request()

    def result(**kw) -> AskResult:
        return AskResult(question="q", text="t", route=kw.pop("route", "documents"), mode="x", **kw)
    assert app.answered_by(request, result(llm="Qwen2.5-Coder-0.5B-Instruct (local)")) == \
        "Answered by Qwen2.5-Coder-0.5B-Instruct (local)."
    assert app.answered_by(request, result()) == "Quoted from your documents (no language model)."
    assert app.answered_by(request, result(refused=True)) == "Searched your documents (no language model)."
    assert "learning history" in app.answered_by(request, result(route="memory"))

    class Local:
        model, is_local = "Qwen2.5-Coder-0.5B-Instruct (local)", True
    assert "running on this computer" in app.model_sentence(request, Local())
    assert app.model_sentence(request, None) == "No language model: answers quote your documents."


def test_views_render_plain_data():
    from memory.graph.base import GraphView
    view = GraphView(nodes=[{"key": "mcas", "name": "MCAS", "label": "CONCEPT", "memories": 2},
                            {"key": "aoa <sensor>", "name": "AOA <sensor>", "label": "CONCEPT", "memories": 1}],
                     edges=[{"source": "mcas", "target": "aoa <sensor>", "type": "ABOUT", "weight": 1}])
    svg = graph_svg(view, own_concepts={"mcas"})
    assert svg.startswith("<svg") and svg.count("<circle") == 2 and svg.count("<line") == 1
    assert "AOA &lt;sensor&gt;" in svg and "<sensor>" not in svg       # names are escaped
    assert svg.count(app_colour := "#e8710a") == 1, app_colour            # only the person's own concept is orange
    assert "No concepts" in graph_svg(GraphView(nodes=[], edges=[]), empty_text="No concepts yet.")
    table = progress_table([{"name": "a.pdf", "state": "working", "message": "…"},
                            {"name": "<b>.pdf", "state": "error", "message": "bad"}])
    assert 'data-state="working"' in table and "&lt;b&gt;.pdf" in table
    assert reflow_quotes("> one\ntwo [1]\n> three [2]") == "> one two [1]\n\n> three [2]"
    assert reflow_quotes("Plain answer\nwith lines") == "Plain answer\nwith lines"
    frames = report_frames({"activity": [{"date": "2024-05-08", "documents": 1, "questions": 2, "notes": 0}],
                            "documents": [{"name": "a.pdf", "questions": 2}],
                            "concepts": {"nodes": [{"name": "MCAS", "memories": 2}], "edges": []},
                            "memory": {"counts": {"working": 1, "episodic": 3}},
                            "study": {"mastery": [{"concept": "tuple", "level": "weak", "score": 0.424},
                                                  {"concept": "memo", "level": "new", "score": None}],
                                      "coverage": [{"doc_name": "a.pdf", "chapter": "Tuples", "pages": 12,
                                                    "studied_pages": 3}]}})
    assert len(frames["activity"]) == 3 and frames["memory_by_type"]["count"].sum() == 4
    assert frames["mastery"].to_dict("records") == [{"concept": "tuple", "recall %": 42, "level": "weak"}]
    assert frames["coverage"]["pages"].tolist() == [3, 9]        # studied, not studied: whole pages


def test_word_runs_locate_a_passage_despite_line_breaks():
    from assistant.pages import matching_runs
    page = "The threshold would be a\r\nfunction of the magnitude of the\r\ndisagreement. Other text here."
    passage = "11The threshold would be a function of the magnitude of the disagreement."
    runs = matching_runs(page, passage)
    # "11The" (a footnote mark glued on) is not "The": the run starts at the next shared word.
    assert runs and page[runs[0][0]:runs[-1][1]].startswith("threshold would be a\r\nfunction")
    assert "Other" not in page[runs[0][0]:runs[-1][1]]
    assert matching_runs(page, "nothing in common at all here") == []


EXTRACTIVE_ANSWER = ("**Recursion is when a function calls itself.** [1]\n\n"
                     "> Every recursive function needs a base case,\nwhich returns at once. [2]\n"
                     "```python\ndef f(n):\n    > not a quote\n    return 1 if n < 2 else n * f(n - 1)  # [1]\n```\n\n[1]\n"
                     "- a list item\n> a last quote [2]\n- another item")


def test_reflow_keeps_the_bold_answer_lists_and_code():
    out = reflow_quotes(EXTRACTIVE_ANSWER)
    assert out.startswith("**Recursion is when a function calls itself.** [1]\n\n")
    assert "> Every recursive function needs a base case, which returns at once. [2]\n\n```python\n" in out
    assert "```python\ndef f(n):\n    > not a quote\n    return 1 if n < 2 else n * f(n - 1)  # [1]\n```" in out
    assert "- a list item\n\n> a last quote [2]\n\n- another item" in out   # a list after a quote is no quote
    unclosed = "> quoted\n```\nx = 1\ny = 2"
    assert reflow_quotes(unclosed) == "> quoted\n\n```\nx = 1\ny = 2"


def test_chat_markdown_links_citations_and_prints_html():
    out = chat_markdown(EXTRACTIVE_ANSWER, answer=3, citations={1: "[1] a.pdf · p. 2", 2: '[2] "b".pdf'})
    assert out.startswith('**Recursion is when a function calls itself.** [\\[1\\]](#cite-3-1 "[1] a.pdf · p. 2")')
    assert "[\\[2\\]](#cite-3-2 \"[2] 'b'.pdf\")" in out
    assert "f(n - 1)  # [1]\n```" in out and "if n < 2" in out                # code is left exactly as it is
    assert "[\\[1\\]](#cite-3-1" in out.split("```")[-1]                      # the [1] after the code is a link
    assert chat_markdown("see [7] and [1]", answer=0, citations={1: "x"}) == 'see [7] and [\\[1\\]](#cite-0-1 "x")'
    assert chat_markdown("memory: (sources: [1] a.pdf)") == "memory: (sources: [1] a.pdf)"   # no answer: no links
    html = chat_markdown("> The tag <img src=x onerror=alert(1)> shows ![pic](http://example.com/p.png) [1]")
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)>" in html and "![" not in html
    assert chat_markdown("use `a<b` and\n```\n<b>bold</b>\n```") == "use `a<b` and\n```\n<b>bold</b>\n```"
    assert chat_markdown("`x[1]` is [1]", answer=0, citations={1: "x"}) == '`x[1]` is [\\[1\\]](#cite-0-1 "x")'
    # a book's own reference mark inside its sentence is quoted text, not one of the answer's sources
    assert chat_markdown("hyperref 宏包[1]提供了一些超链接功能。 [1]", answer=0, citations={1: "x"}) == \
        'hyperref 宏包[1]提供了一些超链接功能。 [\\[1\\]](#cite-0-1 "x")'
    # a tilde in a book is text, not strikethrough (in code it is left as it is)
    assert chat_markdown("appending a tilde ‘~’ to the first note: g'4~ g") == "appending a tilde ‘\\~’ to the first note: g'4\\~ g"
    assert chat_markdown("```\ncd ~/texmf\n```") == "```\ncd ~/texmf\n```"


class _FakeAssistant:
    """What the Q&A handler sees of the facade: a SourcesEvent (queued behind another question), the text
    in two pieces, then the AskResult."""

    def __init__(self):
        self.asked = []

    def ask(self, question, history, mqe=False, hyde=False, session_id=None):
        from rag.types import SourcesEvent
        self.asked.append((question, history))
        cites = [_citation(1, 0.9, 2), _citation(2, 0.5, 5)]
        yield SourcesEvent(cites, search_query=question, waiting_for="1 question(s) ahead of yours for TinyModel")
        yield "**A tuple cannot change.** [1]"
        yield "\n\n> It is <b>hashable</b> [2]"
        yield AskResult(question=question, text="**A tuple cannot change.** [1]\n\n> It is <b>hashable</b> [2]",
                        route="documents", mode="llm", citations=cites, llm="TinyModel")


def test_the_answer_handler_lists_sources_first_and_keeps_the_history_plain(settings, monkeypatch):
    fake = _FakeAssistant()
    monkeypatch.setattr(app, "get_assistant", lambda user, s: fake)
    demo = app.build_app(settings)
    block = next(f for f in demo.fns.values() if getattr(f.fn, "__name__", "") == "ask")
    by_id = {c: getattr(c, "elem_id", None) for c in block.outputs}
    history_state, cite_map_state = block.outputs[9], block.outputs[12]

    class Request:
        headers = {"accept-language": "en"}
        username = None
    steps = [{by_id[c] or c: copy.deepcopy(v) for c, v in step.items()}     # as Gradio sends each step
             for step in block.fn("Why are tuples immutable?", [], [], {}, False, False, "s1", Request())]
    chat = [s["chat"][-1]["content"] for s in steps if "chat" in s]
    assert chat[0] == "…" and chat[1] == "⏳ *1 question(s) ahead of yours for TinyModel*"
    listed = next(i for i, s in enumerate(steps) if "sources" in s and s["sources"]["choices"])
    first_text = next(i for i, s in enumerate(steps) if "chat" in s and "tuple" in s["chat"][-1]["content"])
    assert listed < first_text                                   # the passages are listed before the text
    assert [label for label, _ in steps[listed]["sources"]["choices"]] == [
        "[1] notes.pdf · p. 2 — strong match", "[2] notes.pdf · p. 5 — partial match"]
    final = steps[-1]
    assert final["chat"][-1]["content"] == ('**A tuple cannot change.** [\\[1\\]](#cite-0-1 "[1] notes.pdf · p. 2")'
                                            '\n\n> It is &lt;b>hashable&lt;/b> [\\[2\\]](#cite-0-2 "[2] notes.pdf · p. 5")')
    assert final["answer-notice"] == "Answered by TinyModel." and final["searched-for"] == ""
    assert final[history_state] == [{"role": "user", "content": "Why are tuples immutable?"},
                                    {"role": "assistant", "content": "**A tuple cannot change.** [1]\n\n"
                                                                     "> It is <b>hashable</b> [2]"}]
    assert [c.n for c in final[cite_map_state][0]] == [1, 2]


def test_an_upload_reports_its_stages_then_its_result_and_errors_reach_the_handler(settings, tmp_path):
    from assistant import PDFLearningAssistant
    from core.errors import DocumentError
    assistant = PDFLearningAssistant("uploader", settings)
    doc = tmp_path / "notes.md"
    doc.write_text("\n\n".join(f"# Part {i}\n\n" + f"Paragraph {i} explains topic {i} in a few plain words. " * 30
                               for i in range(40)), encoding="utf-8")
    items = list(app.load_with_progress(assistant, str(doc), "s1"))
    assert items[-1]["stage"] == "done" and items[-1]["result"].chunks > 0
    # Each reported stage is a known one with sane counts (how many show depends on timing).
    for item in items[:-1]:
        assert item["stage"] in app.UPLOAD_STAGES and 0 < item["done"] <= item["total"]
    html = progress_table([{"name": "notes.md", "state": "working", "message": "…", "percent": 40}])
    assert 'value="40"' in html

    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4 not really")
    with pytest.raises(DocumentError):
        list(app.load_with_progress(assistant, str(broken), "s1"))


def test_the_ingest_reports_embedding_progress_per_batch(settings, tmp_path):
    from rag.tool import RAGTool
    seen = []
    text = "\n\n".join(f"# Section {i}\n\n" + f"Sentence {i} about subject {i}. " * 60 for i in range(60))
    result = RAGTool("progress", settings).add_text(text, title="long")
    assert result.chunks > 64     # more than one embedding batch
    doc = tmp_path / "long.md"
    doc.write_text(text + "\n\nOne more line so the content differs.", encoding="utf-8")
    RAGTool("progress", settings).add_document(doc, progress=lambda *event: seen.append(event))
    assert [s for s, _, _ in seen] == ["embed"] * len(seen) and len(seen) >= 2
    assert seen[-1][1] == seen[-1][2] and [d for _, d, _ in seen] == sorted(d for _, d, _ in seen)

"""app.py without a browser: login settings, loopback binding, the no-LLM controls, the UI text."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import app
from assistant.views import graph_svg, progress_table, reflow_quotes, report_frames

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
    assert str(settings.data_dir.resolve()) in options["blocked_paths"]   # every user's files live there


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


def test_with_an_llm_the_toggles_are_live(llm_settings):
    ids = components_by_id(app.build_app(llm_settings, auth_enabled=True))
    assert ids["mqe"]["props"]["interactive"] is True and ids["hyde"]["props"]["interactive"] is True
    assert ids["llm-notice"]["props"]["visible"] is False
    assert "logout" in ids


def test_every_ui_text_key_exists_in_english_and_chinese():
    text = json.loads((ROOT / "static" / "i18n.json").read_text(encoding="utf-8"))
    assert set(text["en"]) == set(text["zh-CN"])
    source = (ROOT / "app.py").read_text(encoding="utf-8")
    used = set(re.findall(r'_\("([a-z_]+)"\)', source)) | set(re.findall(r't\(request, "([a-z_]+)"', source))
    used |= {f"metric_{k}" for k in re.findall(r'\("([a-z]+)", "[a-z_]+"\)', source)}
    used |= {f"col_{k}" for k in ("name", "title", "pages", "chunks", "added", "when", "concept", "note", "type",
                                  "kind", "importance", "score", "content", "target")}
    missing = sorted(k for k in used if k not in text["en"])
    assert not missing, missing
    for key, value in text["en"].items():   # placeholders match across languages
        assert set(re.findall(r"{(\w+)", value)) == set(re.findall(r"{(\w+)", text["zh-CN"][key])), key


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
                            "memory": {"counts": {"working": 1, "episodic": 3}}})
    assert len(frames["activity"]) == 3 and frames["memory_by_type"]["count"].sum() == 4


def test_word_runs_locate_a_passage_despite_line_breaks():
    from assistant.pages import matching_runs
    page = "The threshold would be a\r\nfunction of the magnitude of the\r\ndisagreement. Other text here."
    passage = "11The threshold would be a function of the magnitude of the disagreement."
    runs = matching_runs(page, passage)
    # "11The" (a footnote mark glued on) is not "The": the run starts at the next shared word.
    assert runs and page[runs[0][0]:runs[-1][1]].startswith("threshold would be a\r\nfunction")
    assert "Other" not in page[runs[0][0]:runs[-1][1]]
    assert matching_runs(page, "nothing in common at all here") == []

"""The whole UI in Chinese, in Debian's Chromium against the real app with no language model: a person whose
browser asks for zh-CN uploads a PDF, asks, saves a note, lists memories (and previews consolidation and
forgetting), makes cards and grades one, takes a quiz and refreshes the report. Then every tab's visible
text (tables, dropdown choices, the plots' axes and legends) is read and checked: no English UI string from
static/i18n.json, no stored label (memory types, forget rules, memory kinds, mastery levels, card grades,
"page N of M"), no setting name. The document's own text and the file name are left out of the check.
The report's count axes are checked to tick in whole numbers. Screenshots 40-45 go to test-artefacts/.
"""
from __future__ import annotations

import re

import pytest

from tests.browser.conftest import login, open_tab
from tests.browser.pdfgen import make_pdf
from tests.browser.test_review_browser import choose, open_accordion, wait_text
from tests.test_study import BOOK
from ui.common import TEXT

pytestmark = pytest.mark.browser

FILE = "book.pdf"
QUESTION = "什么是元组？"                                  # the person's own words, in Chinese
ENGLISH_QUESTION = "What is a tuple?"                      # … and in English (its words are no UI string)
CONCEPT = "备忘"
NOTE = "备忘录是为以后使用而保存的计算结果，不必再算一次。"
TABS = [("documents", "文档", "40-zh-documents"), ("qa", "问答", "41-zh-qa"), ("notes", "笔记", "42-zh-notes"),
        ("recall", "回顾", "43-zh-recall"), ("review", "复习", "44-zh-review"),
        ("reports", "报告", "45-zh-reports")]
DROPDOWNS = ["#doc-select", "#conversations", "#concept", "#note-pick", "#forget-strategy", "#cards-doc",
             "#cards-chapter", "#cards-note", "#cards-turn", "#cards-pick"]
COUNT_PLOTS = ["#plot-activity", "#plot-questions", "#plot-concepts", "#plot-memory", "#plot-coverage"]

# Values stored in English (memory types, forget rules, metadata kinds, mastery levels, card kinds and
# grades, plot series and columns) and English units: none may be what a Chinese reader sees. ("type", the
# memory plot's column, is left out: it is a concept of the test's book; the axis titles are checked below.)
STORED_LABELS = [
    "working", "episodic", "semantic", "perceptual", "importance_based", "time_based", "capacity_based",
    "document_loaded", "document_removed", "question", "qa", "note", "preference", "episodes_rollup",
    "strong", "learning", "weak", "new", "cloze", "basic", "Again", "Hard", "Good", "Easy",
    "studied", "not studied", "documents", "questions", "notes", "count", "kind", "date", "level",
    "pages", "memories", "recall %", "concept", "chapter", "document", "match",
]
STORED = [re.compile(rf"(?<![A-Za-z_]){re.escape(w)}(?![A-Za-z_])", re.I) for w in STORED_LABELS] + [
    re.compile(r"\bp\.\s*\d"), re.compile(r"\d\s*p\.(?!\w)"), re.compile(r"\bpages?\s+\d+\s+of\s+\d+", re.I),
    re.compile(r"\bof\s+\d+\b")]
SETTING = re.compile(r"\b(APP_USERS|OPENAI_BASE_URL|OPENAI_API_KEY|LLM_[A-Z_]+|STUDY_CLOCK_FILE|QDRANT_URL|"
                     r"NEO4J_[A-Z_]+|EMBED_[A-Z_]+|DATA_DIR|APP_[A-Z_]+)\b")
# Words every language shows as they are (names of formats, models, methods).
UNTRANSLATED = {"PDF", "JSON", "CSV", "Anki", "MQE", "HyDE", "FSRS", "OCR", "Markdown", "Word", "PowerPoint",
                "Excel", "HTML", ".apkg"}


def english_ui_strings() -> list[str]:
    """The literal pieces (between {placeholders}) of every English UI text whose Chinese differs."""
    pieces = set()
    for key, english in TEXT["en"].items():
        if TEXT["zh-CN"].get(key, english) == english:
            continue
        for piece in re.split(r"\{[a-z_]+\}", english):
            piece = piece.strip(" .,:;()—-·*\n")
            if re.search(r"[A-Za-z]{2}", piece) and piece not in UNTRANSLATED:
                pieces.add(piece)
    return sorted(pieces, key=len, reverse=True)


def document_words() -> str:
    return " ".join(" ".join(line.lstrip("# ").split()) for lines in BOOK for line in lines).lower()


def drop_document_text(text: str) -> list[str]:
    """The text's cells and lines, less those quoting the document (three of its words in a row, or one of
    its headings) — a card, an answer, a chapter picked from it is the document's own text. The file name
    is replaced, not dropped: what is around it ('book.pdf p. 2') is the UI's."""
    doc = document_words()
    headings = {" ".join(line[2:].split()).lower() for lines in BOOK for line in lines if line.startswith("# ")}
    kept = []
    for segment in re.split(r"[\n\t]+", text.replace(FILE, "«file»")):
        words = re.findall(r"[a-z0-9]+", segment.lower().replace("____", " "))
        quotes = any(" ".join(words[i:i + 3]) in doc for i in range(len(words) - 2))
        if quotes or " ".join(words) in headings or re.search(r"[a-z]+: a ", segment.lower()):
            continue
        kept.append(segment)
    return kept


def leaks(text: str) -> list[str]:
    found = []
    for segment in drop_document_text(text):
        for english in english_ui_strings():
            if re.search(rf"(?<![A-Za-z]){re.escape(english)}(?![A-Za-z])", segment):
                found.append(f"UI text {english!r} in {segment!r}")
        for pattern in STORED:
            if pattern.search(segment):
                found.append(f"stored label {pattern.pattern!r} in {segment!r}")
        if SETTING.search(segment):
            found.append(f"setting name in {segment!r}")
    return found


def dropdown_choices(page, selector: str) -> str:
    """A dropdown's choices are in the page only while its list is open."""
    if not page.is_visible(f"{selector} input"):
        return ""
    page.click(f"{selector} input")
    try:
        page.wait_for_selector("ul[role=listbox]", timeout=3_000)
        text = page.inner_text("ul[role=listbox]")
    except Exception:  # noqa: BLE001 - an empty dropdown opens no list
        text = ""
    page.keyboard.press("Escape")
    return text


def plot_texts(page, selector: str) -> dict:
    """What a Vega plot (an SVG) shows: axis titles, tick labels, legend title and labels."""
    return page.evaluate("""s => {
      const texts = q => Array.from(document.querySelectorAll(`${s} ${q} text`)).map(t => t.textContent);
      return {titles: texts('.role-axis-title'), y: texts('.role-axis:not([aria-label^="X"]) .role-axis-label'),
              x: texts('.role-axis[aria-label^="X"] .role-axis-label'),
              legend: texts('.role-legend-title').concat(texts('.role-legend-label'))};
    }""", selector)


@pytest.fixture(scope="module")
def chinese(browser, extractive_app, tmp_path_factory):
    """A zh-CN browser that has done one of everything: (page, plots) with the plots' texts."""
    book = tmp_path_factory.mktemp("zh-book") / FILE
    book.write_bytes(make_pdf(BOOK))
    # a library of its own (login "mei"): what the other browser tests upload and write (English file names,
    # notes and questions) would read as English UI text on these pages
    context, page = login(browser, extractive_app, "mei", locale="zh-CN",
                          headers={"Accept-Language": "zh-CN,zh;q=0.9"})
    try:
        page.set_input_files("#upload input[type=file]", str(book))
        page.wait_for_selector("#upload-progress tr[data-state=done]", timeout=180_000)

        open_tab(page, "问答")
        page.fill("#question textarea", QUESTION)
        page.click("#ask")
        page.wait_for_function("document.querySelectorAll('#chat [data-testid=\"bot\"]').length >= 1", timeout=120_000)
        page.wait_for_function("document.querySelectorAll('#sources label').length > 0")
        page.click("#sources label >> nth=0")
        page.wait_for_selector("#page-view img")
        page.fill("#question textarea", ENGLISH_QUESTION)       # a quoted answer, with its sources
        page.click("#ask")
        page.wait_for_function("document.querySelectorAll('#chat [data-testid=\"bot\"]').length >= 2", timeout=120_000)
        wait_text(page, "#answer-notice", "摘自你的文档")
        page.click("#sources label >> nth=0")
        page.wait_for_selector("#page-view img")
        page.click("#note-passage")                                # a page-anchored note
        wait_text(page, "#page-status", "存为笔记")

        open_tab(page, "笔记")
        page.fill("#concept input", CONCEPT)
        page.keyboard.press("Escape")
        page.fill("#note-text textarea", NOTE)
        page.click("#note-save")
        wait_text(page, "#note-status", "笔记已保存")

        open_tab(page, "回顾")
        wait_text(page, "#recall-status", "找到")
        open_accordion(page, "#maintenance", "#forget-preview")
        page.click("#forget-preview")
        wait_text(page, "#maintenance-status", "将遗忘")
        page.click("#consolidate-preview")
        wait_text(page, "#maintenance-status", "将整合")

        open_tab(page, "复习")
        choose(page, "#cards-doc", FILE)
        page.wait_for_function("document.querySelector('#cards-chapter input').value.length > 0")
        page.click("#cards-make-chapter")
        wait_text(page, "#cards-status", "新增", timeout=240_000)
        made = int(re.search(r"共 (\d+) 张", page.inner_text("#cards-status")).group(1))
        choose(page, "#cards-turn", ENGLISH_QUESTION)
        page.click("#cards-make-turn")                             # one more card, from the quoted answer
        page.wait_for_function("b => { const m = document.querySelector('#cards-status').innerText.match(/共 (\\d+) 张/);"
                               " return m && Number(m[1]) > b; }", arg=made, timeout=120_000)
        page.wait_for_selector("#review-show:not([disabled])")
        page.click("#review-show")
        page.wait_for_selector("#review-back", state="visible")
        page.click("#review-good")
        wait_text(page, "#review-status", "再次出现")
        open_accordion(page, "#quiz", "#quiz-start")
        page.click("#quiz-start")
        wait_text(page, "#quiz-question", "第 1 题")
        open_accordion(page, "#deck", "#cards-table")

        open_tab(page, "报告")
        page.click("#report-refresh")
        wait_text(page, "#report-status", "报告已生成")
        for plot in COUNT_PLOTS + ["#plot-mastery"]:
            page.wait_for_selector(f"{plot} svg .role-axis-label text")
        yield page
    finally:
        context.close()


def test_every_tab_reads_in_chinese(chinese, artefacts):
    page = chinese
    found = []
    for tab_id, label, shot in TABS:
        open_tab(page, label)
        page.wait_for_timeout(1_500)                                # the tab's own refresh, if it has one
        # on a busy machine that refresh waits its turn behind Gradio's own "In queue: 1 of 1" line: read the
        # tab once it has run
        page.wait_for_function("!/In queue|processing \\|/.test(document.body.innerText)", timeout=120_000)
        page.screenshot(path=str(artefacts / f"{shot}.png"), full_page=True)
        panel = page.inner_text("body")
        extra = "\n".join(dropdown_choices(page, d) for d in DROPDOWNS if page.is_visible(d))
        plots = "\n".join("\n".join(sum(plot_texts(page, p).values(), [])) for p in COUNT_PLOTS + ["#plot-mastery"]
                          if page.is_visible(p))
        found += [f"[{tab_id}] {leak}" for leak in leaks("\n".join([panel, extra, plots]))]
    assert not found, "\n".join(dict.fromkeys(found))


def test_report_plots_count_in_whole_numbers_with_chinese_axes(chinese):
    page = chinese
    open_tab(page, "报告")
    for plot in COUNT_PLOTS:
        texts = plot_texts(page, plot)
        assert texts["y"], plot
        assert all(re.fullmatch(r"\d+", tick.replace(",", "")) for tick in texts["y"]), (plot, texts["y"])
        assert len(set(texts["y"])) == len(texts["y"]), (plot, texts["y"])    # no two ticks read the same
        assert all(re.search(r"[\u4e00-\u9fff]", title) for title in texts["titles"]), (plot, texts["titles"])
    mastery = plot_texts(page, "#plot-mastery")
    assert mastery["y"] and all(re.fullmatch(r"\d+", tick) for tick in mastery["y"]), mastery["y"]
    for tick in sum((plot_texts(page, p)["x"] for p in COUNT_PLOTS + ["#plot-mastery"]), []):
        assert len(tick) <= 24, tick                                   # long names are shortened


def test_no_setting_name_in_any_text_a_learner_reads():
    for lang, texts in TEXT.items():
        for key, value in texts.items():
            assert not SETTING.search(value), (lang, key, value)

"""The Gradio UI of the PDF learning assistant: builds the Blocks and wires events to the facade.

    python app.py            # http://127.0.0.1:7860 (APP_HOST / APP_PORT)

Every handler resolves the person (the login name with APP_USERS, else the one local user) and calls
that person's `PDFLearningAssistant` (`assistant.get_assistant`); nothing here holds state shared by
visitors. Errors reach the person as one sentence (a status line or a warning toast), never a traceback.
The files a browser gets (upload copies, page images, reports) live in that person's folder (assistant.files),
and webauth's guard in front of Gradio's routes serves each file and session to its owner only.
UI text comes from static/i18n.json (English and Chinese), chosen by the browser's language.

Q&A: the passages an answer rests on fill the Sources list at once, the answer streams after them; each
[n] in an answer is a link that static/citations.js turns into "open this source's page" (a hidden
button carries the request to `open_citation`): a PDF's page as an image, or — for a document without
pages (Markdown, Word, HTML, text, notes) — the cited section as text in the panel beside it. Answers are shown as text: document HTML is printed,
never rendered (assistant.views.chat_markdown), and the history kept for follow-ups stays plain text.
"""
from __future__ import annotations

if __name__ == "__main__":   # refuse an unusable setting in a second, before importing Gradio takes several
    from core.settings import settings_or_exit
    settings_or_exit()

import json
import logging
import os
import threading
import time
import uuid
from datetime import datetime, time as dtime, timedelta
from pathlib import Path

import gradio as gr

from assistant import files as served, get_assistant
from assistant.pages import figure_label
from assistant.types import AskResult, RecallFilters
from assistant.views import chat_markdown, graph_svg, progress_table, report_frames, section_html
from core.errors import AssistantError
from core.settings import Settings, get_settings
from rag.prompts import EXTRACTIVE_NOTICE
from rag.types import Citation, SourcesEvent
from webauth import LOCKOUT_S, LOGIN_FAILURES, guard_middleware

log = logging.getLogger("app")
HERE = Path(__file__).resolve().parent
TEXT: dict[str, dict[str, str]] = json.loads((HERE / "static" / "i18n.json").read_text(encoding="utf-8"))
I18N = gr.I18n(**{"en": TEXT["en"], "zh-CN": TEXT["zh-CN"], "zh": TEXT["zh-CN"], "zh-TW": TEXT["zh-CN"]})
_ = I18N  # component text: translated in the browser
MEMORY_TYPES = ["working", "episodic", "semantic", "perceptual"]
FORGET_STRATEGIES = ["importance_based", "time_based", "capacity_based"]
UPLOAD_STAGES = ("pages", "ocr", "embed", "figures", "figure-images")   # ingest stages the upload table reports (static/i18n.json msg_stage_*)
# The source viewer's text panel keeps the first marked passage in view each time it shows a section.
SECTION_SCROLL_JS = """
const show = () => requestAnimationFrame(() => {
  const box = element.querySelector('.section-text');
  const mark = box && box.querySelector('mark');
  if (mark) box.scrollTop = Math.max(0, mark.offsetTop - box.clientHeight / 3);
});
watch(['value', 'visible'], show);
show();
"""
UPLOAD_TYPES = [".pdf", ".md", ".markdown", ".txt", ".docx", ".pptx", ".xlsx", ".html", ".htm", ".csv", ".json"]


def parse_users(spec: str | None) -> list[tuple[str, str]]:
    """'alice:pw1,bob:pw2' -> [("alice", "pw1"), ("bob", "pw2")]; empty -> [] (no login)."""
    users = []
    for part in (spec or "").split(","):
        if not part.strip():
            continue
        name, sep, password = part.partition(":")
        if not sep or not name.strip() or not password:
            raise SystemExit(f"APP_USERS entry '{part.strip()}' must look like name:password.")
        users.append((name.strip(), password))
    return users


# -- per-request helpers -------------------------------------------------------------------------------

def lang_of(request: gr.Request | None) -> str:
    header = (request.headers.get("accept-language", "") if request is not None else "") or ""
    return "zh-CN" if header.lower().startswith("zh") else "en"


def t(request: gr.Request | None, key: str, **values) -> str:
    """Text for messages made by handlers (component labels are translated by the browser)."""
    template = TEXT[lang_of(request)].get(key) or TEXT["en"][key]
    return template.format(**values) if values else template


def cols(request, *keys: str) -> list[str]:
    return [t(request, f"col_{k}") for k in keys]


def short(text: str, n: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n - 1] + "…"


def when(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")


def answering_llm(settings: Settings):
    """The model that writes answers (core.llm.get_llm: an endpoint, or the local model), or None when
    answers quote the documents. The reason is logged for whoever runs the app, not shown to learners."""
    from core import llm as llm_module
    status = getattr(llm_module, "llm_status", None)
    if status is not None:
        try:
            log.info("%s", status(settings))
        except Exception:  # noqa: BLE001 - a sentence for the log only
            log.debug("llm_status failed", exc_info=True)
    try:
        return llm_module.get_llm(settings)
    except Exception as exc:  # noqa: BLE001 - no model: answers quote the documents
        log.warning("No language model, answers will quote the documents: %s", exc)
        return None


def model_sentence(request, llm) -> str:
    """Which model answers, in the learner's language (no setting names)."""
    if llm is None:
        return t(request, "msg_llm_off")
    return t(request, "msg_llm_local" if getattr(llm, "is_local", False) else "msg_llm_on", model=llm.model)


def source_choice(request, citation: Citation, heading: str = "") -> str:
    """'[1] file.pdf · p. 3 — strong match': how well the passage matches, as a word, never a raw score.
    A source without pages names its section instead: '[2] notes.md · § Attention — partial match'."""
    label = f"{citation.label} · § {heading}" if heading else citation.label
    strength = getattr(citation, "strength", "")
    return f"{label} — {t(request, 'strength_' + strength)}" if strength else label


def extent(request, pages: int, sections: int | None) -> str:
    """How long a document is: '12 pages' for a PDF, '5 sections' for a document without pages."""
    n, unit = (pages, "page") if sections is None else (sections, "section")
    return t(request, f"n_{unit}" if n == 1 else f"n_{unit}s", n=n)


def page_caption(request, citation: Citation, page) -> str:
    """'[1] book.pdf · p. 12 — page 12 of 264 · figures outlined: Figure 3.1 (Stack diagram)'."""
    text = t(request, "page_caption", label=citation.label, page=page.page, count=page.page_count)
    if page.figures:
        named = []
        for i, figure in enumerate(page.figures, start=1):
            label = figure_label(figure, i)
            caption = figure.get("caption") or ""
            if caption.lower().startswith(label.lower()):        # "Figure 3.1: Stack diagram"
                caption = caption[len(label):].lstrip(" .:：-—")
            named.append(f"{label} ({short(caption, 40)})" if caption else label)
        text += t(request, "page_figures", figures="; ".join(named))
    return text


def section_caption(request, citation: Citation, section) -> str:
    """'[1] notes.md — § 2 Models › 2.3 Attention — section 4 of 9' (assistant.sections.CitedSection)."""
    if section.heading:
        return t(request, "section_caption", label=citation.label, heading=section.heading,
                 n=section.number, count=section.count)
    return t(request, "section_caption_top", label=citation.label, n=section.number, count=section.count)


def answered_by(request, result: AskResult) -> str:
    """The line under an answer that says who wrote it."""
    if result.llm and result.llm != "none":
        return t(request, "answered_by", model=result.llm)
    if result.route == "memory":
        return t(request, "answered_memory")
    return t(request, "answered_refused" if result.refused else "answered_extractive")


def failure(request, exc: Exception) -> str:
    """One sentence for the person: the error's own for AssistantError, else a generic one (logged)."""
    if isinstance(exc, AssistantError):
        return str(exc)
    log.exception("handler failed")
    return t(request, "msg_error", kind=type(exc).__name__)


def load_with_progress(a, path, session):
    """Load one file in a worker thread; yield its latest stage ({"stage", "done", "total"}) twice a
    second while it works, then a last item holding "result". The loader's error is raised here."""
    latest: dict = {}
    outcome: dict = {}

    def report(stage: str, done: int, total: int) -> None:
        latest.update(stage=stage, done=done, total=total)

    def work() -> None:
        try:
            outcome["result"] = a.load_document(path, name=Path(path).name, session_id=session, progress=report)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the handler's thread below
            outcome["error"] = exc

    worker = threading.Thread(target=work, name="upload", daemon=True)
    worker.start()
    shown = None
    while worker.is_alive():
        worker.join(0.5)
        if latest and latest.get("stage") in UPLOAD_STAGES and dict(latest) != shown:
            shown = dict(latest)
            yield shown
    if "error" in outcome:
        raise outcome["error"]
    yield {"stage": "done", "result": outcome["result"]}


def build_app(settings: Settings | None = None, *, auth_enabled: bool | None = None) -> gr.Blocks:
    settings = settings or get_settings()
    auth_enabled = bool(parse_users(settings.app_users)) if auth_enabled is None else auth_enabled
    llm_on = answering_llm(settings) is not None     # an endpoint or the local model: MQE/HyDE can run

    def user_of(request: gr.Request | None) -> str:
        name = getattr(request, "username", None) if request is not None else None
        if auth_enabled and not name:
            raise AssistantError("Please log in again; your session has no user.")
        return name or settings.default_user

    def assistant_for(request: gr.Request | None):
        return get_assistant(user_of(request), settings)

    # -- data for the views --------------------------------------------------------------------------
    def documents_view(request):
        import pandas as pd
        a = assistant_for(request)
        docs = a.list_documents()
        # Documents without pages (Markdown, Word, HTML, text, notes) count their sections instead.
        sections = a.section_counts([d.doc_id for d in docs if not d.has_pages]) if docs else {}
        table = pd.DataFrame([[d.name, d.title, extent(request, d.pages, sections.get(d.doc_id)), d.chunks,
                               when(d.added_at)] for d in docs],
                             columns=cols(request, "name", "title", "length", "chunks", "added"))
        choices = [(f"{d.name} ({sections[d.doc_id]} §)" if d.doc_id in sections else f"{d.name} ({d.pages} p.)",
                    d.doc_id) for d in docs]
        return table, gr.update(choices=choices, value=None)

    def notes_view(request):
        import pandas as pd
        a = assistant_for(request)
        notes = a.list_notes()
        table = pd.DataFrame([[when(n.timestamp), n.metadata.get("concept", ""), short(n.content, 300)] for n in notes],
                             columns=cols(request, "when", "concept", "note"))
        own = {str(n.metadata.get("concept", "")).strip().lower() for n in notes}
        svg = graph_svg(a.concept_graph(), own_concepts=own, empty_text=t(request, "msg_no_concepts"))
        return table, svg

    def memories_frame(request, refs, extra=None):
        import pandas as pd
        rows = []
        for i, r in enumerate(refs):
            row = [r.memory_type, r.kind, when(r.timestamp), f"{r.importance:.2f}",
                   "" if r.score is None else f"{r.score:.3f}", short(r.content, 220)]
            if extra is not None:
                row.append(extra[i])
            rows.append(row)
        names = cols(request, "type", "kind", "when", "importance", "score", "content")
        if extra is not None:
            names.append(t(request, "col_target"))
        return pd.DataFrame(rows, columns=names)

    # -- handlers: page load ---------------------------------------------------------------------------
    def on_load(request: gr.Request):
        try:
            a = assistant_for(request)
            who = t(request, "msg_signed_in" if auth_enabled else "msg_local_user", user=a.user_id)
            model = model_sentence(request, a.rag.llm)
            table, choices = documents_view(request)
            return f"{who} {model}", table, choices, uuid.uuid4().hex[:12]
        except Exception as exc:  # noqa: BLE001
            return failure(request, exc), gr.update(), gr.update(), uuid.uuid4().hex[:12]

    # -- handlers: documents ---------------------------------------------------------------------------
    def upload(files, session, request: gr.Request, progress=gr.Progress()):
        paths = [f if isinstance(f, str) else getattr(f, "name", str(f)) for f in (files or [])]
        if not paths:
            gr.Warning(t(request, "msg_no_files"))
            yield gr.update(), t(request, "msg_no_files"), gr.update(), gr.update(), gr.update()
            return
        heads = (t(request, "col_file"), t(request, "col_progress"), t(request, "col_result"))
        rows = [{"name": Path(p).name, "state": "queued", "message": t(request, "msg_queued")} for p in paths]
        counts = {"ok": 0, "exists": 0, "failed": 0}
        try:
            a = assistant_for(request)
        except Exception as exc:  # noqa: BLE001
            yield gr.update(), failure(request, exc), gr.update(), gr.update(), gr.update()
            return
        yield progress_table(rows, heads), "", gr.update(), gr.update(), gr.update()
        for i, path in enumerate(paths):
            progress((i, len(paths)), desc=f"{rows[i]['name']} ({i + 1}/{len(paths)})")
            rows[i].update(state="working", message=t(request, "msg_working"))
            yield progress_table(rows, heads), "", gr.update(), gr.update(), gr.update()
            try:
                path = served.check_upload(settings, a.user_id, path)     # never another person's upload
                result = None
                for stage in load_with_progress(a, path, session):
                    if "result" in stage:
                        result = stage["result"]
                        break
                    rows[i].update(message=t(request, f"msg_stage_{stage['stage']}", done=stage["done"],
                                             total=stage["total"]),
                                   percent=round(100 * stage["done"] / max(1, stage["total"])))
                    yield progress_table(rows, heads), "", gr.update(), gr.update(), gr.update()
                # A PDF has pages; any other document (0 pages) is counted in sections.
                sections = None if result.pages else a.section_counts([result.doc_id]).get(result.doc_id, 0)
                if result.already_present:
                    counts["exists"] += 1
                    message = t(request, "msg_exists_detail", pages=result.pages) if sections is None else \
                        t(request, "msg_exists_detail_sections", extent=extent(request, 0, sections))
                    rows[i].update(state="exists", message=message)
                else:
                    counts["ok"] += 1
                    seconds = f"{result.seconds:.1f}"
                    message = t(request, "msg_added_detail", pages=result.pages, chunks=result.chunks,
                                seconds=seconds) if sections is None else \
                        t(request, "msg_added_detail_sections", extent=extent(request, 0, sections),
                          chunks=result.chunks, seconds=seconds)
                    # what the reader must know about this file: pages read by OCR, pages that stayed unreadable
                    rows[i].update(state="done", message=" — ".join([message, *result.warnings]))
            except Exception as exc:  # noqa: BLE001 - one bad file must not stop the others
                counts["failed"] += 1
                rows[i].update(state="error", message=failure(request, exc))
            finally:
                served.discard_upload(settings, a.user_id, path)      # the stored document is the copy kept
            yield progress_table(rows, heads), "", gr.update(), gr.update(), gr.update()
        progress((len(paths), len(paths)))
        table, choices = documents_view(request)
        status = t(request, "msg_upload_done", n=len(paths), **counts)
        yield progress_table(rows, heads), status, table, choices, gr.update(value=None)

    def delete_document(doc_id, session, request: gr.Request):
        if not doc_id:
            gr.Warning(t(request, "msg_pick_document"))
            return t(request, "msg_pick_document"), gr.update(), gr.update()
        try:
            a = assistant_for(request)
            names = {d.doc_id: d.name for d in a.list_documents()}
            removed = a.delete_document(doc_id, session_id=session)
            served.forget_document(settings, a.user_id, doc_id)
            status = t(request, "msg_deleted", name=names.get(doc_id, doc_id)) if removed else t(request, "msg_not_found")
            table, choices = documents_view(request)
            return status, table, choices
        except Exception as exc:  # noqa: BLE001
            return failure(request, exc), gr.update(), gr.update()

    def refresh_documents(request: gr.Request):
        try:
            return documents_view(request)
        except Exception as exc:  # noqa: BLE001
            gr.Warning(failure(request, exc))
            return gr.update(), gr.update()

    # -- handlers: questions ---------------------------------------------------------------------------
    def cited_headings(request, cites: list[Citation]) -> list[str]:
        """The section heading of each source without pages, for its label ("" where there is none)."""
        if all(c.page_start is not None for c in cites):
            return [""] * len(cites)
        try:
            return assistant_for(request).cited_headings(cites)
        except Exception:  # noqa: BLE001 - a label without its heading is still a label
            log.warning("section headings of the sources failed", exc_info=True)
            return [""] * len(cites)

    def source_list(request, cites: list[Citation], *, related: bool = False, value=None):
        label = t(request, "sources_related" if related else "sources_label")
        headings = cited_headings(request, cites)
        choices = [(source_choice(request, c, h), str(i)) for i, (c, h) in enumerate(zip(cites, headings))]
        return gr.update(choices=choices, value=value, label=label)

    def ask(question, history, shown_before, cite_map, mqe, hyde, session, request: gr.Request):
        """Stream one answer: the sources at once, then the text, then the final answer with its links."""
        question = (question or "").strip()
        history, cite_map = list(history or []), dict(cite_map or {})
        session = session or uuid.uuid4().hex[:12]
        if not question:
            gr.Warning(t(request, "msg_empty_question"))
            yield {}
            return
        turn = max(cite_map, default=-1) + 1          # this answer's number in the conversation
        shown = list(shown_before or []) + [{"role": "user", "content": chat_markdown(question)},
                                            {"role": "assistant", "content": "…"}]
        yield {chatbot: shown, question_box: "", sources: source_list(request, []), **no_source(),
               page_status: "", answer_notice: "", searched: "", memory_used: "", session_state: session,
               citations: []}
        text, result = "", None
        try:
            a = assistant_for(request)
            for item in a.ask(question, history, mqe=bool(mqe) and llm_on, hyde=bool(hyde) and llm_on,
                              session_id=session):
                if isinstance(item, AskResult):
                    result = item
                elif isinstance(item, SourcesEvent):
                    update = {sources: source_list(request, item.citations, related=item.related),
                              citations: list(item.citations)}
                    if item.search_query and item.search_query.strip() != question:
                        update[searched] = t(request, "searched_for", query=chat_markdown(item.search_query))
                    if item.waiting_for and not text:
                        shown[-1] = {"role": "assistant", "content": f"⏳ *{chat_markdown(item.waiting_for)}*"}
                        update[chatbot] = shown
                    yield update
                elif item:
                    text += item
                    shown[-1] = {"role": "assistant", "content": chat_markdown(text)}
                    yield {chatbot: shown}
            if result is None:
                raise AssistantError("The answer stopped before it was finished; please ask again.")
        except Exception as exc:  # noqa: BLE001
            message = failure(request, exc)
            gr.Warning(message)
            shown[-1] = {"role": "assistant", "content": chat_markdown(message)}
            yield {chatbot: shown, question_box: question, answer_notice: message, shown_chat: shown}
            return
        cites = list(result.related if result.refused else result.citations)
        links = {} if result.refused else {c.n: c.label for c in result.citations}
        shown[-1] = {"role": "assistant", "content": chat_markdown(result.text, answer=turn, citations=links)}
        cite_map[turn] = cites
        new_history = history + [{"role": "user", "content": question}, {"role": "assistant", "content": result.text}]
        memory_md = ""
        if result.memories and result.route == "documents":
            from assistant.history import describe
            memory_md = f"**{t(request, 'memory_used')}**\n\n" + "\n".join(
                f"- {chat_markdown(short(describe(m), 200))}" for m in result.memories)
        notice = result.notice.replace(EXTRACTIVE_NOTICE, "").strip()   # the line says "no language model"
        notice = " ".join(x for x in (answered_by(request, result), chat_markdown(notice)) if x)
        yield {chatbot: shown, shown_chat: shown, sources: source_list(request, cites, related=result.refused),
               citations: cites, cite_map_state: cite_map, history_state: new_history, answer_notice: notice,
               searched: t(request, "searched_for", query=chat_markdown(result.search_query))
               if result.search_query else "", memory_used: memory_md}

    def no_source() -> dict:
        """The viewer with nothing shown: the (empty) page image, the text panel hidden."""
        return {page_view: gr.update(value=None, visible=True), section_view: gr.update(value="", visible=False)}

    def page_of(citation: Citation, request) -> dict:
        """The viewer showing a source: a PDF's page image, or a text document's section (as HTML)."""
        a = assistant_for(request)
        shown = a.render_source(citation)
        if hasattr(shown, "image"):          # assistant.pages.RenderedPage: a PDF page
            caption = page_caption(request, citation, shown)
            image = served.save_page_image(settings, a.user_id, request.session_hash, citation.doc_id, shown.page,
                                           shown.image)
            return {page_view: gr.update(value=image, label=caption, visible=True),
                    section_view: gr.update(value="", visible=False)}
        html = section_html(shown, section_caption(request, citation, shown))
        return {page_view: gr.update(value=None, visible=False), section_view: gr.update(value=html, visible=True)}

    def show_source(choice, cites, request: gr.Request):
        if choice in (None, "") or not cites:
            return {}
        try:
            return {**page_of(cites[int(choice)], request), page_status: ""}
        except Exception as exc:  # noqa: BLE001
            message = failure(request, exc)
            gr.Warning(message)
            return {**no_source(), page_status: message}

    def open_citation(ask_for, cite_map, request: gr.Request):
        """A click on [n] in answer `turn` ("turn-n", from static/citations.js): list that answer's sources
        with [n] selected, and show its page."""
        try:
            turn, n = (int(x) for x in str(ask_for or "").split("-", 1))
            cites = list((cite_map or {})[turn])
            index = next(i for i, c in enumerate(cites) if c.n == n)
        except (ValueError, KeyError, StopIteration):
            return {}
        update = {sources: source_list(request, cites, value=str(index)), citations: cites}
        try:
            update.update({**page_of(cites[index], request), page_status: ""})
        except Exception as exc:  # noqa: BLE001
            message = failure(request, exc)
            gr.Warning(message)
            update.update({**no_source(), page_status: message})
        return update

    def new_conversation():
        cleared = no_source()
        return ([], [], [], {}, gr.update(choices=[], value=None), cleared[page_view], "", "", "", "", [],
                cleared[section_view])

    # -- handlers: notes -------------------------------------------------------------------------------
    def refresh_notes(request: gr.Request):
        try:
            a = assistant_for(request)
            table, svg = notes_view(request)
            return gr.update(choices=a.suggest_concepts()), table, svg
        except Exception as exc:  # noqa: BLE001
            gr.Warning(failure(request, exc))
            return gr.update(), gr.update(), gr.update()

    def save_note(concept, text, session, request: gr.Request):
        try:
            a = assistant_for(request)
            note = a.add_note(text, concept, session_id=session)
            table, svg = notes_view(request)
            label = f" ({note.concept})" if note.concept else ""
            saved = "msg_note_saved_graph_away" if note.notice else "msg_note_saved"   # concepts wait for the server
            return t(request, saved, concept=label), "", table, svg, gr.update(choices=a.suggest_concepts())
        except Exception as exc:  # noqa: BLE001
            message = failure(request, exc)
            gr.Warning(message)
            return message, gr.update(), gr.update(), gr.update(), gr.update()

    # -- handlers: recall ------------------------------------------------------------------------------
    def day(value, end: bool):
        if value in (None, ""):
            return None
        moment = value if isinstance(value, datetime) else (
            datetime.fromtimestamp(value) if isinstance(value, (int, float)) else datetime.fromisoformat(str(value)[:10]))
        start = datetime.combine(moment.date(), dtime.min).astimezone()
        return start + timedelta(days=1) - timedelta(microseconds=1) if end else start

    def recall(query, types, since, until, request: gr.Request):
        try:
            filters = RecallFilters(memory_types=list(types) or None, since=day(since, False), until=day(until, True),
                                    limit=50)
            refs = assistant_for(request).recall(query or "", filters)
            return memories_frame(request, refs), t(request, "msg_recall_count", n=len(refs))
        except Exception as exc:  # noqa: BLE001
            message = failure(request, exc)
            gr.Warning(message)
            return gr.update(), message

    def consolidate_preview(request: gr.Request):
        try:
            preview = assistant_for(request).preview_consolidate()
            refs = [r for r, _ in preview.promotions]
            return (memories_frame(request, refs, [target for _, target in preview.promotions]),
                    t(request, "msg_consolidate_preview", n=len(refs)))
        except Exception as exc:  # noqa: BLE001
            return gr.update(), failure(request, exc)

    def consolidate_run(request: gr.Request):
        try:
            n = assistant_for(request).consolidate()
            return memories_frame(request, []), t(request, "msg_consolidated", n=n)
        except Exception as exc:  # noqa: BLE001
            return gr.update(), failure(request, exc)

    def forget_args(strategy, threshold, age, capacity, types):
        return dict(strategy=strategy, threshold=float(threshold), max_age_days=float(age or 0),
                    capacity=int(capacity) if capacity not in (None, "") else None, memory_types=list(types) or None)

    def forget_preview(strategy, threshold, age, capacity, types, request: gr.Request):
        try:
            preview = assistant_for(request).preview_forget(**forget_args(strategy, threshold, age, capacity, types))
            return memories_frame(request, preview.memories), t(request, "msg_forget_preview", n=len(preview.memories))
        except Exception as exc:  # noqa: BLE001
            return gr.update(), failure(request, exc)

    def forget_run(strategy, threshold, age, capacity, types, request: gr.Request):
        try:
            n = assistant_for(request).forget(**forget_args(strategy, threshold, age, capacity, types))
            return memories_frame(request, []), t(request, "msg_forgotten", n=n)
        except Exception as exc:  # noqa: BLE001
            return gr.update(), failure(request, exc)

    # -- handlers: reports -----------------------------------------------------------------------------
    def refresh_report(request: gr.Request):
        from assistant.report import validate_report, write_report
        try:
            a = assistant_for(request)
            report = a.generate_report()
            validate_report(report)
            # In the person's own folder, one per tab: the tab's earlier report is removed.
            stamp = time.strftime("%Y%m%d-%H%M%S")
            safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in a.user_id)[:40]
            path = write_report(report, served.report_path(settings, a.user_id, request.session_hash,
                                                           f"learning-report-{safe}-{stamp}.json"))
            s = report["summary"]
            metrics = " · ".join(f"**{t(request, 'metric_' + key)}** {s[field]}" for key, field in (
                ("documents", "documents"), ("pages", "pages"), ("questions", "questions"), ("notes", "notes"),
                ("concepts", "concepts"), ("memories", "memories_total"), ("days", "active_days"),
                ("sessions", "sessions")))
            frames = report_frames(report)
            status = t(request, "msg_report_ready", questions=s["questions"], documents=s["documents"], notes=s["notes"])
            return (metrics, frames["activity"], frames["questions_per_document"], frames["concepts"],
                    frames["memory_by_type"], gr.update(value=str(path), interactive=True), status)
        except Exception as exc:  # noqa: BLE001
            message = failure(request, exc)
            return (gr.update(),) * 6 + (message,)

    def forget_tab(request: gr.Request):
        """A tab closed: its page images and report go (Gradio calls this with the tab's session)."""
        name = getattr(request, "username", None) or (None if auth_enabled else settings.default_user)
        if name:
            served.forget_tab(settings, name, request.session_hash)

    # -- layout ----------------------------------------------------------------------------------------
    with gr.Blocks(title="PDF Learning Assistant") as demo:
        session = gr.State(None)         # this tab's study session (episodic memory groups by it)
        history_state = gr.State([])     # this tab's conversation, plain {"role", "content": str}: for follow-ups
        shown_chat = gr.State([])        # the same conversation as the chat shows it (Markdown, [n] links)
        citations = gr.State([])         # the sources listed now (the last answer's, or the one clicked)
        cite_map_state = gr.State({})    # answer number -> its sources, for a click on [n] in any answer
        session_state = session

        with gr.Row():
            with gr.Column(scale=4):
                gr.Markdown(f"## {_('title')}")
                gr.Markdown(_("intro"))
            with gr.Column(scale=2, min_width=220):
                who = gr.Markdown(elem_id="who")
                if auth_enabled:
                    gr.Button(_("logout"), link="/logout", size="sm", elem_id="logout")

        with gr.Tabs(elem_id="tabs"):
            with gr.Tab(_("tab_documents"), id="documents", elem_id="tab-documents") as tab_documents:
                files = gr.File(label=_("upload"), file_count="multiple", file_types=UPLOAD_TYPES, type="filepath",
                                elem_id="upload")
                upload_progress = gr.HTML(elem_id="upload-progress")
                doc_status = gr.Markdown(elem_id="doc-status")
                doc_table = gr.Dataframe(label=_("library"), interactive=False, elem_id="doc-table", wrap=True)
                with gr.Row():
                    doc_select = gr.Dropdown(label=_("document"), choices=[], elem_id="doc-select", scale=3)
                    doc_delete = gr.Button(_("delete"), variant="stop", elem_id="doc-delete", scale=1)
                    doc_refresh = gr.Button(_("refresh"), elem_id="doc-refresh", scale=1)

            with gr.Tab(_("tab_qa"), id="qa", elem_id="tab-qa") as tab_qa:
                gr.Markdown(_("extractive_notice"), visible=not llm_on, elem_id="llm-notice")
                with gr.Row():
                    with gr.Column(scale=3):
                        # Answers are Markdown made by assistant.views.chat_markdown: HTML from documents is
                        # already printed as text there; the sanitizer and allow_tags=False are a second fence.
                        chatbot = gr.Chatbot(label=_("chat"), elem_id="chat", height=440, feedback_options=None,
                                             layout="panel", sanitize_html=True, allow_tags=False,
                                             render_markdown=True)
                        with gr.Row():
                            question_box = gr.Textbox(label=_("question"), placeholder=_("question_ph"), scale=5,
                                                      elem_id="question", lines=1, max_lines=4)
                            ask_btn = gr.Button(_("ask"), variant="primary", scale=1, elem_id="ask")
                        with gr.Row():
                            mqe = gr.Checkbox(label=_("mqe"), value=False, interactive=llm_on, elem_id="mqe",
                                              info=_("mqe_info_on") if llm_on else _("needs_llm"))
                            hyde = gr.Checkbox(label=_("hyde"), value=False, interactive=llm_on, elem_id="hyde",
                                               info=_("hyde_info_on") if llm_on else _("needs_llm"))
                            clear_btn = gr.Button(_("clear_chat"), size="sm", elem_id="clear-chat")
                        searched = gr.Markdown(elem_id="searched-for")
                        answer_notice = gr.Markdown(elem_id="answer-notice")
                        memory_used = gr.Markdown(elem_id="memory-used")
                        # what static/citations.js fills and clicks when [n] in an answer is clicked
                        cite_request = gr.Textbox(visible="hidden", elem_id="cite-request", container=False)
                        cite_open = gr.Button("open source", visible="hidden", elem_id="cite-open")
                    with gr.Column(scale=2):
                        sources = gr.Radio(label=_("sources_label"), choices=[], elem_id="sources")
                        page_view = gr.Image(label=_("page_view"), type="pil", interactive=False, elem_id="page-view",
                                             height=560)
                        # A cited document without pages: its section as text (assistant.views.section_html
                        # prints the document's own HTML as text), in place of the page image.
                        section_view = gr.HTML(visible=False, elem_id="section-view", js_on_load=SECTION_SCROLL_JS,
                                               label=_("section_view"))
                        page_status = gr.Markdown(elem_id="page-status")

            with gr.Tab(_("tab_notes"), id="notes", elem_id="tab-notes") as tab_notes:
                with gr.Row():
                    with gr.Column(scale=2):
                        concept = gr.Dropdown(label=_("note_concept"), info=_("note_concept_info"), choices=[],
                                              allow_custom_value=True, elem_id="concept")
                        note_text = gr.Textbox(label=_("note_text"), placeholder=_("note_ph"), lines=4,
                                               elem_id="note-text")
                        note_save = gr.Button(_("note_save"), variant="primary", elem_id="note-save")
                        note_status = gr.Markdown(elem_id="note-status")
                    with gr.Column(scale=3):
                        gr.Markdown(f"### {_('concept_graph')}")
                        graph = gr.HTML(elem_id="concept-graph")
                notes_table = gr.Dataframe(label=_("notes_list"), interactive=False, elem_id="notes-table", wrap=True)

            with gr.Tab(_("tab_recall"), id="recall", elem_id="tab-recall") as tab_recall:
                with gr.Row():
                    recall_query = gr.Textbox(label=_("recall_query"), placeholder=_("recall_ph"), scale=4,
                                              elem_id="recall-query")
                    recall_btn = gr.Button(_("recall_search"), variant="primary", scale=1, elem_id="recall-search")
                with gr.Row():
                    recall_types = gr.CheckboxGroup(MEMORY_TYPES, value=MEMORY_TYPES, label=_("recall_types"),
                                                    elem_id="recall-types", scale=3)
                    recall_from = gr.DateTime(label=_("recall_from"), include_time=False, type="string",
                                              elem_id="recall-from", scale=1)
                    recall_to = gr.DateTime(label=_("recall_to"), include_time=False, type="string",
                                            elem_id="recall-to", scale=1)
                recall_status = gr.Markdown(elem_id="recall-status")
                recall_results = gr.Dataframe(label=_("recall_results"), interactive=False, elem_id="recall-results",
                                              wrap=True)
                with gr.Accordion(_("maintenance"), open=False, elem_id="maintenance"):
                    gr.Markdown(_("consolidate_info"))
                    with gr.Row():
                        consolidate_prev_btn = gr.Button(_("consolidate_preview"), elem_id="consolidate-preview")
                        consolidate_btn = gr.Button(_("consolidate_run"), elem_id="consolidate-run")
                    gr.Markdown(_("forget_info"))
                    with gr.Row():
                        forget_strategy = gr.Dropdown(FORGET_STRATEGIES, value="importance_based",
                                                      label=_("forget_strategy"), elem_id="forget-strategy")
                        forget_threshold = gr.Slider(0, 1, value=0.3, step=0.05, label=_("forget_threshold"),
                                                     elem_id="forget-threshold")
                        forget_age = gr.Number(value=30, label=_("forget_age"), minimum=0, elem_id="forget-age")
                        forget_capacity = gr.Number(value=50, label=_("forget_capacity"), minimum=0, precision=0,
                                                    elem_id="forget-capacity")
                    with gr.Row():
                        forget_prev_btn = gr.Button(_("forget_preview"), elem_id="forget-preview")
                        forget_btn = gr.Button(_("forget_run"), variant="stop", elem_id="forget-run")
                    maintenance_status = gr.Markdown(elem_id="maintenance-status")
                    maintenance_preview = gr.Dataframe(label=_("preview"), interactive=False,
                                                       elem_id="maintenance-preview", wrap=True)

            with gr.Tab(_("tab_reports"), id="reports", elem_id="tab-reports") as tab_reports:
                with gr.Row():
                    report_btn = gr.Button(_("report_refresh"), elem_id="report-refresh")
                    download = gr.DownloadButton(_("report_download"), value=None, interactive=False,
                                                 elem_id="report-download", variant="primary")
                report_status = gr.Markdown(elem_id="report-status")
                metrics = gr.Markdown(elem_id="report-metrics")
                with gr.Row():
                    plot_activity = gr.BarPlot(x="date", y="count", color="kind", label=_("plot_activity"), y_lim=[0, None],
                                               elem_id="plot-activity")
                    plot_questions = gr.BarPlot(x="document", y="questions", label=_("plot_questions"), y_lim=[0, None],
                                                elem_id="plot-questions")
                with gr.Row():
                    plot_concepts = gr.BarPlot(x="concept", y="memories", label=_("plot_concepts"), y_lim=[0, None],
                                               elem_id="plot-concepts")
                    plot_memory = gr.BarPlot(x="type", y="count", label=_("plot_memory"), y_lim=[0, None], elem_id="plot-memory")

        # -- events ------------------------------------------------------------------------------------
        demo.load(on_load, None, [who, doc_table, doc_select, session])
        files.upload(upload, [files, session], [upload_progress, doc_status, doc_table, doc_select, files],
                     concurrency_limit=2)
        doc_delete.click(delete_document, [doc_select, session], [doc_status, doc_table, doc_select])
        doc_refresh.click(refresh_documents, None, [doc_table, doc_select])
        tab_documents.select(refresh_documents, None, [doc_table, doc_select])

        ask_outputs = [chatbot, shown_chat, question_box, sources, page_view, page_status, answer_notice, searched,
                       memory_used, history_state, session_state, citations, cite_map_state, section_view]
        ask_inputs = [question_box, history_state, shown_chat, cite_map_state, mqe, hyde, session_state]
        ask_btn.click(ask, ask_inputs, ask_outputs, concurrency_limit=8)
        question_box.submit(ask, ask_inputs, ask_outputs, concurrency_limit=8)
        sources.input(show_source, [sources, citations], [page_view, section_view, page_status])
        cite_open.click(open_citation, [cite_request, cite_map_state],
                        [sources, citations, page_view, section_view, page_status],
                        js="(ask_for, cite_map) => [window.__pdfCite || ask_for, cite_map]", show_progress="hidden")
        clear_outputs = [chatbot, shown_chat, history_state, cite_map_state, sources, page_view, page_status,
                         answer_notice, searched, memory_used, citations, section_view]
        clear_btn.click(new_conversation, None, clear_outputs)
        chatbot.clear(new_conversation, None, clear_outputs)       # the chat's own bin icon: forget the turns too

        tab_notes.select(refresh_notes, None, [concept, notes_table, graph])
        note_save.click(save_note, [concept, note_text, session], [note_status, note_text, notes_table, graph, concept])

        recall_inputs = [recall_query, recall_types, recall_from, recall_to]
        recall_btn.click(recall, recall_inputs, [recall_results, recall_status])
        recall_query.submit(recall, recall_inputs, [recall_results, recall_status])
        tab_recall.select(recall, recall_inputs, [recall_results, recall_status])
        consolidate_prev_btn.click(consolidate_preview, None, [maintenance_preview, maintenance_status])
        consolidate_btn.click(consolidate_run, None, [maintenance_preview, maintenance_status])
        forget_inputs = [forget_strategy, forget_threshold, forget_age, forget_capacity, recall_types]
        forget_prev_btn.click(forget_preview, forget_inputs, [maintenance_preview, maintenance_status])
        forget_btn.click(forget_run, forget_inputs, [maintenance_preview, maintenance_status])

        report_outputs = [metrics, plot_activity, plot_questions, plot_concepts, plot_memory, download, report_status]
        report_btn.click(refresh_report, None, report_outputs)
        tab_reports.select(refresh_report, None, report_outputs)
        demo.unload(forget_tab)

    demo.queue(default_concurrency_limit=4)
    return demo


def launch_options(settings: Settings) -> dict:
    """Host, port and auth for launch(): login when APP_USERS is set, else loopback only. webauth's guard
    serves each file and session to its owner only, and slows password guessing."""
    users = parse_users(settings.app_users)
    host = settings.app_host
    if not users and host not in ("127.0.0.1", "localhost", "::1"):
        log.warning("APP_HOST=%s ignored: without APP_USERS the app serves the local user only, on 127.0.0.1.", host)
        host = "127.0.0.1"
    return dict(server_name=host, server_port=settings.app_port, auth=users or None,
                auth_message=("PDF Learning Assistant — log in with the name and password you were given. "
                              f"After {LOGIN_FAILURES} wrong passwords, logging in pauses for {LOCKOUT_S} seconds.")
                if users else None,
                i18n=I18N, css_paths=[str(HERE / "static" / "app.css")], footer_links=[],
                js=(HERE / "static" / "citations.js").read_text(encoding="utf-8"),
                blocked_paths=served.private_paths(settings), show_error=False,
                app_kwargs={"middleware": [guard_middleware(settings, auth_enabled=bool(users))]})


def warm_up(settings: Settings) -> None:
    """Load the models before the first visitor needs them (in the background; the UI is up meanwhile)."""
    try:
        get_assistant(settings.default_user, settings).warm_up()
    except Exception:  # noqa: BLE001 - the first request will report the problem properly
        log.warning("warm-up failed", exc_info=True)


def main() -> None:
    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "INFO"), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        settings = get_settings()
    except AssistantError as exc:   # an unusable setting: say which, before anything starts
        raise SystemExit(f"error: {exc}") from None
    served.prepare(settings)            # Gradio keeps its files in DATA_DIR/web, emptied now
    options = launch_options(settings)
    demo = build_app(settings, auth_enabled=bool(options["auth"]))
    import threading
    threading.Thread(target=warm_up, args=(settings,), daemon=True).start()
    demo.launch(**options)


if __name__ == "__main__":
    main()

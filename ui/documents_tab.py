"""The Documents tab: upload files (with each file's progress, and a Stop button), list the library, delete a
document, open a document's study guide (ui.guide_view)."""
from __future__ import annotations

import threading
import time
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Iterator, NamedTuple

import gradio as gr

from assistant import files as served
from assistant.views import progress_table
from core.errors import AssistantError
from rag.convert_worker import stop_on
from ui.common import Context, _, as_text, bind, cols, failure, said, t, when
from ui.guide_view import guide_html, outline_samples, question_samples, source_samples

UPLOAD_STAGES = ("pages", "ocr", "embed", "figures", "figure-images")   # ingest stages the upload table reports (static/i18n.json msg_stage_*)
UPLOAD_TYPES = [".pdf", ".md", ".markdown", ".txt", ".docx", ".pptx", ".xlsx", ".html", ".htm", ".csv", ".json"]
HEARTBEAT_S = 1.0   # the upload handler yields at least this often, so a Gradio cancel reaches it at once

# The stop events of the uploads running now, by (person, browser tab): the Stop button sets its tab's.
_running: dict[tuple[str, str | None], set[threading.Event]] = {}
_running_lock = threading.Lock()


class DocumentsTab(NamedTuple):
    """What the page load fills (app.py): the library table and the document picker; and what app.py wires to
    the Q&A tab: the guide's suggested questions (clicked: `suggested_question`) and the questions they stand for;
    and to the Review tab: the guide's chapter picker and its "Study this chapter" button; and the guide's
    clickable outline with the first passage of each entry, which app.py opens in the Q&A tab's viewer."""
    table: gr.Dataframe
    select: gr.Dropdown
    guide_questions: gr.Dataset
    guide_asked: gr.State
    guide_chapter: gr.Dropdown
    guide_study: gr.Button
    guide_outline: gr.Dataset
    guide_places: gr.State
    guide_sources: gr.Dataset
    guide_source_places: gr.State


def build(ctx: Context, tab: gr.Tab, session: gr.State) -> DocumentsTab:
    files = gr.File(label=_("upload"), file_count="multiple", file_types=UPLOAD_TYPES, type="filepath",
                    elem_id="upload")
    upload_progress = gr.HTML(elem_id="upload-progress")
    doc_status = gr.Markdown(elem_id="doc-status")
    doc_table = gr.Dataframe(label=_("library"), interactive=False, elem_id="doc-table", wrap=True)
    with gr.Row():
        doc_select = gr.Dropdown(label=_("document"), choices=[], elem_id="doc-select", scale=3)
        doc_delete = gr.Button(_("delete"), variant="stop", elem_id="doc-delete", scale=1)
        doc_refresh = gr.Button(_("refresh"), elem_id="doc-refresh", scale=1)
        guide_open = gr.Button(_("guide_open"), variant="primary", elem_id="guide-open", scale=1)
    guide_status = gr.Markdown(elem_id="guide-status")
    # Clicked, a question goes to the Q&A tab's question box (app.py). Shown as text: a Textbox sample.
    guide_questions = gr.Dataset(label=_("guide_questions"), components=[gr.Textbox(visible=False)], samples=[],
                                 type="index", samples_per_page=40, visible=False, elem_id="guide-questions")
    guide_asked = gr.State([])
    with gr.Row():
        guide_chapter = gr.Dropdown(label=_("guide_chapter"), choices=[], visible=False, elem_id="guide-chapter", scale=3)
        guide_study = gr.Button(_("guide_study"), visible=False, elem_id="guide-study", scale=1)
    # Clicked, a chapter or section opens where it starts in the Q&A tab's page viewer (app.py)
    guide_outline = gr.Dataset(label=_("guide_outline"), components=[gr.Textbox(visible=False)], samples=[],
                               type="index", samples_per_page=200, visible=False, elem_id="guide-outline")
    guide_places = gr.State([])
    guide_view = gr.HTML(elem_id="guide-view")
    # Clicked, a passage a summary cites opens in the Q&A tab's viewer, as the outline's entries do (app.py)
    guide_sources = gr.Dataset(label=_("guide_sources"), components=[gr.Textbox(visible=False)], samples=[],
                               type="index", samples_per_page=200, visible=False, elem_id="guide-sources")
    guide_source_places = gr.State([])

    upload_stop = gr.Button(_("upload_stop"), variant="stop", size="sm", elem_id="upload-stop", visible=False)
    files.upload(bind(upload, ctx), [files, session],
                 [upload_progress, doc_status, doc_table, doc_select, files, upload_stop], concurrency_limit=2)
    upload_stop.click(bind(stop_uploads, ctx), None, [upload_stop])
    doc_delete.click(bind(delete_document, ctx), [doc_select, session], [doc_status, doc_table, doc_select])
    refresh = bind(refresh_documents, ctx)
    doc_refresh.click(refresh, None, [doc_table, doc_select])
    tab.select(refresh, None, [doc_table, doc_select])
    guide_open.click(bind(open_guide, ctx), [doc_select],
                     [guide_status, guide_view, guide_questions, guide_asked, guide_chapter, guide_study,
                      guide_outline, guide_places, guide_sources, guide_source_places], concurrency_limit=2)
    return DocumentsTab(doc_table, doc_select, guide_questions, guide_asked, guide_chapter, guide_study,
                        guide_outline, guide_places, guide_sources, guide_source_places)


def extent(request, pages: int, sections: int | None) -> str:
    """How long a document is: '12 pages' for a PDF, '5 sections' for a document without pages."""
    n, unit = (pages, "page") if sections is None else (sections, "section")
    return t(request, f"n_{unit}" if n == 1 else f"n_{unit}s", n=n)


def documents_view(ctx: Context, request, keep_pick: bool = False):
    """The library table and the picker's choices; with `keep_pick`, the document the person has picked stays
    picked (a refresh answered after they picked must not take it away), else the picker is cleared."""
    import pandas as pd
    a = ctx.assistant_for(request)
    docs = a.list_documents()
    # Documents without pages (Markdown, Word, HTML, text, notes) count their sections instead.
    sections = a.section_counts([d.doc_id for d in docs if not d.has_pages]) if docs else {}
    table = pd.DataFrame([[d.name, d.title, extent(request, d.pages, sections.get(d.doc_id)), d.chunks,
                           when(d.added_at)] for d in docs],
                         columns=cols(request, "name", "title", "length", "chunks", "added"))
    choices = [(f"{d.name} ({extent(request, d.pages, sections.get(d.doc_id))})", d.doc_id) for d in docs]
    return table, gr.update(choices=choices) if keep_pick else gr.update(choices=choices, value=None)


def load_with_progress(a, path, session, stop: threading.Event | None = None, heartbeat: float | None = None):
    """Load one file in a worker thread; yield its latest stage ({"stage", "done", "total"}) twice a
    second while it works, then a last item holding "result". The loader's error is raised here.

    Setting `stop`, or closing this generator before its end (Gradio cancelling the event), stops the file's
    conversion at once (rag.convert_worker kills its process). With `heartbeat`, an item {"stage": None}
    comes whenever no stage was yielded for that many seconds: a Gradio cancel waits for the handler's
    next yield, and a Word file reports no stage while it converts."""
    stop = stop or threading.Event()
    latest: dict = {}
    outcome: dict = {}

    def report(stage: str, done: int, total: int) -> None:
        latest.update(stage=stage, done=done, total=total)

    def work() -> None:
        try:
            with stop_on(stop):
                outcome["result"] = a.load_document(path, name=Path(path).name, session_id=session, progress=report)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the handler's thread below
            outcome["error"] = exc

    worker = threading.Thread(target=work, name="upload", daemon=True)
    worker.start()
    shown = None
    last = time.monotonic()
    try:
        while worker.is_alive():
            worker.join(0.5)
            if latest and latest.get("stage") in UPLOAD_STAGES and dict(latest) != shown:
                shown = dict(latest)
                last = time.monotonic()
                yield shown
            elif heartbeat and time.monotonic() - last >= heartbeat and worker.is_alive():
                last = time.monotonic()
                yield {"stage": None}
    finally:
        if worker.is_alive():       # closed before the file was loaded: stop its conversion
            stop.set()
    if "error" in outcome:
        raise outcome["error"]
    yield {"stage": "done", "result": outcome["result"]}


@contextmanager
def _stoppable(key: tuple[str, str | None], stop: threading.Event) -> Iterator[threading.Event]:
    with _running_lock:
        _running.setdefault(key, set()).add(stop)
    try:
        yield stop
    finally:
        with _running_lock:
            _running[key].discard(stop)
            if not _running[key]:
                del _running[key]


# -- handlers ------------------------------------------------------------------------------------------------

def upload(ctx: Context, files, session, request: gr.Request, progress=gr.Progress()):
    """Load each uploaded file in turn, yielding the progress table; the Stop button (shown meanwhile) stops the
    file being converted and leaves the rest out. Outputs: table, status, library, picker, files, Stop."""
    paths = [f if isinstance(f, str) else getattr(f, "name", str(f)) for f in (files or [])]
    # Held from the first line: loading the person's assistant (the embedding model) can take a minute on a
    # busy machine, and the stale-upload timer must not take the files meanwhile.
    with served.holding(paths):
        yield from _upload(ctx, paths, session, request, progress)


def _upload(ctx: Context, paths: list[str], session, request: gr.Request, progress):
    settings = ctx.settings
    same = gr.update()
    if not paths:
        gr.Warning(t(request, "msg_no_files"))
        yield same, t(request, "msg_no_files"), same, same, same, same
        return
    heads = (t(request, "col_file"), t(request, "col_progress"), t(request, "col_result"))
    rows = [{"name": Path(p).name, "state": "queued", "message": t(request, "msg_queued")} for p in paths]
    counts = {"ok": 0, "exists": 0, "failed": 0}
    try:
        a = ctx.assistant_for(request)
    except Exception as exc:  # noqa: BLE001
        yield same, failure(request, exc), same, same, same, same
        return
    stop = threading.Event()
    with _stoppable((a.user_id, getattr(request, "session_hash", None)), stop):
        try:
            yield progress_table(rows, heads), "", same, same, same, gr.update(visible=True, interactive=True)
            for i, path in enumerate(paths):
                if stop.is_set():
                    break
                progress((i, len(paths)), desc=f"{rows[i]['name']} ({i + 1}/{len(paths)})")
                rows[i].update(state="working", message=t(request, "msg_working"))
                yield progress_table(rows, heads), "", same, same, same, same
                try:
                    path = served.check_upload(settings, a.user_id, path)     # never another person's upload
                    result = None
                    with closing(load_with_progress(a, path, session, stop=stop, heartbeat=HEARTBEAT_S)) as stages:
                        for stage in stages:
                            if "result" in stage:
                                result = stage["result"]
                                break
                            if stage["stage"] is not None:      # None: a heartbeat, nothing new to show
                                rows[i].update(message=t(request, f"msg_stage_{stage['stage']}", done=stage["done"],
                                                         total=stage["total"]),
                                               percent=round(100 * stage["done"] / max(1, stage["total"])))
                            yield progress_table(rows, heads), "", same, same, same, same
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
                        rows[i].update(state="done",
                                       message=" — ".join([message, *(said(request, w) for w in result.warnings)]))
                except Exception as exc:  # noqa: BLE001 - one bad file must not stop the others
                    counts["failed"] += 1
                    rows[i].update(state="error", message=failure(request, exc))
                finally:
                    served.discard_upload(settings, a.user_id, path)      # the stored document is the copy kept
                yield progress_table(rows, heads), "", same, same, same, same
        finally:   # the files a stop (or a cancelled event) left out go as well
            for path in paths:
                served.discard_upload(settings, a.user_id, path)
    for row in rows:
        if row["state"] == "queued":
            row.update(state="error", message=t(request, "msg_not_started"))
    progress((len(paths), len(paths)))
    table, choices = documents_view(ctx, request, keep_pick=True)
    status = t(request, "msg_upload_stopped" if stop.is_set() else "msg_upload_done", n=len(paths), **counts)
    yield progress_table(rows, heads), status, table, choices, gr.update(value=None), gr.update(visible=False)


def stop_uploads(ctx: Context, request: gr.Request):
    """The Stop button: the uploads running in this person's tab stop (the file converting now at once)."""
    try:
        user = ctx.assistant_for(request).user_id
    except AssistantError:
        return gr.update()
    with _running_lock:
        stops = list(_running.get((user, getattr(request, "session_hash", None)), ()))
    for stop in stops:
        stop.set()
    return gr.update(interactive=False)


def delete_document(ctx: Context, doc_id, session, request: gr.Request):
    if not doc_id:
        gr.Warning(t(request, "msg_pick_document"))
        return t(request, "msg_pick_document"), gr.update(), gr.update()
    try:
        a = ctx.assistant_for(request)
        names = {d.doc_id: d.name for d in a.list_documents()}
        removed = a.delete_document(doc_id, session_id=session)
        served.forget_document(ctx.settings, a.user_id, doc_id)
        status = (t(request, "msg_deleted", name=as_text(names.get(doc_id, doc_id))) if removed
                  else t(request, "msg_not_found"))
        table, choices = documents_view(ctx, request)
        return status, table, choices
    except Exception as exc:  # noqa: BLE001
        return failure(request, exc), gr.update(), gr.update()


def refresh_documents(ctx: Context, request: gr.Request):
    try:
        return documents_view(ctx, request, keep_pick=True)
    except Exception as exc:  # noqa: BLE001
        gr.Warning(failure(request, exc))
        return gr.update(), gr.update()


def open_guide(ctx: Context, doc_id, request: gr.Request):
    """The picked document's guide at once, then again as each chapter's suggested questions are checked
    (only on the first open: the checked questions are kept)."""
    if not doc_id:
        gr.Warning(t(request, "msg_pick_document"))
        yield t(request, "msg_pick_document"), *[gr.update()] * 9
        return
    try:
        a = ctx.assistant_for(request)
        standings = notes = None
        for guide in a.document_guide_stages(doc_id):         # says first when the document is gone
            if standings is None:
                standings = a.study.path(doc_id)            # where the person stands, beside each chapter
                notes = notes_by_concept(a.list_notes())
            done = sum(1 for c in guide.chapters if c.questions is not None)
            status = "" if guide.checked else t(request, "guide_checking", done=done, total=len(guide.chapters))
            shown, asked = question_samples(guide)
            titles = [c.title for c in guide.chapters]
            entries, places = outline_samples(request, guide)
            sources, source_places = source_samples(request, guide)
            yield (status, guide_html(request, guide, standings, notes), gr.Dataset(samples=shown, visible=bool(shown)),
                   asked, gr.update(choices=titles, value=titles[0] if titles else None, visible=bool(titles)),
                   gr.update(visible=bool(titles)), gr.Dataset(samples=entries, visible=bool(entries)), places,
                   gr.Dataset(samples=sources, visible=bool(sources)), source_places)
    except Exception as exc:  # noqa: BLE001
        yield failure(request, exc), *[gr.update()] * 9


def notes_by_concept(notes) -> dict[str, int]:
    """How many of the person's notes are filed under each concept key (the one each note was filed under)."""
    from collections import Counter
    from assistant.concepts import note_key
    return dict(Counter(key for key in (note_key(n, {}) for n in notes) if key))


def suggested_question(index, asked):
    """A clicked suggested question: into the Q&A tab's question box, and that tab shown (app.py wires it)."""
    if index is None or not asked or not 0 <= index < len(asked):
        return gr.update(), gr.update()
    return asked[index], gr.Tabs(selected="qa")

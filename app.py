"""The Gradio UI of the PDF learning assistant: builds the Blocks and wires events to the facade.

    python app.py            # http://127.0.0.1:7860 (APP_HOST / APP_PORT)

Every handler resolves the person (the login name with APP_USERS, else the one local user) and calls
that person's `PDFLearningAssistant` (`assistant.get_assistant`); nothing here holds state shared by
visitors. Errors reach the person as one sentence (a status line or a warning toast), never a traceback.
The files a browser gets (upload copies, page images, reports) live in that person's folder (assistant.files),
and webauth's guard in front of Gradio's routes serves each file and session to its owner only.
UI text comes from static/i18n.json (English and Chinese), chosen by the browser's language.

Each tab is a module of ui/ (its components, events and handlers; see ui/__init__.py); this file puts the
tabs in one page, wires what spans them (the page's load and unload) and launches it.
"""
from __future__ import annotations

# First: core.settings switches the model hubs off (HF_HUB_OFFLINE) before Gradio imports huggingface_hub,
# which reads it once; and an unusable setting is refused in a second, before importing Gradio takes several.
from core.settings import settings_or_exit

if __name__ == "__main__":
    settings_or_exit()

import logging
import os
import uuid
from pathlib import Path

import gradio as gr

from assistant import files as served, get_assistant
from core.settings import Settings, SettingsError, app_logins, get_settings
from ui import documents_tab, notes_tab, qa_tab, recall_tab, reports_tab, review_tab
from ui.common import I18N, Context, _, bind, failure, t
# also read as app.<name> by tests
from ui.common import page_caption, section_caption, source_choice  # noqa: F401
from ui.documents_tab import UPLOAD_STAGES, extent, load_with_progress  # noqa: F401
from ui.qa_tab import answered_by  # noqa: F401
from webauth import LOGIN_FAILURES, guard_middleware

log = logging.getLogger("app")
HERE = Path(__file__).resolve().parent


def parse_users(spec: str | None) -> list[tuple[str, str]]:
    """'alice:pw1,bob:pw2' -> [("alice", "pw1"), ("bob", "pw2")]; empty -> [] (no login). A malformed
    entry or a name given twice ends the program with one sentence (core.settings.app_logins)."""
    try:
        return app_logins(spec)
    except SettingsError as exc:
        raise SystemExit(f"error: {exc}.") from None


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


# -- the page's own events: what spans the tabs --------------------------------------------------------------

def on_load(ctx: Context, request: gr.Request):
    """A tab opens: who is signed in and which model answers, the library, a new study session."""
    try:
        a = ctx.assistant_for(request)
        who = t(request, "msg_signed_in" if ctx.auth_enabled else "msg_local_user", user=a.user_id)
        model = model_sentence(request, a.rag.llm)
        table, choices = documents_tab.documents_view(ctx, request)
        due = a.study.due_count()          # the Review tab says how many cards wait
        review = gr.update(label=t(request, "tab_review_due", n=due) if due else t(request, "tab_review"))
        return f"{who} {model}", table, choices, uuid.uuid4().hex[:12], review
    except Exception as exc:  # noqa: BLE001
        return failure(request, exc), gr.update(), gr.update(), uuid.uuid4().hex[:12], gr.update()


def forget_tab(ctx: Context, request: gr.Request):
    """A tab closed: its page images and report go (Gradio calls this with the tab's session)."""
    name = getattr(request, "username", None) or (None if ctx.auth_enabled else ctx.settings.default_user)
    if name:
        served.forget_tab(ctx.settings, name, request.session_hash)


def build_app(settings: Settings | None = None, *, auth_enabled: bool | None = None) -> gr.Blocks:
    settings = settings or get_settings()
    auth_enabled = bool(parse_users(settings.app_users)) if auth_enabled is None else auth_enabled
    # this module's get_assistant, looked up now: a test that replaces app.get_assistant reaches the handlers
    ctx = Context(settings, auth_enabled, llm_on=answering_llm(settings) is not None, get_assistant=get_assistant)

    with gr.Blocks(title="PDF Learning Assistant") as demo:
        session = gr.State(None)         # this tab's study session (episodic memory groups by it)

        with gr.Row():
            with gr.Column(scale=4):
                gr.Markdown(f"## {_('title')}")
                gr.Markdown(_("intro"))
            with gr.Column(scale=2, min_width=220):
                who = gr.Markdown(elem_id="who")
                if auth_enabled:
                    gr.Button(_("logout"), link="/logout", size="sm", elem_id="logout")

        with gr.Tabs(elem_id="tabs") as tabs:
            with gr.Tab(_("tab_documents"), id="documents", elem_id="tab-documents") as tab:
                documents = documents_tab.build(ctx, tab, session)
            with gr.Tab(_("tab_qa"), id="qa", elem_id="tab-qa") as tab:
                qa = qa_tab.build(ctx, tab, session)
            with gr.Tab(_("tab_notes"), id="notes", elem_id="tab-notes") as tab:
                notes_tab.build(ctx, tab, session)
            with gr.Tab(_("tab_recall"), id="recall", elem_id="tab-recall") as tab:
                recall_tab.build(ctx, tab)
            with gr.Tab(_("tab_review"), id="review", elem_id="tab-review") as tab:
                review = review_tab.build(ctx, tab)
            with gr.Tab(_("tab_reports"), id="reports", elem_id="tab-reports") as tab:
                reports_tab.build(ctx, tab)

        # a suggested question of a document's guide, clicked: into the Q&A tab's question box
        documents.guide_questions.click(documents_tab.suggested_question, [documents.guide_questions,
                                                                            documents.guide_asked], [qa.question_box, tabs])

        # a chapter or section of the guide's outline, clicked: the Q&A tab shows where it starts
        def open_guide_place(index, places, request: gr.Request):
            return {tabs: gr.Tabs(selected="qa"), **qa_tab.open_place(qa, index, places, request)}

        documents.guide_outline.click(open_guide_place, [documents.guide_outline, documents.guide_places],
                                      [tabs, qa.page_view, qa.section_view, qa.passage_view, qa.page_status])
        # a passage a chapter's summary cites, clicked: the same, at that passage
        documents.guide_sources.click(open_guide_place, [documents.guide_sources, documents.guide_source_places],
                                      [tabs, qa.page_view, qa.section_view, qa.passage_view, qa.page_status])
        # "Study this chapter" in a guide: cards from the chapter, then the Review tab with its quiz
        documents.guide_study.click(bind(review_tab.study_chapter, review), [documents.select, documents.guide_chapter],
                                    [tabs] + review_tab.study_outputs(review))
        demo.load(bind(on_load, ctx), None, [who, documents.table, documents.select, session, review.tab])
        demo.unload(bind(forget_tab, ctx))

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
                              f"After {LOGIN_FAILURES} wrong passwords, logging in with that name from this "
                              f"address pauses for {settings.login_lockout_s} seconds, and twice as long each further time.")
                if users else None,
                # the browser refuses a bigger file before sending it; webauth's guard refuses a bigger request
                max_file_size=settings.max_upload_mb * 1024 * 1024,
                i18n=I18N, css_paths=[str(HERE / "static" / "app.css")], footer_links=[],
                js="() => {" + "".join(f"({(HERE / 'static' / name).read_text(encoding='utf-8').strip()})();"
                                       for name in ("citations.js", "concepts.js")) + "}",
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
    settings = settings_or_exit()   # an unusable setting: say which, before anything starts
    served.prepare(settings)            # Gradio keeps its files in DATA_DIR/web, emptied now
    options = launch_options(settings)
    demo = build_app(settings, auth_enabled=bool(options["auth"]))
    import threading
    threading.Thread(target=warm_up, args=(settings,), daemon=True).start()
    demo.launch(**options)


if __name__ == "__main__":
    main()

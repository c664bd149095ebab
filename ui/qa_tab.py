"""The Q&A tab: ask, see the answer stream in, open a cited source's page (or section) beside it.

The passages an answer rests on fill the Sources list at once, the answer streams after them; each [n] in
an answer is a link that static/citations.js turns into "open this source's page" (a hidden button carries
the request to `open_citation`): a PDF's page as an image, or — for a document without pages (Markdown,
Word, HTML, text, notes) — the cited section as text in the panel beside it. Answers are shown as text:
document HTML is printed, never rendered (assistant.views.chat_markdown), and the history kept for
follow-ups stays plain text.

Past conversations (the `qa` episodes of this person, grouped by session) are listed above the chat when the
tab opens and after each answer: picking one shows its turns again (the stored answers, as text) and makes
its session this tab's, so the next question continues it; "New conversation" starts a new session.
"""
from __future__ import annotations

import html
import uuid
from dataclasses import dataclass

import gradio as gr

from assistant.types import AskResult
from assistant.views import chat_markdown, section_html
from core.errors import AssistantError
from rag.prompts import EXTRACTIVE_NOTICE
from rag.types import Citation, SourcesEvent
from ui.common import (Context, _, as_text, bind, citation_label, failure, log, said, saved_page, section_caption,
                       short, source_choice, t, when)

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

# "Save this passage as a note" sends the words selected in the passage or section panel, if any
# (static/citations.js keeps them at the button's mousedown, before the click clears the selection).
SELECTION_JS = "(choice, cites, session, selection) => [choice, cites, session, window.__noteSelection || '']"


@dataclass(eq=False)
class QA:
    """The tab's components and the Context: the handlers update components by name (dict outputs)."""
    ctx: Context
    session_state: gr.State
    history_state: gr.State
    shown_chat: gr.State
    citations: gr.State
    cite_map_state: gr.State
    chatbot: gr.Chatbot
    question_box: gr.Textbox
    searched: gr.Markdown
    answer_notice: gr.Markdown
    memory_used: gr.Markdown
    sources: gr.Radio
    page_view: gr.Image
    section_view: gr.HTML
    page_status: gr.Markdown
    passage_view: gr.HTML
    conversations: gr.Dropdown


def build(ctx: Context, tab: gr.Tab, session: gr.State) -> QA:
    """The tab's components and events; returns them (the Documents tab's guide fills its question box and
    opens pages in its viewer)."""
    llm_on = ctx.llm_on
    history_state = gr.State([])     # this tab's conversation, plain {"role", "content": str}: for follow-ups
    shown_chat = gr.State([])        # the same conversation as the chat shows it (Markdown, [n] links)
    citations = gr.State([])         # the sources listed now (the last answer's, or the one clicked)
    cite_map_state = gr.State({})    # answer number -> its sources, for a click on [n] in any answer

    gr.Markdown(_("extractive_notice"), visible=not llm_on, elem_id="llm-notice")
    with gr.Row():
        with gr.Column(scale=3):
            conversations = gr.Dropdown(label=_("conversations"), info=_("conversations_info"), choices=[],
                                        value=None, interactive=True, elem_id="conversations")
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
            # The cited passage as text under its page: readable, and words selected in it (or in the
            # section panel) become the note instead of the whole passage.
            passage_view = gr.HTML(visible=False, elem_id="passage-text")
            page_status = gr.Markdown(elem_id="page-status")
            note_passage = gr.Button(_("note_passage"), size="sm", elem_id="note-passage")
            note_selection = gr.Textbox(visible="hidden", elem_id="note-selection", container=False)

    qa = QA(ctx, session_state=session, history_state=history_state, shown_chat=shown_chat, citations=citations,
            cite_map_state=cite_map_state, chatbot=chatbot, question_box=question_box, searched=searched,
            answer_notice=answer_notice, memory_used=memory_used, sources=sources, page_view=page_view,
            section_view=section_view, page_status=page_status, passage_view=passage_view,
            conversations=conversations)
    ask_outputs = [chatbot, shown_chat, question_box, sources, page_view, page_status, answer_notice, searched,
                   memory_used, history_state, session, citations, cite_map_state, section_view, passage_view,
                   conversations]
    ask_inputs = [question_box, history_state, shown_chat, cite_map_state, mqe, hyde, session]
    answer = bind(ask, qa)
    ask_btn.click(answer, ask_inputs, ask_outputs, concurrency_limit=8)
    question_box.submit(answer, ask_inputs, ask_outputs, concurrency_limit=8)
    sources.input(bind(show_source, qa), [sources, citations], [page_view, section_view, passage_view, page_status])
    note_passage.click(bind(note_source, qa), [sources, citations, session, note_selection], [page_status],
                       js=SELECTION_JS)
    cite_open.click(bind(open_citation, qa), [cite_request, cite_map_state],
                    [sources, citations, page_view, section_view, passage_view, page_status],
                    js="(ask_for, cite_map) => [window.__pdfCite || ask_for, cite_map]", show_progress="hidden")
    clear_outputs = [chatbot, shown_chat, history_state, cite_map_state, sources, page_view, page_status,
                     answer_notice, searched, memory_used, citations, section_view, passage_view, session,
                     conversations]
    clear = bind(new_conversation, qa)
    clear_btn.click(clear, None, clear_outputs)
    chatbot.clear(clear, None, clear_outputs)       # the chat's own bin icon: forget the turns too
    # the list of past conversations: filled when the tab opens (after a reload too), a pick shows one
    tab.select(bind(list_conversations, qa), [session], [conversations], show_progress="hidden")
    conversations.input(bind(show_conversation, qa), [conversations],
                        [chatbot, shown_chat, history_state, cite_map_state, session, sources, page_view,
                         section_view, passage_view, page_status, answer_notice, searched, memory_used, citations])
    return qa


def answered_by(request, result: AskResult) -> str:
    """The line under an answer that says who wrote it."""
    if result.llm and result.llm != "none":
        return t(request, "answered_by", model=result.llm)
    if result.route == "memory":   # a notice says why a model's answer was set aside; "no model" would be untrue
        return t(request, "answered_memory_listed" if result.notices else "answered_memory")
    return t(request, "answered_refused" if result.refused else "answered_extractive")


def cited_headings(ctx: Context, request, cites: list[Citation]) -> list[str]:
    """The section heading of each source without pages, for its label ("" where there is none)."""
    if all(c.page_start is not None for c in cites):
        return [""] * len(cites)
    try:
        return ctx.assistant_for(request).cited_headings(cites)
    except Exception:  # noqa: BLE001 - a label without its heading is still a label
        log.warning("section headings of the sources failed", exc_info=True)
        return [""] * len(cites)


def source_list(ctx: Context, request, cites: list[Citation], *, related: bool = False, value=None):
    label = t(request, "sources_related" if related else "sources_label")
    headings = cited_headings(ctx, request, cites)
    choices = [(source_choice(request, c, h), str(i)) for i, (c, h) in enumerate(zip(cites, headings))]
    return gr.update(choices=choices, value=value, label=label)


def passage_html(quote: str, hint: str) -> str:
    """The cited passage as selectable text (the document's words printed, never rendered as HTML)."""
    return (f'<div class="passage-panel"><div class="passage-hint">{html.escape(hint)}</div>'
            f'<div class="passage-body">{html.escape(" ".join(quote.split()))}</div></div>')


def no_source(qa: QA) -> dict:
    """The viewer with nothing shown: the (empty) page image, the text panel hidden."""
    return {qa.page_view: gr.update(value=None, visible=True), qa.section_view: gr.update(value="", visible=False),
            qa.passage_view: gr.update(value="", visible=False)}


def page_of(qa: QA, citation: Citation, request) -> dict:
    """The viewer showing a source: a PDF's page image, or a text document's section (as HTML)."""
    a = qa.ctx.assistant_for(request)
    shown = a.render_source(citation)
    if hasattr(shown, "image"):          # assistant.pages.RenderedPage: a PDF page
        image, caption = saved_page(qa.ctx, request, citation, shown)
        return {qa.page_view: gr.update(value=image, label=caption, visible=True),
                qa.section_view: gr.update(value="", visible=False),
                qa.passage_view: gr.update(value=passage_html(citation.quote, t(request, "passage_hint")),
                                           visible=bool(citation.quote))}
    html = section_html(shown, section_caption(request, citation, shown))
    return {qa.page_view: gr.update(value=None, visible=False), qa.section_view: gr.update(value=html, visible=True),
            qa.passage_view: gr.update(value="", visible=False)}    # the section panel marks the passage


# -- handlers ------------------------------------------------------------------------------------------------

def ask(qa: QA, question, history, shown_before, cite_map, mqe, hyde, session, request: gr.Request):
    """Stream one answer: the sources at once, then the text, then the final answer with its links."""
    ctx = qa.ctx
    question = (question or "").strip()
    history, cite_map = list(history or []), dict(cite_map or {})
    session = session or uuid.uuid4().hex[:12]
    if not question:
        message = t(request, "msg_empty_question")
        gr.Warning(message)
        yield {qa.answer_notice: message}     # not {}: Gradio takes an empty dict for too few outputs
        return
    turn = max(cite_map, default=-1) + 1          # this answer's number in the conversation
    shown = list(shown_before or []) + [{"role": "user", "content": chat_markdown(question)},
                                        {"role": "assistant", "content": "…"}]
    yield {qa.chatbot: shown, qa.question_box: "", qa.sources: source_list(ctx, request, []), **no_source(qa),
           qa.page_status: "", qa.answer_notice: "", qa.searched: "", qa.memory_used: "", qa.session_state: session,
           qa.citations: []}
    text, result, composed = "", None, False
    try:
        a = ctx.assistant_for(request)
        for item in a.ask(question, history, mqe=bool(mqe) and ctx.llm_on, hyde=bool(hyde) and ctx.llm_on,
                          session_id=session):
            if isinstance(item, AskResult):
                result = item
            elif isinstance(item, SourcesEvent):
                composed = composed or item.composed
                update = {qa.sources: source_list(ctx, request, item.citations, related=item.related),
                          qa.citations: list(item.citations)}
                if item.search_query and item.search_query.strip() != question:
                    update[qa.searched] = t(request, "searched_for", query=chat_markdown(item.search_query))
                if item.waiting_for and not text:
                    waiting = chat_markdown(said(request, item.waiting_for))   # a Notice: in their language
                    shown[-1] = {"role": "assistant", "content": f"⏳ *{waiting}*"}
                    update[qa.chatbot] = shown
                yield update
            elif item:
                text += item
                # a model's sentences are a draft until each is checked against its passage (rag.support)
                draft = f"\n\n*{t(request, 'answer_checking')}*" if composed else ""
                shown[-1] = {"role": "assistant", "content": chat_markdown(text) + draft}
                yield {qa.chatbot: shown}
        if result is None:
            raise AssistantError("The answer stopped before it was finished; please ask again.",
                                 key="err_answer_stopped")
    except Exception as exc:  # noqa: BLE001
        message = failure(request, exc)
        gr.Warning(message)
        shown[-1] = {"role": "assistant", "content": chat_markdown(message)}
        yield {qa.chatbot: shown, qa.question_box: question, qa.answer_notice: message, qa.shown_chat: shown}
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
    # each notice in the person's language; not the extractive one: the line above the answers says it
    notices = result.notices or [result.notice.replace(EXTRACTIVE_NOTICE, "").strip()]   # a result without a list
    notice = " ".join(said(request, n) for n in notices if n and n != EXTRACTIVE_NOTICE)
    notice = " ".join(x for x in (answered_by(request, result), chat_markdown(notice)) if x)
    yield {qa.chatbot: shown, qa.shown_chat: shown, qa.conversations: conversation_list(qa, request, session),
           qa.sources: source_list(ctx, request, cites, related=result.refused),
           qa.citations: cites, qa.cite_map_state: cite_map, qa.history_state: new_history, qa.answer_notice: notice,
           qa.searched: t(request, "searched_for", query=chat_markdown(result.search_query))
           if result.search_query else "", qa.memory_used: memory_md}


def show_source(qa: QA, choice, cites, request: gr.Request):
    if choice in (None, "") or not cites:
        return {}
    return viewer_showing(qa, cites[int(choice)], request)


def open_place(qa: QA, index, places, request: gr.Request) -> dict:
    """A chapter or section clicked in a document's guide: the viewer shows where it starts (its page, or its
    section for a document without pages)."""
    if index is None or not places or not 0 <= index < len(places):
        return {}
    return viewer_showing(qa, places[index], request)


def viewer_showing(qa: QA, citation: Citation, request) -> dict:
    """The viewer showing `citation` (page_of), or emptied with one sentence saying why it cannot."""
    try:
        return {**page_of(qa, citation, request), qa.page_status: ""}
    except Exception as exc:  # noqa: BLE001
        message = failure(request, exc)
        gr.Warning(message)
        return {**no_source(qa), qa.page_status: message}


def note_source(qa: QA, choice, cites, session, selection, request: gr.Request):
    """The shown source's passage — or the words selected in it — becomes a note anchored to its document
    and page (filed under the section's heading), which the Notes tab lists and the Review tab can make
    cards from."""
    if choice in (None, "") or not cites:
        return t(request, "msg_note_pick_source")
    try:
        citation = cites[int(choice)]
        selected = " ".join(str(selection or "").split())
        words = selected or citation.quote
        a = qa.ctx.assistant_for(request)
        heading = (a.cited_headings([citation]) or [""])[0][:80]
        a.add_note(words, heading, doc_id=citation.doc_id, page=citation.page_start, quote=words, session_id=session)
        return t(request, "msg_note_selection_saved" if selected else "msg_note_passage_saved",
                 source=as_text(citation_label(request, citation)))      # the document's name, as text
    except Exception as exc:  # noqa: BLE001
        return failure(request, exc)


def open_citation(qa: QA, ask_for, cite_map, request: gr.Request):
    """A click on [n] in answer `turn` ("turn-n", from static/citations.js): list that answer's sources
    with [n] selected, and show its page."""
    try:
        turn, n = (int(x) for x in str(ask_for or "").split("-", 1))
        cites = list((cite_map or {})[turn])
        index = next(i for i, c in enumerate(cites) if c.n == n)
    except (ValueError, KeyError, StopIteration):
        return {}
    update = {qa.sources: source_list(qa.ctx, request, cites, value=str(index)), qa.citations: cites}
    try:
        update.update({**page_of(qa, cites[index], request), qa.page_status: ""})
    except Exception as exc:  # noqa: BLE001
        message = failure(request, exc)
        gr.Warning(message)
        update.update({**no_source(qa), qa.page_status: message})
    return update


def new_conversation(qa: QA):
    """An empty chat in a new session (the old one stays in the list of past conversations)."""
    cleared = no_source(qa)
    return ([], [], [], {}, gr.update(choices=[], value=None), cleared[qa.page_view], "", "", "", "", [],
            cleared[qa.section_view], cleared[qa.passage_view], uuid.uuid4().hex[:12], gr.update(value=None))


def conversation_label(request, conversation: dict) -> str:
    """"2025-03-01 14:05 — What is lift? (3 questions)"""
    n = conversation["questions"]
    return t(request, "conversation_label" if n != 1 else "conversation_label_one", when=when(conversation["started"]),
             question=short(conversation["first_question"], 70), n=n)


def conversation_list(qa: QA, request, current=None):
    """The dropdown of this person's past conversations, `current` (a session id) selected when listed."""
    try:
        past = qa.ctx.assistant_for(request).conversations()
    except Exception:  # noqa: BLE001 - the chat works without its list
        log.warning("listing the past conversations failed", exc_info=True)
        return gr.update()
    choices = [(conversation_label(request, c), c["session_id"]) for c in past]
    return gr.update(choices=choices, value=current if current in {c["session_id"] for c in past} else None)


def list_conversations(qa: QA, session, request: gr.Request):
    return conversation_list(qa, request, session)


def show_conversation(qa: QA, session_id, request: gr.Request):
    """A past conversation back in the chat (its stored answers, as text, without links) and its session
    made this tab's: the next question continues it."""
    if not session_id:
        return {}
    try:
        turns = qa.ctx.assistant_for(request).conversation(session_id)
    except Exception as exc:  # noqa: BLE001
        message = failure(request, exc)
        gr.Warning(message)
        return {qa.answer_notice: message}
    if not turns:
        gr.Warning(t(request, "msg_conversation_missing"))
        return {}
    shown, history = [], []
    for turn in turns:
        shown += [{"role": "user", "content": chat_markdown(turn["question"])},
                  {"role": "assistant", "content": chat_markdown(turn["answer"])}]
        history += [{"role": "user", "content": turn["question"]}, {"role": "assistant", "content": turn["answer"]}]
    return {qa.chatbot: shown, qa.shown_chat: shown, qa.history_state: history, qa.cite_map_state: {},
            qa.session_state: session_id, qa.sources: source_list(qa.ctx, request, []), **no_source(qa),
            qa.page_status: "", qa.answer_notice: "", qa.searched: "", qa.memory_used: "", qa.citations: []}

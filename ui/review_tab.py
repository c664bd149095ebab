"""The Review tab: make cards (from a chapter, pages, a note or an answered question), review the due ones
on the FSRS schedule, take a quiz, and keep the deck (edit, delete, export to Anki or CSV, import)."""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import gradio as gr

from assistant import files as served
from core.errors import InvalidRequest
from rag.types import Citation
from study.exchange import MAX_SIDE_CHARS, NO_BACK, NO_FRONT, TOO_LONG, ImportResult
from study.types import QuizQuestion
from ui.common import Context, _, as_text, bind, cols, failure, pages_ref, saved_page, short, t, when

GRADE_BUTTONS = ("again", "hard", "good", "easy")
STUDY_QUIZ_SIZE = 5          # "Study this chapter": a short quiz, after the summary and the key terms


@dataclass
class ReviewTab:
    """The tab's components, handed to its handlers (and to app.py, which updates the tab's label)."""
    ctx: Context
    tab: gr.Tab
    due_line: gr.Markdown
    front: gr.Markdown
    back: gr.Markdown
    grades: gr.Row
    show: gr.Button
    status: gr.Markdown
    page: gr.Image
    current: gr.State
    doc: gr.Dropdown
    chapter: gr.Dropdown
    note: gr.Dropdown
    turn: gr.Dropdown
    table: gr.Dataframe
    pick: gr.Dropdown
    make_status: gr.Markdown
    quiz_box: gr.Accordion
    quiz_outputs: list                 # quiz state, question, choices, answer box, submit button, result


def build(ctx: Context, tab: gr.Tab) -> ReviewTab:
    due_line = gr.Markdown(elem_id="review-due")
    with gr.Row():
        with gr.Column(scale=3):
            front = gr.Markdown(elem_id="review-front")
            show = gr.Button(_("review_show"), elem_id="review-show", interactive=False)
            back = gr.Markdown(visible=False, elem_id="review-back")
            with gr.Row(visible=False, elem_id="review-grades") as grades:
                grade_buttons = [gr.Button(_(f"review_{g}"), elem_id=f"review-{g}", size="sm",
                                           variant="primary" if g == "good" else "secondary") for g in GRADE_BUTTONS]
            status = gr.Markdown(elem_id="review-status")
        with gr.Column(scale=2):
            page = gr.Image(label=_("review_source"), interactive=False, elem_id="review-page", height=420)
    current = gr.State(None)                       # the card under review: its id

    with gr.Accordion(_("cards_make"), open=True):
        with gr.Row():
            doc = gr.Dropdown(label=_("cards_document"), choices=[], elem_id="cards-doc")
            chapter = gr.Dropdown(label=_("cards_chapter"), choices=[], elem_id="cards-chapter")
        with gr.Row():
            first = gr.Number(label=_("cards_first_page"), value=1, precision=0, elem_id="cards-first")
            last = gr.Number(label=_("cards_last_page"), value=1, precision=0, elem_id="cards-last")
            use_llm = gr.Checkbox(label=_("cards_use_llm"), value=ctx.llm_on, visible=ctx.llm_on, elem_id="cards-llm")
        with gr.Row():
            from_chapter = gr.Button(_("cards_from_chapter"), variant="primary", elem_id="cards-make-chapter")
            from_pages = gr.Button(_("cards_from_pages"), elem_id="cards-make-pages")
        with gr.Row():
            note = gr.Dropdown(label=_("cards_note"), choices=[], elem_id="cards-note")
            from_note = gr.Button(_("cards_from_note"), elem_id="cards-make-note")
        with gr.Row():
            turn = gr.Dropdown(label=_("cards_turn"), choices=[], elem_id="cards-turn")
            from_turn = gr.Button(_("cards_from_turn"), elem_id="cards-make-turn")
        make_status = gr.Markdown(elem_id="cards-status")

    with gr.Accordion(_("quiz_title"), open=False, elem_id="quiz") as quiz_box:
        with gr.Row():
            quiz_mode = gr.Radio([(_("quiz_choice"), "choice"), (_("quiz_short"), "short")], value="choice",
                                 label=_("quiz_mode"), elem_id="quiz-mode")
            quiz_start = gr.Button(_("quiz_start"), elem_id="quiz-start")
        quiz_question = gr.Markdown(elem_id="quiz-question")
        quiz_choices = gr.Radio(choices=[], visible=False, label=_("quiz_pick"), elem_id="quiz-choices")
        quiz_answer = gr.Textbox(visible=False, label=_("quiz_your_answer"), elem_id="quiz-answer")
        quiz_submit = gr.Button(_("quiz_submit"), interactive=False, elem_id="quiz-submit")
        quiz_result = gr.Markdown(elem_id="quiz-result")
        quiz_state = gr.State(None)               # {"questions": [...], "i": n, "right": n}

    with gr.Accordion(_("cards_deck"), open=False, elem_id="deck"):
        table = gr.Dataframe(interactive=False, wrap=True, elem_id="cards-table")
        with gr.Row():
            pick = gr.Dropdown(label=_("cards_pick"), choices=[], elem_id="cards-pick")
            edit_front = gr.Textbox(label=_("cards_front"), lines=2, elem_id="cards-front")
            edit_back = gr.Textbox(label=_("cards_back"), lines=2, elem_id="cards-back")
        with gr.Row():
            save = gr.Button(_("cards_save"), elem_id="cards-save")
            delete = gr.Button(_("cards_delete"), variant="stop", elem_id="cards-delete")
            export_apkg = gr.Button(_("cards_export_apkg"), elem_id="cards-export-apkg")
            export_csv = gr.Button(_("cards_export_csv"), elem_id="cards-export-csv")
        export_file = gr.File(label=_("cards_export_file"), interactive=False, elem_id="cards-export-file")
        import_file = gr.File(label=_("cards_import"), file_types=[".csv", ".txt", ".tsv"], elem_id="cards-import")
        deck_status = gr.Markdown(elem_id="deck-status")

    quiz_outputs = [quiz_state, quiz_question, quiz_choices, quiz_answer, quiz_submit, quiz_result]
    ui = ReviewTab(ctx, tab, due_line, front, back, grades, show, status, page, current, doc, chapter, note, turn,
                   table, pick, make_status, quiz_box, quiz_outputs)
    card_outputs = [current, due_line, front, back, grades, show, page, status, tab]
    refresh = bind(refresh_review, ui)
    tab.select(refresh, None, card_outputs + [doc, note, turn, table, pick])
    # .input, not .change: a guide's "Study this chapter" sets the document and its chapter together
    doc.input(bind(chapters_of, ctx), [doc], [chapter])
    show.click(lambda: (gr.update(visible=True), gr.update(visible=True), gr.update(interactive=False)),
               None, [back, grades, show], api_name=False)
    review = bind(grade_card, ui)
    for name, button in zip(GRADE_BUTTONS, grade_buttons):
        button.click(review, [current, gr.State(name)], card_outputs + [table, pick])
    make = bind(make_cards, ui)
    made_outputs = [make_status] + card_outputs + [table, pick]
    from_chapter.click(make, [gr.State("chapter"), doc, chapter, first, last, note, turn, use_llm], made_outputs)
    from_pages.click(make, [gr.State("pages"), doc, chapter, first, last, note, turn, use_llm], made_outputs)
    from_note.click(make, [gr.State("note"), doc, chapter, first, last, note, turn, use_llm], made_outputs)
    from_turn.click(make, [gr.State("turn"), doc, chapter, first, last, note, turn, use_llm], made_outputs)
    quiz_start.click(bind(start_quiz, ctx), [doc, chapter, quiz_mode], quiz_outputs)
    quiz_submit.click(bind(answer_quiz, ctx), [quiz_state, quiz_choices, quiz_answer], quiz_outputs)
    pick.change(bind(pick_card, ctx), [pick], [edit_front, edit_back])
    deck_outputs = [deck_status] + card_outputs + [table, pick]
    save.click(bind(save_card, ui), [pick, edit_front, edit_back], deck_outputs)
    delete.click(bind(delete_card, ui), [pick], deck_outputs)
    export_apkg.click(bind(export_deck, ctx), [gr.State("apkg"), doc], [export_file, deck_status])
    export_csv.click(bind(export_deck, ctx), [gr.State("csv"), doc], [export_file, deck_status])
    import_file.upload(bind(import_deck, ui), [import_file], deck_outputs)
    return ui


# -- views ---------------------------------------------------------------------------------------------------

def next_card(ui: ReviewTab, request) -> list:
    """The first due card, front only (or "nothing due" and when the next one is), and the tab's label."""
    desk = ui.ctx.assistant_for(request).study
    due = desk.due(limit=1)
    count = desk.due_count()
    label = t(request, "tab_review_due", n=count) if count else t(request, "tab_review")
    if not due:
        upcoming = [c.due for c in desk.cards() if c.due]
        line = (t(request, "msg_review_none_due", when=when(min(upcoming))) if upcoming else
                t(request, "msg_review_no_cards"))
        return [None, line, "", gr.update(value="", visible=False), gr.update(visible=False),
                gr.update(interactive=False), gr.update(value=None), "", gr.update(label=label)]
    card = due[0]
    # the card's words, its source's name and its quote are shown as text: markup in them is not rendered
    source = f"{as_text(card.doc_name)}, {pages_ref(request, card.page)}" if card.page else as_text(card.doc_name)
    line = t(request, "msg_review_due", n=count)
    image, caption = _page_image(ui, request, card)
    front = f"### {as_text(card.front)}"
    return [card.card_id, line, f"{front}\n\n<small>{source}</small>" if source else front,
            gr.update(value=f"**{as_text(card.back)}**" + (f"\n\n> {as_text(card.quote, 300)}" if card.quote else ""),
                      visible=False),
            gr.update(visible=False), gr.update(interactive=True), gr.update(value=image, label=caption), "",
            gr.update(label=label)]


def _page_image(ui: ReviewTab, request, card):
    """The card's source page with its sentence highlighted (PDF cards with a page only)."""
    if not card.doc_id or not card.page:
        return None, t(request, "review_source")
    a = ui.ctx.assistant_for(request)
    citation = Citation(n=1, doc_id=card.doc_id, doc_name=card.doc_name, page_start=card.page, page_end=card.page,
                        chunk_id="", score=0.0, quote=card.quote or card.back)
    try:
        shown = a.render_source(citation)
    except Exception:  # noqa: BLE001 - the card stays reviewable without its page
        return None, t(request, "review_source")
    if not hasattr(shown, "image"):
        return None, t(request, "review_source")
    return saved_page(ui.ctx, request, citation, shown)


def deck_view(ui: ReviewTab, request) -> list:
    import pandas as pd
    cards = ui.ctx.assistant_for(request).study.cards()
    rows = [[short(c.front, 120), short(c.back, 80),
             f"{c.doc_name}, {pages_ref(request, c.page)}" if c.page else c.doc_name,
             when(c.due) if c.due else "", c.reviews] for c in cards]
    table = pd.DataFrame(rows, columns=cols(request, "card_front", "card_back", "source", "due", "reviews"))
    choices = [(short(f"{c.front} → {c.back}", 90), c.card_id) for c in cards]
    return [table, gr.update(choices=choices, value=None)]


# -- handlers ------------------------------------------------------------------------------------------------

def refresh_review(ui: ReviewTab, request: gr.Request):
    try:
        a = ui.ctx.assistant_for(request)
        docs = [(d.name, d.doc_id) for d in a.list_documents()]
        notes = [(short(f"{n.metadata.get('concept') or ''} {n.content}".strip(), 80), n.id) for n in a.list_notes()]
        turns = [(short(r.metadata.get("question", ""), 80), r.id) for r in a._stored(["episodic"], kind="qa", limit=30)
                 if r.metadata.get("answer") and not r.metadata.get("refused")]
        return (next_card(ui, request) + [gr.update(choices=docs), gr.update(choices=notes), gr.update(choices=turns)]
                + deck_view(ui, request))
    except Exception as exc:  # noqa: BLE001
        gr.Warning(failure(request, exc))
        return (gr.update(),) * 14


def chapters_of(ctx: Context, doc_id, request: gr.Request):
    try:
        if not doc_id:
            return gr.update(choices=[], value=None)
        chapters = ctx.assistant_for(request).study.chapters(doc_id)
        return gr.update(choices=chapters, value=chapters[0] if chapters else None)
    except Exception as exc:  # noqa: BLE001
        gr.Warning(failure(request, exc))
        return gr.update()


def grade_card(ui: ReviewTab, card_id, grade, request: gr.Request):
    try:
        if not card_id:
            return next_card(ui, request) + deck_view(ui, request)
        result = ui.ctx.assistant_for(request).study.review(card_id, grade)
        shown = next_card(ui, request)
        shown[7] = t(request, "msg_review_graded", grade=t(request, f"review_{grade}"), when=when(result.due))
        return shown + deck_view(ui, request)
    except Exception as exc:  # noqa: BLE001
        message = failure(request, exc)
        return [gr.update()] * 7 + [message, gr.update()] + [gr.update()] * 2


def make_cards(ui: ReviewTab, source, doc_id, chapter, first, last, note_id, turn_id, use_llm, request: gr.Request):
    try:
        desk = ui.ctx.assistant_for(request).study
        if source in {"chapter", "pages"} and not doc_id:
            return [t(request, "msg_cards_pick_document")] + [gr.update()] * 11
        if source == "chapter":
            made = desk.cards_from_section(doc_id, chapter or "", use_llm=use_llm)
        elif source == "pages":
            made = desk.cards_from_pages(doc_id, int(first or 0), int(last or first or 0), use_llm=use_llm)
        elif source == "note":
            made = desk.cards_from_note(note_id or "")
        else:
            made = desk.cards_from_turn(turn_id or "")
        message = t(request, "msg_cards_made", n=len(made.cards), total=len(desk.cards()))
        if made.duplicates:
            message += " " + t(request, "msg_cards_duplicates", n=made.duplicates)
        if made.unsupported:
            message += " " + t(request, "msg_cards_unsupported", n=made.unsupported)
        if made.notice and not made.cards:
            message = made.notice
        return [message] + next_card(ui, request) + deck_view(ui, request)
    except Exception as exc:  # noqa: BLE001
        return [failure(request, exc)] + [gr.update()] * 11


def study_outputs(ui: ReviewTab) -> list:
    """What "Study this chapter" (study_chapter) fills, after the tab switch (app.py adds the Tabs first)."""
    return ([ui.doc, ui.chapter, ui.make_status, ui.quiz_box] + ui.quiz_outputs
            + [ui.current, ui.due_line, ui.front, ui.back, ui.grades, ui.show, ui.page, ui.status, ui.tab]
            + [ui.table, ui.pick])


def study_chapter(ui: ReviewTab, doc_id, chapter, request: gr.Request):
    """A guide's "Study this chapter": cards made from the chapter (the ones it has are kept), then the Review tab
    with that chapter picked, its due cards first and a short quiz on it open below; the guide showed its
    summary and key terms before."""
    try:
        if not doc_id or not chapter:
            raise InvalidRequest("Open a document's guide and pick one of its chapters first.",
                                 key="err_study_pick_chapter")
        a = ui.ctx.assistant_for(request)
        desk = a.study
        made = desk.cards_from_section(doc_id, chapter)
        message = t(request, "msg_study_chapter", chapter=chapter, new=len(made.cards), total=len(desk.cards(doc_id)))
        questions = desk.quiz(doc_id, heading=chapter, mode="choice", size=STUDY_QUIZ_SIZE)
        quiz = _quiz_view({"questions": [asdict(q) for q in questions], "i": 0, "right": 0}, request, "")
        docs = [(d.name, d.doc_id) for d in a.list_documents()]
        return ([gr.Tabs(selected="review"), gr.update(choices=docs, value=doc_id),
                 gr.update(choices=desk.chapters(doc_id), value=chapter), message, gr.Accordion(open=True), *quiz]
                + next_card(ui, request) + deck_view(ui, request))
    except Exception as exc:  # noqa: BLE001
        gr.Warning(failure(request, exc))
        return [gr.update()] * (1 + len(study_outputs(ui)))


def start_quiz(ctx: Context, doc_id, chapter, mode, request: gr.Request):
    try:
        questions = ctx.assistant_for(request).study.quiz(doc_id or None, heading=chapter or None, mode=mode, size=10)
        state = {"questions": [asdict(q) for q in questions], "i": 0, "right": 0}
        return _quiz_view(state, request, "")
    except Exception as exc:  # noqa: BLE001
        return None, failure(request, exc), gr.update(visible=False), gr.update(visible=False), \
            gr.update(interactive=False), ""


def _quiz_view(state: dict, request, result: str):
    questions, i = state["questions"], state["i"]
    if i >= len(questions):
        done = t(request, "msg_quiz_done", right=state["right"], n=len(questions))
        return state, done, gr.update(visible=False, value=None), gr.update(visible=False, value=""), \
            gr.update(interactive=False), result
    q = questions[i]
    head = t(request, "quiz_progress", i=i + 1, n=len(questions))
    text = f"{head}\n\n### {as_text(q['prompt'])}"          # the choices: a radio's labels are text
    choice = q["mode"] == "choice"
    return state, text, gr.update(choices=q["choices"], value=None, visible=choice), \
        gr.update(value="", visible=not choice), gr.update(interactive=True), result


def answer_quiz(ctx: Context, state, picked, typed, request: gr.Request):
    try:
        if not state or state["i"] >= len(state["questions"]):
            return state, gr.update(), gr.update(), gr.update(), gr.update(interactive=False), ""
        question = QuizQuestion(**state["questions"][state["i"]])
        graded = ctx.assistant_for(request).study.answer(question, picked if question.mode == "choice" else typed)
        state = {**state, "i": state["i"] + 1, "right": state["right"] + int(graded.correct)}
        verdict = t(request, "msg_quiz_right" if graded.correct else "msg_quiz_wrong", answer=as_text(graded.expected))
        return _quiz_view(state, request, verdict)
    except Exception as exc:  # noqa: BLE001
        return state, gr.update(), gr.update(), gr.update(), gr.update(), failure(request, exc)


def pick_card(ctx: Context, card_id, request: gr.Request):
    try:
        if not card_id:
            return "", ""
        card = ctx.assistant_for(request).study.card(card_id)
        return card.front, card.back
    except Exception as exc:  # noqa: BLE001
        gr.Warning(failure(request, exc))
        return gr.update(), gr.update()


def save_card(ui: ReviewTab, card_id, front, back, request: gr.Request):
    try:
        if not card_id:
            return [t(request, "msg_cards_pick")] + [gr.update()] * 11
        ui.ctx.assistant_for(request).study.edit_card(card_id, front, back)
        return [t(request, "msg_card_saved")] + next_card(ui, request) + deck_view(ui, request)
    except Exception as exc:  # noqa: BLE001
        return [failure(request, exc)] + [gr.update()] * 11


def delete_card(ui: ReviewTab, card_id, request: gr.Request):
    try:
        if not card_id:
            return [t(request, "msg_cards_pick")] + [gr.update()] * 11
        ui.ctx.assistant_for(request).study.delete_cards([card_id])
        return [t(request, "msg_card_deleted")] + next_card(ui, request) + deck_view(ui, request)
    except Exception as exc:  # noqa: BLE001
        return [failure(request, exc)] + [gr.update()] * 11


def export_deck(ctx: Context, fmt, doc_id, request: gr.Request):
    try:
        a = ctx.assistant_for(request)
        folder = served.report_path(ctx.settings, a.user_id, request.session_hash,
                                    time.strftime("%Y%m%d-%H%M%S"), kind="decks")
        path = a.study.export(folder, fmt, doc_id=doc_id or None)
        return str(path), t(request, "msg_deck_exported", n=len(a.study.cards(doc_id or None)))
    except Exception as exc:  # noqa: BLE001
        return None, failure(request, exc)


def import_deck(ui: ReviewTab, upload, request: gr.Request):
    settings = ui.ctx.settings
    path = getattr(upload, "name", upload)
    try:
        a = ui.ctx.assistant_for(request)
        local = served.check_upload(settings, a.user_id, path)     # never another person's upload
        try:
            made = a.study.import_file(local)
        finally:
            served.discard_upload(settings, a.user_id, local)
        return [import_message(request, made)] + next_card(ui, request) + deck_view(ui, request)
    except Exception as exc:  # noqa: BLE001
        return [failure(request, exc)] + [gr.update()] * 11


SHOWN_LINES = 5      # a refusal names at most this many of its lines


def import_message(request, result: ImportResult) -> str:
    """What an import did, every row accounted for: added (and the deck's size now), skipped as already in
    the deck or as a repeat of an earlier row, refused and why (with the lines) — in the person's language."""
    parts = [t(request, "msg_import_added", n=len(result.cards), total=result.total)]
    if result.in_deck:
        parts.append(t(request, "msg_import_in_deck", n=result.in_deck))
    if result.repeated:
        parts.append(t(request, "msg_import_repeated", n=result.repeated))
    if result.refused:
        reasons = []
        for reason in (NO_FRONT, NO_BACK, TOO_LONG):
            lines = [line for line, why in result.refused if why == reason]
            if lines:
                named = t(request, "import_lines_sep").join(str(n) for n in lines[:SHOWN_LINES])
                named += " …" if len(lines) > SHOWN_LINES else ""
                where = t(request, "import_line" if len(lines) == 1 else "import_lines", lines=named)
                reasons.append(t(request, f"import_refused_{reason}", n=len(lines), lines=where, limit=MAX_SIDE_CHARS))
        parts.append(t(request, "msg_import_refused", n=len(result.refused),
                       reasons=t(request, "import_reasons_sep").join(reasons)))
    return " ".join(parts)

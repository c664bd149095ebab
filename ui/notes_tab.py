"""The Notes tab: write a note (with a concept), see the notes and the concept graph."""
from __future__ import annotations

import gradio as gr

from assistant.views import graph_svg
from ui.common import Context, _, bind, cols, failure, short, t, when


def build(ctx: Context, tab: gr.Tab, session: gr.State) -> None:
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
    with gr.Accordion(_("note_edit_title"), open=False, elem_id="note-edit"):
        with gr.Row():
            pick = gr.Dropdown(label=_("note_pick"), choices=[], elem_id="note-pick", scale=2)
            edit_text = gr.Textbox(label=_("note_text"), lines=3, elem_id="note-edit-text", scale=3)
        with gr.Row():
            edit_save = gr.Button(_("note_edit_save"), elem_id="note-edit-save")
            edit_delete = gr.Button(_("note_delete"), variant="stop", elem_id="note-delete")

    tab.select(bind(refresh_notes, ctx), None, [concept, notes_table, graph, pick])
    note_save.click(bind(save_note, ctx), [concept, note_text, session],
                    [note_status, note_text, notes_table, graph, concept, pick])
    pick.change(bind(pick_note, ctx), [pick], [edit_text])
    edit_save.click(bind(change_note, ctx), [pick, edit_text, gr.State("edit")],
                    [note_status, notes_table, graph, pick])
    edit_delete.click(bind(change_note, ctx), [pick, edit_text, gr.State("delete")],
                      [note_status, notes_table, graph, pick])


def notes_view(ctx: Context, request):
    """The notes table (a note made from a passage says where it is from), the concept graph (the person's
    own concepts marked) and the notes to pick for editing."""
    import pandas as pd
    a = ctx.assistant_for(request)
    notes = a.list_notes()
    names = {d.doc_id: d.name for d in a.list_documents()}

    def source(n) -> str:
        doc = names.get(n.metadata.get("doc_id"), "")
        return f"{doc}, p. {n.metadata['page']}" if doc and n.metadata.get("page") else doc

    table = pd.DataFrame([[when(n.timestamp), n.metadata.get("concept", ""), short(n.content, 300), source(n)]
                          for n in notes], columns=cols(request, "when", "concept", "note", "source"))
    own = {str(n.metadata.get("concept", "")).strip().lower() for n in notes}
    svg = graph_svg(a.concept_graph(), own_concepts=own, empty_text=t(request, "msg_no_concepts"))
    picks = gr.update(choices=[(short(n.content, 80), n.id) for n in notes], value=None)
    return table, svg, picks


# -- handlers ------------------------------------------------------------------------------------------------

def refresh_notes(ctx: Context, request: gr.Request):
    try:
        a = ctx.assistant_for(request)
        table, svg, picks = notes_view(ctx, request)
        return gr.update(choices=a.suggest_concepts()), table, svg, picks
    except Exception as exc:  # noqa: BLE001
        gr.Warning(failure(request, exc))
        return gr.update(), gr.update(), gr.update(), gr.update()


def save_note(ctx: Context, concept, text, session, request: gr.Request):
    try:
        a = ctx.assistant_for(request)
        note = a.add_note(text, concept, session_id=session)
        table, svg, picks = notes_view(ctx, request)
        label = f" ({note.concept})" if note.concept else ""
        saved = "msg_note_saved_graph_away" if note.notice else "msg_note_saved"   # concepts wait for the server
        return t(request, saved, concept=label), "", table, svg, gr.update(choices=a.suggest_concepts()), picks
    except Exception as exc:  # noqa: BLE001
        message = failure(request, exc)
        gr.Warning(message)
        return message, gr.update(), gr.update(), gr.update(), gr.update(), gr.update()


def pick_note(ctx: Context, note_id, request: gr.Request):
    try:
        note = next((n for n in ctx.assistant_for(request).list_notes() if n.id == note_id), None)
        return note.content if note else ""
    except Exception as exc:  # noqa: BLE001
        gr.Warning(failure(request, exc))
        return gr.update()


def change_note(ctx: Context, note_id, text, action, request: gr.Request):
    """Save the picked note's new text, or delete it."""
    try:
        if not note_id:
            return t(request, "msg_note_pick"), gr.update(), gr.update(), gr.update()
        a = ctx.assistant_for(request)
        if action == "delete":
            a.delete_note(note_id)
        else:
            a.edit_note(note_id, text)
        table, svg, picks = notes_view(ctx, request)
        return t(request, "msg_note_deleted" if action == "delete" else "msg_note_changed"), table, svg, picks
    except Exception as exc:  # noqa: BLE001
        return failure(request, exc), gr.update(), gr.update(), gr.update()

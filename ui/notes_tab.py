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

    tab.select(bind(refresh_notes, ctx), None, [concept, notes_table, graph])
    note_save.click(bind(save_note, ctx), [concept, note_text, session],
                    [note_status, note_text, notes_table, graph, concept])


def notes_view(ctx: Context, request):
    """The notes table and the concept graph (the person's own concepts marked)."""
    import pandas as pd
    a = ctx.assistant_for(request)
    notes = a.list_notes()
    table = pd.DataFrame([[when(n.timestamp), n.metadata.get("concept", ""), short(n.content, 300)] for n in notes],
                         columns=cols(request, "when", "concept", "note"))
    own = {str(n.metadata.get("concept", "")).strip().lower() for n in notes}
    svg = graph_svg(a.concept_graph(), own_concepts=own, empty_text=t(request, "msg_no_concepts"))
    return table, svg


# -- handlers ------------------------------------------------------------------------------------------------

def refresh_notes(ctx: Context, request: gr.Request):
    try:
        a = ctx.assistant_for(request)
        table, svg = notes_view(ctx, request)
        return gr.update(choices=a.suggest_concepts()), table, svg
    except Exception as exc:  # noqa: BLE001
        gr.Warning(failure(request, exc))
        return gr.update(), gr.update(), gr.update()


def save_note(ctx: Context, concept, text, session, request: gr.Request):
    try:
        a = ctx.assistant_for(request)
        note = a.add_note(text, concept, session_id=session)
        table, svg = notes_view(ctx, request)
        label = f" ({note.concept})" if note.concept else ""
        saved = "msg_note_saved_graph_away" if note.notice else "msg_note_saved"   # concepts wait for the server
        return t(request, saved, concept=label), "", table, svg, gr.update(choices=a.suggest_concepts())
    except Exception as exc:  # noqa: BLE001
        message = failure(request, exc)
        gr.Warning(message)
        return message, gr.update(), gr.update(), gr.update(), gr.update()

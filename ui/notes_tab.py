"""The Notes tab: write a note (with a concept), see the notes and the concept graph; pick a concept (or
click it in the graph: static/concepts.js) to see its notes, study cards and the pages that mention it."""
from __future__ import annotations

import gradio as gr

from assistant.concepts import ConceptDetails, own_concept_keys
from assistant.views import graph_svg
from rag.types import Citation
from ui.common import Context, _, as_text, bind, cols, failure, pages_ref, saved_page, short, t, when

# The clicked node's key (static/concepts.js puts it in window.__conceptPick), else the picker's value.
CLICKED_JS = "(picked) => [window.__conceptPick || picked]"


def build(ctx: Context, tab: gr.Tab, session: gr.State) -> None:
    with gr.Row():
        with gr.Column(scale=2):
            concept = gr.Dropdown(label=_("note_concept"), info=_("note_concept_info"), choices=[],
                                  allow_custom_value=True, elem_id="concept")
            note_text = gr.Textbox(label=_("note_text"), placeholder=_("note_ph"), lines=4,
                                   elem_id="note-text")
            note_save = gr.Button(_("note_save"), variant="primary", elem_id="note-save")
            note_status = gr.Markdown(elem_id="note-status")
            # beside the map, not under it: a map of 30 concepts is ~750 px tall, and what a click on a
            # concept lists must show where the person is looking
            concept_pick = gr.Dropdown(label=_("concept_pick"), info=_("concept_pick_info"), choices=[],
                                       elem_id="concept-pick")
            concept_open = gr.Button("open concept", visible="hidden", elem_id="concept-open")
            concept_info = gr.Markdown(elem_id="concept-details")
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
        # a note made from a passage opens at its page, the passage highlighted
        note_page = gr.Image(visible=False, type="filepath", interactive=False, elem_id="note-page", height=480)

    tab.select(bind(refresh_notes, ctx), None, [concept, notes_table, graph, pick, concept_pick])
    note_save.click(bind(save_note, ctx), [concept, note_text, session],
                    [note_status, note_text, notes_table, graph, concept, pick, concept_pick])
    pick.change(bind(pick_note, ctx), [pick], [edit_text, note_page])
    edit_save.click(bind(change_note, ctx), [pick, edit_text, gr.State("edit")],
                    [note_status, notes_table, graph, pick, concept_pick])
    edit_delete.click(bind(change_note, ctx), [pick, edit_text, gr.State("delete")],
                      [note_status, notes_table, graph, pick, concept_pick])
    concept_pick.input(bind(show_concept, ctx), [concept_pick], [concept_pick, concept_info])
    concept_open.click(bind(show_concept, ctx), [concept_pick], [concept_pick, concept_info], js=CLICKED_JS)


def notes_view(ctx: Context, request):
    """The notes table (a note made from a passage says where it is from), the concept graph (the person's
    own concepts marked), the notes to pick for editing and the graph's concepts to pick."""
    import pandas as pd
    a = ctx.assistant_for(request)
    notes = a.list_notes()
    names = {d.doc_id: d.name for d in a.list_documents()}

    def source(n) -> str:
        doc = names.get(n.metadata.get("doc_id"), "")
        return f"{doc}, {pages_ref(request, n.metadata['page'])}" if doc and n.metadata.get("page") else doc

    table = pd.DataFrame([[when(n.timestamp), n.metadata.get("concept", ""), short(n.content, 300), source(n)]
                          for n in notes], columns=cols(request, "when", "concept", "note", "source"))
    view = a.concept_graph()
    empty = failure(request, view.unreadable) if view.unreadable else t(request, "msg_no_concepts")
    svg = graph_svg(view, own_concepts=own_concept_keys(notes), empty_text=empty)
    picks = gr.update(choices=[(short(n.content, 80), n.id) for n in notes], value=None)
    concepts = gr.update(choices=sorted(((n["name"], n["key"]) for n in view.nodes), key=lambda c: c[0].lower()))
    return table, svg, picks, concepts


def details_markdown(request, details: ConceptDetails) -> str:
    """One concept's notes, cards and pages as Markdown (what the person wrote is shown as text)."""
    nothing = f"- {t(request, 'concept_nothing')}"
    lines = [f"#### {as_text(details.name, 80)}", ""]
    if details.aliases:
        lines += [t(request, "concept_aliases", names=", ".join(as_text(a, 40) for a in details.aliases)), ""]
    lines += [f"**{t(request, 'concept_notes', n=len(details.notes))}**", ""]
    lines += [f"- {when(n.timestamp)} · {as_text(n.content, 200)}" for n in details.notes] or [nothing]
    lines += ["", f"**{t(request, 'concept_cards', n=len(details.cards))}**", ""]   # a blank line ends a list
    lines += [f"- {t(request, 'concept_card_line', front=as_text(c.front, 120), back=as_text(c.back, 60))}"
              for c in details.cards[:20]] or [nothing]
    lines += ["", f"**{t(request, 'concept_pages', n=len(details.pages))}**", ""]
    lines += [f"- {as_text(p.doc_name, 60)}{' · ' + pages_ref(request, p.page) if p.page else ''}"
              f"{' · ' + as_text(p.heading, 60) if p.heading else ''}: “{as_text(p.snippet, 140)}”"
              for p in details.pages] or [nothing]
    return "\n".join(lines)


# -- handlers ------------------------------------------------------------------------------------------------

def refresh_notes(ctx: Context, request: gr.Request):
    try:
        a = ctx.assistant_for(request)
        table, svg, picks, concepts = notes_view(ctx, request)
        return gr.update(choices=a.suggest_concepts()), table, svg, picks, concepts
    except Exception as exc:  # noqa: BLE001
        gr.Warning(failure(request, exc))
        return gr.update(), gr.update(), gr.update(), gr.update(), gr.update()


def save_note(ctx: Context, concept, text, session, request: gr.Request):
    try:
        a = ctx.assistant_for(request)
        note = a.add_note(text, concept, session_id=session)
        table, svg, picks, concepts = notes_view(ctx, request)
        label = f" ({as_text(note.concept)})" if note.concept else ""      # the concept's words, as text
        saved = "msg_note_saved_graph_away" if note.notice else "msg_note_saved"   # concepts wait for the server
        return (t(request, saved, concept=label), "", table, svg, gr.update(choices=a.suggest_concepts()), picks,
                concepts)
    except Exception as exc:  # noqa: BLE001
        message = failure(request, exc)
        gr.Warning(message)
        return message, gr.update(), gr.update(), gr.update(), gr.update(), gr.update(), gr.update()


def pick_note(ctx: Context, note_id, request: gr.Request):
    """The picked note's text to edit, and — for a note made from a passage of a PDF — its page."""
    try:
        a = ctx.assistant_for(request)
        note = next((n for n in a.list_notes() if n.id == note_id), None)
        if note is None:
            return "", gr.update(value=None, visible=False)
        return note.content, note_page(ctx, request, note)
    except Exception as exc:  # noqa: BLE001
        gr.Warning(failure(request, exc))
        return gr.update(), gr.update(value=None, visible=False)


def note_page(ctx: Context, request, note):
    """The page a note was made from, its passage highlighted; hidden for a note without one."""
    meta, hidden = note.metadata, gr.update(value=None, visible=False)
    if not meta.get("doc_id") or not meta.get("page"):
        return hidden
    a = ctx.assistant_for(request)
    doc = next((d for d in a.list_documents() if d.doc_id == meta["doc_id"]), None)
    if doc is None:                     # the document was deleted since; the note stays
        return hidden
    citation = Citation(n=1, doc_id=doc.doc_id, doc_name=doc.name, page_start=int(meta["page"]),
                        page_end=int(meta["page"]), chunk_id="", score=0.0, quote=meta.get("quote") or note.content)
    shown = a.render_source(citation)
    if not hasattr(shown, "image"):
        return hidden
    path, caption = saved_page(ctx, request, citation, shown)
    return gr.update(value=path, label=caption, visible=True)


def change_note(ctx: Context, note_id, text, action, request: gr.Request):
    """Save the picked note's new text, or delete it."""
    try:
        if not note_id:
            return t(request, "msg_note_pick"), gr.update(), gr.update(), gr.update(), gr.update()
        a = ctx.assistant_for(request)
        if action == "delete":
            a.delete_note(note_id)
        else:
            a.edit_note(note_id, text)
        table, svg, picks, concepts = notes_view(ctx, request)
        return (t(request, "msg_note_deleted" if action == "delete" else "msg_note_changed"), table, svg, picks,
                concepts)
    except Exception as exc:  # noqa: BLE001
        return failure(request, exc), gr.update(), gr.update(), gr.update(), gr.update()


def show_concept(ctx: Context, key, request: gr.Request):
    """The picked (or clicked) concept selected in the picker, and its notes, cards and pages."""
    try:
        if not key:
            return gr.update(), ""
        details = ctx.assistant_for(request).concept_details(key)
        return gr.update(value=details.key), details_markdown(request, details)
    except Exception as exc:  # noqa: BLE001
        return gr.update(), failure(request, exc)

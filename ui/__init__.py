"""The tabs of the Gradio UI, one module each; app.py puts them in one page and launches it.

    common.py         what every tab uses: the UI text (`_` for labels, `t` for handlers' messages),
                      small formatters, and `Context` (settings; a request's person and assistant)
    documents_tab.py  upload, list and delete documents
    qa_tab.py         questions and answers, with the source viewer beside them
    notes_tab.py      notes and the concept graph
    recall_tab.py     search the learning history; the consolidate / forget panel
    review_tab.py     cards: make, review (FSRS), quiz, edit, export and import
    reports_tab.py    the learning report, its charts and its download

A tab module has one `build(ctx, tab, ...)`: called inside the tab's `with gr.Tab(...)`, it makes the tab's
components, wires their events and returns what another tab or app.py needs (or nothing). Its handlers are
module-level functions whose first argument is `ctx` (or the tab's components with `.ctx`), given to an
event by `bind(handler, ctx)`: so each handler can be read, and called in a test, on its own.

A new tab: a module like notes_tab.py, its text keys in static/i18n.json (English and Chinese), and in
app.build_app a `with gr.Tab(_("tab_<name>"), id=..., elem_id="tab-<name>") as tab:` calling its build.
"""

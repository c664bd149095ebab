"""The Recall tab: search the learning history by words, memory type and dates; under it, the maintenance
panel that previews and runs consolidation (promote memories) and forgetting (it shares the type filter)."""
from __future__ import annotations

from datetime import datetime, time as dtime, timedelta

import gradio as gr

from assistant.types import RecallFilters
from ui.common import Context, _, bind, cols, failure, short, stored, stored_text, t, when

MEMORY_TYPES = ["working", "episodic", "semantic", "perceptual"]
FORGET_STRATEGIES = ["importance_based", "time_based", "capacity_based"]
# Shown in the person's language, passed on as the stored English value.
TYPE_CHOICES = [(_(f"mem_type_{name}"), name) for name in MEMORY_TYPES]
STRATEGY_CHOICES = [(_(f"forget_rule_{name}"), name) for name in FORGET_STRATEGIES]


def build(ctx: Context, tab: gr.Tab) -> None:
    with gr.Row():
        recall_query = gr.Textbox(label=_("recall_query"), placeholder=_("recall_ph"), scale=4,
                                  elem_id="recall-query")
        recall_btn = gr.Button(_("recall_search"), variant="primary", scale=1, elem_id="recall-search")
    with gr.Row():
        recall_types = gr.CheckboxGroup(TYPE_CHOICES, value=MEMORY_TYPES, label=_("recall_types"),
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
            forget_strategy = gr.Dropdown(STRATEGY_CHOICES, value="importance_based",
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

    recall_inputs = [recall_query, recall_types, recall_from, recall_to]
    search = bind(recall, ctx)
    # "always_last": a search asked for while one runs (new words, a changed filter) runs after it; Gradio's
    # default for clicks drops it, and the person kept seeing results of filters they had already changed
    recall_outputs = [recall_results, recall_status]
    for event in (recall_btn.click, recall_query.submit, recall_types.input, recall_from.change, recall_to.change,
                  tab.select):
        event(search, recall_inputs, recall_outputs, trigger_mode="always_last")
    consolidate_prev_btn.click(bind(consolidate_preview, ctx), None, [maintenance_preview, maintenance_status])
    consolidate_btn.click(bind(consolidate_run, ctx), None, [maintenance_preview, maintenance_status])
    forget_inputs = [forget_strategy, forget_threshold, forget_age, forget_capacity, recall_types]
    forget_prev_btn.click(bind(forget_preview, ctx), forget_inputs, [maintenance_preview, maintenance_status])
    forget_btn.click(bind(forget_run, ctx), forget_inputs, [maintenance_preview, maintenance_status])


def memories_frame(request, refs, extra=None):
    """Memories as a table; `extra`, one value a row, fills a last column (a promotion's target)."""
    import pandas as pd
    rows = []
    for i, r in enumerate(refs):
        row = [stored(request, "mem_type", r.memory_type), stored(request, "mem_kind", r.kind), when(r.timestamp),
               f"{r.importance:.2f}", "" if r.score is None else f"{r.score:.3f}",
               short(stored_text(request, r.content), 220)]
        if extra is not None:
            row.append(stored(request, "mem_type", extra[i]))
        rows.append(row)
    names = cols(request, "type", "kind", "when", "importance", "score", "content")
    if extra is not None:
        names.append(t(request, "col_target"))
    return pd.DataFrame(rows, columns=names)


def day(value, end: bool):
    """A picked date as the start (or, with `end`, the last moment) of that day, in local time."""
    if value in (None, ""):
        return None
    moment = value if isinstance(value, datetime) else (
        datetime.fromtimestamp(value) if isinstance(value, (int, float)) else datetime.fromisoformat(str(value)[:10]))
    start = datetime.combine(moment.date(), dtime.min).astimezone()
    return start + timedelta(days=1) - timedelta(microseconds=1) if end else start


def forget_args(strategy, threshold, age, capacity, types):
    return dict(strategy=strategy, threshold=float(threshold), max_age_days=float(age or 0),
                capacity=int(capacity) if capacity not in (None, "") else None, memory_types=list(types) or None)


# -- handlers ------------------------------------------------------------------------------------------------

def recall(ctx: Context, query, types, since, until, request: gr.Request):
    try:
        filters = RecallFilters(memory_types=list(types) or None, since=day(since, False), until=day(until, True),
                                limit=50)
        refs = ctx.assistant_for(request).recall(query or "", filters)
        return memories_frame(request, refs), t(request, "msg_recall_count", n=len(refs))
    except Exception as exc:  # noqa: BLE001
        message = failure(request, exc)
        gr.Warning(message)
        return gr.update(), message


def consolidate_preview(ctx: Context, request: gr.Request):
    try:
        preview = ctx.assistant_for(request).preview_consolidate()
        refs = [r for r, _ in preview.promotions]
        return (memories_frame(request, refs, [target for _, target in preview.promotions]),
                t(request, "msg_consolidate_preview", n=len(refs)))
    except Exception as exc:  # noqa: BLE001
        return gr.update(), failure(request, exc)


def consolidate_run(ctx: Context, request: gr.Request):
    try:
        n = ctx.assistant_for(request).consolidate()
        return memories_frame(request, []), t(request, "msg_consolidated", n=n)
    except Exception as exc:  # noqa: BLE001
        return gr.update(), failure(request, exc)


def forget_preview(ctx: Context, strategy, threshold, age, capacity, types, request: gr.Request):
    try:
        preview = ctx.assistant_for(request).preview_forget(**forget_args(strategy, threshold, age, capacity, types))
        return memories_frame(request, preview.memories), t(request, "msg_forget_preview", n=len(preview.memories))
    except Exception as exc:  # noqa: BLE001
        return gr.update(), failure(request, exc)


def forget_run(ctx: Context, strategy, threshold, age, capacity, types, request: gr.Request):
    try:
        n = ctx.assistant_for(request).forget(**forget_args(strategy, threshold, age, capacity, types))
        return memories_frame(request, []), t(request, "msg_forgotten", n=n)
    except Exception as exc:  # noqa: BLE001
        return gr.update(), failure(request, exc)

"""The Reports tab: the learning report's figures and charts, and the report as a JSON download."""
from __future__ import annotations

import time

import gradio as gr

from assistant import files as served
from assistant.views import report_frames
from ui.common import Context, _, bind, failure, stored, t

# Every plot: its frame (assistant.views.report_frames), x, y and colour columns, the keys of their axis
# titles, and the key prefix (ui.common.stored) that names the colour column's values.
PLOTS = {
    "activity": ("date", "count", "kind", ("axis_date", "axis_count", "axis_activity"), "series"),
    "questions_per_document": ("document", "questions", None, ("axis_document", "axis_questions", None), None),
    "concepts": ("concept", "memories", None, ("axis_concept", "axis_memories", None), None),
    "memory_by_type": ("type", "count", None, ("axis_memory_type", "axis_count", None), None),
    "mastery": ("concept", "recall %", "level", ("axis_concept", "axis_recall", "axis_level"), "mastery"),
    "coverage": ("chapter", "pages", "kind", ("axis_chapter", "axis_pages", "axis_coverage"), "coverage"),
}
LABEL_CHARS = 22          # a name under a bar (a file, a chapter, a concept) longer than this is shortened
COUNT_TOP = 10            # the count axes reach at least this far, so that every tick is a whole number


def build(ctx: Context, tab: gr.Tab) -> None:
    with gr.Row():
        report_btn = gr.Button(_("report_refresh"), elem_id="report-refresh")
        download = gr.DownloadButton(_("report_download"), value=None, interactive=False,
                                     elem_id="report-download", variant="primary")
    report_status = gr.Markdown(elem_id="report-status")
    metrics = gr.Markdown(elem_id="report-metrics")
    with gr.Row():
        plot_activity = gr.BarPlot(x="date", y="count", color="kind", label=_("plot_activity"), elem_id="plot-activity")
        plot_questions = gr.BarPlot(x="document", y="questions", label=_("plot_questions"), elem_id="plot-questions")
    with gr.Row():
        plot_concepts = gr.BarPlot(x="concept", y="memories", label=_("plot_concepts"), elem_id="plot-concepts")
        plot_memory = gr.BarPlot(x="type", y="count", label=_("plot_memory"), elem_id="plot-memory")
    with gr.Row():
        plot_mastery = gr.BarPlot(x="concept", y="recall %", color="level", label=_("plot_mastery"),
                                  elem_id="plot-mastery")
        plot_coverage = gr.BarPlot(x="chapter", y="pages", color="kind", label=_("plot_coverage"),
                                   elem_id="plot-coverage")

    report_outputs = [metrics, plot_activity, plot_questions, plot_concepts, plot_memory, plot_mastery, plot_coverage,
                      download, report_status]
    refresh = bind(refresh_report, ctx)
    report_btn.click(refresh, None, report_outputs)
    tab.select(refresh, None, report_outputs)


# -- handlers ------------------------------------------------------------------------------------------------

def refresh_report(ctx: Context, request: gr.Request):
    from assistant.report import validate_report, write_report
    try:
        a = ctx.assistant_for(request)
        report = a.generate_report()
        validate_report(report)
        # In the person's own folder, one per tab: the tab's earlier report is removed.
        stamp = time.strftime("%Y%m%d-%H%M%S")
        safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in a.user_id)[:40]
        path = write_report(report, served.report_path(ctx.settings, a.user_id, request.session_hash,
                                                       f"learning-report-{safe}-{stamp}.json"))
        s = report["summary"]
        metrics = " · ".join(f"**{t(request, 'metric_' + key)}** {s[field]}" for key, field in (
            ("documents", "documents"), ("pages", "pages"), ("questions", "questions"), ("notes", "notes"),
            ("concepts", "concepts"), ("memories", "memories_total"), ("days", "active_days"),
            ("sessions", "sessions")))
        frames = report_frames(report)
        status = t(request, "msg_report_ready", questions=s["questions"], documents=s["documents"], notes=s["notes"])
        study = report["study"]
        metrics += " · " + t(request, "metric_study", cards=study["cards"], due=study["due_now"])
        return (metrics, *(plot_update(request, name, frames[name]) for name in PLOTS),
                gr.update(value=str(path), interactive=True), status)
    except Exception as exc:  # noqa: BLE001
        message = failure(request, exc)
        return (gr.update(),) * 8 + (message,)


# -- the plots in the person's language, counted in whole numbers ---------------------------------------------

def plot_update(request, name: str, frame):
    """One plot's data with the stored English series names, the axis titles and long names under the bars
    in the person's language, and an axis of whole numbers: Gradio's plots take a d3 format ("d") but no
    tick step, so the count axes reach at least COUNT_TOP (Vega's ~8 ticks then step by 1 or more)."""
    x, y, color, (x_title, y_title, color_title), series = PLOTS[name]
    frame = frame.copy()
    if name == "memory_by_type":
        frame[x] = frame[x].map(lambda value: stored(request, "mem_type", value))
    elif name == "coverage" and len({label.split(" · ", 1)[0] for label in frame[x]}) == 1:
        frame[x] = frame[x].map(lambda label: label.split(" · ", 1)[-1])     # one document: its chapters
    if name != "activity":
        frame[x] = frame[x].map(x_label)
    if color:
        frame[color] = frame[color].map(lambda value: stored(request, series, str(value).replace(" ", "_")))
    top = 100 if name == "mastery" else max(COUNT_TOP, int(frame.groupby(x)[y].sum().max()) if len(frame) else 0)
    return gr.update(value=frame, x_title=t(request, x_title), y_title=t(request, y_title),
                     color_title=t(request, color_title) if color_title else None, y_lim=[0, top],
                     y_axis_format="d")


def x_label(value) -> str:
    """A name under a bar, short enough to read: a long one keeps its start and its end ('Chapter 12 Ve…Files'),
    where chapter numbers and file extensions are."""
    text = " ".join(str(value).split())
    if len(text) <= LABEL_CHARS:
        return text
    head = (LABEL_CHARS - 1) * 2 // 3
    return text[:head] + "…" + text[-(LABEL_CHARS - 1 - head):]

"""The Reports tab: the learning report's figures and charts, and the report as a JSON download."""
from __future__ import annotations

import time

import gradio as gr

from assistant import files as served
from assistant.views import report_frames
from ui.common import Context, _, bind, failure, t


def build(ctx: Context, tab: gr.Tab) -> None:
    with gr.Row():
        report_btn = gr.Button(_("report_refresh"), elem_id="report-refresh")
        download = gr.DownloadButton(_("report_download"), value=None, interactive=False,
                                     elem_id="report-download", variant="primary")
    report_status = gr.Markdown(elem_id="report-status")
    metrics = gr.Markdown(elem_id="report-metrics")
    with gr.Row():
        plot_activity = gr.BarPlot(x="date", y="count", color="kind", label=_("plot_activity"), y_lim=[0, None],
                                   elem_id="plot-activity")
        plot_questions = gr.BarPlot(x="document", y="questions", label=_("plot_questions"), y_lim=[0, None],
                                    elem_id="plot-questions")
    with gr.Row():
        plot_concepts = gr.BarPlot(x="concept", y="memories", label=_("plot_concepts"), y_lim=[0, None],
                                   elem_id="plot-concepts")
        plot_memory = gr.BarPlot(x="type", y="count", label=_("plot_memory"), y_lim=[0, None], elem_id="plot-memory")
    with gr.Row():
        plot_mastery = gr.BarPlot(x="concept", y="recall %", color="level", label=_("plot_mastery"), y_lim=[0, 100],
                                  elem_id="plot-mastery")
        plot_coverage = gr.BarPlot(x="chapter", y="pages", color="kind", label=_("plot_coverage"), y_lim=[0, None],
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
        return (metrics, frames["activity"], frames["questions_per_document"], frames["concepts"],
                frames["memory_by_type"], frames["mastery"], frames["coverage"],
                gr.update(value=str(path), interactive=True), status)
    except Exception as exc:  # noqa: BLE001
        message = failure(request, exc)
        return (gr.update(),) * 8 + (message,)

"""Presentation helpers the UI shows (pure functions of the facade's data, no Gradio here): the concept
graph as SVG, the per-file upload progress table, and the report's plot data."""
from __future__ import annotations

import html
import math

import numpy as np

CONCEPT_COLOUR = "#e8710a"
ENTITY_COLOUR = "#1a73e8"


def layout(n: int, edges: list[tuple[int, int]], *, iterations: int = 150, seed: int = 7) -> np.ndarray:
    """Fruchterman-Reingold positions in [0, 1]², deterministic (same graph, same picture)."""
    if n == 0:
        return np.zeros((0, 2))
    if n == 1:
        return np.array([[0.5, 0.5]])
    rng = np.random.default_rng(seed)
    angles = np.linspace(0, 2 * math.pi, n, endpoint=False)
    pos = np.c_[np.cos(angles), np.sin(angles)] * 0.4 + 0.5 + rng.normal(0, 0.01, (n, 2))
    k = math.sqrt(1.0 / n)
    temperature = 0.1
    for _ in range(iterations):
        delta = pos[:, None, :] - pos[None, :, :]
        dist = np.maximum(np.linalg.norm(delta, axis=2), 1e-3)
        force = (delta / dist[..., None]) * (k * k / dist)[..., None]
        disp = force.sum(axis=1)
        for a, b in edges:
            d = pos[a] - pos[b]
            length = max(float(np.linalg.norm(d)), 1e-3)
            pull = d / length * (length * length / k)
            disp[a] -= pull
            disp[b] += pull
        disp += (0.5 - pos) * 0.05   # gentle gravity keeps loose nodes on the canvas
        length = np.maximum(np.linalg.norm(disp, axis=1), 1e-6)
        pos += disp / length[:, None] * np.minimum(length, temperature)[:, None]
        temperature *= 0.97
    lo, hi = pos.min(axis=0), pos.max(axis=0)
    return (pos - lo) / np.maximum(hi - lo, 1e-6)


def graph_svg(view, *, own_concepts: set[str] | None = None, width: int = 720, height: int = 420,
              empty_text: str = "No concepts yet.") -> str:
    """The person's concept graph (memory.graph.GraphView) as an inline SVG; the concepts they filed
    notes under (`own_concepts`, keys) in orange, the entities found in their notes in blue."""
    own_concepts = own_concepts or set()
    nodes = view.nodes
    if not nodes:
        return f'<div class="concept-graph-empty">{html.escape(empty_text)}</div>'
    index = {n["key"]: i for i, n in enumerate(nodes)}
    edges = [(index[e["source"]], index[e["target"]], e) for e in view.edges
             if e["source"] in index and e["target"] in index]
    pos = layout(len(nodes), [(a, b) for a, b, _ in edges])
    pad = 60
    xy = [(pad + p[0] * (width - 2 * pad), pad / 2 + p[1] * (height - pad)) for p in pos]
    parts = [f'<svg class="concept-graph" viewBox="0 0 {width} {height}" width="100%" '
             f'xmlns="http://www.w3.org/2000/svg" role="img" aria-label="concept graph">']
    for a, b, e in edges:
        (x1, y1), (x2, y2) = xy[a], xy[b]
        w = 1 + min(int(e.get("weight", 1)), 4)
        parts.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#9aa0a6" '
                     f'stroke-width="{w}"><title>{html.escape(e["type"])}</title></line>')
    for n, (x, y) in zip(nodes, xy):
        r = 6 + 3 * min(int(n.get("memories", 1)), 6)
        colour = CONCEPT_COLOUR if n["key"] in own_concepts else ENTITY_COLOUR
        name = html.escape(n["name"])
        parts.append(f'<g class="concept-node" data-key="{html.escape(n["key"])}">'
                     f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" fill="{colour}" fill-opacity="0.85">'
                     f'<title>{name} ({html.escape(n.get("label", ""))}, {n.get("memories", 0)} memories)</title></circle>'
                     f'<text x="{x:.1f}" y="{y - r - 4:.1f}" text-anchor="middle" font-size="12">{name}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def reflow_quotes(text: str) -> str:
    """Extractive answers quote PDF lines with their original line breaks ("> This\ndisagreement…");
    for display, each quote becomes one paragraph of its own. Other text is returned unchanged."""
    if not text.startswith("> "):
        return text
    quotes: list[str] = []
    for line in text.splitlines():
        if line.startswith("> ") or not quotes:
            quotes.append(line.strip())
        elif line.strip():
            quotes[-1] += " " + line.strip()
    return "\n\n".join(quotes)


def progress_table(rows: list[dict], headers: tuple[str, str, str] = ("File", "Progress", "Result")) -> str:
    """One row per uploaded file: name, a progress bar (indeterminate while working) and the outcome.
    rows: {"name", "state": queued|working|done|exists|error, "message"}."""
    if not rows:
        return ""
    out = [f'<table class="upload-progress"><thead><tr><th>{html.escape(headers[0])}</th>'
           f'<th>{html.escape(headers[1])}</th><th>{html.escape(headers[2])}</th></tr></thead><tbody>']
    for r in rows:
        state = r["state"]
        bar = '<progress max="100"></progress>' if state == "working" else \
            f'<progress max="100" value="{0 if state == "queued" else 100}"></progress>'
        out.append(f'<tr class="file-{state}" data-state="{state}"><td>{html.escape(r["name"])}</td><td>{bar}</td>'
                   f'<td>{html.escape(r.get("message", ""))}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


def report_frames(report: dict) -> dict:
    """pandas DataFrames for the Reports tab's plots, from a report dict."""
    import pandas as pd
    activity = []
    for day in report["activity"]:
        for kind in ("documents", "questions", "notes"):
            activity.append({"date": day["date"], "kind": kind, "count": day[kind]})
    per_doc = [{"document": d["name"], "questions": d["questions"]} for d in report["documents"]]
    concepts = sorted(report["concepts"]["nodes"], key=lambda n: -n["memories"])[:15]
    memory = [{"type": t, "count": n} for t, n in report["memory"]["counts"].items()]
    return {
        "activity": pd.DataFrame(activity, columns=["date", "kind", "count"]),
        "questions_per_document": pd.DataFrame(per_doc, columns=["document", "questions"]),
        "concepts": pd.DataFrame([{"concept": n["name"], "memories": n["memories"]} for n in concepts],
                                 columns=["concept", "memories"]),
        "memory_by_type": pd.DataFrame(memory, columns=["type", "count"]),
    }

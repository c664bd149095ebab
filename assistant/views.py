"""Presentation helpers the UI shows (pure functions of the facade's data, no Gradio here): the concept
graph as SVG, the per-file upload progress table, the cited section of a document without pages, and
the report's plot data."""
from __future__ import annotations

import html
import math
import re
import unicodedata

from rag.types import CITATION_MARK

CONCEPT_COLOUR = "#e8710a"
ENTITY_COLOUR = "#1a73e8"


FONT_PX = 12
LABEL_H = FONT_PX + 3
MAX_LABEL_UNITS = 14           # a longer name is shortened with "…" (its full name is in the node's <title>)
EDGE_PX = 90                   # the mean edge length a connected group is drawn at
MARGIN = 12


def _char_units(ch: str) -> float:
    """A character's width in font sizes: CJK and full-width ones are square, Latin ones about 0.6."""
    return 1.0 if unicodedata.east_asian_width(ch) in ("W", "F") else 0.62


def label_text(name: str) -> str:
    out, units = "", 0.0
    for ch in name:
        units += _char_units(ch)
        if units > MAX_LABEL_UNITS:
            return out.rstrip() + "…"
        out += ch
    return out


def label_width(text: str) -> float:
    return sum(_char_units(ch) for ch in text) * FONT_PX + 4


def node_radius(memories: int) -> float:
    return 6 + 2.5 * min(max(int(memories), 1), 6)


def _component_positions(graph, nodes: list[int]) -> dict[int, tuple[float, float]]:
    """One connected group laid out by Kamada-Kawai (networkx; deterministic: it starts from a circle),
    scaled so its mean edge is EDGE_PX long, its top-left corner at (0, 0)."""
    import networkx as nx
    sub = graph.subgraph(nodes)
    if len(nodes) == 2:
        raw = {nodes[0]: (0.0, 0.0), nodes[1]: (1.0, 0.0)}
    else:
        raw = {k: (float(v[0]), float(v[1])) for k, v in nx.kamada_kawai_layout(sub).items()}
    lengths = [math.dist(raw[a], raw[b]) for a, b in sub.edges()]
    scale = EDGE_PX / max(sum(lengths) / len(lengths), 1e-6)
    x0, y0 = min(p[0] for p in raw.values()), min(p[1] for p in raw.values())
    return {k: ((x - x0) * scale, (y - y0) * scale) for k, (x, y) in raw.items()}


def _overlap(a: tuple, b: tuple) -> float:
    """The area two boxes (x0, y0, x1, y1) share."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


def _label_box(x: float, y: float, r: float, width: float, where: str) -> tuple:
    """The label's box beside a node of radius r at (x, y): below, above, right or left of it, or diagonal."""
    gap = 3
    dx = {"right": r + gap + width / 2, "left": -(r + gap + width / 2)}.get(where.split("-")[-1], 0.0)
    dy = {"below": r + gap + LABEL_H / 2, "above": -(r + gap + LABEL_H / 2)}.get(where.split("-")[0], 0.0)
    if "-" in where:            # diagonal: beside the circle's corner, not its side
        dx, dy = dx * 0.75, dy
    cx, cy = x + dx, y + dy
    return (cx - width / 2, cy - LABEL_H / 2, cx + width / 2, cy + LABEL_H / 2)


_PLACES = ("below", "above", "right", "left", "below-right", "below-left", "above-right", "above-left")


def _place_labels(xy: list[tuple[float, float]], radii: list[float], widths: list[float],
                  order: list[int]) -> tuple[list[tuple], float]:
    """Each label at the first place (below, above, right, left, diagonals) that covers no other label
    and no node; the busiest nodes choose first. Returns the boxes and the area still overlapping."""
    circles = [(x - r, y - r, x + r, y + r) for (x, y), r in zip(xy, radii)]
    boxes: list[tuple | None] = [None] * len(xy)
    left = 0.0
    for i in order:
        best, best_cost = None, math.inf
        for where in _PLACES:
            box = _label_box(*xy[i], radii[i], widths[i], where)
            labels = sum(_overlap(box, b) for b in boxes if b is not None)
            cost = labels + sum(_overlap(box, c) for j, c in enumerate(circles) if j != i) * 0.5
            if cost < best_cost:
                best, best_cost, best_labels = box, cost, labels
            if cost == 0:
                break
        boxes[i] = best
        left += best_labels
    return boxes, left


def concept_map_layout(n: int, edges: list[tuple[int, int]], labels: list[str], memories: list[int], *,
                       width: int = 560) -> tuple[list[tuple[float, float]], list[tuple], int, int]:
    """Where to draw a concept map: (node centres, label boxes, canvas width, canvas height).

    Each connected group is laid out on its own (Kamada-Kawai) and the groups are packed in rows, largest
    first; concepts with no link share a grid below. Labels go where they cover no other label or node; if
    some still collide, the groups are drawn looser and packed again. The canvas is `width` wide (wider only
    for a group that needs it) and as tall as the map needs. Same graph, same picture."""
    import networkx as nx
    if n == 0:
        return [], [], width, 60
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from((a, b) for a, b in edges if a != b)
    radii = [node_radius(m) for m in memories]
    widths = [label_width(t) for t in labels]
    groups = sorted((sorted(c) for c in nx.connected_components(graph)), key=lambda c: (-len(c), labels[c[0]]))
    linked = [g for g in groups if len(g) > 1]
    alone = sorted((g[0] for g in groups if len(g) == 1), key=lambda i: (-memories[i], labels[i]))
    shapes = [_component_positions(graph, g) for g in linked]
    order = sorted(range(n), key=lambda i: (-memories[i], labels[i]))
    for spread in (1.0, 1.3, 1.7, 2.2, 2.9, 3.8):
        xy = _pack(shapes, alone, radii, widths, spread, width)
        boxes, overlapping = _place_labels(xy, radii, widths, order)
        if overlapping == 0:
            break
    return _fit(xy, radii, boxes, width)


def _pack(shapes: list[dict], alone: list[int], radii: list[float], widths: list[float], spread: float,
          width: int) -> list[tuple[float, float]]:
    """Node centres: the linked groups (each scaled by `spread`) packed in rows, then the unlinked concepts
    in a grid whose columns fit the longest of their labels."""
    xy: dict[int, tuple[float, float]] = {}
    x = y = row_h = 0.0
    for shape in shapes:
        pad = max(widths[i] for i in shape) / 2 + max(radii[i] for i in shape)
        tall = max(p[1] for p in shape.values()) * spread
        w = max(p[0] for p in shape.values()) * spread + 2 * pad
        h = tall + 2 * (LABEL_H + max(radii[i] for i in shape)) + 8
        if x > 0 and x + w > width:
            x, y, row_h = 0.0, y + row_h, 0.0
        for i, (px, py) in shape.items():
            xy[i] = (x + pad + px * spread, y + h / 2 - tall / 2 + py * spread)
        x, row_h = x + w, max(row_h, h)
    y += row_h
    if alone:
        cell_w = max(widths[i] for i in alone) + 16
        cell_h = 2 * max(radii[i] for i in alone) + LABEL_H + 14
        columns = max(1, int(width // cell_w))
        for k, i in enumerate(alone):
            row, col = divmod(k, columns)
            xy[i] = (col * cell_w + cell_w / 2, y + row * cell_h + cell_h / 2 - LABEL_H / 2)
    return [xy[i] for i in range(len(radii))]


def _fit(xy, radii, boxes, width) -> tuple[list[tuple[float, float]], list[tuple], int, int]:
    """Everything moved MARGIN inside a canvas that holds every node and label."""
    x0 = min(min(x - r for (x, _), r in zip(xy, radii)), min(b[0] for b in boxes)) - MARGIN
    y0 = min(min(y - r for (_, y), r in zip(xy, radii)), min(b[1] for b in boxes)) - MARGIN
    x1 = max(max(x + r for (x, _), r in zip(xy, radii)), max(b[2] for b in boxes)) + MARGIN
    y1 = max(max(y + r for (_, y), r in zip(xy, radii)), max(b[3] for b in boxes)) + MARGIN
    dx = -x0 + max(0.0, (width - (x1 - x0)) / 2)      # a narrow map sits in the middle
    moved = [(x + dx, y - y0) for x, y in xy]
    boxes = [(b[0] + dx, b[1] - y0, b[2] + dx, b[3] - y0) for b in boxes]
    return moved, boxes, max(width, math.ceil(x1 - x0)), math.ceil(y1 - y0)


def graph_svg(view, *, own_concepts: set[str] | None = None, width: int = 560,
              empty_text: str = "No concepts yet.") -> str:
    """The person's concept graph (memory.graph.GraphView) as an inline SVG; the concepts they filed
    notes under (`own_concepts`, keys) in orange, the entities found in their notes in blue. A node is
    sized by how many memories mention it; a click on it (static/concepts.js) shows its notes."""
    own_concepts = own_concepts or set()
    nodes = view.nodes
    if not nodes:
        return f'<div class="concept-graph-empty">{html.escape(empty_text)}</div>'
    index = {n["key"]: i for i, n in enumerate(nodes)}
    edges = [(index[e["source"]], index[e["target"]], e) for e in view.edges
             if e["source"] in index and e["target"] in index]
    labels = [label_text(n["name"]) for n in nodes]
    memories = [int(n.get("memories", 1) or 1) for n in nodes]
    xy, boxes, w, h = concept_map_layout(len(nodes), [(a, b) for a, b, _ in edges], labels, memories, width=width)
    parts = [f'<svg class="concept-graph" viewBox="0 0 {w} {h}" width="100%" '
             f'xmlns="http://www.w3.org/2000/svg" role="img" aria-label="concept graph">']
    for a, b, e in edges:
        (x1, y1), (x2, y2) = xy[a], xy[b]
        stroke = 1 + min(int(e.get("weight", 1)), 4) * 0.5
        parts.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#bdc1c6" '
                     f'stroke-width="{stroke}"><title>{html.escape(e["type"])}</title></line>')
    for n, (x, y), box, text, count in zip(nodes, xy, boxes, labels, memories):
        colour = CONCEPT_COLOUR if n["key"] in own_concepts else ENTITY_COLOUR
        name, key = html.escape(n["name"]), html.escape(n["key"])
        baseline = box[3] - (LABEL_H - FONT_PX) / 2 - 2
        parts.append(f'<g class="concept-node" data-key="{key}" data-name="{name}" style="cursor:pointer">'
                     f'<title>{name} ({html.escape(n.get("label", ""))}, {count} memories)</title>'
                     f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{node_radius(count):.1f}" fill="{colour}" '
                     f'fill-opacity="0.85"/>'
                     f'<text x="{(box[0] + box[2]) / 2:.1f}" y="{baseline:.1f}" text-anchor="middle" '
                     f'font-size="{FONT_PX}" paint-order="stroke" stroke="#fff" stroke-width="3">'
                     f'{html.escape(text)}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(`+)(?:.+?)\1", re.S)
_BLOCK_START = re.compile(r"^ {0,3}(>|#{1,6}\s|[-*+]\s|\d{1,9}[.)]\s|\||$)")


def _blocks(text: str) -> list[tuple[bool, list[str]]]:
    """The text's lines cut into (is a fenced code block?, lines); an unclosed fence runs to the end."""
    out: list[tuple[bool, list[str]]] = []
    fence: str | None = None
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            out.append((True, [line]))
        elif fence is not None:
            out[-1][1].append(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip(" `~"):
                fence = None
        elif out and not out[-1][0]:
            out[-1][1].append(line)
        else:
            out.append((False, [line]))
    return out


def _reflow_prose(lines: list[str]) -> list[str]:
    out: list[str] = []
    in_quote = False
    for line in lines:
        if line.startswith(">"):
            if out and out[-1].strip():
                out.append("")                  # each quote is a paragraph of its own
            out.append(line.rstrip())
            in_quote = True
        elif in_quote and line.strip() and not _BLOCK_START.match(line):
            out[-1] += " " + line.strip()       # a PDF line break inside the quote
        else:
            if in_quote and line.strip():
                out.append("")                  # a list or heading after a quote is not part of it
            out.append(line)
            in_quote = False
    return out


def reflow_quotes(text: str) -> str:
    """Quotes from PDFs keep their original line breaks ("> This\ndisagreement…"); for display each
    "> " quote becomes one paragraph of its own. Everything else — the bold short answer, lists,
    headings and fenced code (never touched) — is returned unchanged."""
    if ">" not in text:
        return text
    parts: list[str] = []
    for is_code, lines in _blocks(text):
        if is_code:
            if parts and parts[-1].startswith(">"):
                parts.append("")                # a fence right after a quote would be swallowed by it
            parts.extend(lines)
        else:
            parts.extend(_reflow_prose(lines))
    return "\n".join(parts)


def _outside_code_spans(text: str, change) -> str:
    """`change` applied to the text outside inline code spans (Markdown prints those as they are)."""
    out, last = [], 0
    for m in _INLINE_CODE.finditer(text):
        out += [change(text[last:m.start()]), m.group(0)]
        last = m.end()
    out.append(change(text[last:]))
    return "".join(out)


def chat_markdown(text: str, *, answer: int | None = None, citations: dict[int, str] | None = None) -> str:
    """An answer as the chat shows it: quotes reflowed, fenced code untouched, and document text shown as
    text — no HTML tag (a "<img src=x>" in a passage is printed, not loaded), no Markdown image (it would
    fetch a URL). Each [n] of a known source (`citations`: n -> its label) becomes a link
    "#cite-<answer>-<n>" that static/citations.js turns into "open this source's page" -- unless the sentence
    goes on right after it: that is the book's own mark for its bibliography, quoted."""
    citations = citations or {}

    def link(m: re.Match) -> str:
        n = int(m.group(1))
        if answer is None or n not in citations or m.string[m.end():m.end() + 1].isalnum():
            return m.group(0)      # the book's own reference mark inside its sentence ("hyperref 宏包[1]提供…")
        title = citations[n].replace('"', "'").replace("\\", "/")
        return f'[\\[{n}\\]](#cite-{answer}-{n} "{title}")'

    def prose(part: str) -> str:
        # a tilde is the book's ("‘~’ ties two notes", "~/texmf"), never strikethrough: the chat's renderer struck
        # out all text between two of them
        return CITATION_MARK.sub(link, part.replace("<", "&lt;").replace("![", "!\\[").replace("~", "\\~"))

    return "\n".join("\n".join(lines) if is_code else _outside_code_spans("\n".join(lines), prose)
                     for is_code, lines in _blocks(reflow_quotes(text)))


def progress_table(rows: list[dict], headers: tuple[str, str, str] = ("File", "Progress", "Result")) -> str:
    """One row per uploaded file: name, a progress bar (indeterminate while working) and the outcome.
    rows: {"name", "state": queued|working|done|exists|error, "message", optional "percent" while working}."""
    if not rows:
        return ""
    out = [f'<table class="upload-progress"><thead><tr><th>{html.escape(headers[0])}</th>'
           f'<th>{html.escape(headers[1])}</th><th>{html.escape(headers[2])}</th></tr></thead><tbody>']
    for r in rows:
        state = r["state"]
        if state == "working":   # indeterminate until a stage reports how far it is
            bar = f'<progress max="100" value="{r["percent"]}"></progress>' if r.get("percent") is not None \
                else '<progress max="100"></progress>'
        else:
            bar = f'<progress max="100" value="{0 if state == "queued" else 100}"></progress>'
        out.append(f'<tr class="file-{state}" data-state="{state}"><td>{html.escape(r["name"])}</td><td>{bar}</td>'
                   f'<td>{html.escape(r.get("message", ""))}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


# -- the cited section of a document without pages (assistant.sections.CitedSection) ----------------------

_MARK_START, _MARK_END = "\ue000", "\ue001"      # private-use characters: stand-ins for <mark> through rendering
_HTML_TAG = re.compile(r"(<[^>]*>)")
_BLOCK_CLOSE = re.compile(r"</(?:p|li|h[1-6]|tr|pre|blockquote|table|ul|ol)>")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_markdown = None


def _markdown_renderer():
    """Markdown for document text (markdown-it-py, which Gradio brings through rich): raw HTML is
    printed as text (html=False), an image is shown as its alt text and never fetched, and only
    http(s) and mailto links become links (opening in a new tab); any other link is its text."""
    global _markdown
    if _markdown is None:
        from markdown_it import MarkdownIt
        md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
        md.enable(["table", "strikethrough"])

        def image(self, tokens, idx, options, env):
            alt = self.renderInlineAsText(tokens[idx].children or [], options, env).strip()
            return f'<span class="doc-image">[{html.escape(alt or "image")}]</span>'

        def link_open(self, tokens, idx, options, env):
            token = tokens[idx]
            if str(token.attrGet("href") or "").strip().lower().startswith(("http://", "https://", "mailto:")):
                token.attrSet("target", "_blank")
                token.attrSet("rel", "noopener noreferrer nofollow")
            else:   # a relative or other link: its text only (links do not nest, the next close is its own)
                token.tag, token.attrs = "span", {"class": "doc-link"}
                close = next((t for t in tokens[idx + 1:] if t.type == "link_close"), None)
                if close is not None:
                    close.tag = "span"
            return self.renderToken(tokens, idx, options, env)

        md.add_render_rule("image", image)
        md.add_render_rule("link_open", link_open)
        _markdown = md
    return _markdown


def _with_marks(text: str, ranges: list[tuple[int, int]]) -> str:
    """The text with a start and an end stand-in around each range's words, line by line (a mark
    never spans a line, so it never spans a Markdown block), after any list or heading marker."""
    text = text.replace(_MARK_START, "\ufffd").replace(_MARK_END, "\ufffd")
    points: list[tuple[int, int, str]] = []
    for a, b in ranges:
        pos = a
        while pos < b:
            line_end = text.find("\n", pos, b)
            line_end = b if line_end < 0 else line_end
            words = list(_WORD.finditer(text, pos, line_end))
            if words:
                points += [(words[0].start(), 1, _MARK_START), (words[-1].end(), 0, _MARK_END)]
            pos = line_end + 1
    out, last = [], 0
    for at, _, mark in sorted(points):
        out += [text[last:at], mark]
        last = at
    out.append(text[last:])
    return "".join(out)


def _marks_to_html(rendered: str) -> str:
    """The stand-ins as <mark> elements, each kept inside one text node (so tags always nest)."""
    out, inside = [], False
    for part in _HTML_TAG.split(rendered):
        if part.startswith("<"):
            out.append(part.replace(_MARK_START, "").replace(_MARK_END, ""))
            if _BLOCK_CLOSE.match(part):
                inside = False
            continue
        for piece in re.split(f"([{_MARK_START}{_MARK_END}])", part):
            if piece in (_MARK_START, _MARK_END):
                inside = piece == _MARK_START
            elif piece:
                out.append(f"<mark>{piece}</mark>" if inside and piece.strip() else piece)
    return "".join(out)


def markdown_html(text: str, highlights: list[tuple[int, int]] | None = None) -> str:
    """Document Markdown as safe HTML (see _markdown_renderer), the `highlights` ranges in <mark>."""
    return _marks_to_html(_markdown_renderer().render(_with_marks(text, highlights or [])))


def section_html(section, caption: str) -> str:
    """The cited section (assistant.sections.CitedSection) as the source viewer shows it: the caption,
    then the section as rendered text with the passage marked. Document text is never HTML here."""
    cut = '<p class="section-cut">…</p>'
    parts = ['<div class="section-panel">', f'<div class="section-caption">{html.escape(caption)}</div>',
             f'<div class="section-text" data-section="{int(section.number)}">']
    if section.heading_line:
        parts.append(markdown_html(section.heading_line))
    if section.cut_before:
        parts.append(cut)
    parts.append(markdown_html(section.body, section.highlights))
    if section.cut_after:
        parts.append(cut)
    parts.append("</div></div>")
    return "".join(parts)


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
    study = report.get("study") or {"mastery": [], "coverage": []}
    # recall in whole percent (integer axis), weakest concepts first as the report lists them
    mastery = [{"concept": m["concept"][:40], "recall %": round(100 * m["score"]), "level": m["level"]}
               for m in study["mastery"] if m["score"] is not None][:15]
    coverage = []
    for c in study["coverage"][:20]:
        label = f"{c['doc_name'][:16]} · {c['chapter'][:32]}"
        coverage += [{"chapter": label, "pages": c["studied_pages"], "kind": "studied"},
                     {"chapter": label, "pages": c["pages"] - c["studied_pages"], "kind": "not studied"}]
    return {
        "activity": pd.DataFrame(activity, columns=["date", "kind", "count"]),
        "questions_per_document": pd.DataFrame(per_doc, columns=["document", "questions"]),
        "concepts": pd.DataFrame([{"concept": n["name"], "memories": n["memories"]} for n in concepts],
                                 columns=["concept", "memories"]),
        "memory_by_type": pd.DataFrame(memory, columns=["type", "count"]),
        "mastery": pd.DataFrame(mastery, columns=["concept", "recall %", "level"]),
        "coverage": pd.DataFrame(coverage, columns=["chapter", "pages", "kind"]),
    }

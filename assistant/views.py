"""Presentation helpers the UI shows (pure functions of the facade's data, no Gradio here): the concept
graph as SVG, the per-file upload progress table, the cited section of a document without pages, and
the report's plot data."""
from __future__ import annotations

import html
import math
import re

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


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(`+)(?:.+?)\1", re.S)
_CITE_MARK = re.compile(r"\[(\d{1,3})\]")
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
    "#cite-<answer>-<n>" that static/citations.js turns into "open this source's page"."""
    citations = citations or {}

    def link(m: re.Match) -> str:
        n = int(m.group(1))
        if answer is None or n not in citations:
            return m.group(0)
        title = citations[n].replace('"', "'").replace("\\", "/")
        return f'[\\[{n}\\]](#cite-{answer}-{n} "{title}")'

    def prose(part: str) -> str:
        return _CITE_MARK.sub(link, part.replace("<", "&lt;").replace("![", "!\\["))

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

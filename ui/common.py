"""What every tab uses: the UI text, small formatters, and `Context` (a request's person and assistant)."""
from __future__ import annotations

import json
import logging
import re
import types
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

import gradio as gr

from assistant import files as served
from core.errors import AssistantError, DiskFull, is_disk_full
from core.settings import Settings
from rag.types import Citation

log = logging.getLogger("app")     # the app's one logger, whichever module a handler lives in
ROOT = Path(__file__).resolve().parents[1]
TEXT: dict[str, dict[str, str]] = json.loads((ROOT / "static" / "i18n.json").read_text(encoding="utf-8"))
I18N = gr.I18n(**{"en": TEXT["en"], "zh-CN": TEXT["zh-CN"], "zh": TEXT["zh-CN"], "zh-TW": TEXT["zh-CN"]})
_ = I18N  # component text: translated in the browser


@dataclass(frozen=True)
class Context:
    """What the handlers of every tab share. Nothing here holds a visitor's state: each request finds its
    person (the login name with APP_USERS, else the one local user) and that person's assistant."""
    settings: Settings
    auth_enabled: bool
    llm_on: bool                                  # an endpoint or the local model: MQE/HyDE can run
    get_assistant: Callable[[str, Settings], Any]  # assistant.get_assistant (app.py passes its own name)

    def user_of(self, request: gr.Request | None) -> str:
        name = getattr(request, "username", None) if request is not None else None
        if self.auth_enabled and not name:
            raise AssistantError("Please log in again; your session has no user.", key="err_session_no_user")
        return name or self.settings.default_user

    def assistant_for(self, request: gr.Request | None):
        return self.get_assistant(self.user_of(request), self.settings)


def bind(handler: Callable, first) -> Callable:
    """`handler` with `first` (a Context, or a tab's components) as its first argument, for an event.
    A bound method, not functools.partial: Gradio reads the handler's name (its API name, which scripts
    call), its type hints (to pass gr.Request) and whether it streams, and a partial hides all three.
    Bind once and give that one object to all of the handler's events: Gradio shares a concurrency limit
    among the events of the same handler object only."""
    return types.MethodType(handler, first)


# -- per-request text --------------------------------------------------------------------------------------

def lang_of(request: gr.Request | None) -> str:
    header = (request.headers.get("accept-language", "") if request is not None else "") or ""
    return "zh-CN" if header.lower().startswith("zh") else "en"


def t(request: gr.Request | None, key: str, **values) -> str:
    """Text for messages made by handlers (component labels are translated by the browser)."""
    template = TEXT[lang_of(request)].get(key) or TEXT["en"][key]
    return template.format(**values) if values else template


def stored(request, group: str, value: str) -> str:
    """A value the data keeps in English (a memory type, a forget rule, a memory kind, a mastery level), in
    the person's language: the text of key `{group}_{value}`, or the value itself when it has none."""
    key = f"{group}_{value}"
    return t(request, key) if key in TEXT["en"] else str(value)


def pages_ref(request, first, last=None) -> str:
    """'p. 3' / 'pp. 3-4' in English, '第 3 页' / '第 3–4 页' in Chinese; '' without a page."""
    if first is None:
        return ""
    if last is None or last == first:
        return t(request, "page_ref", page=first)
    return t(request, "pages_ref", first=first, last=last)


def citation_label(request, citation: Citation) -> str:
    """'[1] book.pdf · p. 3' (Citation.label) in the person's language: '[1] book.pdf · 第 3 页'; without the
    [n] for a place no answer cited (n = 0: a guide's outline entry)."""
    pages = pages_ref(request, citation.page_start, citation.page_end)
    return (f"[{citation.n}] " if citation.n else "") + citation.doc_name + (f" · {pages}" if pages else "")


_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]   # memory.episodic.date_label writes them in English

# Memory contents the assistant writes in English (assistant/ask.py, assistant/facade.py), shown in the
# person's language: (pattern, key) — the pattern's named groups fill the key's placeholders.
STORED_SENTENCES = [
    (re.compile(r"^Asked: (?P<question>.*)$"), "mem_text_asked"),
    (re.compile(r"^Answer: (?P<answer>.*)$", re.S), "mem_text_answer"),
    (re.compile(r"^Not found in the documents\.$"), "mem_text_not_found"),
    (re.compile(r"^Sources: (?P<labels>.*)$"), "mem_text_sources"),      # "[1] book.pdf · p. 3; [2] …"
    (re.compile(r"^Loaded the document '(?P<name>.*)' \((?P<details>.*)\)\.$"), "mem_text_loaded"),
    (re.compile(r"^Removed the document '(?P<name>.*)'\.$"), "mem_text_removed"),
    (re.compile(r"^The answer quoted '(?P<name>.*)', which has since been removed\.$"), "mem_text_cited_removed"),
    # a day's summary (memory/rollup.py): "On 2 March 2025, 37 earlier activities: Asked: …"
    (re.compile(r"^On (?P<day>\d{1,2}) (?P<month>" + "|".join(_MONTHS) + r") (?P<year>\d{4}), "
                r"(?P<count>\d+) earlier activities: (?P<text>.*)$", re.S), "mem_text_rollup"),
]


def stored_text(request, content: str) -> str:
    """A memory's content as shown: the assistant's own English sentences in it (one a line) in the
    person's language; what the person or the document wrote stays as it is."""
    if lang_of(request) == "en":
        return content
    lines = content.split("\n")
    for i, line in enumerate(lines):
        for pattern, key in STORED_SENTENCES:
            found = pattern.match(line)
            if found:
                values = found.groupdict()
                if "details" in values:      # "Title; 12 pages" → "Title; 12 页"
                    values["details"] = re.sub(r"\b(\d+) (pages?|sections?)\b", lambda m: t(
                        request, f"n_{m.group(2)}", n=int(m.group(1))), values["details"])
                if "labels" in values:       # "[1] book.pdf · p. 3" → "[1] book.pdf · 第 3 页"
                    values["labels"] = re.sub(r"· pp?\. (\d+)(?:-(\d+))?", lambda m: "· " + pages_ref(
                        request, int(m.group(1)), int(m.group(2)) if m.group(2) else None), values["labels"])
                if "month" in values:        # "March" → 3, for "2025年3月2日"
                    values["month"] = _MONTHS.index(values["month"]) + 1
                lines[i] = t(request, key, **values)
                break
    return "\n".join(lines)


def cols(request, *keys: str) -> list[str]:
    return [t(request, f"col_{k}") for k in keys]


def short(text: str, n: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n - 1] + "…"


_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")                 # every ASCII punctuation mark
_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


def as_text(value, n: int | None = None) -> str:
    """What a person, a document or an imported deck wrote (a card's sides, a quote, a note, a concept, a
    document's name), for a gr.Markdown: every character shown as itself. No tag, Markdown image, link,
    autolink, heading or list can come out of it, so nothing in it asks the browser for anything. Angle
    brackets and ampersands become entities, every other ASCII punctuation mark is backslash-escaped
    (CommonMark prints an escaped mark as itself); each line is its own line. `n`: short() it first.
    Only for Markdown: a Dataframe cell, a dropdown's or a radio's label already shows text as text."""
    text = short(value, n) if n else ("" if value is None else str(value))
    lines = (line.strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    return "  \n".join(_PUNCTUATION.sub(lambda m: _ENTITIES.get(m.group(0)) or "\\" + m.group(0), line)
                       for line in lines)


def when(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")


def said(request, sentence) -> str:
    """A keyed sentence (a core.errors.Notice, an AssistantError) in the person's language; in English, or
    without a key or translation, its own English text — one source of truth, never an i18n.json copy.
    A value that is itself a keyed sentence (an error's own sentence inside a notice) is shown the same way."""
    key, lang = getattr(sentence, "key", None), lang_of(request)
    if lang != "en" and key and key in TEXT[lang]:
        values = {name: said(request, value) if getattr(value, "key", None) else value
                  for name, value in sentence.values.items()}
        return t(request, key, **values)
    return str(sentence)


def failure(request, exc: Exception) -> str:
    """One sentence for the person: the error's own for AssistantError (in the person's language when it has
    a key with a translation), "the disk is full" for a full disk, else a generic one (logged)."""
    if isinstance(exc, AssistantError):
        return said(request, exc)
    if is_disk_full(exc):          # a file written outside the stores (an upload, a page image) found no room
        log.warning("handler failed: the disk is full", exc_info=True)
        return said(request, DiskFull())
    log.exception("handler failed")
    return t(request, "msg_error", kind=type(exc).__name__)


# -- a cited source: its name in a list, the caption over its page or section -----------------------------

def source_choice(request, citation: Citation, heading: str = "") -> str:
    """'[1] file.pdf · p. 3 — strong match': how well the passage matches, as a word, never a raw score.
    A source without pages names its section instead: '[2] notes.md · § Attention — partial match'."""
    label = citation_label(request, citation)
    label = f"{label} · § {heading}" if heading else label
    strength = getattr(citation, "strength", "")
    return f"{label} — {t(request, 'strength_' + strength)}" if strength else label


def page_caption(request, citation: Citation, page) -> str:
    """'[1] book.pdf · p. 12 — page 12 of 264 · figures outlined: Figure 3.1 (Stack diagram)'."""
    text = t(request, "page_caption", label=citation_label(request, citation), page=page.page, count=page.page_count)
    if page.figures:
        named = []
        for i, figure in enumerate(page.figures, start=1):
            label = (figure.get("label") or "").strip() or t(request, "figure_n", n=i)   # as figure_label, translated
            caption = figure.get("caption") or ""
            if caption.lower().startswith(label.lower()):        # "Figure 3.1: Stack diagram"
                caption = caption[len(label):].lstrip(" .:：-—")
            named.append(f"{label} ({short(caption, 40)})" if caption else label)
        text += t(request, "page_figures", figures="; ".join(named))
    return text


def saved_page(ctx: Context, request, citation: Citation, shown) -> tuple[str, str]:
    """A rendered page (assistant.pages.RenderedPage, passage highlighted) saved where only this browser
    session may fetch it, and its caption: what every page viewer (answer sources, cards, notes) shows."""
    user = ctx.assistant_for(request).user_id
    path = served.save_page_image(ctx.settings, user, request.session_hash, citation.doc_id, shown.page, shown.image)
    return path, page_caption(request, citation, shown)


def section_caption(request, citation: Citation, section) -> str:
    """'[1] notes.md — § 2 Models › 2.3 Attention — section 4 of 9' (assistant.sections.CitedSection)."""
    if section.heading:
        return t(request, "section_caption", label=citation_label(request, citation), heading=section.heading,
                 n=section.number, count=section.count)
    return t(request, "section_caption_top", label=citation_label(request, citation), n=section.number,
             count=section.count)

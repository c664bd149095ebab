"""What every tab uses: the UI text, small formatters, and `Context` (a request's person and assistant)."""
from __future__ import annotations

import json
import logging
import types
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

import gradio as gr

from assistant.pages import figure_label
from core.errors import AssistantError
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
            raise AssistantError("Please log in again; your session has no user.")
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


def cols(request, *keys: str) -> list[str]:
    return [t(request, f"col_{k}") for k in keys]


def short(text: str, n: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n - 1] + "…"


def when(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")


def failure(request, exc: Exception) -> str:
    """One sentence for the person: the error's own for AssistantError, else a generic one (logged)."""
    if isinstance(exc, AssistantError):
        return str(exc)
    log.exception("handler failed")
    return t(request, "msg_error", kind=type(exc).__name__)


# -- a cited source: its name in a list, the caption over its page or section -----------------------------

def source_choice(request, citation: Citation, heading: str = "") -> str:
    """'[1] file.pdf · p. 3 — strong match': how well the passage matches, as a word, never a raw score.
    A source without pages names its section instead: '[2] notes.md · § Attention — partial match'."""
    label = f"{citation.label} · § {heading}" if heading else citation.label
    strength = getattr(citation, "strength", "")
    return f"{label} — {t(request, 'strength_' + strength)}" if strength else label


def page_caption(request, citation: Citation, page) -> str:
    """'[1] book.pdf · p. 12 — page 12 of 264 · figures outlined: Figure 3.1 (Stack diagram)'."""
    text = t(request, "page_caption", label=citation.label, page=page.page, count=page.page_count)
    if page.figures:
        named = []
        for i, figure in enumerate(page.figures, start=1):
            label = figure_label(figure, i)
            caption = figure.get("caption") or ""
            if caption.lower().startswith(label.lower()):        # "Figure 3.1: Stack diagram"
                caption = caption[len(label):].lstrip(" .:：-—")
            named.append(f"{label} ({short(caption, 40)})" if caption else label)
        text += t(request, "page_figures", figures="; ".join(named))
    return text


def section_caption(request, citation: Citation, section) -> str:
    """'[1] notes.md — § 2 Models › 2.3 Attention — section 4 of 9' (assistant.sections.CitedSection)."""
    if section.heading:
        return t(request, "section_caption", label=citation.label, heading=section.heading,
                 n=section.number, count=section.count)
    return t(request, "section_caption_top", label=citation.label, n=section.number, count=section.count)

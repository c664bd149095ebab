"""A document's guide (assistant.guide) as the Documents tab shows it: one block per chapter with its sections
and pages, its cited summary, its key terms and the questions the book answers.

Everything the document wrote is data, shown as text: headings, terms and definitions are escaped, and the
summary's Markdown (bold section names, [n] marks) goes through assistant.views.markdown_html, which prints
any HTML in it as text and never fetches an image.
"""
from __future__ import annotations

import html

from assistant.guide import DocumentGuide, GuideChapter
from assistant.views import markdown_html
from memory.graph.base import normalise_key
from ui.common import citation_label, pages_ref, short, t

LEVEL_TEXT = {"strong": "mastery_strong", "learning": "mastery_learning", "weak": "mastery_weak", "new": "mastery_new"}


def guide_html(request, guide: DocumentGuide, standings: list | None = None,
               notes_by_concept: dict[str, int] | None = None) -> str:
    """The guide; `standings` (study.path, one per chapter in the same order) add where the person stands, and
    beside each key term the person's cards on it; `notes_by_concept` (concept key -> notes filed under it)
    their notes on it."""
    if not guide.chapters:
        return f'<div class="guide-empty">{html.escape(t(request, "guide_no_chapters"))}</div>'
    parts = [f'<div class="doc-guide" lang="{"zh" if guide.language == "zh" else "en"}">',
             f'<h3 class="guide-title">{html.escape(guide.title or guide.name)}</h3>']
    standings = standings if standings and len(standings) == len(guide.chapters) else [None] * len(guide.chapters)
    for i, (chapter, standing) in enumerate(zip(guide.chapters, standings)):
        parts.append(chapter_html(request, chapter, open_=i == 0, standing=standing, notes=notes_by_concept or {}))
    parts.append("</div>")
    return "".join(parts)


def chapter_html(request, chapter: GuideChapter, *, open_: bool, standing=None, notes: dict[str, int] | None = None) -> str:
    pages = pages_ref(request, chapter.page_start, chapter.page_end)
    head = html.escape(chapter.title) + (f' <span class="guide-pages">{html.escape(pages)}</span>' if pages else "")
    if standing is not None:
        head += (f' <span class="guide-level guide-level-{standing.level}">'
                 f'{html.escape(t(request, LEVEL_TEXT[standing.level]))}</span>')
    out = [f'<details class="guide-chapter"{" open" if open_ else ""}><summary>{head}</summary>']
    if standing is not None:
        out.append(progress_html(request, standing))
    if chapter.sections:
        items = "".join(f'<li>{html.escape(s.title)}'
                        + (f' <span class="guide-pages">{html.escape(pages_ref(request, s.page_start, s.page_end))}'
                           f'</span>' if s.page_start is not None else "") + "</li>" for s in chapter.sections)
        out.append(f'<div class="guide-label">{html.escape(t(request, "guide_sections"))}</div>'
                   f'<ul class="guide-sections">{items}</ul>')
    if chapter.summary and not chapter.citations:          # nothing but its heading: tables, code or a list only
        out.append(f'<div class="guide-label">{html.escape(t(request, "guide_summary"))}</div>'
                   f'<p class="guide-empty">{html.escape(t(request, "guide_no_summary"))}</p>')
    elif chapter.summary:
        out.append(f'<div class="guide-label">{html.escape(t(request, "guide_summary"))}</div>'
                   f'<div class="guide-summary">{markdown_html(chapter.summary)}</div>')
        sources = "".join(f'<li>{html.escape(citation_label(request, c))} — <q>{html.escape(short(c.quote, 140))}</q></li>'
                          for c in chapter.citations)
        out.append(f'<ul class="guide-sources">{sources}</ul>')
    concepts = {c["key"]: c for c in standing.concepts} if standing is not None else {}
    term_keys = [normalise_key(k.term) for k in chapter.terms]
    if chapter.terms:
        terms = "".join(f'<dt>{html.escape(k.term)}'
                        + (f' <span class="guide-pages">{html.escape(pages_ref(request, k.page))}</span>'
                           if k.page is not None else "")
                        + term_study_html(request, concepts.get(key), (notes or {}).get(key, 0))
                        + f'</dt><dd>{html.escape(k.definition)}</dd>' for k, key in zip(chapter.terms, term_keys))
        out.append(f'<div class="guide-label">{html.escape(t(request, "guide_terms"))}</div>'
                   f'<dl class="guide-terms">{terms}</dl>')
    others = [c for key, c in concepts.items() if key not in term_keys]
    if others:
        items = "".join(f'<li>{html.escape(c["concept"])}{term_study_html(request, c, 0)}</li>' for c in others)
        out.append(f'<div class="guide-label">{html.escape(t(request, "guide_other_concepts"))}</div>'
                   f'<ul class="guide-concepts">{items}</ul>')
    out.append(f'<div class="guide-label">{html.escape(t(request, "guide_questions_label"))}</div>')
    if chapter.questions is None:
        out.append(f'<p class="guide-pending">{html.escape(t(request, "guide_checking_chapter"))}</p>')
    elif chapter.questions:
        out.append('<ol class="guide-questions">'
                   + "".join(f"<li>{html.escape(q)}</li>" for q in chapter.questions) + "</ol>")
    else:
        out.append(f'<p class="guide-empty">{html.escape(t(request, "guide_no_questions"))}</p>')   # final, not pending
    out.append("</details>")
    return "".join(out)


def term_study_html(request, concept: dict | None, notes: int) -> str:
    """Beside a key term: the person's cards on it (and those due) and their notes filed under it; "" if none."""
    parts = []
    if concept and concept["cards"]:
        parts.append(t(request, "guide_term_cards", n=concept["cards"], due=concept["due"]))
    if notes:
        parts.append(t(request, "guide_term_notes", n=notes))
    return f' <span class="guide-term-study">{html.escape(" · ".join(parts))}</span>' if parts else ""


def progress_html(request, standing) -> str:
    """One line: pages studied, questions answered from the chapter, its cards and those due, the quiz, mastery."""
    parts = []
    if standing.pages:
        parts.append(t(request, "guide_pages_studied", studied=standing.pages_studied, pages=standing.pages))
    parts.append(t(request, "guide_questions_asked", n=standing.questions))
    parts.append(t(request, "guide_cards", n=standing.cards, due=standing.due))
    if standing.quiz_answered:
        parts.append(t(request, "guide_quiz", correct=standing.quiz_correct, answered=standing.quiz_answered))
    parts.append(t(request, "guide_mastery", level=t(request, LEVEL_TEXT[standing.level])))
    return (f'<div class="guide-progress"><span class="guide-label">{html.escape(t(request, "guide_progress"))}</span> '
            + html.escape(" · ".join(parts)) + "</div>")


def question_samples(guide: DocumentGuide) -> tuple[list[list[str]], list[str]]:
    """The checked questions as the clickable list shows them ("2 · What is a tuple?") and as they are asked."""
    shown, asked = [], []
    for chapter in guide.chapters:
        for question in chapter.questions or []:
            shown.append([f"{chapter.number} · {question}" if chapter.number else question])
            asked.append(question)
    return shown, asked


# Gradio shows a Dataset's text sample to 60 characters: the chapter and page first, then as much quote as fits.
SOURCE_ENTRY_CHARS = 60


def source_samples(request, guide: DocumentGuide) -> tuple[list[list[str]], list]:
    """The passages each chapter's summary cites, as the clickable list shows them ("Chapter 2 Lists… · p. 3 · A list
    is a sequence…") and the citations they open."""
    shown, places = [], []
    for chapter in guide.chapters:
        for citation in chapter.citations if chapter.summary else []:
            pages = pages_ref(request, citation.page_start, citation.page_end)
            head = " · ".join(p for p in (short(chapter.title, 22), pages) if p)
            shown.append([short(f"{head} · {citation.quote}", SOURCE_ENTRY_CHARS)])
            places.append(citation)
    return shown, places


def outline_samples(request, guide: DocumentGuide) -> tuple[list[list[str]], list]:
    """The chapters and their sections as the clickable outline shows them ("2.1 Lists · p. 12", a section
    indented under its chapter) and the first passage each opens (a Citation; None where a heading has no text)."""
    shown, places = [], []
    for chapter in guide.chapters:
        for title, start, end, place, indent in [(chapter.title, chapter.page_start, chapter.page_end, chapter.place, "")] + [
                (s.title, s.page_start, s.page_end, s.place, "\u2003") for s in chapter.sections]:
            if place is None:
                continue
            pages = pages_ref(request, start, start) if start is not None else ""
            shown.append([f"{indent}{title}" + (f" · {pages}" if pages else "")])
            places.append(place)
    return shown, places


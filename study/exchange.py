"""Decks in and out: Anki packages (.apkg, via genanki) and CSV out; Anki's plain-text/CSV export in.

Each exported card keeps its source (document, page, the quoted sentence). Cloze cards become Anki
cloze notes ({{c1::term}}), question/answer cards Anki basic notes."""
from __future__ import annotations

import csv
import hashlib
import html
import io
import re
from pathlib import Path

import genanki

from core.errors import InvalidRequest
from study.types import BLANK, CLOZE, Card

MAX_IMPORT_BYTES = 5_000_000
MAX_IMPORT_ROWS = 5_000
CSV_COLUMNS = ["front", "back", "kind", "document", "page", "section", "quote"]

_CSS = ".card { font-family: sans-serif; font-size: 20px; text-align: left; } .source { color: #666; font-size: 14px; }"
# Fixed ids: Anki recognises our note types across exports (and updates, not duplicates, on re-import).
BASIC_MODEL = genanki.Model(
    1607392319, "PDF learning assistant: question",
    fields=[{"name": "Front"}, {"name": "Back"}, {"name": "Source"}, {"name": "Quote"}],
    templates=[{"name": "Card 1", "qfmt": "{{Front}}",
                "afmt": "{{FrontSide}}<hr id=answer>{{Back}}<div class=source>{{Source}}<br>{{Quote}}</div>"}],
    css=_CSS)
CLOZE_MODEL = genanki.Model(
    1607392320, "PDF learning assistant: cloze",
    fields=[{"name": "Text"}, {"name": "Source"}, {"name": "Quote"}],
    templates=[{"name": "Cloze", "qfmt": "{{cloze:Text}}",
                "afmt": "{{cloze:Text}}<div class=source>{{Source}}</div>"}],
    css=_CSS, model_type=genanki.Model.CLOZE)


def source_label(card: Card) -> str:
    if not card.doc_name:
        return ""
    return f"{card.doc_name}, p. {card.page}" if card.page else card.doc_name


def _stable_id(*parts: str) -> int:
    return int(hashlib.sha1("|".join(parts).encode()).hexdigest()[:12], 16) >> 2


def write_apkg(cards: list[Card], path: Path, deck_name: str) -> Path:
    deck = genanki.Deck(_stable_id(cards[0].user_id if cards else "", deck_name), deck_name)
    for card in cards:
        source, quote = html.escape(source_label(card)), html.escape(card.quote)
        tags = [re.sub(r"\s+", "_", t) for t in (card.kind, card.concept) if t]
        if card.kind == CLOZE and BLANK in card.front:
            text = html.escape(card.front).replace(html.escape(BLANK), "{{c1::" + html.escape(card.back) + "}}")
            note = genanki.Note(CLOZE_MODEL, [text, source, quote], guid=genanki.guid_for(card.card_id), tags=tags)
        else:
            note = genanki.Note(BASIC_MODEL, [html.escape(card.front), html.escape(card.back), source, quote],
                                guid=genanki.guid_for(card.card_id), tags=tags)
        deck.add_note(note)
    genanki.Package(deck).write_to_file(str(path))
    return path


def write_csv(cards: list[Card], path: Path) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(CSV_COLUMNS)
        for c in cards:
            writer.writerow([c.front, c.back, c.kind, c.doc_name, c.page or "", c.section, c.quote])
    return path


def read_cards_file(path: Path) -> list[dict]:
    """Cards from Anki's "Notes in Plain Text" export (tab- or comma-separated, `#separator:` headers,
    HTML fields, cloze {{c1::…}}) or from our own CSV. Each: {front, back, kind, document, page, quote}."""
    path = Path(path)
    if path.stat().st_size > MAX_IMPORT_BYTES:
        raise InvalidRequest(f"A deck file can be at most {MAX_IMPORT_BYTES // 1_000_000} MB; split it up.",
                             key="err_deck_too_big", mb=MAX_IMPORT_BYTES // 1_000_000)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidRequest("The deck file is not UTF-8 text; export it from Anki as "
                             "\"Notes in Plain Text\" or as CSV.", key="err_deck_not_utf8") from None
    headers, body = _headers(text)
    rows = list(csv.reader(io.StringIO(body), delimiter=_separator(headers, body)))
    columns = _columns(headers, rows)
    if columns is not None and headers.get("columns") is None:
        rows = rows[1:]                      # our own CSV: its first row names the columns
    out = []
    for row in rows:
        if not any(cell.strip() for cell in row):
            continue
        card = _card_from_row(row, columns)
        if card:
            out.append(card)
        if len(out) > MAX_IMPORT_ROWS:
            raise InvalidRequest(f"A deck file can hold at most {MAX_IMPORT_ROWS:,} cards; split it up.",
                                 key="err_deck_too_many", n=MAX_IMPORT_ROWS)
    if not out:
        raise InvalidRequest("No cards were found in the file: it needs a front and a back on each line.",
                             key="err_deck_no_cards")
    return out


def _headers(text: str) -> tuple[dict[str, str], str]:
    headers, lines = {}, text.splitlines(keepends=True)
    while lines and lines[0].startswith("#") and ":" in lines[0]:
        key, value = lines.pop(0)[1:].split(":", 1)
        headers[key.strip().lower()] = value.strip()
    return headers, "".join(lines)


def _separator(headers: dict[str, str], body: str) -> str:
    named = {"tab": "\t", "comma": ",", "semicolon": ";", "pipe": "|", "space": " "}
    if "separator" in headers:
        return named.get(headers["separator"].lower(), headers["separator"][:1] or "\t")
    first = body.split("\n", 1)[0]
    return max(("\t", ",", ";"), key=first.count)


def _columns(headers: dict[str, str], rows: list[list[str]]) -> dict[str, int] | None:
    names = headers.get("columns")
    cells = [c.strip().lower() for c in (re.split(r"[\t,;]", names) if names else rows[0] if rows else [])]
    if "front" in cells or "text" in cells:
        return {name: i for i, name in enumerate(cells)}
    return None


def _card_from_row(row: list[str], columns: dict[str, int] | None) -> dict | None:
    def cell(name: str, default: int | None = None) -> str:
        i = columns.get(name, default) if columns else default
        return _plain(row[i]) if i is not None and i < len(row) else ""

    front = cell("front", 0) or cell("text", 0)
    back = cell("back", 1)
    cloze = re.search(r"\{\{c\d+::(.+?)(?:::[^}]*)?\}\}", front)
    if cloze:
        back = back if columns and "back" in columns and back else cloze.group(1)
        front = re.sub(r"\{\{c\d+::(.+?)(?:::[^}]*)?\}\}", lambda m: BLANK if m.group(1) == back else m.group(1), front)
        kind = CLOZE
    else:
        kind = cell("kind") or "qa"
    if not front or not back:
        return None
    page = cell("page")
    return {"front": front[:2000], "back": back[:2000], "kind": kind if kind in (CLOZE, "qa") else "qa",
            "document": cell("document"), "page": int(page) if page.isdigit() else None, "quote": cell("quote")}


def _plain(value: str) -> str:
    """Anki fields are HTML: line breaks kept, tags dropped, entities decoded."""
    value = re.sub(r"<br\s*/?>|</div>|</p>", "\n", value, flags=re.IGNORECASE)
    value = re.sub(r"<[^>]+>", "", value)
    return html.unescape(value).strip()

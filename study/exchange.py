"""Decks in and out: Anki packages (.apkg, via genanki) and CSV out; Anki's plain-text/CSV export in.

Each exported card keeps its source (document, page, the quoted sentence). Cloze cards become Anki
cloze notes ({{c1::term}}), question/answer cards Anki basic notes."""
from __future__ import annotations

import csv
import hashlib
import html
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import genanki

from core.errors import InvalidRequest
from study.types import BLANK, CLOZE, Card

MAX_IMPORT_BYTES = 5_000_000
MAX_IMPORT_ROWS = 5_000
MAX_SIDE_CHARS = 2_000            # as study.desk.MAX_CARD_CHARS: a longer side is refused, never cut
CSV_COLUMNS = ["front", "back", "kind", "document", "page", "section", "quote"]
# A cell a spreadsheet would run as a formula starts with one of these (OWASP, "CSV Injection").
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

# why an imported row was refused (static/i18n.json import_refused_*)
NO_FRONT, NO_BACK, TOO_LONG = "no_front", "no_back", "too_long"


@dataclass
class DeckFile:
    """What a deck file holds: its cards (each {front, back, kind, document, page, quote, line}) and the
    rows refused, as (line, reason) — every non-blank row is one or the other."""
    cards: list[dict] = field(default_factory=list)
    refused: list[tuple[int, str]] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return len(self.cards) + len(self.refused)


@dataclass
class ImportResult:
    """What importing a deck file did, row by row: rows == len(cards) + in_deck + repeated + len(refused)."""
    cards: list[Card]                  # added to the deck
    rows: int                          # the file's non-blank rows (cards)
    in_deck: int = 0                   # skipped: the deck already has the same card
    repeated: int = 0                  # skipped: the same card is on an earlier row of the file
    refused: list[tuple[int, str]] = field(default_factory=list)    # (line, NO_FRONT | NO_BACK | TOO_LONG)
    total: int = 0                     # cards in the deck afterwards

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
    """Every cell quoted (a ';' inside one cannot start a new cell where ';' separates them) and neutralised:
    no cell starts a formula in a spreadsheet (neutralised(); read_cards_file() undoes it)."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, quoting=csv.QUOTE_ALL)
        writer.writerow(CSV_COLUMNS)
        for c in cards:
            writer.writerow([neutralised(str(v)) for v in
                             (c.front, c.back, c.kind, c.doc_name, c.page or "", c.section, c.quote)])
    return path


def neutralised(cell: str) -> str:
    """A cell that would start a formula (= + - @ tab CR) gets a leading apostrophe, which spreadsheets read
    as "this is text" (OWASP). A cell that already starts with an apostrophe followed by one of those or by
    another apostrophe gets one too, so that restored() can tell the two apart: restored(neutralised(x)) == x
    for every x, and a leading apostrophe before anything else ("'tis") is left alone both ways."""
    if cell.startswith(FORMULA_START) or (cell.startswith("'") and cell[1:2] in (*FORMULA_START, "'")):
        return "'" + cell
    return cell


def restored(cell: str) -> str:
    """A cell of our own CSV export as it was before neutralised()."""
    if cell.startswith("'") and cell[1:2] in (*FORMULA_START, "'"):
        return cell[1:]
    return cell


def read_cards_file(path: Path) -> DeckFile:
    """Cards from Anki's "Notes in Plain Text" export (tab- or comma-separated, `#separator:` headers,
    HTML fields, cloze {{c1::…}}) or from a CSV with a header row (ours: plain text, cells neutralised).
    Every non-blank row is a card or a refusal with its line and reason; the whole file is refused only
    when it is too big, not UTF-8 text, over MAX_IMPORT_ROWS rows or without any row."""
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
    headers, body, first_line = _headers(text)
    reader = csv.reader(io.StringIO(body), delimiter=_separator(headers, body))
    rows, end = [], 0
    for row in reader:                       # (first line of the row, its cells); a cell may span lines
        rows.append((first_line + end, row))
        end = reader.line_num
    columns = _columns(headers, [r for _, r in rows])
    own_header = columns is not None and headers.get("columns") is None
    ours = own_header and [c.strip().lower() for c in rows[0][1]] == CSV_COLUMNS     # write_csv's file
    if own_header:
        rows = rows[1:]                      # a CSV's first row names the columns
    # Fields are HTML in Anki's export (#html:true, and before Anki wrote headers); a CSV with a header
    # row (ours, a spreadsheet's) is plain text: "<b>" in it is what the card says.
    as_html = headers["html"].lower() == "true" if "html" in headers else not own_header
    deck = DeckFile()
    for line, row in rows:
        if not any(cell.strip() for cell in row):
            continue
        if deck.rows >= MAX_IMPORT_ROWS:
            raise InvalidRequest(f"A deck file can hold at most {MAX_IMPORT_ROWS:,} cards; split it up.",
                                 key="err_deck_too_many", n=MAX_IMPORT_ROWS)
        card = _card_from_row([restored(c) for c in row] if ours else row, columns, as_html)
        if isinstance(card, str):
            deck.refused.append((line, card))
        else:
            deck.cards.append({**card, "line": line})
    if not deck.rows:
        raise InvalidRequest("No cards were found in the file: it needs a front and a back on each line.",
                             key="err_deck_no_cards")
    return deck


def _headers(text: str) -> tuple[dict[str, str], str, int]:
    """Anki's `#key:value` header lines, the rest of the file, and the line number the rest starts on."""
    headers, lines = {}, text.splitlines(keepends=True)
    while lines and lines[0].startswith("#") and ":" in lines[0]:
        key, value = lines.pop(0)[1:].split(":", 1)
        headers[key.strip().lower()] = value.strip()
    return headers, "".join(lines), len(headers) + 1


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


def _card_from_row(row: list[str], columns: dict[str, int] | None, as_html: bool) -> dict | str:
    """The row's card, or why it is refused (NO_FRONT, NO_BACK, TOO_LONG)."""
    def cell(name: str, default: int | None = None) -> str:
        i = columns.get(name, default) if columns else default
        value = row[i] if i is not None and i < len(row) else ""
        return _plain(value) if as_html else value.strip()

    front = cell("front", 0) or cell("text", 0)
    back = cell("back", 1)
    cloze = re.search(r"\{\{c\d+::(.+?)(?:::[^}]*)?\}\}", front)
    if cloze:
        back = back if columns and "back" in columns and back else cloze.group(1)
        front = re.sub(r"\{\{c\d+::(.+?)(?:::[^}]*)?\}\}", lambda m: BLANK if m.group(1) == back else m.group(1), front)
        kind = CLOZE
    else:
        kind = cell("kind") or "qa"
    if not front:
        return NO_FRONT
    if not back:
        return NO_BACK
    if len(front) > MAX_SIDE_CHARS or len(back) > MAX_SIDE_CHARS:
        return TOO_LONG
    page = cell("page")
    return {"front": front, "back": back, "kind": kind if kind in (CLOZE, "qa") else "qa",
            "document": cell("document"), "page": int(page) if page.isdigit() else None, "quote": cell("quote")}


# A tag as HTML writes one: <name …>, </name>, <!-- … -->, <!DOCTYPE …>.
_TAG = re.compile(r"<!--.*?-->|<[A-Za-z!/?][^<>]*>", re.DOTALL)


def _plain(value: str) -> str:
    """An Anki field is HTML: entities decoded FIRST, then line breaks kept and tags dropped — so that
    "&lt;img src=…&gt;" (text the person typed) cannot come out as a tag. (The cost: such text is dropped
    with the tags; what is left is plain text, and the app shows it as text anyway: ui.common.as_text.)"""
    value = html.unescape(value)
    value = re.sub(r"<br\s*/?>|</div>|</p>", "\n", value, flags=re.IGNORECASE)
    return _TAG.sub("", value).strip()

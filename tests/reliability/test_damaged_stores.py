"""Damaged stores and a full disk, through the facade the UI calls, on real files.

One library (a PDF, three notes, five cards, a question asked) is built and backed up once (core.backup).
Each case copies it, damages one store file while the app is stopped (cut to 0 bytes, cut in half, its 16-byte
header garbled, deleted) and starts the assistant again: the damaged store must say so in one sentence naming
it and `python -m assistant repair` (never come back empty), the features that do not need it must keep
working, and the real `python -m assistant repair` command must bring everything back. A damaged embedding
cache is rebuilt by itself. A full disk is a real one where the machine lets us mount a small tmpfs (else
SQLite's max_page_count, which gives the same SQLITE_FULL) and must say "the disk is full" and damage nothing.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.facade import PDFLearningAssistant
from core import backup
from core.errors import DiskFull, StoreDamaged
from core.settings import Settings
from core.sqlite import CARDS, DOCUMENTS, GRAPH, MEMORIES, STORES, damage_of
from tests.browser.pdfgen import AVIATION, make_pdf
from tests.store_damage import damage, refused
from ui.common import failure

SECTION = "Fault"
ROOT = Path(__file__).resolve().parents[2]
USER = "learner"
QUESTION = "What happens when the two angle of attack sensors disagree?"
CITED = "flight.pdf · p. 1"
NOTES = ["Stall warnings sound before the wing stops lifting.", "Trim tabs hold the elevator without effort.",
         "The pitot tube measures airspeed from ram pressure."]
CARD_TEXTS = [("What does a pitot tube measure?", "Airspeed"), ("What holds the elevator in place?", "Trim tabs"),
              ("When does the stall warning sound?", "Before the stall"),
              ("How many angle of attack sensors are compared?", "Two"), ("Who flies the aircraft?", "The pilot")]
HOW = {"empty": "cut to 0 bytes", "half": "cut in half", "header": "its 16-byte header garbled"}


class _Request:
    def __init__(self, language: str):
        self.headers = {"accept-language": language}


ZH = _Request("zh-CN,zh;q=0.9")


def settings_for(data_dir: Path) -> Settings:
    return Settings(_env_file=None, data_dir=data_dir, llm_backend="none")


def stop_app(settings: Settings) -> None:
    """What the app's process ending does to this data folder: every store and client closed, the folder's
    lock let go (the next assistant opens everything again, as a restarted app would)."""
    import assistant.registry as registry
    import study.store as cards
    from core import embeddings
    from memory.manager import close_memory_stores
    from rag import tool
    folder = str(settings.data_dir.resolve())
    registry._registries.pop(folder, None)
    tool._doc_stores.close(str(settings.data_dir.resolve() / DOCUMENTS.file))
    close_memory_stores(settings)
    cards._stores.close(str(settings.data_dir.resolve() / CARDS.file))
    for key in [k for k in embeddings._embedders if k[-2] == folder]:
        # Left open (the process-wide intent router may embed through it), its log written into the file as a
        # closing connection does.
        embeddings._embedders.pop(key)._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def start_app(data_dir: Path) -> PDFLearningAssistant:
    return PDFLearningAssistant(USER, settings_for(data_dir))


def repair_command(data_dir: Path) -> tuple[int, str]:
    env = {**os.environ, "DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1"}
    for name in ("QDRANT_URL", "EMBEDDING_CACHE"):
        env.pop(name, None)
    done = subprocess.run([sys.executable, "-m", "assistant", "repair"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    return done.returncode, done.stdout + done.stderr


def line_of(output: str, store: str) -> str:
    """The repair command's sentence about one store, with the folder and the time made generic."""
    line = next(row for row in output.splitlines() if row.startswith(store + ":"))
    line = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "<time> UTC", line)
    line = re.sub(r"/\S*/backups/", "DATA_DIR/backups/", line)
    return re.sub(r"\d{8}T\d{6}\.\d{6}Z", "<time>", line)


def the_sentence(error: StoreDamaged, kind) -> str:
    text = str(error)
    assert text.startswith(f"{kind.what} ({kind.file}) is damaged") and "`python -m assistant repair`" in text
    assert "\n" not in text and len(text) < 300
    zh = failure(ZH, error)
    assert "已损坏" in zh and kind.file in zh and "python -m assistant repair" in zh, zh
    return text


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> Path:
    """The learner's library, stopped and backed up: what every case damages a copy of."""
    root = tmp_path_factory.mktemp("damaged-stores")
    data = root / "data"
    a = start_app(data)
    pdf = root / "flight.pdf"
    pdf.write_bytes(make_pdf(AVIATION, title="Flight Control Notes"))
    a.load_document(pdf)
    for note in NOTES:
        a.add_note(note)
    for front, back in CARD_TEXTS:
        a.study.add_card(front, back)
    assert any(CITED in label for label in a.ask_once(QUESTION).source_labels)
    stop_app(a.settings)
    outcomes = {o.store: o for o in backup.back_up(data)}
    assert {outcomes[k.file].done for k in (DOCUMENTS, MEMORIES, CARDS, GRAPH)} == {"backed up"}
    return data


@pytest.fixture
def copy(library, tmp_path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(library, data)
    yield data
    stop_app(settings_for(data))


# -- what works while one store is damaged -------------------------------------------------------------------

def questions_work(a) -> str:
    result = a.ask_once(QUESTION)
    assert any(CITED in label for label in result.source_labels), result
    said = f"Q&A answered citing {CITED}"
    if result.notice and "could not be saved" in result.notice:
        said += " (with the notice “This exchange could not be saved to your history.”)"
    return said


def notes_work(a) -> str:
    assert len(a.list_notes()) == len(NOTES)
    a.add_note("Flaps change the camber of the wing.")
    return f"{len(NOTES)} notes listed and a new one saved"


def cards_work(a) -> str:
    deck = a.study.cards()
    assert len(deck) == len(CARD_TEXTS)
    a.study.review(deck[0].card_id, "good")
    return f"{len(CARD_TEXTS)} cards listed and one reviewed"


def notes_listed(a) -> str:
    assert len(a.list_notes()) == len(NOTES)
    return f"{len(NOTES)} notes listed"


def concept_view(a):
    """What the notes tab shows in place of the concept graph: the reason it could not be read, if any."""
    view = a.concept_graph()
    if view.unreadable:
        assert not view.nodes
        raise view.unreadable
    return view


def documents_work(a) -> str:
    assert [d.name for d in a.list_documents()] == ["flight.pdf"]
    return "the library lists flight.pdf"


CASES = {
    "cards": (CARDS, [lambda a: a.study.cards(), lambda a: a.study.add_card("What is yaw?", "Turning"),
                      lambda a: a.study.due_count()],
              [questions_work, notes_work, documents_work], lambda a: len(a.study.cards()) == len(CARD_TEXTS),
              f"the {len(CARD_TEXTS)} cards are back"),
    "memories": (MEMORIES, [lambda a: a.list_notes(), lambda a: a.add_note("Yaw turns the nose.")],
                 [questions_work, cards_work, documents_work], lambda a: len(a.list_notes()) == len(NOTES),
                 f"the {len(NOTES)} notes are back"),
    "documents": (DOCUMENTS, [lambda a: a.list_documents(), lambda a: a.ask_once(QUESTION)],
                  [notes_work, cards_work], lambda a: [d.name for d in a.list_documents()] == ["flight.pdf"]
                  and any(CITED in label for label in a.ask_once(QUESTION).source_labels),
                  f"flight.pdf is back and Q&A cites {CITED}"),
    # The graph is written with each note, so a new note waits for the repair; the notes tab shows the sentence
    # where the graph was, not "no concepts yet".
    "graph": (GRAPH, [concept_view, lambda a: a.add_note("Yaw turns the nose.")],
              [questions_work, notes_listed, cards_work, documents_work], lambda a: bool(concept_view(a).nodes),
              "the concept graph shows its concepts again"),
}


@pytest.mark.parametrize("how", list(HOW))
@pytest.mark.parametrize("store", list(CASES))
def test_a_damaged_store_says_so_the_rest_works_and_repair_brings_it_back(copy, store, how, reliability):
    kind, damaged_uses, others, back, back_said = CASES[store]
    damage(copy / kind.file, how)
    a = start_app(copy)
    sentences = {the_sentence(refused(lambda: use(a)), kind) for use in damaged_uses}
    assert len(sentences) == 1, sentences                       # one sentence, whatever is tried
    worked = [check(a) for check in others]
    stop_app(a.settings)

    code, output = repair_command(copy)
    assert code == 0, output
    repaired = line_of(output, kind.file)
    assert ("put its header back, nothing lost" if how == "header" else "restored the backup") in repaired, output
    a = start_app(copy)
    assert back(a), output
    assert all(damage_of(copy / k.file) is None for k in STORES if (copy / k.file).exists())
    reliability.record(SECTION, f"{kind.file} {HOW[how]} (app stopped, then started)",
                       f"“{sentences.pop()}” on every use of it; meanwhile {'; '.join(worked)}. "
                       f"`python -m assistant repair`: “{repaired}” Then {back_said}.")


def test_a_deleted_store_with_backups_is_missing_not_new(copy, reliability):
    damage(copy / MEMORIES.file, "missing")
    a = start_app(copy)
    sentence = the_sentence(refused(a.list_notes), MEMORIES)
    worked = [cards_work(a), questions_work(a)]
    stop_app(a.settings)
    assert not (copy / MEMORIES.file).exists()                 # not recreated empty
    code, output = repair_command(copy)
    repaired = line_of(output, MEMORIES.file)
    assert code == 0 and "missing; restored the backup" in repaired, output
    assert len(start_app(copy).list_notes()) == len(NOTES)
    reliability.record(SECTION, f"{MEMORIES.file} deleted (its backups remain)",
                       f"“{sentence}”; meanwhile {'; '.join(worked)}. `python -m assistant repair`: “{repaired}” "
                       f"Then the {len(NOTES)} notes are back.")


def test_a_store_damaged_before_its_first_backup_says_so_and_repair_starts_it_again(copy, reliability):
    shutil.rmtree(copy / "backups" / CARDS.name)
    damage(copy / CARDS.file, "empty")
    a = start_app(copy)
    error = refused(a.study.cards)
    sentence = the_sentence(error, CARDS)
    assert error.key == "err_store_damaged_no_backup" and "has no backup yet" in sentence
    notes_work(a)
    stop_app(a.settings)
    code, output = repair_command(copy)
    repaired = line_of(output, CARDS.file)
    assert code == 1 and "no good backup to restore, so it starts again empty" in repaired, output
    assert list((copy / "backups" / "damaged").glob("*/cards.sqlite3"))     # the damaged file is kept
    assert start_app(copy).study.cards() == []                 # the person chose a new, empty deck
    reliability.record(SECTION, f"{CARDS.file} cut to 0 bytes before any backup of it was taken",
                       f"“{sentence}”; notes keep working. `python -m assistant repair` (exit 1): “{repaired}” "
                       "Then the Review tab starts with an empty deck, which the person was told.")


def test_documents_restored_from_an_older_backup_keep_the_later_uploads_files(copy, tmp_path, reliability):
    a = start_app(copy)
    later = tmp_path / "later.md"
    later.write_text("# Winglets\n\nWinglets reduce the drag of the wingtip vortex.\n", encoding="utf-8")
    doc = a.load_document(later)
    stored = next((copy / "files").glob(f"*/{doc.doc_id}*"))
    stop_app(a.settings)
    damage(copy / DOCUMENTS.file, "half")
    code, output = repair_command(copy)
    repaired = line_of(output, DOCUMENTS.file)
    assert code == 0 and "the stored files of 1 document loaded after the backup were moved" in repaired, output
    kept = list((copy / "backups" / "damaged").glob(f"*/files/*/{stored.name}"))
    assert kept and kept[0].read_bytes() == later.read_bytes()
    a = start_app(copy)
    assert [d.name for d in a.list_documents()] == ["flight.pdf"]
    assert any(CITED in label for label in a.ask_once(QUESTION).source_labels)
    reliability.record(SECTION, f"{DOCUMENTS.file} cut in half; its backup is older than the last upload",
                       f"`python -m assistant repair`: “{repaired}” The restored library answers; the later "
                       "upload's stored file is kept, not removed as an orphan.")


@pytest.mark.parametrize("how", ["header", "half"])
def test_a_damaged_embedding_cache_is_rebuilt_by_itself(copy, how, reliability):
    cache = copy / "embedding_cache.sqlite"
    damage(cache, how)
    a = start_app(copy)
    said = questions_work(a)
    worked = [notes_work(a), cards_work(a), documents_work(a)]
    aside = cache.with_name(cache.name + ".damaged")
    assert aside.exists() and damage_of(cache) is None
    import sqlite3
    with sqlite3.connect(cache) as db:
        assert db.execute("SELECT count(*) FROM embedding_cache").fetchone()[0] > 0    # filling again
    reliability.record(SECTION, f"embedding_cache.sqlite {HOW[how]}",
                       f"rebuilt by itself: moved aside to embedding_cache.sqlite.damaged, made again, logged; "
                       f"{said}; {'; '.join(worked)}; nothing shown to the person.")


# -- a full disk -----------------------------------------------------------------------------------------------

def _mount_tiny(folder: Path, megabytes: int) -> bool:
    folder.mkdir(parents=True, exist_ok=True)
    if os.name != "posix" or os.geteuid() != 0 or not shutil.which("mount"):
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", str(folder)],
                          capture_output=True, timeout=30)
    return done.returncode == 0


def _fill(folder: Path) -> Path:
    filler = folder / "filler"
    with open(filler, "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
    return filler


def until_full(use, tries: int = 300) -> tuple[DiskFull, int]:
    """The DiskFull the write `use(i)` meets, and how many writes went in before it."""
    for i in range(tries):
        try:
            use(i)
        except DiskFull as exc:
            return exc, i
    raise AssertionError(f"{tries} writes went in: the store never ran out of room")


def test_a_full_disk_says_the_disk_is_full_and_damages_nothing(tmp_path, reliability):
    mount = tmp_path / "tiny"
    real = _mount_tiny(mount, 40)
    data = mount / "data"
    pdf = tmp_path / "flight.pdf"
    pdf.write_bytes(make_pdf(AVIATION, title="Flight Control Notes"))
    try:
        a = start_app(data)
        a.load_document(pdf)
        a.add_note(NOTES[0])
        a.study.add_card(*CARD_TEXTS[0])
        if real:
            filler = _fill(mount)
            how = "a 40 MB tmpfs filled to the last byte"
        else:    # SQLite's own ceiling: the same SQLITE_FULL a full disk gives
            for conn in (a.rag.store._conn, a.memory.docs._conn, a.study.store._conn):
                pages = conn.execute("PRAGMA page_count").fetchone()[0]
                conn.execute(f"PRAGMA max_page_count={pages}")
            how = "every store at SQLite's max_page_count (no tmpfs here)"
        later = tmp_path / "winglets.md"
        later.write_text("# Winglets\n\n" + "Winglets reduce the drag of the wingtip vortex. " * 400, encoding="utf-8")
        card_id = a.study.cards()[0].card_id
        shown, tries = {}, {}
        for what, use in [("a note", lambda i: a.add_note(f"Flap setting {i} changes the camber of the wing.")),
                          ("a card review", lambda i: a.study.review(card_id, "good")),
                          ("an upload", lambda i: a.load_document(later))]:
            # On the full tmpfs the first try fails; under max_page_count a small write may still fit in a page's
            # free bytes, so it is tried until the file has no room left.
            error, tries[what] = until_full(use)
            shown[what] = failure(None, error)
            assert failure(ZH, error) == "存放应用数据的磁盘已满；请腾出一些空间后重试。"
        if real:
            assert set(tries.values()) == {0}
        assert set(shown.values()) == {"The disk holding the app's data is full; free some space on it and try again."}
        result = a.ask_once(QUESTION)                           # reading needs no room
        assert any(CITED in label for label in result.source_labels)
        if real:
            filler.unlink()
        else:
            for conn in (a.rag.store._conn, a.memory.docs._conn, a.study.store._conn):
                conn.execute("PRAGMA max_page_count=1073741823")
        notes = len(a.list_notes())
        a.add_note("Flaps change the camber of the wing.")
        a.study.review(card_id, "good")
        a.load_document(later)
        assert len(a.list_notes()) == notes + 1 and len(a.list_documents()) == 2
        stop_app(a.settings)
        assert all(damage_of(data / k.file) is None for k in STORES if (data / k.file).exists())
    finally:
        stop_app(settings_for(data))
        if real:
            subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=30)
    notice = f" (notice: “{result.notice}”)" if result.notice else ""
    reliability.record(SECTION, f"disk full: {how}",
                       f"a note, a card review and an upload each: “{shown['a note']}”; a question still answered "
                       f"citing {CITED}{notice}; space freed: a note, a review and the upload saved; every store passes "
                       "quick_check (nothing damaged)")

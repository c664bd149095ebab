"""Backups of the data folder's SQLite stores (core.backup) and the stores' own knowledge of damage (core.sqlite),
on the real stores and real files: a backup is a whole database that passes quick_check, an unchanged store is
not copied again, the last five are kept, a damaged store never displaces its good backups; a store is never
recreated empty where one was; repair puts a garbled header back or restores the newest good backup; a full
disk (SQLite's max_page_count, the same SQLITE_FULL a full disk gives) is one sentence and damages nothing."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core import backup
from core.errors import DiskFull
from core.sqlite import CARDS, GRAPH, GRAPH_OUTBOX, MEMORIES, damage_of, header_damage, is_damaged
from memory.graph.base import Entity
from memory.graph.resilience import Outbox
from memory.graph.sqlite_store import SQLiteGraphStore
from study.store import CardStore
from study.types import Card
from tests.store_damage import damage, refused

ROOT = Path(__file__).resolve().parents[1]
WORDS = ["lift", "drag", "thrust", "weight", "pitch", "roll", "yaw", "flaps", "stall", "trim"]


def card(i: int, user: str = "u") -> Card:
    return Card(card_id=f"c{i}", user_id=user, kind="qa", front=f"What is {WORDS[i % 10]} ({i})? " + "x" * 200,
                back="a force", language="en", source_kind="person")


def cards_store(data_dir: Path, n: int = 0) -> CardStore:
    store = CardStore(data_dir / CARDS.file)
    if n:
        store.add_many([card(i) for i in range(n)])
    return store


# -- backups -------------------------------------------------------------------------------------------------

def test_a_backup_is_a_whole_copy_with_its_counts_and_an_unchanged_store_is_not_copied_again(tmp_path):
    store = cards_store(tmp_path, 41)
    done = {o.store: o for o in backup.back_up(tmp_path)}
    assert done[CARDS.file].done == "backed up" and done[CARDS.file].counts["cards"] == 41
    [copy] = backup.backups_of(tmp_path, CARDS)
    assert copy.parent == tmp_path / "backups" / "cards.sqlite3" and damage_of(copy) is None
    with sqlite3.connect(copy) as db:
        assert db.execute("SELECT count(*) FROM cards").fetchone()[0] == 41
    assert json.loads(copy.with_suffix(".json").read_text())["counts"]["cards"] == 41
    assert {o.store: o.done for o in backup.back_up(tmp_path)}[CARDS.file] == "unchanged"
    store.add_many([card(41)])
    assert {o.store: o.done for o in backup.back_up(tmp_path)}[CARDS.file] == "backed up"
    assert len(backup.backups_of(tmp_path, CARDS)) == 2
    store.close()


def test_the_last_five_are_kept(tmp_path):
    store = cards_store(tmp_path)
    for i in range(7):
        store.add_many([card(i)])
        backup.back_up(tmp_path)
    kept = backup.backups_of(tmp_path, CARDS)
    assert len(kept) == backup.KEEP == 5
    with sqlite3.connect(kept[0]) as newest, sqlite3.connect(kept[-1]) as oldest:
        assert newest.execute("SELECT count(*) FROM cards").fetchone()[0] == 7
        assert oldest.execute("SELECT count(*) FROM cards").fetchone()[0] == 3
    assert len(list((tmp_path / "backups" / "cards.sqlite3").glob("*.json"))) == 5
    store.close()


@pytest.mark.parametrize("how", ["empty", "half", "header", "pages"])
def test_a_damaged_store_is_not_backed_up_and_its_good_backups_stay(tmp_path, how):
    cards_store(tmp_path, 300).close()
    backup.back_up(tmp_path)
    good = backup.backups_of(tmp_path, CARDS)
    damage(tmp_path / CARDS.file, how)
    outcome = {o.store: o for o in backup.back_up(tmp_path, force=True)}[CARDS.file]
    assert outcome.done == "skipped" and "damaged" in outcome.sentence
    assert backup.backups_of(tmp_path, CARDS) == good


def test_the_schedule_backs_up_in_the_background_and_stops(tmp_path):
    cards_store(tmp_path, 3).close()
    backup.schedule(tmp_path, every_hours=1, first_delay_s=0.2)
    backup.schedule(tmp_path, every_hours=1, first_delay_s=0.2)        # once per folder
    deadline = time.monotonic() + 20
    while not backup.backups_of(tmp_path, CARDS) and time.monotonic() < deadline:
        time.sleep(0.1)
    backup.stop_schedules()
    assert len(backup.backups_of(tmp_path, CARDS)) == 1


# -- a store never recreated empty ---------------------------------------------------------------------------

def test_a_new_store_is_whole_from_the_start_and_a_missing_one_without_backups_is_a_first_run(tmp_path):
    store = cards_store(tmp_path)
    path = tmp_path / CARDS.file
    assert header_damage(path) is None and path.stat().st_size > 0
    assert not [p for p in path.parent.iterdir() if ".new-" in p.name]     # the temporary file is gone
    assert store.list("u") == []
    store.close()


@pytest.mark.parametrize("how", ["empty", "half", "header", "pages", "missing"])
def test_a_damaged_store_refuses_every_use_in_one_sentence(tmp_path, how):
    cards_store(tmp_path, 300).close()
    backup.back_up(tmp_path)
    path = tmp_path / CARDS.file
    damage(path, how)
    size = path.stat().st_size if path.exists() else None
    store = cards_store(tmp_path)
    assert is_damaged(store._conn)
    for use in (lambda: store.list("u"), lambda: store.add_many([card(999)]), lambda: store.count_due("u", None)):
        error = refused(use)
        assert str(error) == ("The study cards database (study/cards.sqlite3) is damaged; stop the app and run "
                              "`python -m assistant repair` to restore it from the last backup.")
        assert error.key == "err_store_damaged" and error.store == CARDS.file
    assert (path.stat().st_size if path.exists() else None) == size        # nothing was written to it
    store.close()


def test_without_a_backup_the_sentence_says_so_and_repair_starts_it_again(tmp_path):
    cards_store(tmp_path, 5).close()
    damage(tmp_path / CARDS.file, "empty")
    error = refused(lambda: cards_store(tmp_path).list("u"))
    assert error.key == "err_store_damaged_no_backup" and "has no backup yet" in str(error)
    [outcome] = [o for o in backup.repair(tmp_path) if o.store == CARDS.file]
    assert outcome.done == "set aside" and "starts again empty" in outcome.sentence
    kept = list((tmp_path / "backups" / "damaged").glob("*/cards.sqlite3"))
    assert len(kept) == 1 and kept[0].stat().st_size == 0                 # the damaged file is kept
    assert cards_store(tmp_path).list("u") == []                           # chosen by the person: a new store


def test_damage_met_at_run_time_refuses_the_store_from_then_on(tmp_path):
    store = cards_store(tmp_path, 300)
    store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    damage(tmp_path / CARDS.file, "pages")
    with sqlite3.connect(tmp_path / CARDS.file) as other:                  # another writer: the cache is stale
        other.execute("PRAGMA journal_mode=WAL")
        other.execute("CREATE TABLE IF NOT EXISTS touch (x)")
    error = refused(lambda: store.list("u"))
    assert error.key in ("err_store_damaged", "err_store_damaged_no_backup")
    refused(lambda: store.add_many([card(999)]))                            # no write goes on into it
    store.close()


def graph(data_dir: Path) -> tuple[SQLiteGraphStore, callable, callable]:
    store = SQLiteGraphStore(data_dir / GRAPH.file)
    return store, lambda i: store.add_memory("u", f"m{i}", [Entity(f"k{i}", WORDS[i % 10])], []), \
        lambda: store.stats("u")["entities"]


def outbox(data_dir: Path) -> tuple[Outbox, callable, callable]:
    store = Outbox(data_dir / GRAPH_OUTBOX.file, "bolt://graph.example:7687")
    return store, lambda i: store.append("u", "clear_user", {"user_id": "u", "i": i}), lambda: store.count("u")


@pytest.mark.parametrize("how", ["empty", "header", "missing"])
@pytest.mark.parametrize("kind, opened", [(GRAPH, graph), (GRAPH_OUTBOX, outbox)], ids=["graph", "outbox"])
def test_the_graph_files_are_never_recreated_empty_either(tmp_path, kind, opened, how):
    """The concept graph and a Neo4j server's waiting writes open through core.sqlite like every store."""
    store, write, count = opened(tmp_path)
    for i in range(7):
        write(i)
    store.close()
    backup.back_up(tmp_path)
    path = tmp_path / kind.file
    damage(path, how)
    size = path.stat().st_size if path.exists() else None
    store, write, count = opened(tmp_path)
    for use in (count, lambda: write(99)):
        error = refused(use)
        assert str(error).startswith(f"{kind.what} ({kind.file}) is damaged") and error.store == kind.file
    store.close()
    assert (path.stat().st_size if path.exists() else None) == size        # not recreated, nothing written
    [outcome] = [o for o in backup.repair(tmp_path) if o.store == kind.file]
    assert outcome.done in ("restored", "fixed"), outcome.sentence
    store, write, count = opened(tmp_path)
    assert count() == 7
    store.close()

# -- repair and restore --------------------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["empty", "half", "pages", "missing"])
def test_repair_restores_the_newest_good_backup(tmp_path, how):
    cards_store(tmp_path, 41).close()
    backup.back_up(tmp_path)
    path = tmp_path / CARDS.file
    damage(path, how)
    outcomes = {o.store: o for o in backup.repair(tmp_path)}
    assert outcomes[CARDS.file].done == "restored" and "(41 cards)" in outcomes[CARDS.file].sentence
    assert damage_of(path) is None and not path.with_name(path.name + "-wal").exists()
    assert len(cards_store(tmp_path).list("u")) == 41
    assert {o.done for o in backup.repair(tmp_path)} == {"whole"}          # a second run finds nothing


def test_a_garbled_header_is_put_back_and_nothing_is_lost_not_even_what_came_after_the_backup(tmp_path):
    store = cards_store(tmp_path, 41)
    backup.back_up(tmp_path)
    store.add_many([card(41), card(42)])                                    # after the backup
    store.close()
    damage(tmp_path / CARDS.file, "header")
    [outcome] = [o for o in backup.repair(tmp_path) if o.store == CARDS.file]
    assert outcome.done == "fixed" and "nothing lost (43 cards)" in outcome.sentence
    assert len(cards_store(tmp_path).list("u")) == 43


def test_a_damaged_backup_is_passed_over_for_an_older_good_one(tmp_path):
    store = cards_store(tmp_path, 10)
    backup.back_up(tmp_path)
    store.add_many([card(10)])
    backup.back_up(tmp_path)
    store.close()
    newest = backup.backups_of(tmp_path, CARDS)[0]
    damage(newest, "empty")
    damage(tmp_path / CARDS.file, "empty")
    [outcome] = [o for o in backup.repair(tmp_path) if o.store == CARDS.file]
    assert outcome.done == "restored" and "(10 cards)" in outcome.sentence


def test_restore_puts_a_chosen_backup_in_place_of_a_whole_store(tmp_path):
    store = cards_store(tmp_path, 10)
    backup.back_up(tmp_path)
    first = backup.backups_of(tmp_path, CARDS)[0].stem
    store.clear_user("u")                                                   # deleted by mistake
    backup.back_up(tmp_path)
    store.close()
    assert "10 cards" in "\n".join(backup.listing(tmp_path))
    outcome = backup.restore(tmp_path, CARDS, first)
    assert outcome.done == "restored" and "(10 cards)" in outcome.sentence
    assert len(cards_store(tmp_path).list("u")) == 10
    assert backup.restore(tmp_path, MEMORIES).done == "none"               # no backup: nothing changes


def test_repair_and_restore_wait_for_the_app_to_stop(tmp_path):
    """The command takes the data folder's lock the app holds: refused in one sentence while it runs."""
    from core.settings import Settings
    from core.vectors import close_vector_store, get_vector_store
    settings = Settings(_env_file=None, data_dir=tmp_path)
    cards_store(tmp_path, 3).close()
    env = {**os.environ, "DATA_DIR": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    env.pop("QDRANT_URL", None)
    get_vector_store(settings)                                              # what a running app holds
    try:
        held = subprocess.run([sys.executable, "-m", "assistant", "repair"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=120)
    finally:
        close_vector_store(settings)
    assert held.returncode == 1 and "in use by another process" in held.stderr, held.stderr
    free = subprocess.run([sys.executable, "-m", "assistant", "repair"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert free.returncode == 0 and "study/cards.sqlite3: whole, nothing to do." in free.stdout, free.stderr


# -- a full disk ---------------------------------------------------------------------------------------------

def test_a_full_database_is_one_sentence_and_nothing_is_damaged(tmp_path):
    """SQLite's max_page_count makes the file full the way a full disk does (SQLITE_FULL)."""
    store = cards_store(tmp_path, 5)
    pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
    store._conn.execute(f"PRAGMA max_page_count={pages}")
    with pytest.raises(DiskFull) as caught:
        store.add_many([card(i) for i in range(5, 400)])
    assert str(caught.value) == "The disk holding the app's data is full; free some space on it and try again."
    assert caught.value.key == "err_disk_full"
    assert len(store.list("u")) == 5                                       # the failed write left nothing
    store._conn.execute("PRAGMA max_page_count=1073741823")
    store.add_many([card(i) for i in range(5, 400)])                       # room again: it works
    assert len(store.list("u")) == 400
    store.close()
    assert damage_of(tmp_path / CARDS.file) is None

"""rag.reconcile's small parts: which process wrote a pending ingest, and which document a stored entry is."""
from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

from rag.reconcile import owner_alive, process_identity, stored_doc_id


def test_this_process_is_alive():
    assert owner_alive(process_identity(), time.time())


def test_an_exited_process_is_not():
    child = subprocess.Popen(["true"])
    child.wait()
    assert not owner_alive(f"{socket.gethostname()}|{child.pid}|-", time.time())


def test_a_later_process_with_the_same_pid_is_not_the_writer():
    host, pid, _ = process_identity().split("|")
    assert not owner_alive(f"{host}|{pid}|0", time.time())   # same pid, another start time


def test_another_machine_s_entry_is_kept_a_day_then_cleared():
    assert owner_alive("elsewhere|123|456", time.time() - 3600)
    assert not owner_alive("elsewhere|123|456", time.time() - 2 * 86400)


def test_a_stored_entry_names_its_document():
    names = ["0123abcd.pdf", "0123abcd.pdf.ocr.json", "0123abcd.figures", "0123abcd.pdf.ocr.jsonx1y2.tmp"]
    assert {stored_doc_id(Path(n)) for n in names} == {"0123abcd"}

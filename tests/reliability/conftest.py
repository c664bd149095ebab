"""The reliability table (docs/RELIABILITY.md) is written by these tests, never by hand.

Each test records what it tried and what happened with the `reliability` fixture:

    def test_truncated_pdf(reliability, ...):
        ...                                   # try it, assert the behaviour
        reliability.record("Hostile input", "truncated PDF", "refused: 'x.pdf' could not be read …")

A row is written only when the test passes (a failed test shows as FAILED in the table). When the whole
`tests/reliability` folder ran, the table goes to docs/RELIABILITY.md; a partial run (-k, one file)
writes test-artefacts/RELIABILITY.md instead, so a partial run never shrinks the committed table.
The table itself and how it is written: tests/reliability/table.py.
"""
from __future__ import annotations

import pytest

from tests.reliability.table import HERE, SECTIONS, TABLE, Row


class Recorder:
    def __init__(self, nodeid: str):
        self.nodeid = nodeid
        self.rows: list[Row] = []

    def record(self, section: str, case: str, result: str) -> None:
        """One line of the table: what was tried (`case`) and what the person saw or the test measured."""
        if section not in SECTIONS:
            raise ValueError(f"unknown section {section!r}; one of {SECTIONS}")
        self.rows.append(Row(section, case, " ".join(str(result).split()), self.nodeid))

    def figure(self, name: str, value: str) -> None:
        """A measured figure for the summary (e.g. "questions during ingest p95", "1.9 s")."""
        TABLE.figures.append((name, value))


@pytest.fixture
def reliability(request) -> Recorder:
    recorder = Recorder(request.node.nodeid)
    yield recorder
    rep = getattr(request.node, "rep_call", None)
    passed = bool(rep and rep.passed)
    for row in recorder.rows:
        row.passed = passed
    TABLE.rows.extend(recorder.rows)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.rep_call = report
    if report.when == "call" or (report.when == "setup" and not report.passed):
        if str(item.path).startswith(str(HERE)):
            TABLE.ran.add(item.nodeid)


def pytest_collection_modifyitems(session, config, items):
    TABLE.collected.update(i.nodeid for i in items if str(i.path).startswith(str(HERE)))


def pytest_deselected(items):
    if any(str(i.path).startswith(str(HERE)) for i in items):
        TABLE.deselected = True



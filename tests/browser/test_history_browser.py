"""Past conversations in Debian's Chromium against the real app with no language model (see
conftest.extractive_app): a PDF is uploaded, two questions are asked, the page is reloaded (a reload starts
an empty chat in a new session), and the conversation, picked from "Past conversations", is back in the chat.
"""
from __future__ import annotations

import pytest

from tests.browser.conftest import login, open_tab, upload
from tests.browser.pdfgen import AVIATION, make_pdf
from tests.browser.test_sections_browser import ask

pytestmark = pytest.mark.browser

FIRST = "What happens when the two angle of attack sensors disagree?"
SECOND = "How often does recurrent training repeat the scenarios?"


def chat_text(page) -> str:
    return page.inner_text("#chat")


def test_a_conversation_survives_a_reload(browser, extractive_app, tmp_path, artefacts):
    pdf = tmp_path / "flight-history.pdf"
    pdf.write_bytes(make_pdf(AVIATION, title="Flight Control History"))
    context, page = login(browser, extractive_app, "reader")
    try:
        upload(page, pdf)
        open_tab(page, "Q&A")
        page.wait_for_selector("#question textarea")
        first = ask(page, FIRST)
        assert first
        ask(page, SECOND)
        # after an answer the list holds this conversation, selected
        page.wait_for_function("q => document.querySelector('#conversations input').value.includes(q)",
                               arg=FIRST[:30])
        assert "(2 questions)" in page.input_value("#conversations input")

        page.reload()
        page.wait_for_selector("#tabs")
        page.wait_for_function("() => document.querySelector('#who') && "
                               "document.querySelector('#who').innerText.trim().length > 0", timeout=120_000)
        open_tab(page, "Q&A")
        assert FIRST not in chat_text(page)          # a reload starts an empty chat
        page.click("#conversations input")
        option = f"[role=option]:has-text('{FIRST[:40]}')"
        page.wait_for_selector(option)
        page.click(option)
        page.wait_for_function("qs => qs.every(q => document.querySelector('#chat').innerText.includes(q))",
                               arg=[FIRST, SECOND])
        bots = page.eval_on_selector_all('#chat [data-testid="bot"]', "els => els.map(e => e.innerText.trim())")
        assert len(bots) == 2 and all(bots), bots
        assert bots[0].split()[0] in first
        page.screenshot(path=str(artefacts / "history-conversation.png"), full_page=True)

        # a question now continues the picked conversation: three questions in it
        ask(page, "What do pilots complete before returning to service?")
        page.wait_for_function("() => document.querySelector('#conversations input').value.includes('(3 questions)')")
        # "New conversation" empties the chat and the selection
        page.click("#clear-chat")
        page.wait_for_function("() => !document.querySelector('#chat').innerText.includes('recurrent training')")
        assert page.input_value("#conversations input") == ""
    finally:
        context.close()

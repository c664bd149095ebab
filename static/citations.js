() => {
  // [n] in an answer is a Markdown link "#cite-<answer>-<n>" (assistant.views.chat_markdown). A click on
  // it opens that source's page: the request goes into window.__pdfCite and the hidden #cite-open button
  // is clicked, whose event (app.open_citation) lists that answer's sources with [n] selected and shows
  // the page. Listening on the document (capture phase) survives the chat re-rendering its messages.
  if (window.__pdfCiteHooked) return;
  window.__pdfCiteHooked = true;
  document.addEventListener("click", (event) => {
    const link = event.target && event.target.closest ? event.target.closest('a[href^="#cite-"]') : null;
    if (!link || !link.closest("#chat")) return;
    event.preventDefault();
    event.stopPropagation();
    window.__pdfCite = link.getAttribute("href").slice("#cite-".length);
    const holder = document.querySelector("#cite-open");
    const button = holder && (holder.tagName === "BUTTON" ? holder : holder.querySelector("button"));
    if (button) button.click();
  }, true);
  // "Save this passage as a note" (#note-passage) saves only the words selected in the passage or section
  // panel. A click clears the selection before the click event, so it is read at mousedown (capture
  // phase, before the browser collapses it) into window.__noteSelection, which the button's event sends.
  document.addEventListener("mousedown", (event) => {
    if (!event.target || !event.target.closest || !event.target.closest("#note-passage")) return;
    const selection = window.getSelection();
    let text = "";
    if (selection && !selection.isCollapsed && selection.rangeCount) {
      const node = selection.getRangeAt(0).commonAncestorContainer;
      const element = node.nodeType === 1 ? node : node.parentElement;
      if (element && element.closest("#passage-text, #section-view")) text = selection.toString();
    }
    window.__noteSelection = text;
  }, true);
}

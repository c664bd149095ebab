() => {
  // A click on a concept in the Notes tab's map (assistant.views.graph_svg draws each as a
  // <g class="concept-node" data-key=...>) shows that concept: its key goes into window.__conceptPick and
  // the hidden #concept-open button is clicked, whose event (ui.notes_tab.show_concept) selects it in the
  // picker and lists its notes, cards and pages. Listening on the document survives the map being redrawn.
  if (window.__conceptHooked) return;
  window.__conceptHooked = true;
  document.addEventListener("click", (event) => {
    const node = event.target && event.target.closest ? event.target.closest(".concept-node") : null;
    if (!node || !node.closest("#concept-graph")) return;
    window.__conceptPick = node.getAttribute("data-key");
    const holder = document.querySelector("#concept-open");
    const button = holder && (holder.tagName === "BUTTON" ? holder : holder.querySelector("button"));
    if (button) button.click();
  });
}

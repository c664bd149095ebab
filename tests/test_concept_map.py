"""The concept map: readable at 30+ nodes (no two labels overlap, every node on the canvas, same graph same
picture), bilingual names sharing one node, and one concept's notes, cards and pages — against the real
stores and the real embedder."""
from __future__ import annotations

import re
import unicodedata
import xml.etree.ElementTree as ET

import pytest

from assistant import concepts
from assistant.facade import PDFLearningAssistant
from assistant.views import graph_svg
from memory.graph.base import GraphView, normalise_key
from tests.browser.pdfgen import STUDY, make_pdf

SVG = "{http://www.w3.org/2000/svg}"

LINKED = [  # (concept, the concepts its notes named)
    ("Support Vector Machine", ["Hyperplane", "Kernel Function", "Soft Margin", "支持向量"]),
    ("Recursion", ["Base Case", "Call Stack", "Factorial", "RecursionError"]),
    ("Transformer", ["Self-Attention", "Multi-Head Attention", "Positional Encoding", "softmax"]),
    ("注意力机制", ["查询向量", "键向量", "值向量", "注意力权重"]),
    ("Gradient Descent", ["Learning Rate", "Loss Function"]),
    ("梯度下降", ["学习率"]),
]
ALONE = ["Tuple", "Dictionary keys and hashing", "List comprehension", "卷积神经网络", "主成分分析",
         "Bayes' theorem", "Stochastic gradient descent with momentum", "随机森林", "Overfitting", "Decision tree"]


def realistic_view() -> GraphView:
    """35 nodes: six linked groups (one a chain across groups), nine concepts with no link, English and Chinese."""
    nodes, edges = [], []
    for concept, named in LINKED:
        nodes.append({"key": normalise_key(concept), "name": concept, "label": "CONCEPT", "memories": 4})
        for i, name in enumerate(named):
            nodes.append({"key": normalise_key(name), "name": name, "label": "CONCEPT", "memories": 1 + i % 3})
            edges.append({"source": normalise_key(concept), "target": normalise_key(name), "type": "ABOUT", "weight": 1})
    edges.append({"source": "gradient descent", "target": "梯度下降", "type": "RELATED_TO", "weight": 2})
    edges.append({"source": "learning rate", "target": "学习率", "type": "RELATED_TO", "weight": 1})
    nodes += [{"key": normalise_key(n), "name": n, "label": "CONCEPT", "memories": 1} for n in ALONE]
    assert len(nodes) == 35 and len({n["key"] for n in nodes}) == 35
    return GraphView(nodes=nodes, edges=edges)


# -- reading an SVG back: what a reader would see -------------------------------------------------------------

def text_width(text: str, font_size: float) -> float:
    """Estimated from the characters: CJK ones are a font size wide, others 0.6 of it."""
    return sum(font_size if unicodedata.east_asian_width(ch) in ("W", "F") else 0.6 * font_size for ch in text)


def label_boxes(svg: str) -> list[tuple[str, tuple[float, float, float, float]]]:
    boxes = []
    for text in ET.fromstring(svg).iter(f"{SVG}text"):
        size = float(text.get("font-size", 12))
        x, y, width = float(text.get("x")), float(text.get("y")), text_width(text.text or "", size)
        left = {"middle": x - width / 2, "end": x - width}.get(text.get("text-anchor", "start"), x)
        boxes.append((text.text, (left, y - 0.8 * size, left + width, y + 0.2 * size)))
    return boxes


def overlapping_labels(svg: str) -> list[tuple[str, str]]:
    boxes = label_boxes(svg)
    return [(a, b) for i, (a, p) in enumerate(boxes) for b, q in boxes[i + 1:]
            if min(p[2], q[2]) - max(p[0], q[0]) > 0.5 and min(p[3], q[3]) - max(p[1], q[1]) > 0.5]


def outside_view(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    _, _, width, height = (float(v) for v in root.get("viewBox").split())
    out = [f"node at {c.get('cx')},{c.get('cy')}" for c in root.iter(f"{SVG}circle")
           if not (float(c.get("r")) <= float(c.get("cx")) <= width - float(c.get("r"))
                   and float(c.get("r")) <= float(c.get("cy")) <= height - float(c.get("r")))]
    out += [name for name, (x0, y0, x1, y1) in label_boxes(svg) if x0 < 0 or y0 < 0 or x1 > width or y1 > height]
    return out


def test_the_check_sees_overlapping_labels():
    """The reader above can fail: two labels written at nearly one spot, and one beyond the edge."""
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 200 100">'
           '<circle cx="50" cy="50" r="8"/><text x="50" y="40" text-anchor="middle" font-size="12">支持向量机</text>'
           '<circle cx="60" cy="52" r="8"/><text x="60" y="44" text-anchor="middle" font-size="12">Hyperplane</text>'
           '<circle cx="198" cy="50" r="8"/><text x="198" y="40" text-anchor="middle" font-size="12">Kernel</text></svg>')
    assert overlapping_labels(svg) == [("支持向量机", "Hyperplane")]
    assert len(outside_view(svg)) == 2


def test_a_35_concept_map_is_readable_and_the_same_each_time():
    view = realistic_view()
    svg = graph_svg(view, own_concepts={"recursion", "注意力机制"})
    assert svg.count("<circle") == 35 and svg.count('class="concept-node"') == 35
    assert overlapping_labels(svg) == []
    assert outside_view(svg) == []
    assert graph_svg(view, own_concepts={"recursion", "注意力机制"}) == svg          # deterministic
    _, _, width, height = (float(v) for v in ET.fromstring(svg).get("viewBox").split())
    small = graph_svg(GraphView(nodes=view.nodes[:5], edges=view.edges[:4]))
    assert height > float(ET.fromstring(small).get("viewBox").split()[3])        # the canvas grows with the map
    # a long name is shortened on the map, its full name kept in the node's title
    assert "Stochastic gradient descent with momentum (CONCEPT" in svg
    assert re.search(r">Stochastic gradient[^<]*…</text>", svg)
    # node size follows how many memories mention it
    radii = {float(c.get("r")) for c in ET.fromstring(svg).iter(f"{SVG}circle")}
    assert len(radii) >= 3


# -- names and keys -------------------------------------------------------------------------------------------

def test_bilingual_names_share_one_key_and_keep_their_alias():
    assert concepts.variants("支持向量机 (SVM)") == ["支持向量机", "SVM"]
    assert concepts.variants("SVM（支持向量机）") == ["SVM", "支持向量机"]
    assert concepts.variants("Tuples") == ["Tuples"]
    assert concepts.concept_key("支持向量机 (SVM)", {}) == ("svm", ["支持向量机"])
    assert concepts.concept_key("SVM（支持向量机）", {})[0] == "svm"
    # a spelling the person already uses decides the node
    assert concepts.concept_key("支持向量机 (SVM)", {"支持向量机": "支持向量机"}) == ("支持向量机", ["SVM"])
    assert concepts.concept_key("Tuples", {}) == ("tuple", [])


# -- against the real stores ------------------------------------------------------------------------------------

@pytest.fixture
def student(settings, tmp_path):
    a = PDFLearningAssistant("carol", settings)
    path = tmp_path / "study-guide.pdf"
    path.write_bytes(make_pdf(STUDY, title="Study Guide"))
    a.load_document(path)
    return a


def test_one_concept_lists_its_notes_cards_and_pages(student):
    first = student.add_note("支持向量机寻找最大间隔的超平面。", "支持向量机 (SVM)")
    second = student.add_note("An SVM uses a kernel function for data that is not linearly separable.", "SVM")
    third = student.add_note("核函数把样本映射到高维空间。", "SVM（支持向量机）")
    student.add_note("A tuple is an immutable sequence.", "Tuples")
    keys = {n["key"] for n in student.concept_graph().nodes if n["label"] == "CONCEPT"}
    assert "svm" in keys and "支持向量机" not in keys and "支持向量机 (svm)" not in keys and "svm（支持向量机）" not in keys
    assert concepts.own_concept_keys(student.list_notes()) == {"svm", "tuple"}
    student.study.cards_from_note(first.memory_id)

    details = student.concept_details("svm")
    assert details.key == "svm" and "支持向量机" in details.aliases
    assert {n.id for n in details.notes} == {first.memory_id, second.memory_id, third.memory_id}
    assert details.cards and all("支持向量机" in c.concept or "SVM" in c.concept for c in details.cards)
    assert details.pages and details.pages[0].doc_name == "study-guide.pdf" and details.pages[0].page == 3
    assert "支持向量机" in details.pages[0].snippet
    assert student.concept_details("支持向量机").key == "svm"          # found by its alias too

    tuple_details = student.concept_details("tuple")
    assert [n.content for n in tuple_details.notes] == ["A tuple is an immutable sequence."]
    assert tuple_details.pages and tuple_details.pages[0].page == 1 and not tuple_details.cards


def test_suggestions_are_one_per_key_and_leave_out_junk(student):
    student.add_note("A tuple is an immutable sequence.", "Tuples")
    suggested = student.suggest_concepts()
    keys = [normalise_key(s) for s in suggested]
    assert len(keys) == len(set(keys)) and "tuple" in keys
    assert not any(k in ("chapter", "page", "https", "com") for k in keys)

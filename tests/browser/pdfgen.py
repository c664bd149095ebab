"""A tiny PDF writer for tests: pages of text lines, with an optional outline-free title.

Latin text is set in Helvetica; any character outside Latin-1 (Chinese) in STSong-Light, a standard
Adobe CJK font that readers substitute (not embedded), addressed by its Unicode code (UniGB-UCS2-H)
and with a /ToUnicode map, so the text layer carries the real characters.
"""
from __future__ import annotations


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _is_latin1(ch: str) -> bool:
    return ord(ch) < 256


def _runs(line: str) -> list[tuple[bool, str]]:
    """The line cut into (latin-1?, text) runs: each run is set in one font."""
    runs: list[tuple[bool, str]] = []
    for ch in line:
        latin = _is_latin1(ch)
        if runs and runs[-1][0] == latin:
            runs[-1] = (latin, runs[-1][1] + ch)
        else:
            runs.append((latin, ch))
    return runs


def show_text(line: str, latin_font: str, size: float, cjk_font: str = "F5") -> str:
    """Text-showing operators for one line (font switches between Latin and CJK runs); `cjk_font` names
    the font of `cjk_font_objects` in the page's resources."""
    ops = []
    for latin, text in _runs(line):
        if latin:
            ops.append(f"/{latin_font} {size} Tf ({_esc(text)}) Tj")
        else:
            ops.append(f"/{cjk_font} {size} Tf <{text.encode('utf-16-be').hex().upper()}> Tj")
    return " ".join(ops)


def has_cjk(text: str) -> bool:
    return any(not _is_latin1(ch) for ch in text)


def _to_unicode_cmap() -> bytes:
    """Code = UCS-2 code unit: an identity map (in 256 ranges that never cross a high byte)."""
    ranges = [f"<{hi:02X}00> <{hi:02X}FF> <{hi:02X}00>" for hi in range(256) if not 0xD8 <= hi <= 0xDF]
    blocks = []
    for i in range(0, len(ranges), 100):
        part = ranges[i:i + 100]
        blocks.append(f"{len(part)} beginbfrange\n" + "\n".join(part) + "\nendbfrange")
    body = ("/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
            "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
            "/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"
            "1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n" + "\n".join(blocks) +
            "\nendcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n").encode()
    return b"<< /Length %d >>\nstream\n" % len(body) + body + b"endstream"


def cjk_font_objects(first: int) -> dict[int, bytes]:
    """A Type0 font over STSong-Light (Adobe-GB1), its descendant CID font, its ToUnicode map and its
    descriptor, as objects `first` .. `first + 3`; the font to name in a page's resources is `first`."""
    return {
        first: (f"<< /Type /Font /Subtype /Type0 /BaseFont /STSong-Light /Encoding /UniGB-UCS2-H "
                f"/DescendantFonts [{first + 1} 0 R] /ToUnicode {first + 2} 0 R >>").encode(),
        first + 1: (f"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /STSong-Light "
                    f"/CIDSystemInfo << /Registry (Adobe) /Ordering (GB1) /Supplement 2 >> "
                    f"/FontDescriptor {first + 3} 0 R /DW 1000 >>").encode(),
        first + 2: _to_unicode_cmap(),
        first + 3: (b"<< /Type /FontDescriptor /FontName /STSong-Light /Flags 6 /FontBBox [-25 -254 1000 880] "
                    b"/ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 880 /StemV 93 >>"),
    }


def make_pdf(pages: list[list[str]], *, title: str | None = None, heading_size: int = 16) -> bytes:
    """One entry per page: its lines, top to bottom. A line starting with '# ' is set as a bold heading."""
    objs: dict[int, bytes] = {
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        4: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>",
    }
    cjk = any(has_cjk(line) for lines in pages for line in lines)
    next_id, page_ids = 5, []
    font_refs = "/F1 3 0 R /F2 4 0 R"
    if cjk:
        objs.update(cjk_font_objects(5))
        next_id = 9
        font_refs += " /F5 5 0 R"
    for lines in pages:
        page_id, content_id = next_id, next_id + 1
        next_id += 2
        page_ids.append(page_id)
        y, ops = 740, []
        for line in lines:
            if line.startswith("# "):
                ops.append(f"BT 72 {y} Td {show_text(line[2:], 'F2', heading_size)} ET")
                y -= heading_size + 10
            else:
                ops.append(f"BT 72 {y} Td {show_text(line, 'F1', 11)} ET")
                y -= 15
        stream = ("\n".join(ops) + "\n").encode("latin-1")
        objs[content_id] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"endstream"
        objs[page_id] = (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content_id} 0 R "
                         f"/Resources << /Font << {font_refs} >> >> >>").encode()
    objs[2] = f"<< /Type /Pages /Kids [{' '.join(f'{p} 0 R' for p in page_ids)}] /Count {len(pages)} >>".encode()
    objs[1] = b"<< /Type /Catalog /Pages 2 0 R >>"
    info_id = None
    if title:
        info_id = next_id
        objs[info_id] = f"<< /Title ({_esc(title)}) >>".encode("latin-1")
    out = bytearray(b"%PDF-1.4\n")
    offsets = {}
    for oid in sorted(objs):
        offsets[oid] = len(out)
        out += f"{oid} 0 obj\n".encode() + objs[oid] + b"\nendobj\n"
    xref = len(out)
    size = max(objs) + 1
    out += f"xref\n0 {size}\n0000000000 65535 f \n".encode()
    for oid in range(1, size):
        out += f"{offsets[oid]:010d} 00000 n \n".encode() if oid in offsets else b"0000000000 65535 f \n"
    trailer = f"<< /Size {size} /Root 1 0 R" + (f" /Info {info_id} 0 R" if info_id else "") + " >>"
    out += f"trailer\n{trailer}\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


AVIATION = [
    ["# Flight Control Software",
     "The flight control computer compares the two angle of attack sensors on every cycle.",
     "If the two sensors disagree by more than the threshold, the stabilizer trim system is disabled",
     "for the remainder of the flight and the crew is alerted with a disagree message.",
     "The threshold is a function of the magnitude of the disagreement and its rate of change.",
     "Each sensor reports the angle between the wing and the oncoming air many times per second.",
     "A single failed sensor can no longer command repeated nose-down trim movements.",
     "The revised control laws limit each activation to one per high angle of attack event.",
     "The magnitude of any single command is limited so that the pilot keeps pitch control",
     "with the control column alone, without needing to run a non-normal procedure.",
     "Software engineers verified the new logic on a full flight simulator and in flight tests.",
     "The update also adds a disagree alert to the primary flight displays of every airplane.",
     "Maintenance crews check the sensor wiring and connectors before the software is loaded."],
    ["# Crew Training",
     "Pilots complete simulator training on the revised trim procedures before returning to service.",
     "The training covers runaway stabilizer recognition and the use of the cutout switches.",
     "Operators must record the completion of training for every pilot in their fleet.",
     "Instructors demonstrate how the airplane behaves when one sensor sends wrong values.",
     "Each session ends with a check ride in which the pilot handles an unreliable airspeed event.",
     "Airlines keep the training records for at least five years for inspection by the regulator.",
     "Recurrent training repeats the same scenarios every twelve months for every crew member.",
     "New checklists replace the memory items that pilots previously had to recall under stress.",
     "The manuals describe each checklist step and the reason for it in plain language."],
]

COOKING = [
    ["# Bread Baking",
     "Sourdough bread rises with a starter of wild yeast and lactic acid bacteria.",
     "The dough ferments slowly overnight in a cool kitchen, which develops a sour flavour.",
     "Bake the loaf in a hot covered pot so the steam gives it a crisp crust."],
]

# A study guide: Python lists and tuples, recursion, and two pages in Chinese (support vector machines,
# the Transformer's attention). Each page answers one question of the browser tests.
STUDY = [
    ["# Lists and Tuples",
     "A list is a mutable sequence: you can change, add and remove its items after it is created.",
     "A tuple is an immutable sequence: once a tuple is created, its items cannot be changed.",
     "The main difference between a list and a tuple is that lists are mutable and tuples are immutable.",
     "Lists are written with square brackets, like [1, 2, 3], and tuples with parentheses, like (1, 2, 3).",
     "Tuples are immutable so that they can be used as dictionary keys and stay hashable.",
     "Because a tuple cannot change, Python can store it compactly and share it safely between parts",
     "of a program; a list keeps extra room so that appending items stays fast.",
     "Use a tuple for a fixed record, such as a point (x, y), and a list for a collection that grows."],
    ["# Recursion",
     "Recursion is when a function calls itself to solve a smaller instance of the same problem.",
     "Every recursive function needs a base case, which returns an answer without calling itself again.",
     "The recursive case reduces the problem, so that each call comes closer to the base case.",
     "For example, the factorial of n is n times the factorial of n - 1, and the factorial of 0 is 1.",
     "Each call waits on the call stack until the calls it made have returned their results.",
     "Without a base case the calls never stop, and Python raises a RecursionError when the stack",
     "grows deeper than its limit, which is about one thousand calls by default."],
    ["# 支持向量机",
     "支持向量机（SVM）是一种用于分类的监督学习方法。",
     "支持向量机寻找一个最大间隔的超平面，把两个类别的样本分开。",
     "离超平面最近的样本称为支持向量，它们决定了超平面的位置。",
     "对于线性不可分的数据，支持向量机使用核函数把样本映射到高维空间。",
     "常用的核函数有线性核、多项式核和高斯核。",
     "软间隔允许少量样本被分错，用参数 C 控制间隔大小和分类错误之间的平衡。"],
    ["# Transformer 注意力机制",
     "Transformer 是一种完全基于注意力机制的神经网络结构，没有使用循环结构。",
     "注意力机制让模型在处理一个词时，根据相关程度给序列中的其他词分配不同的权重。",
     "自注意力用查询、键和值三个向量计算：查询和键的点积经过 softmax 得到注意力权重。",
     "多头注意力把这个计算并行做多次，每个头关注序列中不同方面的关系。",
     "因为注意力可以同时处理整个序列，Transformer 的训练比循环神经网络更容易并行。"],
]

# A 15-page proposed airworthiness directive, laid out as sections under headings (one a page), like
# the Federal Register notice it stands in for: the browser tests upload it, ask about the sensors'
# disagreement threshold and expect "Background" and "Proposed Design Changes" among its concepts.
_NOTICE_SECTIONS = [
    ("Airworthiness Directives; Transport Category Airplanes",
     "The agency proposes a new airworthiness directive for certain transport category airplanes.",
     "It follows two accidents in which one wrong sensor input led to repeated nose-down trim."),
    ("Examining the Docket",
     "You may examine the docket on the internet: the proposal, comments and service information.",
     "The docket office is open from nine in the morning until five in the afternoon on working days."),
    ("Background",
     "The agency has worked with the manufacturer and other aviation authorities for many months.",
     "Investigations found that repeated nose-down trim commands followed a single failed sensor."),
    ("Proposed Design Changes",
     "The agency proposes changes to the type design to address each aspect of the unsafe condition.",
     "Revised flight control laws would use inputs from both angle of attack sensors."),
    ("Proposed Maintenance-Related Actions",
     "Operators would conduct a sensor system test and a readiness flight before service.",
     "Maintenance crews would check the sensor wiring and connectors before loading the software."),
    ("Flightcrew Training",
     "Pilots would complete simulator training on the revised trim procedures.",
     "The training covers runaway stabilizer recognition and the use of the cutout switches."),
    ("Airplane Flight Manual Revisions",
     "The flight manual would gain procedures for unreliable airspeed and runaway stabilizer events.",
     "Checklists replace the memory items that pilots previously had to recall under stress."),
    ("Display System Software",
     "Updated display software would show an alert on both flight displays when the sensors disagree.",
     "The alert stays on the display until the two sensors agree again for a set period."),
    ("Horizontal Stabilizer Trim Wiring",
     "The wiring of the stabilizer trim motor would be separated to prevent a single short circuit.",
     "Installers route the new wire bundles along separate paths through the tail of the airplane."),
    ("Related Service Information",
     "The manufacturer has issued service bulletins that describe each required action.",
     "The service information is reasonably available to interested parties through the manufacturer."),
    ("Determination of the Unsafe Condition",
     "The agency proposes this directive after evaluating all the relevant information available.",
     "The unsafe condition is likely to exist or develop in other airplanes of the same type design."),
    ("Explanation of Applicability",
     "The directive would apply to every airplane of the affected models, whatever its age.",
     "Airplanes stored during the grounding would be included once they are returned to service."),
    ("Alternative Methods of Compliance",
     "Operators may request approval of an alternative method of compliance from the agency.",
     "Each request must show that the alternative provides an acceptable level of safety."),
    ("Costs of Compliance",
     "The agency estimates that this directive would affect several hundred registered airplanes.",
     "The estimated cost of the required actions is about ten thousand dollars for each airplane."),
    ("Regulatory Findings",
     "The agency has determined that this proposal would not have federalism implications.",
     "The proposed regulation is not a significant regulatory action under the executive order."),
]


_AVIATION_SENTENCES = [line for lines in AVIATION for line in lines[1:] if line[0].isupper() and line.endswith(".")]


def _notice_page(title: str, first: str, second: str, page: int) -> list[str]:
    if title == "Proposed Design Changes":      # the sensors and their disagreement threshold
        return [f"# {title}", first, second] + AVIATION[0][1:8]
    return [f"# {title}", first, second] + [_AVIATION_SENTENCES[(3 * page + k) % len(_AVIATION_SENTENCES)]
                                             for k in range(5)]


NOTICE = [_notice_page(title, first, second, page) for page, (title, first, second) in enumerate(_NOTICE_SECTIONS)]

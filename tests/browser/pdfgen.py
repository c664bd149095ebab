"""A tiny PDF writer for tests: pages of Helvetica text lines, with an optional outline-free title."""
from __future__ import annotations


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[list[str]], *, title: str | None = None, heading_size: int = 16) -> bytes:
    """One entry per page: its lines, top to bottom. A line starting with '# ' is set as a bold heading."""
    objs: dict[int, bytes] = {
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        4: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>",
    }
    next_id, page_ids = 5, []
    for lines in pages:
        page_id, content_id = next_id, next_id + 1
        next_id += 2
        page_ids.append(page_id)
        y, ops = 740, []
        for line in lines:
            if line.startswith("# "):
                ops.append(f"BT /F2 {heading_size} Tf 72 {y} Td ({_esc(line[2:])}) Tj ET")
                y -= heading_size + 10
            else:
                ops.append(f"BT /F1 11 Tf 72 {y} Td ({_esc(line)}) Tj ET")
                y -= 15
        stream = ("\n".join(ops) + "\n").encode("latin-1")
        objs[content_id] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"endstream"
        objs[page_id] = (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content_id} 0 R "
                         "/Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> >>").encode()
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

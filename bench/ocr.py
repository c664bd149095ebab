"""OCR benchmark: seconds per page and character error rate (CER) of rag/ocr.py on generated pages.

Pages of known English and Chinese text are drawn at 300 dpi (the "paper"), once clean and once
"scanned" (0.7 degree skew, blur, noise), and put into an image-only PDF. Each page is then read the
way the converter reads a scan: rendered with pypdfium2 at the OCR scale, then recognised.

    python bench/ocr.py [--dpi 200] [--size 11] [--repeat 1]

s/page is wall-clock time (it grows when other programs share the cores); cpu s is the CPU time it
took over all threads. CER = edit distance between the recognised text and the truth / length of the truth, after NFKC
(full-width punctuation = half-width) and with whitespace collapsed (removed between CJK characters).
The page generators here are also used by tests/test_ocr.py.
"""
from __future__ import annotations

import argparse
import io
import re
import shutil
import subprocess
import sys
import textwrap
import time
import unicodedata
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PAPER_DPI = 300
LETTER = (612.0, 792.0)
LATIN_FONTS = ["/usr/share/fonts/truetype/liberation/LiberationSerif-Regular.ttf",
               "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf"]
CJK_FONTS = ["/usr/share/fonts/truetype/wqy/wqy-microhei.ttc", "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
             "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"]
CJK_FONT_PACKAGE = "fonts-wqy-microhei"

ENGLISH = (
    "Photosynthesis is the process by which green plants turn light into chemical energy. Inside the "
    "chloroplasts, chlorophyll absorbs mostly blue and red light and passes the energy to a chain of "
    "proteins that split water, release oxygen and store the energy in two small carrier molecules. "
    "A second set of reactions, the Calvin cycle, uses those carriers to fix carbon dioxide from the air "
    "into sugars the plant can burn or build with. A binary search finds an item in a sorted list by "
    "comparing it with the middle element and discarding the half that cannot contain it; each step "
    "halves the interval, so a list of a million items needs about twenty comparisons. Recursion works "
    "the same way: a function calls itself on a smaller problem until it reaches a base case that it can "
    "answer directly, and every call must move closer to that base case or the program never finishes. "
    "Gradient descent trains a model by repeatedly nudging its parameters against the slope of the loss, "
    "with a learning rate that sets the size of each step; too large a rate overshoots the minimum and "
    "too small a rate wastes time. The mitochondria supply most of the energy a living cell needs by "
    "oxidising sugars and fats, and they carry their own small circle of DNA inherited from the mother. "
    "In 1848 the chemist Louis Pasteur noticed that crystals of tartaric acid came in two mirror-image "
    "forms, an observation that founded stereochemistry and later explained why some drugs help while "
    "their mirror twins harm. Supply and demand meet at the price where the quantity buyers want equals "
    "the quantity sellers offer; a tax on sellers moves that point and splits the burden between both "
    "sides according to how strongly each reacts to price.")
CHINESE = (
    "机器学习是人工智能的一个重要分支，它研究计算机怎样从数据中学习规律，并用学到的规律对新的数据做出预测。"
    "监督学习的训练数据带有标记，常见的任务包括分类和回归；无监督学习没有标记，典型的任务是聚类和降维。"
    "支持向量机通过最大化间隔来寻找分类超平面，间隔越大，模型对新样本的泛化能力通常越强。"
    "决策树根据信息增益或基尼指数选择最优的划分属性，为了防止过拟合，还需要进行预剪枝或后剪枝。"
    "神经网络由大量相互连接的神经元组成，每个神经元把输入加权求和，再经过激活函数得到输出。"
    "误差逆传播算法先计算输出层的误差，再把误差逐层传回隐藏层，并据此调整连接权重和阈值。"
    "集成学习把多个学习器结合起来，往往能获得比单一学习器更好的效果，代表方法有装袋和提升。"
    "贝叶斯分类器以概率为基础，朴素贝叶斯假设各个属性相互独立，因此计算简单而且效果不错。"
    "评估模型时不能只看训练误差，而应当用留出法或交叉验证法估计泛化误差，并据此选择模型和参数。")


# --- fonts --------------------------------------------------------------------------------------------

def latin_font() -> Path:
    for path in LATIN_FONTS:
        if Path(path).is_file():
            return Path(path)
    raise RuntimeError("no Latin TrueType font found; install the Debian package fonts-liberation")


def cjk_font() -> Path:
    """A font with Chinese glyphs: fontconfig's first, else a known path. Raises when there is none."""
    if shutil.which("fc-list"):
        listed = subprocess.run(["fc-list", ":lang=zh", "file"], capture_output=True, text=True).stdout
        files = sorted(line.strip().rstrip(":") for line in listed.splitlines() if line.strip())
        if files:
            return Path(files[0])
    for path in CJK_FONTS:
        if Path(path).is_file():
            return Path(path)
    raise RuntimeError(f"no Chinese font found to draw test pages; install the Debian package {CJK_FONT_PACKAGE}")


# --- pages ----------------------------------------------------------------------------------------------

def wrap(text: str, font, width_px: float) -> list[str]:
    """Text broken into lines that fit `width_px` in `font` (by words; CJK by characters)."""
    if re.search(r"[\u4e00-\u9fff]", text):
        lines, line = [], ""
        for ch in text:
            if font.getlength(line + ch) > width_px:
                lines.append(line)
                line = ""
            line += ch
        return lines + ([line] if line else [])
    lines = []
    for guess in textwrap.wrap(text, 200):   # then narrow each to the real width
        words, line = guess.split(), ""
        for word in words:
            candidate = f"{line} {word}".strip()
            if line and font.getlength(candidate) > width_px:
                lines.append(line)
                candidate = word
            line = candidate
        if line:
            lines.append(line)
    return lines


def text_page(lines: list[str], font_path: Path, size_pt: float, *, page: tuple[float, float] = LETTER,
              margin_pt: float = 72.0, columns: int = 1, dpi: int = PAPER_DPI):
    """A white page image with `lines` drawn top-down (split evenly over `columns`).

    Returns (image, line_tops): each line's top in PDF points from the page's bottom edge.
    """
    from PIL import Image, ImageDraw, ImageFont
    s = dpi / 72.0
    image = Image.new("L", (round(page[0] * s), round(page[1] * s)), 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(str(font_path), round(size_pt * s))
    per_column = -(-len(lines) // columns)
    column_width = (page[0] - 2 * margin_pt) / columns
    tops = []
    for i, line in enumerate(lines):
        column, row = divmod(i, per_column)
        x = margin_pt + column * column_width
        y = margin_pt + row * size_pt * 1.5
        draw.text((x * s, y * s), line, font=font, fill=0)
        tops.append(page[1] - y)
    return image, tops


def lines_for(text: str, font_path: Path, size_pt: float, width_pt: float, count: int) -> list[str]:
    from PIL import ImageFont
    font = ImageFont.truetype(str(font_path), round(size_pt * PAPER_DPI / 72))
    lines = wrap(text, font, width_pt * PAPER_DPI / 72)
    while len(lines) < count:
        lines += lines
    return lines[:count]


def scanned(image, seed: int = 0, skew_deg: float = 0.7, blur: float = 1.2, noise: float = 18.0):
    """The page as a cheap scanner sees it: slightly rotated, blurred, grainy."""
    from PIL import Image, ImageFilter
    rng = np.random.default_rng(seed)
    image = image.rotate(skew_deg, resample=Image.BICUBIC, fillcolor=255)
    image = image.filter(ImageFilter.GaussianBlur(blur))
    pixels = np.asarray(image, dtype=np.float32) + rng.normal(0, noise, (image.height, image.width))
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))


def image_pdf(images, page: tuple[float, float] = LETTER) -> bytes:
    """A PDF whose pages are only these images (no text layer): what a scanner writes."""
    import pypdfium2 as pdfium
    from rag.pdf_converter import PDFIUM_LOCK
    with PDFIUM_LOCK:
        pdf = pdfium.PdfDocument.new()
        try:
            for image in images:
                pdf_page = pdf.new_page(*page)
                obj = pdfium.PdfImage.new(pdf)
                bitmap = pdfium.PdfBitmap.from_pil(image.convert("RGB"))
                obj.set_bitmap(bitmap)
                obj.set_matrix(pdfium.PdfMatrix().scale(*page))
                pdf_page.insert_obj(obj)
                pdf_page.gen_content()
                bitmap.close()
                pdf_page.close()
            buffer = io.BytesIO()
            pdf.save(buffer)
        finally:
            pdf.close()
    return buffer.getvalue()


# --- measuring ------------------------------------------------------------------------------------------

def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = " ".join(text.split())
    return re.sub(r"(?<=[^\x00-\x7f]) | (?=[^\x00-\x7f])", "", text)   # no spaces next to CJK


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance, one numpy row at a time (insertions via a running minimum)."""
    if not a or not b:
        return max(len(a), len(b))
    codes_b = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    index = np.arange(len(b) + 1)
    row = index.copy()
    for i, ch in enumerate(a, start=1):
        substitute = row[:-1] + (codes_b != ord(ch))
        new = np.empty_like(row)
        new[0] = i
        new[1:] = np.minimum(row[1:] + 1, substitute)
        row = np.minimum.accumulate(new - index) + index
    return int(row[-1])


def cer(truth: str, got: str) -> float:
    truth, got = normalise(truth), normalise(got)
    return edit_distance(truth, got) / max(len(truth), 1)


def bench_pages(size_pt: float) -> list[tuple[str, object, list[str]]]:
    """(name, page image, truth lines) for EN and ZH, clean and scanned."""
    width = LETTER[0] - 144
    en = lines_for(ENGLISH, latin_font(), size_pt, width, 38)
    zh = lines_for(CHINESE, cjk_font(), size_pt + 1, width, 22)
    en_image, _ = text_page(en, latin_font(), size_pt)
    zh_image, _ = text_page(zh, cjk_font(), size_pt + 1)
    return [("EN clean", en_image, en), ("EN scanned", scanned(en_image, 1), en),
            ("ZH clean", zh_image, zh), ("ZH scanned", scanned(zh_image, 2), zh)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dpi", type=float, default=None, help="render dpi (default: what the converter uses)")
    parser.add_argument("--size", type=float, default=11.0, help="English font size in points (Chinese: +1)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per page; the fastest counts")
    args = parser.parse_args()

    import pypdfium2 as pdfium
    from rag import ocr
    from rag.pdf_converter import PDFIUM_LOCK

    pages = bench_pages(args.size)
    data = image_pdf([image for _, image, _ in pages])
    started = time.perf_counter()
    ocr.ocr_engine()
    loaded = time.perf_counter()
    # The first recognition in a process is slow (ONNX Runtime sets itself up): time it apart.
    ocr.ocr_page(np.asarray(pages[0][1].convert("RGB"))[:600, :, ::-1].copy(), PAPER_DPI / 72)
    print(f"model load: {loaded - started:.2f} s, first (warm-up) call: {time.perf_counter() - loaded:.2f} s")
    print(f"{'page':<12} {'pixels':>11} {'lines':>9} {'s/page':>7} {'cpu s':>7} {'CER':>7}")
    with PDFIUM_LOCK:
        pdf = pdfium.PdfDocument(data)
    for index, (name, _, truth) in enumerate(pages):
        with PDFIUM_LOCK:
            page = pdf[index]
            scale = args.dpi / 72 if args.dpi else ocr.render_scale(*page.get_size())
            image = page.render(scale=scale).to_numpy().copy()
            page.close()
        best = best_cpu = float("inf")
        for _ in range(max(args.repeat, 1)):
            t, cpu = time.perf_counter(), time.process_time()
            lines = ocr.ocr_page(image, scale)
            best = min(best, time.perf_counter() - t)
            best_cpu = min(best_cpu, time.process_time() - cpu)
        error = cer("\n".join(truth), "\n".join(line.text for line in lines))
        pixels = f"{image.shape[1]}x{image.shape[0]}"
        print(f"{name:<12} {pixels:>11} {len(lines):>4}/{len(truth):<4} {best:>7.2f} {best_cpu:>7.2f} {error:>7.2%}")
    with PDFIUM_LOCK:
        pdf.close()


if __name__ == "__main__":
    main()

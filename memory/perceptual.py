"""Perceptual memory: images, audio and other non-text inputs, kept per modality.

Each memory stores the TEXT that describes the input (an OCR result, a caption, the figure's caption
from a PDF, or at least file metadata: name, format, size, image dimensions) plus `modality` and
`source_path` in its metadata; one Qdrant collection per user and modality. Search embeds that text,
so "the bar chart of revenue" finds an image whose description says so. Offline there is no
image-to-text model: an image with no description is findable only by its file name and metadata,
and there is no search by image similarity (no pixel embeddings).

Score: (0.8·vector + 0.2·recency) × (0.8 + 0.4·importance), as episodic memory.
"""
from __future__ import annotations

import re
from pathlib import Path

from core.vectors import collection_name
from memory.episodic import EpisodicMemory
from memory.types import MemoryItem, MemoryType
from memory.vector_memory import SearchFilters

MODALITIES = ("image", "audio", "video", "file", "text")
_IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".bmp", ".webp", ".tif", ".tiff"}
_AUDIO_SUFFIXES = {".wav", ".mp3", ".ogg", ".flac", ".m4a"}
_VIDEO_SUFFIXES = {".mp4", ".mov", ".webm", ".mkv", ".avi"}


def modality_of(path: str | None, given: str | None) -> str:
    if given:
        return given.strip().lower()
    suffix = Path(path).suffix.lower() if path else ""
    if suffix in _IMAGE_SUFFIXES:
        return "image"
    if suffix in _AUDIO_SUFFIXES:
        return "audio"
    if suffix in _VIDEO_SUFFIXES:
        return "video"
    return "file" if path else "text"


def describe_file(path: str) -> str:
    """A description from file metadata alone: name, format, size and, for images, dimensions."""
    p = Path(path)
    words = re.sub(r"[_\-.]+", " ", p.stem).strip()
    parts = [f"{modality_of(path, None)} file '{p.name}'"]
    if words:
        parts.append(f"named {words}")
    if p.suffix:
        parts.append(f"format {p.suffix.lstrip('.').upper()}")
    if p.exists():
        parts.append(f"{p.stat().st_size // 1024} KB")
        try:
            from PIL import Image
            with Image.open(p) as img:
                parts.append(f"{img.width}x{img.height} pixels")
        except Exception:  # noqa: BLE001 - not an image, or Pillow missing: metadata is optional
            pass
    return ", ".join(parts)


class PerceptualMemory(EpisodicMemory):
    memory_type = MemoryType.PERCEPTUAL
    purpose = "memory_perceptual"
    with_previous = False
    with_date = False

    def collection(self, item: MemoryItem | None = None) -> str:
        modality = (item.metadata.get("modality") if item else None) or "text"
        return collection_name(f"{self.purpose}_{modality}", self.user_id)

    def modalities(self) -> list[str]:
        return self.docs.distinct_metadata(self.user_id, self.memory_type, "modality")

    def collections(self) -> list[str]:
        return [collection_name(f"{self.purpose}_{m}", self.user_id) for m in self.modalities() or ["text"]]

    def texts(self, items: list[MemoryItem]) -> tuple[list[str], list[str]]:
        out = []
        for it in items:
            modality = it.metadata.get("modality", "text")
            source = it.metadata.get("source_path")
            name = f" ({Path(source).name})" if source else ""
            out.append(f"[{modality}{name}] {it.content}")
        return out, out

    def search(self, query: str, *, limit: int, filters: SearchFilters, reference_time: float,
               query_vec=None, modality: str | None = None) -> list[MemoryItem]:
        hits = super().search(query, limit=limit if not modality else limit * 5, filters=filters,
                              reference_time=reference_time, query_vec=query_vec)
        if modality:
            hits = [h for h in hits if h.metadata.get("modality") == modality.lower()]
        return hits[:limit]

"""The files the web app hands to one person's browser: upload copies, page images and learning reports.

Each person's live in their own folder, DATA_DIR/web/users/<user key>/:

    uploads/<digest>/<name>    a file uploaded in the browser, until it has been ingested
    pages/<tab>/*.webp         the cited pages one browser tab has shown (the newest few)
    reports/<tab>/<id>/*.json  the last report that tab made

DATA_DIR/web is the folder Gradio keeps its files in (GRADIO_TEMP_DIR, set by `prepare`), so Gradio serves
these files where they are instead of copying them into a cache every visitor shares; `webauth` serves a
file URL only to the person whose folder holds the file. Nothing here lasts: an upload copy goes once it is
ingested, a tab's pages and report go when the tab closes (a new report replaces the last one), and the
whole of DATA_DIR/web is emptied when the app starts.
"""
from __future__ import annotations

import logging
import os
import re
import shutil
import time
import uuid
from pathlib import Path

from core.errors import AssistantError
from core.settings import Settings

log = logging.getLogger(__name__)

SERVED_FOLDER = "web"
PAGES_KEPT = 12                 # per tab: enough to go back and forth between the sources of an answer
STALE_UPLOAD_SECONDS = 3600     # an upload no event ever ingested (a closed tab, a bare API call)


class AccessDenied(AssistantError):
    """A request for a file or session that belongs to someone else."""


def served_root(settings: Settings) -> Path:
    return (Path(settings.data_dir) / SERVED_FOLDER).resolve()


def user_key(user_id: str) -> str:
    """A folder name for the user: readable, and distinct for names that clean up alike ('a.b', 'a_b')."""
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", user_id)[:40]
    return f"{safe}-{uuid.uuid5(uuid.NAMESPACE_URL, user_id).hex[:8]}"


def user_folder(settings: Settings, user_id: str) -> Path:
    return served_root(settings) / "users" / user_key(user_id)


def tab_key(session_hash: str | None) -> str:
    """Gradio's session hash (one per browser tab, chosen by the browser) as a safe folder name."""
    return re.sub(r"[^A-Za-z0-9_-]", "", session_hash or "")[:64] or "no-tab"


def _inside(path: str | Path, folder: Path) -> bool:
    """True when `path`, with '..' and links resolved, is `folder` or lies under it."""
    try:
        Path(path).resolve().relative_to(folder)
        return True
    except (ValueError, OSError, RuntimeError):   # outside, a NUL byte, a link loop
        return False


def owns(settings: Settings, user_id: str, path: str | Path) -> bool:
    """Whether the file at `path` is one of this person's served files."""
    return _inside(path, user_folder(settings, user_id))


def private_paths(settings: Settings) -> list[str]:
    """Everything in DATA_DIR but the served folder, for Gradio's blocked_paths (no handler's output may
    copy a stored file out of them). The names the app creates are listed even before they exist."""
    data = Path(settings.data_dir).resolve()
    names = {"files", "memory", "qdrant", "models", "documents.sqlite", "graph.sqlite3", "embedding_cache.sqlite"}
    if data.is_dir():
        names |= {p.name for p in data.iterdir()}
    return sorted(str(data / name) for name in names if name != SERVED_FOLDER)


def prepare(settings: Settings) -> Path:
    """Empty DATA_DIR/web (nothing in it is worth keeping across a restart) and make Gradio keep its files
    there. Call before the Blocks are built: Gradio reads GRADIO_TEMP_DIR when components are made."""
    root = served_root(settings)
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    os.environ["GRADIO_TEMP_DIR"] = str(root)
    return root


# -- uploads -----------------------------------------------------------------------------------------------

def claim_upload(settings: Settings, user_id: str, landed: str) -> str:
    """Move a file Gradio has just received (DATA_DIR/web/<digest>/<name>) into the uploader's folder and
    return its new path. Raises AccessDenied for anything that is not such a freshly received file."""
    source = Path(landed).resolve()
    if source.parent.parent != served_root(settings) or not source.is_file():
        raise AccessDenied("The upload could not be stored; please upload the file again.", key="err_upload_not_stored")
    uploads = user_folder(settings, user_id) / "uploads"
    _remove_stale(uploads)
    target = uploads / source.parent.name / source.name
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(source, target)
    _remove_if_empty(source.parent)
    return str(target)


def check_upload(settings: Settings, user_id: str, path: str | Path) -> Path:
    """The upload copy at `path` if this person uploaded it; AccessDenied otherwise (e.g. another
    person's upload path passed in an API call)."""
    if not _inside(path, user_folder(settings, user_id) / "uploads"):
        log.warning("user %r passed a file that is not one of their uploads: %s", user_id, path)
        raise AccessDenied(f"'{Path(str(path)).name}' was not uploaded by you; upload it again.",
                           key="err_upload_not_yours", name=Path(str(path)).name)
    return Path(path).resolve()


def discard_upload(settings: Settings, user_id: str, path: str | Path) -> None:
    """Remove an upload copy once it has been ingested (or refused as a document)."""
    if not _inside(path, user_folder(settings, user_id) / "uploads"):
        return
    copy = Path(path).resolve()
    copy.unlink(missing_ok=True)
    _remove_if_empty(copy.parent)


def _remove_stale(uploads: Path) -> None:
    if not uploads.is_dir():
        return
    cutoff = time.time() - STALE_UPLOAD_SECONDS
    for folder in uploads.iterdir():
        try:
            if folder.stat().st_mtime < cutoff:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:   # not empty (another file of the same upload) or already gone
        pass


# -- page images and reports -------------------------------------------------------------------------------

def save_page_image(settings: Settings, user_id: str, session_hash: str | None, doc_id: str, page: int,
                    image) -> str:
    """A rendered page (PIL image) saved for this tab; only the newest PAGES_KEPT stay."""
    folder = user_folder(settings, user_id) / "pages" / tab_key(session_hash)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{re.sub(r'[^A-Za-z0-9]', '', doc_id)[:24]}-p{page}-{uuid.uuid4().hex[:8]}.webp"
    image.save(path, format="webp")
    for old in sorted(folder.glob("*.webp"), key=_mtime)[:-PAGES_KEPT]:
        old.unlink(missing_ok=True)
    return str(path)


def report_path(settings: Settings, user_id: str, session_hash: str | None, name: str, kind: str = "reports") -> Path:
    """Where this tab's new report (or exported deck: kind="decks") goes. Each gets a folder of its own, so its
    URL is new even when the file name (to the second) is not. The one before it is kept, so a download
    started from its link as a new one is made (the Reports tab refreshes when opened) is not cut off;
    older ones are removed."""
    folder = user_folder(settings, user_id) / kind / tab_key(session_hash)
    earlier = sorted((p for p in folder.glob("*") if p.is_dir()), key=_mtime) if folder.is_dir() else []
    for old in earlier[:-1]:
        shutil.rmtree(old, ignore_errors=True)
    own = folder / uuid.uuid4().hex[:8]
    own.mkdir(parents=True, exist_ok=True)
    return own / name


def forget_document(settings: Settings, user_id: str, doc_id: str) -> None:
    """Remove the page images of a deleted document from every tab of this person."""
    prefix = re.sub(r"[^A-Za-z0-9]", "", doc_id)[:24]
    for image in (user_folder(settings, user_id) / "pages").glob(f"*/{prefix}-p*.webp"):
        image.unlink(missing_ok=True)


def forget_tab(settings: Settings, user_id: str, session_hash: str | None) -> None:
    """A closed tab's page images, report and exported decks."""
    folder = user_folder(settings, user_id)
    for kind in ("pages", "reports", "decks"):
        shutil.rmtree(folder / kind / tab_key(session_hash), ignore_errors=True)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0

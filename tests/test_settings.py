"""Every setting is documented in .env.example, and settings are read from the environment."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from core.settings import Settings, SettingsError, get_settings

ROOT = Path(__file__).resolve().parents[1]


def test_env_example_documents_every_setting():
    documented = {m.lower() for m in re.findall(r"^#? ?([A-Z][A-Z0-9_]+)=", (ROOT / ".env.example").read_text(), re.M)}
    assert set(Settings.model_fields) - documented == set()
    assert documented - set(Settings.model_fields) == set()


def test_settings_come_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("CHUNK_SIZE", "123")
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "elsewhere"))
    s = Settings(_env_file=None)
    assert s.chunk_size == 123 and s.data_dir == tmp_path / "elsewhere"
    assert not s.llm_configured
    assert s.path("sub", "file.db").parent.is_dir()


@pytest.mark.parametrize("name, value, phrase", [
    ("TOP_K", "-3", "TOP_K=-3 must be from 1 to 100"),
    ("RETRIEVAL_MODE", "bogus", "RETRIEVAL_MODE='bogus' must be hybrid, dense or bm25"),
    ("RRF_K", "-61", "RRF_K=-61 must be at least 1"),
    ("CHUNK_SIZE", "5", "CHUNK_SIZE=5 must be a number of tokens from 10 to 4000"),
    ("CANDIDATES", "0", "CANDIDATES=0 must be from 1 to 1000"),
    ("LLM_TIMEOUT_S", "-5", "LLM_TIMEOUT_S=-5.0 must be more than 0 seconds"),
    ("APP_PORT", "99999", "APP_PORT=99999 must be a port from 1 to 65535"),
    ("TOP_K", "many", "TOP_K='many'"),
])
def test_an_unusable_setting_is_refused_at_start_in_one_sentence(monkeypatch, name, value, phrase):
    monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    try:
        with pytest.raises(SettingsError) as refused:
            get_settings()
    finally:
        get_settings.cache_clear()
    message = str(refused.value)
    assert phrase in message and message.startswith("The settings cannot be used:")
    assert message.count("\n") == 0


def test_the_app_and_the_cli_stop_with_the_sentence_not_a_traceback(tmp_path):
    env = {**os.environ, "TOP_K": "0", "DATA_DIR": str(tmp_path / "data")}
    for command in ([sys.executable, "app.py"], [sys.executable, "-m", "rag", "list"]):
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode != 0
        assert "TOP_K=0 must be from 1 to 100" in done.stderr and "Traceback" not in done.stderr, done.stderr[-800:]

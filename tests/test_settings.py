"""Every setting is documented in .env.example, and settings are read from the environment."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pydantic import ValidationError

from core.settings import _RULES, Settings, SettingsError, describe_invalid, get_settings

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
    ("NEO4J_URI", "http://localhost:7474", "NEO4J_URI='http://localhost:7474' must be empty (the embedded graph) "
                                           "or a Bolt address such as bolt://host:7687"),
    ("NEO4J_URI", "localhost:7687", "NEO4J_URI='localhost:7687' must be empty"),
    ("NEO4J_URI", "bolt://", "NEO4J_URI='bolt://' must be empty"),
    ("WORKING_MEMORY_CAPACITY", "0", "WORKING_MEMORY_CAPACITY=0 must be at least 1"),
    ("WORKING_MEMORY_TTL_MINUTES", "0", "WORKING_MEMORY_TTL_MINUTES=0 must be more than 0 minutes"),
    ("LLM_TEMPERATURE", "-3", "LLM_TEMPERATURE=-3.0 must be from 0 to 2"),
    ("LLM_TEMPERATURE", "2.5", "LLM_TEMPERATURE=2.5 must be from 0 to 2"),
    ("LLM_TEMPERATURE", "nan", "LLM_TEMPERATURE=nan must be from 0 to 2"),
    ("CONSOLIDATE_WORKING_THRESHOLD", "1.5", "CONSOLIDATE_WORKING_THRESHOLD=1.5 must be from 0 to 1"),
    ("CONSOLIDATE_EPISODIC_THRESHOLD", "-0.1", "CONSOLIDATE_EPISODIC_THRESHOLD=-0.1 must be from 0 to 1"),
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


def refusal(**values) -> str:
    with pytest.raises(ValidationError) as refused:
        Settings(_env_file=None, **values)
    return describe_invalid(refused.value)


def test_a_data_dir_that_is_a_file_or_inside_one_is_refused(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data folder should be")
    for data_dir in (blocker, blocker / "data"):
        assert f"DATA_DIR='{data_dir}' must be a folder, not a file or a path inside one" in refusal(data_dir=data_dir)
    assert Settings(_env_file=None, data_dir=tmp_path / "not-yet-made").data_dir == tmp_path / "not-yet-made"


@pytest.mark.parametrize("uri", [None, "", "bolt://localhost:7687", "bolt+s://db.example.org", "bolt+ssc://h:1",
                                 "neo4j://localhost", "neo4j+s://x.databases.neo4j.io", "NEO4J+SSC://h:7687"])
def test_every_bolt_scheme_and_no_uri_are_accepted(uri):
    assert Settings(_env_file=None, neo4j_uri=uri).neo4j_uri == uri


def test_every_mistake_is_named_in_the_one_sentence():
    message = refusal(llm_temperature=3, working_memory_capacity=0, consolidate_working_threshold=2)
    assert message.count("must be") == 3 and "\n" not in message
    assert all(name in message for name in ("LLM_TEMPERATURE", "WORKING_MEMORY_CAPACITY",
                                            "CONSOLIDATE_WORKING_THRESHOLD"))


def test_every_consolidation_threshold_has_a_rule():
    thresholds = [name for name in Settings.model_fields if re.fullmatch(r"consolidate_\w+_threshold", name)]
    assert thresholds and all(name in {rule[0] for rule in _RULES} for name in thresholds)
    for name in thresholds:
        assert f"{name.upper()}=1.5 must be from 0 to 1" in refusal(**{name: 1.5})


def test_the_app_and_the_cli_stop_with_the_sentence_not_a_traceback(tmp_path):
    env = {**os.environ, "TOP_K": "0", "DATA_DIR": str(tmp_path / "data")}
    for command in ([sys.executable, "app.py"], [sys.executable, "-m", "rag", "list"]):
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode != 0
        assert "TOP_K=0 must be from 1 to 100" in done.stderr and "Traceback" not in done.stderr, done.stderr[-800:]

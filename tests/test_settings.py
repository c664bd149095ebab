"""Every setting is documented in .env.example, and settings are read from the environment."""
import re
from pathlib import Path

from core.settings import Settings

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

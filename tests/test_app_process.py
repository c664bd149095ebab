"""The test helper that starts the real app (tests.app_process) survives the port it picked being taken
before the app bound it: that race cost seven web-door tests one run ("Cannot find empty port in range")."""
from __future__ import annotations

import socket
import urllib.request

import pytest

from tests.app_process import AppDidNotStart, app_process


@pytest.mark.slow
def test_a_taken_port_is_retried_on_another(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        taken_port = taken.getsockname()[1]
        with app_process(tmp_path, first_port=taken_port) as app:
            assert not app.url.endswith(f":{taken_port}")
            with urllib.request.urlopen(app.url + "/", timeout=10) as page:
                assert page.status == 200


@pytest.mark.slow
def test_without_a_retry_the_taken_port_fails_the_start(tmp_path):
    """The case above really meets the race: one attempt on the taken port does not start."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(AppDidNotStart, match="Cannot find empty port"):
            with app_process(tmp_path, first_port=taken.getsockname()[1], attempts=1):
                pass

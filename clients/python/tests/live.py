"""A live Almanac server for the tests: `node bin/almanac.js serve` on a free local port, with
embedded defaults in a temporary DATA_DIR (no PostgreSQL, Redis or upstream needed), and keys
made with the same command line."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
BIN = ROOT / "bin" / "almanac.js"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    def __init__(self, **env: str) -> None:
        self.data_dir = tempfile.mkdtemp(prefix="almanac-python-")
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        base = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "PORT", "HOST")}
        self.env = {
            **base,
            "DATA_DIR": self.data_dir,
            "LOG_LEVEL": "silent",
            "PORT": str(self.port),
            "HOST": "127.0.0.1",
            "PUBLIC_URL": self.url,
            "DEMO_HOURLY_LIMIT": "1000",
            # Upstreams that refuse at once: lookups needing them answer 502 upstream_error.
            "POSTCODES_BASE_URL": "http://127.0.0.1:9",
            "OPEN_METEO_BASE_URL": "http://127.0.0.1:9",
            **env,
        }
        self.process = subprocess.Popen(
            ["node", str(BIN), "serve"], cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited: {self.process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=2):
                    return
            except OSError:
                time.sleep(0.2)
        self.close()
        raise RuntimeError("the server did not answer /healthz within 90 s")

    def create_key(self, *args: str) -> str:
        out = subprocess.run(
            ["node", str(BIN), "keys", "create", "--name", "python-client", "--permission", "vibe.classify", *args],
            cwd=ROOT, env=self.env, check=True, capture_output=True, text=True, timeout=120,
        )
        return json.loads(out.stdout)["key"]

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stderr:
            self.process.stderr.close()
        shutil.rmtree(self.data_dir, ignore_errors=True)

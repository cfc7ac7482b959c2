"""A scripted HTTP server on a local port: answers in turn from a list, records every request."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional


class Scripted:
    """`answers`: (status, headers, body) in turn, then 200s; a `None` body with status 0 hangs
    for `hang` seconds before answering."""

    def __init__(self, answers: list[tuple[int, dict[str, str], Any]], hang: float = 5.0) -> None:
        self.answers = answers
        self.requests: list[dict[str, Any]] = []
        scripted = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                scripted.requests.append({"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body})
                n = len(scripted.requests) - 1
                status, headers, payload = scripted.answers[n] if n < len(scripted.answers) else (200, {}, {"ok": True})
                if status == 0:
                    time.sleep(hang)
                    status = 200
                raw = json.dumps(payload).encode() if payload is not None else b""
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.send_header("X-Request-Id", f"req-{n}")
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

            do_GET = _answer
            do_POST = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def header(self, i: int, name: str) -> Optional[str]:
        return next((v for k, v in self.requests[i]["headers"].items() if k.lower() == name.lower()), None)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def error(code: str, retry_after: Optional[str] = None, status: int = 429) -> tuple[int, dict[str, str], Any]:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return (status, headers, {"error": {"code": code, "message": "wait", "request_id": "r"}})

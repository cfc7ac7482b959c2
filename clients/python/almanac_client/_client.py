"""The transport: urllib, JSON, timeouts, retries and typed errors (standard library only)."""

from __future__ import annotations

import json
import platform
import random
import re
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from email.message import Message
from email.utils import parsedate_to_datetime
from typing import Any, Callable, Optional, Sequence, Union

from ._answer import Answer, NotModified, RateLimit
from .types import ClassifyResponse, Operations

VERSION = "0.1.0"
#: Seconds each attempt may wait to connect and for each read of the answer.
DEFAULT_TIMEOUT = 30.0
#: The API's most texts per classify call.
CLASSIFY_CHUNK = 20
_RETRIED_STATUSES = {429, 503}
_HTTP_DATE = re.compile(r"^\s*(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,?\s", re.I)


class AlmanacError(Exception):
    """An error answer of the API (`code` is its `error.code`), or a call that got no answer:
    `status` 0 with `code` `network_error` (the connection failed) or `timeout`."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        request_id: Optional[str] = None,
        reason: Optional[str] = None,
        details: Optional[dict[str, Any]] = None,
        retry_after: Optional[float] = None,
        rate_limit: Optional[RateLimit] = None,
        headers: Optional[Message] = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.request_id = request_id
        self.reason = reason
        self.details = details
        #: Seconds, from `Retry-After` (429 and 503).
        self.retry_after = retry_after
        self.rate_limit = rate_limit
        self.headers = headers

    def __repr__(self) -> str:
        return f"AlmanacError(status={self.status}, code={self.code!r}, message={self.message!r}, request_id={self.request_id!r})"


def parse_rate_limit(header: Optional[str]) -> Optional[RateLimit]:
    """Parses `"demo";r=59;t=3600` (the first item when several are listed)."""
    if not header:
        return None
    m = re.match(r'^\s*"?([^";,]+)"?\s*;(?=.*\br=(\d+))(?=.*\bt=(\d+))', header)
    return RateLimit(m.group(1), int(m.group(2)), int(m.group(3))) if m else None


def parse_retry_after(header: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """`Retry-After` in seconds: delta-seconds (`1.5` as written) or an HTTP date; None when
    absent or unreadable (`-1`, `soon`), so an unreadable wait is never "retry at once"."""
    if header is None:
        return None
    value = header.strip()
    if re.fullmatch(r"\d+(\.\d+)?", value):
        return float(value)
    if not _HTTP_DATE.match(value):
        return None
    try:
        at = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, float(int(at - (time.time() if now is None else now) + 0.999)))


def backoff(retry: int, rnd: Callable[[], float] = random.random) -> float:
    """Seconds before retrying a failed connection: 0.5, 1, 2 … up to 8, up to half taken off at random."""
    ceiling = min(8.0, 0.5 * 2**retry)
    return ceiling / 2 + rnd() * ceiling / 2


def _query_string(query: dict[str, Any]) -> str:
    pairs: list[tuple[str, str]] = []
    for name, value in query.items():
        if value is None:
            continue
        for v in value if isinstance(value, (list, tuple)) else [value]:
            pairs.append((name, "true" if v is True else "false" if v is False else str(v)))
    return urllib.parse.urlencode(pairs)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """The API does not redirect; a 3xx (a 304 above all) is an answer, not a hop."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class Almanac(Operations):
    """The Almanac API. Every operation is a typed method (see `types.Operations`), e.g.
    `get_moon(date="2026-01-03")`, `post_vibe_classify(["What a lovely day!"])`; `classify_all`
    classifies any number of texts."""

    def __init__(
        self,
        base_url: str,
        api_key: Optional[str] = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 2,
        max_retry_delay: float = 10.0,
        idempotency_key: Callable[[], str] = lambda: str(uuid.uuid4()),
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_retry_delay = max_retry_delay
        self._new_key = idempotency_key
        self._opener = urllib.request.build_opener(_NoRedirect())
        self.user_agent = f"almanac-client-python/{VERSION} python/{platform.python_version()}"

    def _call(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, Any],
        headers: dict[str, Optional[str]],
        body: Any = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> Union[Answer[Any], NotModified]:
        url = self.base_url + path + ("?" + q if (q := _query_string(query)) else "")
        sent = {"Accept": "application/json", "User-Agent": self.user_agent}
        if self.api_key:
            sent["Authorization"] = f"Bearer {self.api_key}"
        sent.update({k: v for k, v in headers.items() if v is not None})
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            sent["Content-Type"] = "application/json"
        if method == "POST" and not any(k.lower() == "idempotency-key" for k in sent):
            sent["Idempotency-Key"] = self._new_key()  # kept across retries: charged once
        return self._send(
            urllib.request.Request(url, data=data, headers=sent, method=method),
            self.timeout if timeout is None else timeout,
            self.max_retries if max_retries is None else max_retries,
        )

    def _send(self, request: urllib.request.Request, timeout: float, max_retries: int) -> Union[Answer[Any], NotModified]:
        # Only GETs and keyed POSTs (all of this client's) are sent again after a failed connection.
        repeatable = request.get_method() == "GET" or request.has_header("Idempotency-key")
        for retry in range(max_retries + 1):
            last = retry >= max_retries
            try:
                with self._opener.open(request, timeout=timeout) as res:
                    return _answer(res.status, res.headers, res.read())
            except urllib.error.HTTPError as e:
                status, headers, raw = e.code, e.headers, e.read()
                e.close()
                if status == 304:
                    return _answer(status, headers, raw)
                error = _error(status, headers, raw)
                if last or status not in _RETRIED_STATUSES:
                    raise error from None
                if error.retry_after is None or error.retry_after > self.max_retry_delay:
                    raise error from None
                time.sleep(error.retry_after)
            except (urllib.error.URLError, OSError) as e:
                reason = e.reason if isinstance(e, urllib.error.URLError) else e
                timed_out = isinstance(reason, (socket.timeout, TimeoutError))
                error = AlmanacError(0, "timeout" if timed_out else "network_error", str(reason))
                if last or not repeatable:
                    raise error from e
                time.sleep(backoff(retry))
        raise AssertionError("unreachable")

    def classify_all(
        self,
        texts: Sequence[str],
        *,
        concurrency: int = 2,
        on_progress: Optional[Callable[[int, int], None]] = None,
        max_wait: float = 900.0,
        timeout: Optional[float] = None,
        include: Optional[str] = None,
    ) -> ClassifyResponse:
        """Classifies any number of texts in calls of 20, `concurrency` at a time, within the
        RateLimit the server reports, waiting out 429s and 503s (up to `max_wait` seconds each),
        one Idempotency-Key per chunk, `include` (e.g. `"emotions,sentences"`) sent with each.
        `on_progress(done, total)` after each chunk. The results
        come back in input order, each `index` the text's position in `texts`."""
        from concurrent.futures import ThreadPoolExecutor

        chunks = [list(texts[i : i + CLASSIFY_CHUNK]) for i in range(0, len(texts), CLASSIFY_CHUNK)]
        budget = _Budget()
        done = [0]
        lock = threading.Lock()

        def run(i: int) -> ClassifyResponse:
            key = self._new_key()
            while True:
                budget.take()
                try:
                    answer = self.post_vibe_classify(chunks[i], include=include, idempotency_key=key, timeout=timeout)
                except AlmanacError as e:
                    budget.settle(e.rate_limit)
                    if e.status not in (409, 429, 503) or e.retry_after is None or e.retry_after > max_wait:
                        raise
                    time.sleep(e.retry_after)
                    continue
                except BaseException:
                    budget.settle(None)
                    raise
                budget.settle(answer.rate_limit)
                with lock:
                    done[0] += len(chunks[i])
                    if on_progress:
                        on_progress(done[0], len(texts))
                return answer.data

        with ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(chunks) or 1))) as pool:
            answers = list(pool.map(run, range(len(chunks))))
        results = [
            {**r, "index": i * CLASSIFY_CHUNK + r["index"]} for i, a in enumerate(answers) for r in a["results"]
        ]
        first = answers[0] if answers else None
        return {
            "model": first["model"] if first else {"provider": "", "name": "", "version": None},
            "labels": first["labels"] if first else [],
            "results": results,  # type: ignore[typeddict-item]
            "usage": {"texts": sum(a["usage"]["texts"] for a in answers)},
        }


class _Budget:
    """The RateLimit the answers report, shared by the workers: a call starts only while the
    calls left in the window exceed those under way, else it waits for the window to reset."""

    def __init__(self) -> None:
        self.remaining: Optional[float] = None
        self.reset_at = 0.0
        self.in_flight = 0
        self.changed = threading.Condition()

    def take(self) -> None:
        with self.changed:
            while True:
                if self.remaining is None and self.in_flight == 0:
                    break
                if self.remaining is not None and self.remaining > self.in_flight:
                    break
                if self.remaining is not None and time.monotonic() >= self.reset_at:
                    self.remaining = None  # a new window: learn it again from the next answer
                    continue
                wait = None if self.remaining is None else self.reset_at - time.monotonic()
                self.changed.wait(wait)
            self.in_flight += 1

    def settle(self, rate: Optional[RateLimit]) -> None:
        with self.changed:
            self.in_flight -= 1
            if rate is not None:
                self.remaining = rate.remaining
                self.reset_at = time.monotonic() + rate.reset_seconds
            elif self.remaining is None:
                self.remaining = float("inf")  # no RateLimit reported: nothing to stay inside
            self.changed.notify_all()


def _answer(status: int, headers: Message, raw: bytes) -> Union[Answer[Any], NotModified]:
    request_id = headers.get("X-Request-Id")
    rate = parse_rate_limit(headers.get("RateLimit"))
    if status == 304:
        return NotModified(304, request_id, rate, headers)
    data = json.loads(raw) if raw else None
    replayed = headers.get("Idempotent-Replayed") == "true"
    return Answer(data, status, request_id, rate, replayed, headers)


def _error(status: int, headers: Message, raw: bytes) -> AlmanacError:
    try:
        e = json.loads(raw).get("error", {})
    except (ValueError, AttributeError):
        e = {}
    return AlmanacError(
        status,
        e.get("code", "internal"),
        e.get("message", f"HTTP {status}"),
        e.get("request_id", headers.get("X-Request-Id")),
        e.get("reason"),
        e.get("details"),
        parse_retry_after(headers.get("Retry-After")),
        parse_rate_limit(headers.get("RateLimit")),
        headers,
    )

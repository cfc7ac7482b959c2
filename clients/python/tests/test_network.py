"""What a network does to a call, on a scripted local server: Retry-After read strictly and
honoured, the Idempotency-Key kept across retries, timeouts, failed connections retried with
backoff, per-call max_retries, and the User-Agent."""

from __future__ import annotations

import socket
import unittest

from almanac_client import VERSION, Almanac, AlmanacError, backoff, parse_retry_after

from .scripted import Scripted, error

CLASSIFIED = {"model": {"provider": "x", "name": "x", "version": "1"}, "labels": [], "results": [], "usage": {"texts": 1}}


class Protocol(unittest.TestCase):
    def test_retry_after_is_read_strictly(self) -> None:
        self.assertEqual(parse_retry_after("1.5"), 1.5)
        self.assertEqual(parse_retry_after(" 3 "), 3.0)
        self.assertIsNone(parse_retry_after("-1"))
        self.assertIsNone(parse_retry_after("soon"))
        self.assertIsNone(parse_retry_after(None))
        now = 1767225600.0  # 2026-01-01T00:00:00Z
        self.assertEqual(parse_retry_after("Thu, 01 Jan 2026 00:00:07 GMT", now), 7.0)

    def test_backoff_grows_with_jitter_and_a_cap(self) -> None:
        self.assertEqual(backoff(0, lambda: 0.0), 0.25)
        self.assertEqual(backoff(0, lambda: 1.0), 0.5)
        self.assertEqual(backoff(10, lambda: 1.0), 8.0)

    def test_user_agent_names_the_client_and_its_version(self) -> None:
        s = Scripted([(200, {}, {"name": "k"})])
        self.addCleanup(s.close)
        Almanac(s.url).get_usage()
        self.assertTrue((s.header(0, "User-Agent") or "").startswith(f"almanac-client-python/{VERSION} python/"))


class Retries(unittest.TestCase):
    def test_a_503_and_a_429_are_retried_after_retry_after_with_the_same_idempotency_key(self) -> None:
        s = Scripted([error("unavailable", "0.1", 503), error("rate_limited", "0"), (200, {}, CLASSIFIED)])
        self.addCleanup(s.close)
        answer = Almanac(s.url, "alm_x").post_vibe_classify(["hi"])
        self.assertEqual(answer.status, 200)
        self.assertEqual(len(s.requests), 3)
        keys = {s.header(i, "Idempotency-Key") for i in range(3)}
        self.assertEqual(len(keys), 1)
        self.assertTrue(next(iter(keys)))
        self.assertEqual(s.requests[2]["body"], b'["hi"]')
        self.assertEqual(s.header(0, "Authorization"), "Bearer alm_x")

    def test_an_unreadable_or_too_long_retry_after_is_thrown_at_once(self) -> None:
        s = Scripted([error("rate_limited", "-1"), error("rate_limited", "3600")])
        self.addCleanup(s.close)
        almanac = Almanac(s.url)
        with self.assertRaises(AlmanacError) as caught:
            almanac.get_usage()
        self.assertIsNone(caught.exception.retry_after)
        with self.assertRaises(AlmanacError) as caught:
            almanac.get_usage()
        self.assertEqual(caught.exception.retry_after, 3600.0)
        self.assertEqual(len(s.requests), 2)

    def test_max_retries_per_call(self) -> None:
        s = Scripted([error("unavailable", "0", 503)] * 5)
        self.addCleanup(s.close)
        with self.assertRaises(AlmanacError) as caught:
            Almanac(s.url, max_retries=3).get_usage(max_retries=1)
        self.assertEqual(caught.exception.code, "unavailable")
        self.assertEqual(len(s.requests), 2)


class Timeouts(unittest.TestCase):
    def test_an_answer_that_does_not_come_is_a_timeout_retried_for_a_get(self) -> None:
        s = Scripted([(0, {}, None), (0, {}, None)], hang=2.0)
        self.addCleanup(s.close)
        with self.assertRaises(AlmanacError) as caught:
            Almanac(s.url, timeout=0.3, max_retries=1).get_usage()
        self.assertEqual((caught.exception.status, caught.exception.code), (0, "timeout"))
        self.assertEqual(len(s.requests), 2)

    def test_a_refused_connection_is_a_network_error_after_its_retries(self) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]  # closed when the block ends: nothing listens there
        with self.assertRaises(AlmanacError) as caught:
            Almanac(f"http://127.0.0.1:{port}", max_retries=1).get_usage()
        self.assertEqual((caught.exception.status, caught.exception.code), (0, "network_error"))


if __name__ == "__main__":
    unittest.main()

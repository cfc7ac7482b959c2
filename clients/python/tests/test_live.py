"""The Python client against a live Almanac server it starts: every operation, typed errors,
idempotency, conditional GETs, classify_all within a key's RateLimit, and types.py in step
with the document the server serves."""

from __future__ import annotations

import json
import subprocess
import sys
import unittest
import urllib.request
from pathlib import Path

from almanac_client import Almanac, AlmanacError

from .live import LiveServer

server: LiveServer
key: str


def setUpModule() -> None:
    global server, key
    server = LiveServer()
    key = server.create_key()


def tearDownModule() -> None:
    server.close()


TEXTS = [
    f"I love this, number {i}!" if i % 3 == 0 else f"The parcel {i} arrived on Tuesday." if i % 3 == 1 else f"Worst support ever, ticket {i}."
    for i in range(45)
]


class EveryOperation(unittest.TestCase):
    def test_each_operation_answers_through_its_typed_method(self) -> None:
        almanac = Almanac(server.url, key)
        moon = almanac.get_moon(date="2024-01-25", lat=51.5, lon=-0.1, tz="Asia/Kolkata")
        self.assertFalse(moon.not_modified)
        self.assertEqual(moon.data["phase"]["key"], "full_moon")
        sun = almanac.get_sun(lat=51.5, lon=-0.1, date="2024-06-21")
        self.assertTrue(sun.data["sunrise"].startswith("2024-06-21T"))
        holidays = almanac.get_holidays(country="GB", region="SCT", year=2026, types=["public", "bank"])
        self.assertGreater(len(holidays.data["holidays"]), 5)
        working = almanac.get_holidays_working_days(country="DE", date="2026-12-24", add=3, count="public,bank")
        self.assertTrue(working.data["result"].startswith("2026-12-"))
        self.assertEqual(almanac.get_vat(code="DE", date="2026-01-01").status, 200)
        self.assertEqual(almanac.get_usage().data["name"], "python-client")
        classify = almanac.post_vibe_classify(["What a lovely day!"])
        self.assertEqual(classify.data["results"][0]["label"], "positive")
        # The upstreams point at a closed port here: a typed 502, not a crash.
        for call in (lambda: almanac.get_postcode(postcode="SW1A 2AA"), lambda: almanac.get_weather(postcode="SW1A 2AA")):
            with self.assertRaises(AlmanacError) as caught:
                call()
            self.assertEqual((caught.exception.status, caught.exception.code), (502, "upstream_error"))
        # No mail lane is configured: the contact desk says so in the error shape.
        with self.assertRaises(AlmanacError) as caught:
            almanac.post_mail_contact({"name": "Ada", "email": "ada@example.com", "message": "Hello there, about VAT."})
        self.assertTrue(caught.exception.request_id)

    def test_errors_carry_code_reason_and_request_id(self) -> None:
        with self.assertRaises(AlmanacError) as caught:
            Almanac(server.url).get_usage()
        e = caught.exception
        self.assertEqual((e.status, e.code), (401, "unauthorized"))
        self.assertRegex(e.request_id or "", r"^[0-9a-f-]{36}$")
        self.assertEqual(e.request_id, e.headers.get("X-Request-Id") if e.headers else None)
        with self.assertRaises(AlmanacError) as caught:
            Almanac(server.url).get_moon(lat=999, lon=0)
        self.assertEqual(caught.exception.code, "invalid_body")
        self.assertIn("lat", json.dumps(caught.exception.details))

    def test_a_repeated_idempotency_key_is_replayed_and_said_so(self) -> None:
        almanac = Almanac(server.url, key)
        first = almanac.post_vibe_classify(["fine"], idempotency_key="python-replay-1")
        again = almanac.post_vibe_classify(["fine"], idempotency_key="python-replay-1")
        self.assertFalse(first.replayed)
        self.assertTrue(again.replayed)

    def test_a_matching_if_none_match_is_a_304_without_data(self) -> None:
        almanac = Almanac(server.url)
        first = almanac.get_moon(date="2024-01-25")
        etag = first.headers.get("ETag")
        self.assertTrue(etag)
        again = almanac.get_moon(date="2024-01-25", if_none_match=etag)
        self.assertTrue(again.not_modified)
        self.assertEqual((again.status, again.data), (304, None))

    def test_the_rate_limit_header_is_parsed(self) -> None:
        answer = Almanac(server.url).get_holidays(country="FR", year=2025)
        self.assertEqual(answer.rate_limit.policy if answer.rate_limit else None, "demo")


class ClassifyAll(unittest.TestCase):
    def test_any_number_of_texts_in_input_order(self) -> None:
        progress: list[int] = []
        almanac = Almanac(server.url, key)
        everything = almanac.classify_all(TEXTS, concurrency=3, on_progress=lambda done, total: progress.append(done))
        self.assertEqual([r["index"] for r in everything["results"]], list(range(45)))
        singles = almanac.post_vibe_classify(TEXTS[40:]).data["results"]
        self.assertEqual([r["label"] for r in everything["results"][40:]], [r["label"] for r in singles])
        self.assertEqual(everything["usage"]["texts"], 45)
        self.assertEqual(sorted(progress)[-1], 45)
        self.assertEqual(len(progress), 3)

    def test_include_is_sent_with_every_chunk(self) -> None:
        everything = Almanac(server.url, key).classify_all(TEXTS[:25], include="emotions")
        self.assertEqual(len(everything["results"]), 25)
        self.assertTrue(all("emotions" in r for r in everything["results"]))

    def test_stays_inside_the_keys_rate_limit(self) -> None:
        almanac = Almanac(server.url, server.create_key("--ratelimit", "2/1"))
        refused: list[int] = []
        send = almanac._send

        def recording(*args, **kwargs):  # type: ignore[no-untyped-def]
            try:
                return send(*args, **kwargs)
            except AlmanacError as e:
                refused.append(e.status)
                raise

        almanac._send = recording  # type: ignore[method-assign]
        everything = almanac.classify_all(TEXTS + TEXTS, concurrency=4)
        self.assertEqual(len(everything["results"]), 90)
        self.assertEqual(refused, [])


class GeneratedTypes(unittest.TestCase):
    def test_types_py_is_what_the_generator_makes_of_the_served_document(self) -> None:
        here = Path(__file__).resolve().parents[1]
        with urllib.request.urlopen(server.url + "/v1/openapi.json") as res:
            doc = res.read()
        sys.path.insert(0, str(here / "scripts"))
        try:
            import generate_types
        finally:
            sys.path.pop(0)
        made = generate_types.Generator(json.loads(doc)).render()
        committed = (here / "almanac_client" / "types.py").read_text(encoding="utf-8")
        self.assertEqual(
            made,
            committed,
            "almanac_client/types.py is stale: run npm run check (or generate_types.py over the served document)",
        )

    def test_the_package_type_checks_as_python_source(self) -> None:
        here = Path(__file__).resolve().parents[1]
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(here / "almanac_client")], check=True)

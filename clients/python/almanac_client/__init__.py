"""The official Python client of the Almanac API (standard library only).

    from almanac_client import Almanac, AlmanacError
    almanac = Almanac("https://almanac.example", api_key=os.environ.get("ALMANAC_KEY"))
    moon = almanac.get_moon(date="2026-01-03")
"""

from ._answer import Answer, NotModified, RateLimit
from ._client import (
    CLASSIFY_CHUNK,
    DEFAULT_TIMEOUT,
    VERSION,
    Almanac,
    AlmanacError,
    backoff,
    parse_rate_limit,
    parse_retry_after,
)

__all__ = [
    "CLASSIFY_CHUNK",
    "DEFAULT_TIMEOUT",
    "VERSION",
    "Almanac",
    "AlmanacError",
    "Answer",
    "NotModified",
    "RateLimit",
    "backoff",
    "parse_rate_limit",
    "parse_retry_after",
]

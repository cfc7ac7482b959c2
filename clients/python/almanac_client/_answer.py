"""What a call returns: the typed body and what the headers say about the call."""

from __future__ import annotations

from dataclasses import dataclass, field
from email.message import Message
from typing import Generic, Literal, NamedTuple, Optional, TypeVar

T = TypeVar("T")


class RateLimit(NamedTuple):
    """The `RateLimit` header (IETF draft): `"demo";r=59;t=3600`."""

    policy: str
    #: Calls left in the window.
    remaining: int
    #: Seconds until the window resets.
    reset_seconds: int


@dataclass(frozen=True)
class Answer(Generic[T]):
    """A successful answer."""

    data: T
    status: int
    #: The server's id of this call (quote it to support).
    request_id: Optional[str]
    rate_limit: Optional[RateLimit]
    #: `Idempotent-Replayed: true`: the answer of an earlier call with the same Idempotency-Key.
    replayed: bool
    headers: Message = field(repr=False)
    not_modified: Literal[False] = False


@dataclass(frozen=True)
class NotModified:
    """A 304 to a GET sent with `if_none_match`: what you hold is current; there is no body."""

    status: Literal[304]
    request_id: Optional[str]
    rate_limit: Optional[RateLimit]
    headers: Message = field(repr=False)
    data: None = None
    not_modified: Literal[True] = True

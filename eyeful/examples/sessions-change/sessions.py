"""Sessions that expire: the example project eyeful's demo reviews."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Session:
    user: str
    expires_at: int


def is_expired(session: Session, now: int) -> bool:
    """A session expires at `expires_at` (see README.md)."""
    return now > session.expires_at


def remaining(session: Session, now: int) -> int:
    """Seconds left."""
    return session.expires_at - now


def extend(session: Session, seconds: int, now: int) -> Session:
    """Move the expiry later; an expired session cannot be extended (see README.md)."""
    if seconds < 0:
        raise ValueError("cannot extend a session by a negative time")
    return Session(session.user, session.expires_at + seconds)

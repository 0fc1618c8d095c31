import pytest
from sessions import Session, extend, is_expired, remaining


def test_fresh_session_is_not_expired():
    assert not is_expired(Session("ada", expires_at=100), now=50)


def test_old_session_is_expired():
    assert is_expired(Session("ada", expires_at=100), now=150)


def test_remaining_counts_down():
    assert remaining(Session("ada", expires_at=100), now=40) == 60


def test_remaining_never_negative():
    assert remaining(Session("ada", expires_at=100), now=130) == 0


def test_extend_moves_expiry():
    assert extend(Session("ada", expires_at=100), 50, now=60).expires_at == 150


def test_extend_refuses_negative():
    with pytest.raises(ValueError):
        extend(Session("ada", expires_at=100), -1, now=60)

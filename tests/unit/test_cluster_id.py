"""Lab cluster ids never start with '-', which `kafka-storage format -t` would read as an option."""

import base64
import uuid

import pytest

from topology.lab import process

# A first byte of 0xf8..0xfb gives six leading bits of 62: '-' in URL-safe base64.
DASHED = uuid.UUID(bytes=bytes([0xF8]) + bytes(15))
PLAIN = uuid.UUID(bytes=bytes([0x10]) + bytes(15))


def test_an_id_starting_with_a_dash_is_drawn_again(monkeypatch: pytest.MonkeyPatch) -> None:
    assert base64.urlsafe_b64encode(DASHED.bytes).decode().startswith("-")
    draws = iter([DASHED, DASHED, PLAIN])
    monkeypatch.setattr(uuid, "uuid4", lambda: next(draws))
    assert process.new_cluster_id() == "EAAAAAAAAAAAAAAAAAAAAA"
    assert next(draws, None) is None  # drawn three times, the first two rejected


def test_no_id_of_many_starts_with_a_dash() -> None:
    ids = [process.new_cluster_id() for _ in range(5000)]  # ~78 would, without the redraw
    assert [cluster_id for cluster_id in ids if cluster_id.startswith("-")] == []
    assert all(len(cluster_id) == 22 and "=" not in cluster_id for cluster_id in ids)

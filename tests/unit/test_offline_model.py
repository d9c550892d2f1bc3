"""A hub model that cannot be fetched fails at once with a message, before any retry loop (issue 11: in under 3 s),
also when the hub never answers, and through a proxy; the probe's answer is reused for a minute.

Real sockets on 127.0.0.1 play the hub and the proxy: a closed port (refuses), a listening socket whose accept
queue is full (never answers: the kernel drops the connection attempt), and a listening socket (answers)."""

import socket

import pytest

from bertscore_viz.engine import encoder
from bertscore_viz.errors import ModelError
from bertscore_viz.models import hub
from bertscore_viz.models.spec import resolve_model

PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    """No proxy from the machine, no hub answer remembered from another test."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    hub._HUB_PROBES.clear()
    yield
    hub._HUB_PROBES.clear()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: connections are refused


@pytest.fixture()
def black_hole():
    """A port that never answers: listening with a backlog of 0, its one queue slot taken and never accepted, so
    that further connection attempts hang (SYNs dropped) until the client's timeout."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port = server.getsockname()[1]
    filler = socket.create_connection(("127.0.0.1", port), timeout=1)
    probe = socket.socket()
    probe.settimeout(0.3)
    try:
        with pytest.raises(OSError):  # the premise: this port does not answer now
            probe.connect(("127.0.0.1", port))
    finally:
        probe.close()
    yield port
    filler.close()
    server.close()


class Listener:
    """A port that answers, counting the connections made to it."""

    def __init__(self):
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.server.setblocking(False)
        self.port = self.server.getsockname()[1]
        self.count = 0

    def connections(self) -> int:
        while True:
            try:
                conn, _ = self.server.accept()
            except BlockingIOError:
                return self.count
            conn.close()
            self.count += 1


@pytest.fixture()
def listener():
    lst = Listener()
    yield lst
    lst.server.close()


def test_unreachable_hub_is_detected(monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    assert hub.hub_reachable(timeout=1.0) is False
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert hub.hub_reachable() is False


def test_uncached_hub_model_offline_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    calls = []
    monkeypatch.setattr("transformers.AutoTokenizer.from_pretrained", lambda *a, **k: calls.append(a))
    with pytest.raises(ModelError, match="not in the Hugging Face cache and the hub cannot be reached"):
        encoder.Encoder(resolve_model("roberta-large"))
    assert not calls  # transformers (and its retries) never ran


@pytest.fixture()
def probes(monkeypatch):
    """The connection attempts made (``(address, timeout)``), and whether transformers (with its retries) ran."""
    attempts, loads = [], []
    connect = socket.create_connection

    def recorded(address, timeout=None, *args, **kwargs):
        attempts.append((address, timeout))
        return connect(address, timeout, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", recorded)
    monkeypatch.setattr("transformers.AutoTokenizer.from_pretrained", lambda *a, **k: loads.append(a))
    return attempts, loads


def test_a_hub_that_never_answers_fails_after_one_probe_of_at_most_2_seconds(monkeypatch, black_hole, probes):
    """Issue 11's "in under 3 s": one connection attempt bounded by the probe's 2 s timeout, and nothing else that
    waits (transformers and its retries never run); an app rerun does not probe again. (Asserted on the attempts
    made, not on the wall clock, which a loaded machine stretches.)"""
    attempts, loads = probes
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{black_hole}")
    with pytest.raises(ModelError, match=rf"hub cannot be reached \(127\.0\.0\.1:{black_hole} did not answer within "
                                         r"2 s; offline\?\).*bundled model"):
        encoder.get_encoder(resolve_model("roberta-large"))
    assert hub.HUB_PROBE_SECONDS == 2.0
    assert attempts == [(("127.0.0.1", black_hole), hub.HUB_PROBE_SECONDS)] and not loads
    with pytest.raises(ModelError, match="hub cannot be reached"):
        encoder.get_encoder(resolve_model("roberta-large"))  # an app rerun: the answer is remembered
    assert len(attempts) == 1 and not loads


def test_the_probe_answer_is_reused_for_a_minute(monkeypatch, listener):
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{listener.port}")
    assert hub.hub_reachable(timeout=1.0) is True
    assert listener.connections() == 1
    assert hub.hub_reachable(timeout=1.0) is True
    assert listener.connections() == 1  # not probed again
    monkeypatch.setattr(hub, "HUB_PROBE_TTL", 0.0)
    assert hub.hub_reachable(timeout=1.0) is True
    assert listener.connections() == 2  # expired: probed again


def test_through_a_proxy_the_proxy_is_probed(monkeypatch, listener, black_hole, probes):
    """Behind a proxy a direct connection to the hub fails although the hub is reachable: probe the proxy."""
    closed = _closed_port()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed}")  # direct: refused
    monkeypatch.setenv("HTTP_PROXY", f"http://user:secret@127.0.0.1:{listener.port}")
    assert hub.hub_probe_target() == ("127.0.0.1", listener.port, True)
    assert hub.hub_reachable(timeout=1.0) is True
    assert listener.connections() == 1
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")  # the hub's host is exempt: direct again
    assert hub.hub_probe_target() == ("127.0.0.1", closed, False)
    assert hub.hub_reachable(timeout=1.0) is False
    # A proxy that never answers: a fast failure naming the proxy, never its credentials.
    monkeypatch.delenv("NO_PROXY")
    monkeypatch.setenv("HF_ENDPOINT", "https://huggingface.co")
    monkeypatch.setenv("HTTPS_PROXY", f"http://user:secret@127.0.0.1:{black_hole}")
    attempts, loads = probes
    attempts.clear()
    with pytest.raises(ModelError, match=rf"the proxy 127\.0\.0\.1:{black_hole} \(from HTTPS_PROXY/HTTP_PROXY\) did "
                                         "not answer") as info:
        encoder.get_encoder(resolve_model("roberta-large"))
    assert attempts == [(("127.0.0.1", black_hole), hub.HUB_PROBE_SECONDS)] and not loads  # one bounded probe
    assert "secret" not in str(info.value)

"""The Hugging Face hub, for hub model names: whether it can be reached (a short probe, remembered for a minute, so
that an unreachable hub fails in seconds) and the options ``from_pretrained`` gets."""

from __future__ import annotations

import os
import socket
import threading
import time
import urllib.request
from urllib.parse import urlparse

from huggingface_hub import try_to_load_from_cache

from bertscore_viz.errors import ModelError
from bertscore_viz.models.spec import ModelSpec

__all__ = ["HUB_PROBE_SECONDS", "HUB_PROBE_TTL", "hub_probe_target", "hub_reachable", "hub_kwargs"]

#: Seconds to wait for the hub before calling it unreachable (a name lookup plus a TCP connection).
HUB_PROBE_SECONDS = 2.0


#: Seconds a probe's answer is reused: an app rerun, or another load, within this time does not probe again.
HUB_PROBE_TTL = 60.0


_HUB_PROBES: dict[tuple[str, int], tuple[float, bool]] = {}


_HUB_PROBES_LOCK = threading.Lock()


def _hub_in_cache(source: str) -> bool:
    """The model's config is in the local Hugging Face cache (then it loads without the network)."""
    try:

        return isinstance(try_to_load_from_cache(source, "config.json"), str)
    except Exception:  # noqa: BLE001  an odd name or an old huggingface_hub: simply not known to be cached
        return False


def hub_probe_target() -> tuple[str, int, bool]:
    """``(host, port, via_proxy)``: where the hub is reached first, the hub itself (``HF_ENDPOINT``, default
    huggingface.co) or the proxy the environment routes it through (``HTTPS_PROXY`` / ``HTTP_PROXY`` /
    ``ALL_PROXY``, upper or lower case, unless ``NO_PROXY`` exempts the hub's host), as huggingface_hub's HTTP
    client does. Credentials in a proxy URL are never part of the answer."""

    url = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    scheme = url.scheme or "https"
    host, port = url.hostname or "huggingface.co", url.port or (443 if scheme == "https" else 80)
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(scheme) or proxies.get("all")
    if proxy and not urllib.request.proxy_bypass_environment(host, proxies):
        p = urlparse(proxy if "://" in proxy else f"http://{proxy}")
        if p.hostname:
            default = {"https": 443, "socks5": 1080, "socks5h": 1080, "socks4": 1080}.get(p.scheme, 80)
            return p.hostname, p.port or default, True
    return host, port, False


def hub_reachable(timeout: float = HUB_PROBE_SECONDS) -> bool:
    """Whether the hub (or the proxy in front of it, :func:`hub_probe_target`) answers a TCP connection within
    ``timeout`` seconds, name lookup included. ``HF_HUB_OFFLINE=1`` means no.

    Run in a daemon thread: a name lookup is not bounded by socket timeouts, and an offline machine may otherwise
    hang in it. The answer, yes or no, is reused for :data:`HUB_PROBE_TTL` seconds per target, so that each rerun
    of the app with an unreachable hub name does not wait again. Through a proxy only the proxy is probed: whether
    it can reach the hub is then up to huggingface_hub's own timeouts.
    """
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        return False

    host, port, _ = hub_probe_target()
    now = time.monotonic()
    with _HUB_PROBES_LOCK:
        seen = _HUB_PROBES.get((host, port))
    if seen is not None and now - seen[0] < HUB_PROBE_TTL:
        return seen[1]
    result = [False]

    def probe() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                result[0] = True
        except OSError:
            pass

    t = threading.Thread(target=probe, daemon=True)
    t.start()
    t.join(timeout)
    with _HUB_PROBES_LOCK:
        _HUB_PROBES[(host, port)] = (time.monotonic(), result[0])
    return result[0]


def hub_kwargs(spec: ModelSpec) -> dict:
    """For a hub name: load from the cache when it is there; fail at once when it is not and the hub cannot
    be reached (instead of transformers' retries, about 50 s offline)."""
    if _hub_in_cache(spec.source):
        return {"local_files_only": True}
    if not hub_reachable():
        host, port, via_proxy = hub_probe_target()
        what = f"the proxy {host}:{port} (from HTTPS_PROXY/HTTP_PROXY)" if via_proxy else f"{host}:{port}"
        raise ModelError(
            f"Could not load model {spec.name!r}: it is not in the Hugging Face cache and the hub cannot be "
            f"reached ({what} did not answer within {HUB_PROBE_SECONDS:g} s; offline?). Connect to the internet, "
            "copy the model into a local directory and give its path, or use the bundled model "
            "'all-MiniLM-L6-v2'.")
    return {}

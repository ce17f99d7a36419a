"""Where compiled golden models are cached: ``KERA_HLS_CACHE``, else ``~/.cache/kera-hls``."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir(kind: str) -> Path:
    """Return the cache folder for ``kind`` (``cpu``, ``wasm``, ``ptx``); it may not exist yet."""
    root = os.environ.get("KERA_HLS_CACHE")
    if root:
        base = Path(root)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg) if xdg else Path.home() / ".cache") / "kera-hls"
    return base / kind


__all__ = ["cache_dir"]

"""Streamlit's theme options, read once instead of at every rerun.

Every script run, fragment reruns included, starts with a `new_session` message that carries the theme.
Streamlit (1.67, pinned) builds it by scanning all ~370 config options once per theme section, six times per
rerun: about 1 ms of every click's rerun on the development machine (13 % of the server's CPU under the click
load benchmark), for values that only change when the config is parsed again or an option is set.

`cache_theme_options()` memoizes `streamlit.config.get_options_for_section` for the theme sections and forgets
the memo whenever Streamlit parses its config again or sets an option, so the values sent are always the ones
Streamlit would compute. Other sections pass through untouched.
"""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable

from streamlit import config

_lock = threading.Lock()
_install_lock = threading.Lock()
_memo: dict[str, dict[str, Any]] = {}


def _forget(*_args: Any, **_kwargs: Any) -> None:
    with _lock:
        _memo.clear()


def _cached(original: Callable[[str], dict[str, Any]]) -> Callable[[str], dict[str, Any]]:
    @functools.wraps(original)
    def get_options_for_section(section: str) -> dict[str, Any]:
        if not section.startswith("theme"):
            return original(section)
        with _lock:
            hit = _memo.get(section)
        if hit is None:
            hit = original(section)
            with _lock:
                _memo[section] = hit
        return dict(hit)  # a copy: callers may not share the memo

    get_options_for_section.rose_theme_cache = True  # type: ignore[attr-defined]
    return get_options_for_section


def _forgetting(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def set_option(*args: Any, **kwargs: Any) -> Any:
        try:
            return original(*args, **kwargs)
        finally:
            _forget()

    return set_option


def cache_theme_options() -> bool:
    """Install the memo once per process (idempotent). Returns False when this Streamlit lacks the functions
    it wraps (then nothing is changed)."""
    if not all(hasattr(config, name) for name in ("get_options_for_section", "_set_option", "on_config_parsed")):
        return False
    with _install_lock:  # sessions run app.py on their own threads
        if getattr(config.get_options_for_section, "rose_theme_cache", False):
            return True
        config._set_option = _forgetting(config._set_option)
        config.on_config_parsed(_forget, force_connect=True)
        config.get_options_for_section = _cached(config.get_options_for_section)
    return True

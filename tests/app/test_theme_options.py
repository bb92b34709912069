"""ui/theme_options.py: the memo of Streamlit's theme options returns what Streamlit computes, and follows a
changed option at once (it is installed process-wide, so it must never serve a stale value)."""
from streamlit import config

from ui.theme_options import cache_theme_options

SECTIONS = ["theme", "theme.light", "theme.dark", "theme.sidebar", "theme.light.sidebar", "theme.dark.sidebar"]


def test_memo_returns_streamlits_values_and_follows_set_option():
    before = {s: config.get_options_for_section(s) for s in SECTIONS}
    assert cache_theme_options() and cache_theme_options()  # idempotent
    assert {s: config.get_options_for_section(s) for s in SECTIONS} == before
    config.get_options_for_section("theme")["primaryColor"] = "mutated by a caller"
    assert config.get_options_for_section("theme") == before["theme"]  # callers get copies
    old = config.get_option("theme.primaryColor")
    try:
        config.set_option("theme.primaryColor", "#123456")
        assert config.get_options_for_section("theme")["primaryColor"] == "#123456"
    finally:
        config.set_option("theme.primaryColor", old)
    assert config.get_options_for_section("theme")["primaryColor"] == old
    assert config.get_options_for_section("server")["port"] == config.get_option("server.port")  # not memoized

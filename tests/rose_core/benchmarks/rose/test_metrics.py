import pytest

from rose_core import ScoredRow, summarize
from rose_core.benchmarks.rose.metrics import format_summary

TEMPLATES = ["T1", "T2", "T3", "T4", "T5"]


def run_with_rates(rates: dict[str, float], n: int = 1000, subset: str = "ChineseGlyph") -> list[ScoredRow]:
    rows = []
    for t, r in rates.items():
        k = round(r / 100 * n)
        rows += [ScoredRow(t, subset, i < k, True) for i in range(n)]
    return rows


def test_avg_is_mean_of_template_rates_spec_check_qwen():
    s = summarize(run_with_rates(dict(zip(TEMPLATES, [80.3, 65.3, 39.5, 37.7, 28.9]))))
    assert round(s.avg, 1) == 50.3


def test_gap_spec_check_glm5v():
    s = summarize(run_with_rates(dict(zip(TEMPLATES, [64.2, 56.9, 20.6, 21.4, 6.1]))))
    assert s.counting_avg == pytest.approx(60.55)
    assert s.action_avg == pytest.approx(16.0333, abs=1e-3)
    assert round(s.gap, 1) == 44.5


def test_avg_differs_from_pooled_rate_when_templates_are_unbalanced():
    rows = run_with_rates({"T1": 100.0}, n=300) + run_with_rates({t: 0.0 for t in TEMPLATES[1:]}, n=100)
    s = summarize(rows)
    assert s.avg == pytest.approx(20.0)
    assert s.pooled == pytest.approx(300 / 700 * 100)


def test_groups_and_valid():
    rows = run_with_rates({t: 100.0 for t in TEMPLATES}, n=10, subset="EmojiStyle")
    rows += run_with_rates({t: 0.0 for t in TEMPLATES}, n=10, subset="PixelEdit")
    rows[0] = ScoredRow("T1", "EmojiStyle", True, False)
    s = summarize(rows)
    assert s.groups == {"Glyph": None, "Emoji": 100.0, "Pixel": 0.0}
    assert s.valid == pytest.approx(99 / 100 * 100)


def test_missing_templates_give_none_not_zero():
    s = summarize(run_with_rates({"T1": 50.0}))
    assert s.avg is None and s.gap is None and s.pass_rate["L-Cnt"] is None
    assert "solver: x" in format_summary("x", s)

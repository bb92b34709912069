"""Study planning: participants needed, expected interval widths, time and cost, with hand-worked numbers."""
from __future__ import annotations

import json
import math
import statistics

import pytest

from rose_core.analysis.plan import (
    DEFAULT_SECONDS_PER_ITEM, avg_width, median_seconds_per_item, plan_for_config, plan_rows, plan_study,
    pool_by_template, seconds_per_item, summary_lines, wilson_width,
)
from rose_core.instrument.config import StudyConfig

FIVE = {"G-Cnt": 100, "L-Cnt": 100, "L-Clk": 100, "V-Clk": 100, "Excl-CS": 100}


def test_wilson_width_by_hand():
    # n = 300, p = 0.9, z = 1.959964: z²/n = 3.841459/300 = 0.0128049; p(1-p)/n = 0.0003;
    # z²/(4n²) = 3.841459/360000 = 0.00001067072; half = z · sqrt(0.00031067072) / 1.0128049
    # = 1.959964 · 0.01762585 / 1.0128049 = 0.0341093 → width 6.822 percentage points
    assert wilson_width(0.9, 300) == pytest.approx(6.8219, abs=1e-3)
    # p = 0.5, n = 100: half = 1.959964 · sqrt(0.0025 + 0.0000960365) / 1.0384146
    # = 1.959964 · 0.0509513 / 1.0384146 = 0.0961685 → 19.234 pp
    assert wilson_width(0.5, 100) == pytest.approx(19.2337, abs=1e-3)
    # at p = 1 the interval does not collapse: lo = 1/(1 + z²/n), hi = 1, so width = (z²/n) / (1 + z²/n)
    assert wilson_width(1.0, 300) == pytest.approx(100 * 0.0128049 / 1.0128049, abs=1e-3)


def test_plan_by_hand():
    p = plan_study(FIVE, items_per_participant=20, participants_per_instance=3, accuracy=0.9, seconds_per_item=12,
                   hourly_rate=12.0, attention_checks=1, practice_items=4)
    assert p.pool == 500
    assert p.participants == 75                     # 500 × 3 / 20
    assert p.responses == {t: 300 for t in FIVE}
    assert all(w == pytest.approx(6.8219, abs=1e-3) for w in p.template_width.values())
    # Avg: SE² = (5 × 0.9 · 0.1 / 300) / 25 = 0.00006, SE = 0.00774597; width = 2 · 1.959964 · SE = 3.0364 pp
    assert p.avg_width == pytest.approx(3.0364, abs=1e-3)
    assert p.items_shown == 25                      # 20 main + 1 attention check + 4 practice
    assert p.minutes_per_participant == pytest.approx(5.0)   # 25 × 12 s
    assert p.participant_hours == pytest.approx(6.25)        # 75 × 5 min
    assert p.cost_per_participant == pytest.approx(1.0) and p.cost == pytest.approx(75.0)


def test_participants_round_up_and_per_template_accuracy():
    p = plan_study({"G-Cnt": 4, "G-Clk": 3}, 3, 2, {"G-Cnt": 0.8, "G-Clk": 0.6}, 10)
    assert p.participants == 5                      # 7 × 2 / 3 = 4.67 → 5
    assert p.avg_width is None and "no human Avg" in p.notes[0]
    assert p.template_width["G-Clk"] == pytest.approx(wilson_width(0.6, 6))
    assert p.cost is None
    rows = plan_rows(p)
    assert rows[-1]["95 % interval width (pp)"] == "–"  # no Avg: an explicit mark, not None


def test_avg_width_uses_each_templates_own_accuracy():
    acc = {"G-Cnt": 0.9, "L-Cnt": 0.8, "L-Clk": 0.7, "V-Clk": 0.6, "Excl-CS": 0.5}
    n = {t: 200 for t in acc}
    var = (0.09 + 0.16 + 0.21 + 0.24 + 0.25) / 200 / 25          # = 0.00019
    assert avg_width(acc, n) == pytest.approx(200 * 1.959964 * math.sqrt(var), abs=1e-4)


@pytest.mark.parametrize("kw, match", [
    ({"items_per_participant": 600}, "exceed the pool"),
    ({"accuracy": 90}, "between 0 and 1"),
    ({"seconds_per_item": 0}, "must be positive"),
    ({"participants_per_instance": 0}, "at least 1"),
])
def test_impossible_plans_are_refused(kw, match):
    args = {"per_template": FIVE, "items_per_participant": 20, "participants_per_instance": 3, "accuracy": 0.9,
            "seconds_per_item": 10} | kw
    with pytest.raises(ValueError, match=match):
        plan_study(**args)


def test_time_per_item_measured_given_or_default(populated_db):
    got = median_seconds_per_item(populated_db)
    ms = [r["total_ms"] for r in populated_db.query(
        "SELECT r.total_ms FROM responses r JOIN runs USING (run_id) WHERE r.kind = 'main' "
        "AND runs.solver_kind = 'human' AND r.total_ms > 0")]
    assert got == (pytest.approx(statistics.median(ms) / 1000), len(ms))
    secs, source = seconds_per_item(populated_db, None)
    assert secs == pytest.approx(statistics.median(ms) / 1000) and "median server time" in source
    assert seconds_per_item(populated_db, 7.5) == (7.5, "given")
    assert seconds_per_item(None, None)[0] == DEFAULT_SECONDS_PER_ITEM


def test_plan_for_a_configuration_and_the_command(small_dataset, populated_db, capsys):
    from rose_core.cli import main

    cfg = StudyConfig(name="p", split="all", templates=["T1", "T3"], items_per_participant=10, target_per_instance=2,
                      practice_items=0, attention_every=0)
    per = pool_by_template(small_dataset, cfg)
    n_pool = len(small_dataset.select(None, cfg.subsets, ["T1", "T3"]))
    assert set(per) == {"G-Cnt", "L-Clk"} and sum(per.values()) == n_pool
    p = plan_for_config(small_dataset, cfg, 0.95, seconds=20, hourly_rate=10)
    assert p.participants == -(-n_pool * 2 // 10)
    assert p.minutes_per_participant == pytest.approx(10 * 20 / 60)
    assert main(["plan", "--dataset", str(small_dataset.root), "--db", populated_db.location, "--split", "all",
                 "--templates", "T1", "T3", "--items-per-participant", "10", "--participants-per-instance", "2",
                 "--practice-items", "0", "--attention-every", "0", "--accuracy", "0.95",
                 "--seconds-per-item", "20", "--hourly-rate", "10", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["participants"] == p.participants and out["cost"] == pytest.approx(p.cost)
    assert main(["plan", "--dataset", str(small_dataset.root), "--db", populated_db.location, "--study", "pilot",
                 "--accuracy", "0.9", "--hourly-rate", "12", "--currency", "£"]) == 0
    text = capsys.readouterr().out
    assert "participants who finish" in text and "median server time" in text and "£" in text
    assert "None" not in text and "nan" not in text
    assert main(["plan", "--dataset", str(small_dataset.root), "--accuracy", "1.5"]) == 2
    assert "between 0 and 1" in capsys.readouterr().err


def test_summary_lines_name_the_source_of_the_time():
    p = plan_study(FIVE, 20, 3, 0.9, 12, "given", 12.0)
    text = "\n".join(summary_lines(p, "$"))  # 20 items × 12 s = 4 min; 75 × 4 min = 5 h; × 12 = 60
    assert "75 participants who finish" in text and "$60.00 in all" in text and "(seconds per item: given)" in text

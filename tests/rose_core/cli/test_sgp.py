"""`python -m rose_core sgp build | agent | score` through the real entry point."""
import json

from rose_core.cli import main


def test_build_agent_score(tmp_path, capsys):
    ds = tmp_path / "sgp"
    assert main(["sgp", "build", "--out", str(ds), "--geoms", "2-3", "--c1", "2,3", "--per-cell", "1",
                 "--seed", "9", "--workers", "1"]) == 0
    assert "episodes 4  images 16" in capsys.readouterr().out
    assert main(["sgp", "build", "--out", str(ds), "--geoms", "2", "--c1", "2", "--workers", "1"]) == 2
    assert "already holds an SGP dataset" in capsys.readouterr().err
    opt, rnd = tmp_path / "opt.jsonl", tmp_path / "rnd.jsonl"
    assert main(["sgp", "agent", "optimal", "--episodes", str(ds), "--out", str(opt)]) == 0
    assert main(["sgp", "agent", "random", "--episodes", str(ds), "--out", str(rnd), "--samples", "2"]) == 0
    capsys.readouterr()
    assert main(["sgp", "score", str(opt), str(rnd), "--episodes", str(ds), "--json", "--boot", "100"]) == 0
    rows = {r["solver"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["optimal"]["solved_pct"] == 100.0 and rows["optimal"]["deviation"] == 0.0
    assert rows["random (seed 0)"]["plays"] == 8
    # one episode: no interval to resample; "–" in the text and null in the JSON, never "nan"
    one = tmp_path / "one.jsonl"
    one.write_text(opt.read_text().splitlines()[0] + "\n")
    assert main(["sgp", "score", str(one), "--episodes", str(ds), "--boot", "100"]) == 0
    text = capsys.readouterr().out
    assert "nan" not in text.lower() and "[    –,     –]" in text
    assert main(["sgp", "score", str(one), "--episodes", str(ds), "--json", "--boot", "100"]) == 0
    row = json.loads(capsys.readouterr().out)[0]
    assert row["lo_dev"] is None and row["deviation"] == 0.0
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"episode_id": "sgp-g02-c02-0", "solver": "x", "steps": ["move red cube up"]}\n')
    assert main(["sgp", "score", str(bad), "--episodes", str(ds)]) == 2
    assert f"{bad}:1: incomplete episode" in capsys.readouterr().err
    assert main(["sgp", "agent", "random", "--episodes", str(tmp_path / "none"), "--out", str(rnd)]) == 2
    assert "no SGP manifest.json" in capsys.readouterr().err


def test_import_and_export_configs(tmp_path, capsys):
    from pathlib import Path

    configs = Path(__file__).resolve().parents[2] / "fixtures" / "ivispar-configs"
    ds, out = tmp_path / "ivispar", tmp_path / "configs"
    assert main(["sgp", "import-configs", str(configs), "--out", str(ds), "--workers", "1"]) == 0
    text = capsys.readouterr().out
    assert "imported 3 iVISPAR configs" in text and "episodes 3  images 12" in text
    assert main(["sgp", "import-configs", str(configs), "--out", str(ds), "--workers", "1"]) == 2   # no --force
    assert "already holds an SGP dataset" in capsys.readouterr().err
    assert main(["sgp", "export-configs", str(ds), "--out", str(out)]) == 0
    assert "wrote 3 iVISPAR configs" in capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in configs.glob("config_*.json"))
    assert main(["sgp", "agent", "optimal", "--episodes", str(ds), "--out", str(tmp_path / "opt.jsonl")]) == 0
    assert main(["sgp", "score", str(tmp_path / "opt.jsonl"), "--episodes", str(ds), "--json", "--boot", "50"]) == 0
    row = json.loads(capsys.readouterr().out.split("\n", 1)[1])[0]
    assert (row["plays"], row["solved_pct"], row["deviation"]) == (3, 100.0, 0.0)
    assert main(["sgp", "import-configs", str(tmp_path / "none"), "--out", str(tmp_path / "x")]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_score_with_the_ivispar_reader_reports_both_illegal_figures(sgp_dataset, tmp_path, capsys):
    from tests.chat_api import ChatAPI, completion
    from tests.rose_core.runs.test_sgp_model import _instructions

    ds, opt, run = str(sgp_dataset.root), tmp_path / "opt.jsonl", tmp_path / "iv.jsonl"
    assert main(["sgp", "agent", "optimal", "--episodes", ds, "--out", str(opt)]) == 0
    def answer(body, path, n):
        """Step 1 names a geom on the board (read off the text board after 'Now: '), with a repeat count."""
        now = body["messages"][-1]["content"][0]["text"].split("Now: ")[1].splitlines()[0]   # "A1 red cube"
        replies = [f"action: move {now.split(' ', 1)[1]} up to B3", "I would move it up.", "action: move pink cube up"]
        return 200, completion(replies[(n - 1) % 3])

    with ChatAPI(answer) as api:
        assert main(["sgp", "run-model", "--episodes", ds, "--base-url", api.url, "--model", "m", "--out", str(run),
                     "--modality", "text", "--protocol", "ivispar", "--instructions",
                     str(_instructions(tmp_path / "p")), "--step-cap", "3", "--limit", "2", "--concurrency",
                     "1"]) == 0
    capsys.readouterr()
    assert main(["sgp", "score", str(opt), str(run), "--episodes", ds, "--reader", "ivispar", "--json",
                 "--boot", "50"]) == 0
    rows = {r["solver"]: r for r in json.loads(capsys.readouterr().out)}
    m = rows["m"]
    assert m["reader"] == "ivispar" and m["plays"] == 2
    # per play: step 2 has no 'action: move ' (illegal for both), step 3 names no geom on the board (strict
    # illegal, ivispar unclassified), step 1 repeats 3 times (strict: not the grammar)
    assert (m["illegal_strict"], m["illegal_ivispar"], m["unclassified_ivispar"]) == (3.0, 1.0, 1.0)
    assert m["illegal"] == 1.0 and m["unclassified"] == 1.0
    assert rows["optimal"]["illegal_strict"] == rows["optimal"]["illegal_ivispar"] == 0
    assert rows["optimal"]["solved_pct"] == 100.0        # commands, not replies: replayed as before
    assert main(["sgp", "score", str(run), "--episodes", ds]) == 2
    assert "score it with --reader ivispar" in capsys.readouterr().err
    assert main(["sgp", "score", str(opt), str(run), "--episodes", ds, "--reader", "ivispar", "--boot", "50"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("reader: ivispar") and "ill.strict" in text and "ill.ivispar" in text


def test_import_log_then_score_with_the_ivispar_reader(tmp_path, capsys):
    from pathlib import Path

    from ..benchmarks.sgp.ivispar_episode_writer import write_episode

    configs = Path(__file__).resolve().parents[2] / "fixtures" / "ivispar-configs"
    ds = tmp_path / "ivispar"
    assert main(["sgp", "import-configs", str(configs), "--out", str(ds), "--workers", "1"]) == 0
    exp = tmp_path / "SGP_run" / "Episodes"
    for k, f in enumerate(sorted(configs.glob("config_*.json"))):
        cfg = json.loads(f.read_text())
        seq = cfg["shortest_move_sequence"] if k else cfg["random_invalid_move_sequence"]
        write_episode(exp / f"episode_AIAgent_{f.stem}", cfg, seq, order=list(range(len(cfg["landmarks"])))[::-1])
    capsys.readouterr()
    out = tmp_path / "imported.jsonl"
    assert main(["sgp", "import-log", str(tmp_path / "SGP_run"), "--episodes", str(ds), "--out", str(out)]) == 0
    assert "imported 3 iVISPAR episode logs" in capsys.readouterr().out
    assert main(["sgp", "score", str(out), "--episodes", str(ds), "--json", "--boot", "50"]) == 2   # strict: refused
    assert "--reader ivispar" in capsys.readouterr().err
    assert main(["sgp", "score", str(out), "--episodes", str(ds), "--json", "--boot", "50", "--reader", "ivispar"]) == 0
    row = json.loads(capsys.readouterr().out)[0]
    assert (row["solver"], row["modality"], row["plays"], row["solved"]) == ("AIAgent", "text", 3, 2)
    # a folder whose board the replay does not reproduce: refused by step, nothing written
    sim = exp / f"episode_AIAgent_{sorted(configs.glob('config_*.json'))[1].stem}" / "sim_message_log.json"
    log = json.loads(sim.read_text())
    log["step 2"]["board_data"].reverse()
    log["step 2"]["board_state"].reverse()
    log["step 2"]["board_data"][0]["current_coordinate"] = [9.0, 9.0]
    sim.write_text(json.dumps(log, indent=4))
    out2 = tmp_path / "again.jsonl"
    assert main(["sgp", "import-log", str(tmp_path / "SGP_run"), "--episodes", str(ds), "--out", str(out2)]) == 2
    err = capsys.readouterr().err
    assert "sim_message_log.json: step 2.board_data[0].current_coordinate" in err and not out2.exists()

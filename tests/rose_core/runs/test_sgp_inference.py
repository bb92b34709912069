"""The board-state inference task against a small OpenAI-compatible server on loopback: the prompt per modality,
retries, raw replies kept, resume, then the answers scored, stored and reported (`sgp infer-*`, `report --json`)."""
import json

import pytest

from rose_core.benchmarks.sgp.inference import read_answers
from rose_core.runs.sgp_inference import InferenceConfig, run_inference
from rose_core.cli import main
from rose_core.common.chat import RunFileMismatch
from tests.chat_api import ChatAPI, completion


def _answer(body: dict, path: str, n: int) -> tuple[int, dict]:
    """429 on every fourth request. A text board is copied exactly (its lines are the answer format); an image
    gets the same wrong two-geom board every time."""
    if n % 4 == 0:
        return 429, {"error": {"message": "slow down"}}
    parts = body["messages"][0]["content"]
    if all(p["type"] == "text" for p in parts):
        board = parts[-1]["text"].split("\n")[2:]        # "The board:", "Current state (…)", then the geoms
        return 200, completion("Reading it off.\nboard:\n" + "\n".join(board))
    return 200, completion("I think I see two.\n**Board:**\n- red cube: A1\n- blue sphere: B2")


@pytest.fixture
def api():
    with ChatAPI(_answer) as a:
        yield a


def test_prompts_resume_and_raw_replies(api, sgp_dataset, tmp_path):
    out = tmp_path / "inf.jsonl"
    cfg = InferenceConfig(api.url, "vlm", "2d", concurrency=2, backoff_base=0.0)
    first = run_inference(sgp_dataset, cfg, out, limit=5)
    assert (first.done_before, first.requested, first.succeeded, first.failed) == (0, 5, 5, {})
    content = api.bodies[0]["messages"][0]["content"]
    assert [p["type"] for p in content] == ["text", "text", "image_url"]
    assert "(square, triangle, circle, hexagon)" in content[0]["text"] and "board:" in content[0]["text"]
    assert content[2]["image_url"]["url"].startswith("data:image/png;base64,")
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert all(x["raw"]["choices"][0]["message"]["content"] == x["response"] for x in lines)
    assert all(x["dataset_hash"] == sgp_dataset.dataset_hash and x["modality"] == "2d" for x in lines)
    asked = len(api.requests)
    rest = run_inference(sgp_dataset, cfg, out)                    # resume: only the boards not answered yet
    n = 2 * len(sgp_dataset.episodes)
    assert (rest.done_before, rest.requested, rest.succeeded) == (5, n - 5, n - 5)
    assert len(api.requests) - asked >= n - 5
    answers = read_answers(out, sgp_dataset)                       # our own file passes the reader
    assert len(answers) == n and len({a.item_id for a in answers}) == n
    with pytest.raises(RunFileMismatch, match="modality"):
        run_inference(sgp_dataset, InferenceConfig(api.url, "vlm", "3d"), out, limit=1)


def test_text_boards_send_no_image_and_a_copy_scores_perfect(api, sgp_dataset, tmp_path, capsys):
    out = tmp_path / "text.jsonl"
    run_inference(sgp_dataset, InferenceConfig(api.url, "reader", "text", boards=("start",), concurrency=1,
                                               backoff_base=0.0), out)
    assert all(p["type"] == "text" for b in api.bodies for p in b["messages"][0]["content"])
    assert main(["sgp", "infer-score", str(out), "--episodes", str(sgp_dataset.root), "--json", "--boot", "200"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["solver"], row["modality"], row["boards"]) == ("reader", "text", len(sgp_dataset.episodes))
    assert row["exact"] == 100.0 and row["correct"] == 100.0 and row["missed"] == 0 and row["format_errors"] == 0
    # the paper's unit beside it: a perfect copy gets every geom right, so correct per board = geoms per board
    geoms = [ep.n_geoms for ep in sgp_dataset.episodes.values()]
    assert row["correct per board"] == pytest.approx(sum(geoms) / len(geoms)) and row["missed per board"] == 0
    assert main(["sgp", "infer-score", str(out), "--episodes", str(sgp_dataset.root), "--boot", "200"]) == 0
    assert "mean per board (the paper's unit):" in capsys.readouterr().out


def test_a_failing_endpoint_leaves_the_boards_to_be_asked_again(sgp_dataset, tmp_path):
    cfg = InferenceConfig("http://127.0.0.1:9/v1", "m", "text", max_retries=0, timeout=2, backoff_base=0.0)
    res = run_inference(sgp_dataset, cfg, tmp_path / "f.jsonl", limit=2)
    assert res.succeeded == 0 and len(res.failed) == 2
    assert (tmp_path / "f.jsonl").read_text() == ""


def test_import_store_and_report(api, store, sgp_dataset, tmp_path, capsys):
    out = tmp_path / "inf.jsonl"
    run_inference(sgp_dataset, InferenceConfig(api.url, "vlm", "3d", concurrency=2, backoff_base=0.0), out)
    db = store.location                                              # on each storage backend
    args = ["sgp", "infer-import", str(out), "--episodes", str(sgp_dataset.root), "--db", db]
    assert main(args) == 0
    assert f"stored {2 * len(sgp_dataset.episodes)} board-state answers of 'vlm' (3d)" in capsys.readouterr().out
    assert main(args) == 2                                           # the same solver and modality again
    assert "already has" in capsys.readouterr().err
    assert main([*args, "--replace"]) == 0 and "replaced" in capsys.readouterr().out
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"item_id": "x:start", "response": ""}\n')
    assert main(["sgp", "infer-import", str(bad), "--episodes", str(sgp_dataset.root), "--db", db,
                 "--solver", "other", "--modality", "2d"]) == 2
    assert f"{bad}:1: episode_id 'x' is not in this build" in capsys.readouterr().err
    assert main(["report", "--db", db, "--json", "--boot", "200"]) == 0
    inf = json.loads(capsys.readouterr().out)["sgp_inference"]
    (row,) = inf["rows"]
    assert (row["dataset_hash"], row["solver"], row["modality"]) == (sgp_dataset.dataset_hash, "vlm", "3d")
    # every image answer is "red cube: A1, blue sphere: B2": the figures the scorer gives those boards
    from rose_core.benchmarks.sgp.inference import inference_items, score_inference
    scores = [score_inference(i.state, "board:\nred cube: A1\nblue sphere: B2") for i in inference_items(sgp_dataset)]
    truth = sum(s.truth for s in scores)
    assert row["geoms"] == truth and row["boards"] == len(scores)
    assert row["correct"] == pytest.approx(100 * sum(s.correct for s in scores) / truth)
    assert row["hallucinated"] == pytest.approx(100 * sum(s.hallucinated for s in scores) / truth)
    assert row["correct lo"] <= row["correct"] <= row["correct hi"]
    assert "per 100 geoms on the true boards" in inf["definition"] and inf["boot"] == 200

"""sgp run-model against a small OpenAI-compatible server on loopback: prompt structure, retries, resume."""
import json

import pytest

from rose_core.benchmarks.sgp import read_logs
from rose_core.runs.sgp_model import ModelConfig, run_model_episodes
from rose_core.common.chat import RunFileMismatch
from tests.chat_api import ChatAPI, completion


def _answer(body: dict, path: str, n: int) -> tuple[int, dict]:
    """Throttles every third request with 429; answers with a reasoning line and an `action:` line."""
    if n % 3 == 0:
        return 429, {"error": {"message": "slow down"}}
    return 200, completion("The cube should go up.\naction: move red cube up" if n % 2 else
                           "action: move blue sphere left")


@pytest.fixture
def api():
    with ChatAPI(_answer) as a:
        yield a


def _texts(content):
    return [p["text"] for p in content if p["type"] == "text"]


def test_plays_are_logged_with_raw_replies_and_resume(api, sgp_dataset, tmp_path):
    out = tmp_path / "run.jsonl"
    cfg = ModelConfig(api.url, "m1", "2d", step_cap=3, concurrency=1, backoff_base=0.0)
    res = run_model_episodes(sgp_dataset, cfg, out, limit=2)
    assert (res.done_before, res.requested, res.succeeded, res.failed) == (0, 2, 2, {})
    logs = read_logs(out, sgp_dataset)                       # our own lines pass the replay check
    assert all(lg.modality == "2d" and lg.solver == "m1" and len(lg.steps) == 3 for lg in logs)
    line = json.loads(out.read_text().splitlines()[0])
    assert line["steps"][0]["raw"]["choices"][0]["message"]["content"] == line["steps"][0]["action"]
    # the third step's prompt: instructions, the last two steps (boards before them and the actions), current, goal
    third = api.bodies[3]["messages"][0]["content"]  # bodies: step1, step2, step3 (429), step3 retried
    texts = _texts(third)
    assert "Sliding Geom Puzzle" in texts[0] and "square" in texts[0]          # 2D shape names in the 2D modality
    assert [t for t in texts if t.startswith("Step ")] == [
        "Step 1: the board before it", "Step 1: your action: move red cube up",
        "Step 2: the board before it", "Step 2: your action: move blue sphere left"]
    assert sum(p["type"] == "image_url" for p in third) == 4                   # two past, current, goal
    # resume: the same command skips the finished plays
    res2 = run_model_episodes(sgp_dataset, cfg, out, limit=1)
    assert res2.done_before == 2 and res2.succeeded == 1
    assert len(out.read_text().splitlines()) == 3
    with pytest.raises(RunFileMismatch):
        run_model_episodes(sgp_dataset, ModelConfig(api.url, "m1", "text", step_cap=3), out, limit=1)


def test_text_modality_sends_no_images(api, sgp_dataset, tmp_path):
    cfg = ModelConfig(api.url, "m2", "text", step_cap=1, concurrency=1, backoff_base=0.0)
    run_model_episodes(sgp_dataset, cfg, tmp_path / "t.jsonl", limit=1)
    content = api.bodies[-1]["messages"][0]["content"]
    assert all(p["type"] == "text" for p in content)
    texts = _texts(content)
    assert any(t.startswith("The current state:\nCurrent state (4x4 board") for t in texts)
    assert any(t.startswith("The goal state:\nGoal state") for t in texts)


def test_a_failing_endpoint_leaves_the_play_to_be_retried(sgp_dataset, tmp_path):
    cfg = ModelConfig("http://127.0.0.1:9/v1", "m3", "text", step_cap=2, max_retries=0, timeout=2, backoff_base=0.0)
    res = run_model_episodes(sgp_dataset, cfg, tmp_path / "f.jsonl", limit=1)
    assert res.succeeded == 0 and len(res.failed) == 1
    assert (tmp_path / "f.jsonl").read_text() == ""


def test_resuming_with_another_step_cap_is_refused(api, sgp_dataset, tmp_path):
    """A play under another step cap is another measurement: appending it to a file of cap-2 plays would mix
    two solved rates into one, silently, at `sgp score`."""
    out = tmp_path / "caps.jsonl"
    run_model_episodes(sgp_dataset, ModelConfig(api.url, "m4", "text", step_cap=2, concurrency=1, backoff_base=0.0),
                       out, limit=1)
    with pytest.raises(RunFileMismatch, match="step_cap"):
        run_model_episodes(sgp_dataset, ModelConfig(api.url, "m4", "text", step_cap=20, concurrency=1,
                                                     backoff_base=0.0), out, limit=1)
    assert len(out.read_text().splitlines()) == 1


def test_prompts_name_the_originals_further_geoms_only_on_boards_that_hold_them():
    from rose_core.benchmarks.sgp.board import KNOWN_COLOURS, vocabulary
    from rose_core.runs.sgp_inference import inference_instructions
    from rose_core.runs.sgp_model import instructions

    from ..benchmarks.sgp.helpers import board

    paper, extra = board(red_cube="A1"), board(orange_cone="A1")
    assert instructions(4, "3d", 20, vocabulary(paper)) == instructions(4, "3d", 20)     # unchanged on paper boards
    assert "orange" not in instructions(4, "3d", 20, vocabulary(paper))
    text = instructions(4, "2d", 20, vocabulary(extra))
    assert f"({', '.join(KNOWN_COLOURS)})" in text and "star, diamond" in text
    assert "cone, prism" in inference_instructions(4, "3d", vocabulary(extra))

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


# --- the ivispar protocol ---------------------------------------------------------------------------------

def _instructions(folder, step_text="Goal: {goal_state}\nNow: {current_state}\nYour move?"):
    """Made-up instruction texts in the original's file names (this project ships none of its wording)."""
    folder.mkdir(exist_ok=True)
    (folder / "ICML_instruction.txt").write_text("SYSTEM-3D made-up rules.")
    (folder / "ICML_instruction_2D.txt").write_text("SYSTEM-2D made-up rules.")
    (folder / "ICML_instruction_cot.txt").write_text("\nCOT: reason, then 'action: move …'.")
    (folder / "ICML_instruction_step_vision.txt").write_text("STEP-VISION: the last image is now.")
    (folder / "ICML_instruction_step_text.txt").write_text(step_text)
    return folder


def _ivispar_answer(body: dict, path: str, n: int) -> tuple[int, dict]:
    return 200, completion("Thinking.\nAction: move red cube up to B3" if n % 2 else "I give up.")


def _run(args, capsys):
    from rose_core.cli import main

    code = main(["sgp", "run-model", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out + out.err


def test_an_ivispar_run_sends_the_original_layout_and_stores_its_settings(sgp_dataset, tmp_path, capsys):
    from rose_core.benchmarks.sgp.metrics import MetricsInputError, check_pooling
    from rose_core.runs.settings import read_settings, sidecar

    folder = _instructions(tmp_path / "prompts")
    out = tmp_path / "iv.jsonl"
    base = ["--episodes", sgp_dataset.root, "--model", "m5", "--step-cap", 3, "--concurrency", 1, "--limit", 1,
            "--protocol", "ivispar", "--instructions", folder]
    with ChatAPI(_ivispar_answer) as api:
        code, said = _run([*base, "--base-url", api.url, "--out", out, "--modality", "text",
                           "--preset", "ivispar-open"], capsys)
        assert code == 0, said
        bodies = api.bodies
    assert len(bodies) == 3
    for b in bodies:    # the preset's sampling, as OpenSourceAgent.act sets it
        assert (b["temperature"], b["top_p"], b["top_k"], b["max_tokens"]) == (1.0, 0.95, 50, 500)
    third = bodies[2]["messages"]
    assert [m["role"] for m in third] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert third[0]["content"] == "SYSTEM-3D made-up rules.\nCOT: reason, then 'action: move …'."
    ep = sgp_dataset.episodes[json.loads(out.read_text())["episode_id"]]
    start = ep.start_board()
    start_text = "\n".join(f"{chr(65 + c[0])}{c[1] + 1} {g.color} {g.shape}" for g, c in zip(start.geoms, start.cells))
    assert third[1]["content"] == f"Previous observation 1: {start_text}"       # the board before step 1
    assert third[2]["content"] == "Previous action 1: move red cube up to b3"    # the original's cleaned command
    assert third[3]["content"].startswith("Previous observation 2: ")
    # a reply without "action: move ": parse_action returns "No valid action found.", which
    # parse_action_rmv_special_chars cleans before GPT4Agent.act stores it in the history
    assert third[4]["content"] == "Previous action 2: No valid action found"
    goal = ep.goal_board()
    goal_text = "\n".join(f"{chr(65 + c[0])}{c[1] + 1} {g.color} {g.shape}" for g, c in zip(goal.geoms, goal.cells))
    step = third[5]["content"][0]["text"]
    assert step.startswith(f"Goal: {goal_text}\nNow: ") and step.endswith("\nYour move?")
    # the first step: the system message, then only the step instruction (no history yet)
    assert [m["role"] for m in bodies[0]["messages"]] == ["system", "user"]
    # stored: the protocol object on the line, the settings beside the file
    line = json.loads(out.read_text())
    digest = line["protocol"]["prompt_digest"]
    assert line["protocol"] == {"protocol": "ivispar", "reader": "ivispar", "temperature": 1.0, "top_p": 0.95,
                                "top_k": 50, "max_tokens": 500, "prompt_digest": digest} and len(digest) == 64
    st = read_settings(sidecar(out))
    assert {k: st[k] for k in ("protocol", "reader", "preset", "top_k", "prompt_variant", "prompt_digest")} == {
        "protocol": "ivispar", "reader": "ivispar", "preset": "ivispar-open", "top_k": 50,
        "prompt_variant": "sgp-ivispar", "prompt_digest": digest}
    assert st["system_prompt"] == third[0]["content"] and st["endpoint"].startswith("http://127.0.0.1:")
    # the log replays under its own reader, and is refused under another
    logs = read_logs(out, sgp_dataset, reader="ivispar")
    assert [s.outcome for s in logs[0].steps][1] == "illegal"
    with pytest.raises(ValueError, match="score it with --reader ivispar"):
        read_logs(out, sgp_dataset)
    # another temperature is another measurement: resuming into this file is refused, naming the protocol
    with ChatAPI(_ivispar_answer) as api:
        code, said = _run([*base, "--base-url", api.url, "--out", out, "--modality", "text",
                           "--preset", "ivispar-open", "--temperature", "0.5"], capsys)
    assert code == 2 and "protocol" in said and "choose another --out" in said
    # two runs of one model under different settings are not pooled by `sgp score`
    other = tmp_path / "iv2.jsonl"
    with ChatAPI(_ivispar_answer) as api:
        assert _run([*base, "--base-url", api.url, "--out", other, "--modality", "text", "--temperature", "0.5",
                     "--max-tokens", "500"], capsys)[0] == 0
    with pytest.raises(MetricsInputError, match=r"iv\.jsonl and .*iv2\.jsonl .*temperature: 1\.0 vs 0\.5.*top_k"):
        check_pooling({str(out): logs, str(other): read_logs(other, sgp_dataset, reader="ivispar")})
    from rose_core.cli import main

    assert main(["sgp", "score", str(out), str(other), "--episodes", str(sgp_dataset.root), "--reader",
                 "ivispar"]) == 2
    assert "different protocols or settings" in capsys.readouterr().err
    # the SGP results page reads each uploaded run with the reader it was played with, and refuses to pool too
    from rose_core.analysis.sgp import select_models

    as_played = read_logs(out, sgp_dataset, reader=None)
    assert [s.outcome for s in as_played[0].steps] == [s.outcome for s in logs[0].steps]
    with pytest.raises(MetricsInputError, match="different protocols or settings"):
        select_models({"iv.jsonl": as_played, "iv2.jsonl": read_logs(other, sgp_dataset, reader=None)}, 3,
                      tuple(sgp_dataset.episodes))
    assert select_models({"iv.jsonl": as_played}, 3, tuple(sgp_dataset.episodes)).logs == as_played


def test_an_ivispar_image_run_alternates_past_images_and_actions(sgp_dataset, tmp_path):
    from rose_core.runs.sgp_model import PRESETS

    with ChatAPI(_ivispar_answer) as api:
        cfg = ModelConfig(api.url, "m6", "2d", step_cap=3, concurrency=1, backoff_base=0.0, protocol="ivispar",
                          instructions=_instructions(tmp_path / "p"), sampling=PRESETS["ivispar-gpt-vision"])
        run_model_episodes(sgp_dataset, cfg, tmp_path / "img.jsonl", limit=1)
        third = api.bodies[2]
    assert "temperature" not in third and third["max_tokens"] == 500     # GPT-4o's image branch sends none
    roles = [m["role"] for m in third["messages"]]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user", "user", "user"]
    assert third["messages"][0]["content"].startswith("SYSTEM-2D")
    for m in (third["messages"][1], third["messages"][3], third["messages"][5], third["messages"][6]):
        assert [p["type"] for p in m["content"]] == ["image_url"]        # past, past, goal, current: one image each
    assert third["messages"][2]["content"] == "Action: move red cube up to b3"
    assert third["messages"][7]["content"] == "STEP-VISION: the last image is now."


@pytest.mark.parametrize("damage, said", [
    (lambda f: (f / "ICML_instruction_cot.txt").unlink(), "ICML_instruction_cot.txt: missing"),
    (lambda f: (f / "ICML_instruction.txt").write_text("  \n"), "ICML_instruction.txt: empty"),
    (lambda f: (f / "ICML_instruction_step_text.txt").write_text("Goal: {goal_state} only"),
     "ICML_instruction_step_text.txt: no {current_state}"),
])
def test_instruction_files_are_checked_by_name(sgp_dataset, tmp_path, capsys, damage, said):
    folder = _instructions(tmp_path / "bad")
    damage(folder)
    code, out = _run(["--episodes", sgp_dataset.root, "--model", "m7", "--base-url", "http://127.0.0.1:9/v1",
                      "--out", tmp_path / "x.jsonl", "--modality", "text", "--protocol", "ivispar",
                      "--instructions", folder], capsys)
    assert code == 2 and said in out
    assert not (tmp_path / "x.jsonl").exists()


def test_the_cli_presets_are_the_runner_presets():
    import argparse

    from rose_core.cli.sgp import add_sgp_parser
    from rose_core.runs.sgp_model import PRESETS

    p = argparse.ArgumentParser()
    add_sgp_parser(p.add_subparsers())
    a = p.parse_args(["sgp", "run-model", "--base-url", "u", "--model", "m", "--out", "o", "--preset",
                      "ivispar-gpt-text"])
    assert a.preset == "ivispar-gpt-text"
    run_model = p._subparsers._group_actions[0].choices["sgp"]._subparsers._group_actions[0].choices["run-model"]
    preset = next(x for x in run_model._actions if x.dest == "preset")
    assert list(preset.choices) == list(PRESETS)


def test_settings_that_cannot_be_used_are_refused_before_any_request(sgp_dataset, tmp_path, capsys):
    from rose_core.runs.sgp_model import Sampling, SgpProtocolError

    with pytest.raises(ValueError, match="sampling: temperature = -0.5: must not be negative"):
        ModelConfig("http://127.0.0.1:9/v1", "m", "text", sampling=Sampling(-0.5, None, None, 500))
    with pytest.raises(ValueError, match="top_k = 0: must be positive"):
        ModelConfig("http://127.0.0.1:9/v1", "m", "text", sampling=Sampling(1.0, None, 0, 500))
    with pytest.raises(SgpProtocolError, match="needs --instructions DIR"):
        ModelConfig("http://127.0.0.1:9/v1", "m", "text", protocol="ivispar")
    with pytest.raises(SgpProtocolError, match="--instructions is for the ivispar protocol"):
        ModelConfig("http://127.0.0.1:9/v1", "m", "text", instructions=tmp_path)
    code, said = _run(["--episodes", sgp_dataset.root, "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
                       "--out", tmp_path / "n.jsonl", "--preset", "ivispar-open", "--top-k", "-3"], capsys)
    assert code == 2 and "top_k = -3: must be positive" in said and not (tmp_path / "n.jsonl").exists()


def test_a_studio_run_sends_what_it_always_sent(api, sgp_dataset, tmp_path):
    """The default protocol's request is unchanged: one user message, temperature 0, 2,048 tokens."""
    run_model_episodes(sgp_dataset, ModelConfig(api.url, "m8", "text", step_cap=1, concurrency=1, backoff_base=0.0),
                       tmp_path / "s.jsonl", limit=1)
    body = api.bodies[-1]
    assert set(body) == {"model", "temperature", "max_tokens", "messages"}
    assert (body["temperature"], body["max_tokens"], len(body["messages"])) == (0.0, 2048, 1)
    line = json.loads((tmp_path / "s.jsonl").read_text())
    assert line["protocol"]["protocol"] == "studio" and line["protocol"]["reader"] == "strict"

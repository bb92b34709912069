"""`python -m rose_core sgp …`: build the SGP dataset, run the reference agents and models, score episode logs.

Every SGP error is a ValueError naming what is wrong; `rose_core.cli.main` prints it and exits with 2."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..benchmarks.sgp.actions import OUTCOMES
from ..benchmarks.sgp.agents import AGENTS, run_agent
from ..benchmarks.sgp.dataset import SgpDataset, build_sgp_dataset, sgp_dataset_dir
from ..benchmarks.sgp.generate import DEFAULT_SEED, BuildParams
from ..benchmarks.sgp.inference import BOARDS
from ..benchmarks.sgp.logs import read_logs
from ..benchmarks.sgp.metrics import (
    GROUP,
    INFERENCE_CLASSES,
    INFERENCE_PER_BOARD,
    check_pooling,
    episodes_frame,
    heatmap,
    reader_figures,
    summary_table,
)
from ..benchmarks.sgp.play import STEP_CAP
from ..benchmarks.sgp.readers import READERS, UNCLASSIFIED
from .options import DB_HELP, EPISODES_HELP
from .progress import progress_bar, report_run


def _range(text: str) -> tuple[int, ...]:
    """"2-11" or "3" or "2,4,6" → a tuple of ints."""
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        try:
            out += list(range(int(lo), int(hi or lo) + 1))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: expected N, N-M or a comma-separated list") from None
    return tuple(out)


def cmd_build(a: argparse.Namespace) -> int:
    params = BuildParams(seed=a.seed, board_size=a.board, geoms=a.geoms, c1=a.c1, per_cell=a.per_cell, c2=a.c2)
    m = build_sgp_dataset(Path(a.out), params, workers=a.workers, progress=progress_bar("sgp build", "episode"),
                          replace=a.force)
    c = m["composition"]
    print(f"built {a.out}  (seed {a.seed}, board {a.board}x{a.board}, dataset hash {m['dataset_hash']})")
    print(f"episodes {c['episodes']}  images {c['images']}  geoms {min(a.geoms)}-{max(a.geoms)} x c1 "
          f"{min(a.c1)}-{max(a.c1)} x {a.per_cell}  c2 {c['by_c2']}")
    return 0


def cmd_import_configs(a: argparse.Namespace) -> int:
    from ..benchmarks.sgp.ivispar_configs import import_configs

    m = import_configs(Path(a.dir), Path(a.out), workers=a.workers, progress=progress_bar("sgp import-configs", "episode"),
                       replace=a.force)
    c = m["composition"]
    geoms, c1 = ({int(k.split("x")[i]) for k in c["by_geoms_c1"]} for i in (0, 1))
    print(f"imported {len(m['params']['configs'])} iVISPAR configs from {a.dir} into {a.out}  "
          f"(dataset hash {m['dataset_hash']})")
    print(f"episodes {c['episodes']}  images {c['images']}  geoms {min(geoms)}-{max(geoms)}  c1 {min(c1)}-{max(c1)}  "
          f"c2 {c['by_c2']}  (every c1 and c2 recomputed, every shortest_move_sequence replayed to the goal)")
    return 0


def cmd_export_configs(a: argparse.Namespace) -> int:
    from ..benchmarks.sgp.ivispar_configs import export_configs

    files = export_configs(SgpDataset.load(a.dataset), Path(a.out))
    print(f"wrote {len(files)} iVISPAR configs (config_<id>.json) to {a.out}")
    return 0


def cmd_import_log(a: argparse.Namespace) -> int:
    from ..benchmarks.sgp.ivispar_logs import import_logs

    logs = import_logs([Path(p) for p in a.folders], SgpDataset.load(a.episodes), Path(a.out), solver=a.solver,
                       step_cap=a.step_cap)
    solved = sum(lg.solved for lg in logs)
    print(f"imported {len(logs)} iVISPAR episode logs into {a.out} ({solved} solved; every board replayed with "
          f"the ivispar reader): score them with `sgp score {a.out} --reader ivispar`")
    return 0


def cmd_agent(a: argparse.Namespace) -> int:
    ds = SgpDataset.load(a.episodes)
    n = run_agent(a.name, ds, Path(a.out), samples=a.samples, seed=a.seed, step_cap=a.step_cap,
                  progress=progress_bar(a.name, "play"))
    print(f"wrote {n} episode logs of agent {a.name} to {a.out}")
    return 0


DEFAULT_MAX_TOKENS = 2048


def _endpoint_options(a: argparse.Namespace) -> dict:
    return {"concurrency": a.concurrency, "max_retries": a.retries, "timeout": a.timeout,
            "max_tokens": DEFAULT_MAX_TOKENS if a.max_tokens is None else a.max_tokens, "api_key_env": a.api_key_env}


def _sampling(a: argparse.Namespace):
    """The preset's sampling (or the studio's: temperature 0, 2,048 tokens), with each option given overriding."""
    from dataclasses import replace

    from ..runs.sgp_model import PRESETS, Sampling

    s = PRESETS[a.preset] if a.preset else Sampling(0.0, None, None, DEFAULT_MAX_TOKENS)
    given = {k: v for k, v in (("temperature", a.temperature), ("top_p", a.top_p), ("top_k", a.top_k),
                               ("max_tokens", a.max_tokens)) if v is not None}
    return replace(s, **given)


def cmd_run_model(a: argparse.Namespace) -> int:
    from ..runs.sgp_model import ModelConfig, run_model_episodes

    ds = SgpDataset.load(a.episodes)
    cfg = ModelConfig(a.base_url, a.model, a.modality, a.step_cap, a.samples, protocol=a.protocol, reader=a.reader,
                      sampling=_sampling(a), preset=a.preset,
                      instructions=Path(a.instructions) if a.instructions else None, **_endpoint_options(a))
    res = run_model_episodes(ds, cfg, Path(a.out), limit=a.limit, progress=progress_bar(a.model, "play"))
    return report_run(res, "plays")


def cmd_score(a: argparse.Namespace) -> int:
    ds = SgpDataset.load(a.episodes)
    runs = {f: read_logs(f, ds, default_solver=a.solver, reader=a.reader) for f in a.logs}
    check_pooling(runs)
    logs = [lg for f in a.logs for lg in runs[f]]
    table = summary_table(logs, n_boot=a.boot, seed=a.seed)
    unclassified = episodes_frame(logs).groupby(list(GROUP), sort=False)[UNCLASSIFIED].mean().reset_index()
    starts = {eid: ep.start_board() for eid, ep in ds.episodes.items()}
    side = reader_figures(logs, starts).merge(unclassified, on=list(GROUP))
    table = table.merge(side, on=list(GROUP))
    if a.json:
        rows = table.assign(reader=a.reader).to_dict(orient="records")
        print(json.dumps([{k: None if isinstance(v, float) and v != v else v for k, v in r.items()} for r in rows],
                         indent=1, allow_nan=False))   # no interval (one episode): null, never NaN (not JSON)
    else:
        print(f"reader: {a.reader}")
        print(f"{'solver':<24}{'modality':>9}{'plays':>7}{'solved %':>22}{'deviation':>24}  " +
              " ".join(f"{o[:6]:>7}" for o in (*OUTCOMES, UNCLASSIFIED)) + "  " +
              " ".join(f"{'ill.' + r[:6]:>12}" for r in READERS))
        def ci(lo: float, hi: float, digits: int) -> str:
            """An interval, or "–" where there is none (one episode: nothing to resample), never "nan"."""
            return "[    –,     –]" if lo != lo or hi != hi else f"[{lo:5.{digits}f}, {hi:5.{digits}f}]"

        for r in table.to_dict(orient="records"):
            print(f"{r['solver']:<24}{r['modality']:>9}{r['plays']:>7}"
                  f"{r['solved_pct']:>8.1f} {ci(r['lo'], r['hi'], 1)}"
                  f"{r['deviation']:>10.2f} {ci(r['lo_dev'], r['hi_dev'], 2)}  " +
                  " ".join(f"{r[o]:>7.2f}" for o in (*OUTCOMES, UNCLASSIFIED)) + "  " +
                  " ".join(f"{r['illegal_' + x]:>12.2f}" for x in READERS))
        print("solved %: 95% Wilson interval over plays; deviation: mean d at t = c1 (iVISPAR's mean step deviation), "
              "95% percentile bootstrap over episodes; outcome columns: mean per play of each class as the reader "
              "counts them (ivispar: per engine move; unclass: moved nothing, in no class); ill.strict and "
              "ill.ivispar: mean illegal commands per play as each reader counts the same replies")
    if a.heatmap:
        ep = episodes_frame(logs)
        for (solver, modality), g in ep.groupby(["solver", "modality"], sort=False):
            print(f"\n{a.heatmap} by geoms (rows) x c1 (columns): {solver} ({modality})")
            print(heatmap(g, a.heatmap).round(2).to_string())
    return 0


def cmd_infer_run(a: argparse.Namespace) -> int:
    from ..runs.sgp_inference import InferenceConfig, run_inference

    ds = SgpDataset.load(a.episodes)
    cfg = InferenceConfig(a.base_url, a.model, a.modality, tuple(a.boards), a.samples, **_endpoint_options(a))
    res = run_inference(ds, cfg, Path(a.out), limit=a.limit, progress=progress_bar(a.model, "board"))
    return report_run(res, "boards")


def inference_lines(rows: list[dict]) -> list[str]:
    """The inference table as text: each figure with its interval, in the project's one number format."""
    from ..analysis.display import fmt_rate_ci

    out = []
    for cols, decimals, unit in ((["exact", *INFERENCE_CLASSES], 1, "per 100 geoms"),
                                 (list(INFERENCE_PER_BOARD), 2, "mean per board (the paper's unit)")):
        if out:
            out.append(f"\n{unit}:")
        out.append(f"{'solver':<24}{'modality':>9}{'boards':>7}  " + "  ".join(f"{c[:13]:>20}" for c in cols))
        for r in rows:
            cells = [fmt_rate_ci(r[c], r[c + " lo"], r[c + " hi"], decimals) for c in cols]
            out.append(f"{r['solver']:<24}{r['modality']:>9}{r['boards']:>7}  " + "  ".join(f"{x:>20}" for x in cells))
    return out


def cmd_infer_score(a: argparse.Namespace) -> int:
    import pandas as pd

    from ..benchmarks.sgp.inference import read_answers, scored_rows
    from ..benchmarks.sgp.metrics import inference_table

    ds = SgpDataset.load(a.episodes)
    rows = [r for f in a.answers for r in scored_rows(read_answers(f, ds, a.solver, a.modality), ds)]
    table = inference_table(pd.DataFrame(rows), n_boot=a.boot, seed=a.seed)
    if a.json:
        from ..analysis.display import json_rows

        print(json.dumps(json_rows(table), indent=1))
        return 0
    print("\n".join(inference_lines(table.to_dict(orient="records"))))
    print("exact: % of boards written exactly right, 95% Wilson interval; the other columns per 100 geoms on the "
          "true boards, then as mean counts per board, 95% percentile bootstrap over episodes")
    return 0


def cmd_infer_import(a: argparse.Namespace) -> int:
    from ..runs.sgp_inference_import import import_inference
    from ..storage import open_store

    ds = SgpDataset.load(a.episodes)
    res = import_inference(open_store(a.db), ds, a.answers, a.solver, a.modality, a.kind, a.replace)
    for (solver, modality), n in res.groups.items():
        again = " (replaced the earlier answers)" if (solver, modality) in res.replaced else ""
        print(f"stored {n} board-state answers of {solver!r} ({modality}) on build {ds.dataset_hash}{again}")
    return 0


def _endpoint_arguments(p: argparse.ArgumentParser, unit: str) -> None:
    """The options of every SGP model runner: the build, the endpoint, the output, the modality, and how to ask."""
    p.add_argument("--episodes", default=str(sgp_dataset_dir()), help=EPISODES_HELP)
    p.add_argument("--base-url", required=True, help="e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--model", required=True, help="the model's name at the endpoint")
    p.add_argument("--out", required=True,
                   help=f"the JSONL file of {unit}: appended to, and what it already holds is skipped")
    p.add_argument("--modality", choices=["3d", "2d", "text"], default="3d",
                   help="how boards are shown to the model: 3D images, 2D images or text (default: 3d)")
    p.add_argument("--samples", type=int, default=1,
                   help=f"{unit} per {'episode' if unit == 'plays' else 'board'} (default: 1)")
    p.add_argument("--concurrency", type=int, default=4, help="requests in flight at once (default: 4)")
    p.add_argument("--retries", type=int, default=5,
                   help="retries of a failed request, with backoff, before it counts as failed (default: 5)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for one reply (default: 120)")
    p.add_argument("--max-tokens", type=int, default=None,
                   help=f"the reply's token limit (default {DEFAULT_MAX_TOKENS}, or the preset's)")
    p.add_argument("--limit", type=int, default=None, help=f"at most this many {unit} in this call (default: all not yet done)")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY",
                   help="the environment variable holding the API key (default: OPENAI_API_KEY; unset: no key sent)")


def add_sgp_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sgp", help="iVISPAR's Sliding Geom Puzzle: build episodes, run agents and models, score logs")
    ss = p.add_subparsers(dest="sgp_cmd", required=True)
    b = ss.add_parser("build", help="generate episodes and their images into a dataset folder (atomically)")
    b.add_argument("--out", default=str(sgp_dataset_dir()),
                   help="the SGP dataset folder to write (default: $ROSE_SGP_DATASET_DIR or data/datasets/sgp)")
    b.add_argument("--seed", type=int, default=DEFAULT_SEED,
                   help=f"seed of the episode generation: the same seed builds the same episodes (default: {DEFAULT_SEED})")
    b.add_argument("--board", type=int, default=4, help="the board's side in cells, 2 to 9 (default: 4, a 4x4 board)")
    b.add_argument("--geoms", type=_range, default=tuple(range(2, 12)), help="numbers of geoms, e.g. 3-5 (default: 2-11)")
    b.add_argument("--c1", type=_range, default=tuple(range(2, 12)), help="shortest path lengths, e.g. 3-5 (default: 2-11)")
    b.add_argument("--per-cell", type=int, default=3, help="episodes per (geoms, c1) (default: 3)")
    b.add_argument("--c2", type=int, default=0, help="interference of every episode (default: 0)")
    b.add_argument("--workers", type=int, default=None, help="rendering processes (default: one per core)")
    b.add_argument("--force", action="store_true", help="replace an existing SGP dataset folder")
    b.set_defaults(fn=cmd_build)
    ic = ss.add_parser("import-configs", help="an SGP dataset from iVISPAR's episode configs (config_*.json), each "
                                              "checked by recomputing c1 and c2 and replaying its shortest sequence; "
                                              "all files or nothing")
    ic.add_argument("dir", help="folder of the original's config_*.json files (e.g. its Data/Configs/<id>/)")
    ic.add_argument("--out", required=True, help="the SGP dataset folder to write (atomically)")
    ic.add_argument("--workers", type=int, default=None, help="rendering processes (default: one per core)")
    ic.add_argument("--force", action="store_true", help="replace an existing SGP dataset folder")
    ic.set_defaults(fn=cmd_import_configs)
    ec = ss.add_parser("export-configs", help="write an SGP dataset's episodes as iVISPAR configs the original loads "
                                              "(config_<id>.json)")
    ec.add_argument("dataset", help="the SGP dataset folder (generated or imported)")
    ec.add_argument("--out", required=True, help="a new (or empty) folder for the config files")
    ec.set_defaults(fn=cmd_export_configs)
    il = ss.add_parser("import-log", help="episode logs (JSONL) from the original's episode folders "
                       "(sim_message_log.json, agent_message_log.txt), every board replayed")
    il.add_argument("folders", nargs="+", help="episode folders, or folders holding them (e.g. Data/Experiments/<id>/)")
    il.add_argument("--episodes", default=str(sgp_dataset_dir()),
                    help="the SGP dataset the configs were imported into (`sgp import-configs`; default: "
                         "$ROSE_SGP_DATASET_DIR or data/datasets/sgp)")
    il.add_argument("--out", required=True, help="the episode-log file to write (all or nothing)")
    il.add_argument("--solver", default=None, help="solver name (default: the agent named in metadata.json)")
    il.add_argument("--step-cap", type=int, default=None,
                    help=f"the run's max_game_length when metadata.json is missing (default {STEP_CAP}); must "
                         "agree with it otherwise")
    il.set_defaults(fn=cmd_import_log)

    g = ss.add_parser("agent", help="play every episode with a reference agent, writing episode logs (JSONL)")
    g.add_argument("name", choices=AGENTS, help="the reference agent to play with")
    g.add_argument("--episodes", default=str(sgp_dataset_dir()), help=EPISODES_HELP)
    g.add_argument("--out", required=True, help="the episode-log file (JSONL) to write")
    g.add_argument("--samples", type=int, default=1, help="plays per episode (random agent; default: 1)")
    g.add_argument("--seed", type=int, default=0, help="seed of the random agent's moves (default: 0)")
    g.add_argument("--step-cap", type=int, default=STEP_CAP,
                   help=f"moves before a play ends unsolved (default: {STEP_CAP})")
    g.set_defaults(fn=cmd_agent)
    m = ss.add_parser("run-model", help="play episodes with a model behind an OpenAI-compatible endpoint (resumable)")
    _endpoint_arguments(m, "plays")
    m.add_argument("--step-cap", type=int, default=STEP_CAP,
                   help=f"moves before a play ends unsolved (default: {STEP_CAP})")
    m.add_argument("--protocol", choices=["studio", "ivispar"], default="studio",
                   help="the message layout: the studio's own prompt, or iVISPAR's (system message, past steps "
                        "as user/assistant turns, goal, current, instruction; needs --instructions; default: studio)")
    m.add_argument("--instructions", default=None, metavar="DIR",
                   help="ivispar protocol: the folder of instruction files (ICML_instruction.txt, "
                        "ICML_instruction_2D.txt, ICML_instruction_cot.txt, ICML_instruction_step_vision.txt, "
                        "ICML_instruction_step_text.txt; see docs/sgp.md)")
    m.add_argument("--reader", choices=READERS, default=None,
                   help="how replies become moves while playing (default: strict for studio, ivispar for ivispar)")
    m.add_argument("--preset", choices=["ivispar-gpt-text", "ivispar-gpt-vision", "ivispar-claude",
                                        "ivispar-gemini-vision", "ivispar-open"], default=None,
                   help="sampling as the paper's code set it for a model family (docs/sgp.md); options override")
    m.add_argument("--temperature", type=float, default=None, help="sampling temperature (default 0, or the preset's)")
    m.add_argument("--top-p", type=float, default=None, help="nucleus sampling threshold (not sent unless given)")
    m.add_argument("--top-k", type=int, default=None, help="top-k sampling, e.g. vLLM (not sent unless given)")
    m.set_defaults(fn=cmd_run_model)
    s = ss.add_parser("score", help="check episode logs by replaying them, then print solved rate, step deviation "
                                    "and outcome counts per solver and modality")
    s.add_argument("logs", nargs="+", help="episode-log files (from `sgp agent`, `sgp run-model`, or elsewhere)")
    s.add_argument("--episodes", default=str(sgp_dataset_dir()), help=EPISODES_HELP)
    s.add_argument("--solver", default=None, help="solver name for lines without a 'solver' field")
    s.add_argument("--json", action="store_true", help="print the table as JSON")
    s.add_argument("--boot", type=int, default=1000, help="bootstrap resamples of the intervals (default: 1000)")
    s.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default: 0)")
    s.add_argument("--heatmap", choices=["solved", "d_at_c1", "min_d"], default=None,
                   help="also print this per solver and modality as geoms x c1: solved %%, the distance to the goal "
                        "after c1 moves, or the least distance reached (default: none)")
    s.add_argument("--reader", choices=READERS, default="strict",
                   help="how replies become moves when replaying: strict (the default), or ivispar (the original's "
                        "extraction and its engine's loose decoding); a play must be scored with the reader it was "
                        "played with")
    s.set_defaults(fn=cmd_score)
    i = ss.add_parser("infer-run", help="the board-state inference task: a model behind an OpenAI-compatible endpoint "
                                        "writes each episode's start and goal board as text (resumable)")
    _endpoint_arguments(i, "boards")
    i.add_argument("--boards", nargs="+", choices=BOARDS, default=list(BOARDS),
                   help=f"which of each episode's boards to ask for (default: {' '.join(BOARDS)})")
    i.set_defaults(fn=cmd_infer_run)
    for name, fn, text in (("infer-score", cmd_infer_score, "score board-state inference answer files (JSONL): exact "
                            "boards, correct, missed, hallucinated, mismatches, format errors per solver and modality"),
                           ("infer-import", cmd_infer_import, "check and store a board-state inference answer file in "
                            "the database (SGP results page, report --json)")):
        q = ss.add_parser(name, help=text)
        q.add_argument("answers", nargs="+" if name == "infer-score" else None,
                       help="answer files: lines {item_id | episode_id + board, response, solver?, modality?, "
                            "sample?, dataset_hash?, latency_s?}")
        q.add_argument("--episodes", default=str(sgp_dataset_dir()), help=EPISODES_HELP)
        q.add_argument("--solver", default=None, help="solver name for lines without a 'solver' field")
        q.add_argument("--modality", choices=["3d", "2d", "text"], default=None,
                       help="modality for lines without a 'modality' field")
        if name == "infer-score":
            q.add_argument("--json", action="store_true", help="print the table as JSON")
            q.add_argument("--boot", type=int, default=1000, help="bootstrap resamples of the intervals (default: 1000)")
            q.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default: 0)")
        else:
            from ..storage.connection import db_location

            q.add_argument("--db", default=db_location(), help=DB_HELP)
            q.add_argument("--kind", choices=["model", "agent"], default="model",
                       help="what gave the answers: a model or a scripted agent (default: model)")
            q.add_argument("--replace", action="store_true", help="replace earlier answers of the same solver "
                                                                   "and modality on this build")
        q.set_defaults(fn=fn)

"""SGP studies (iVISPAR's sliding geom puzzle): which episodes a study may assign, its practice rounds, its
creation, the order episodes are handed out in, and its coverage for the Studies page."""
from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

from ..benchmarks.sgp.dataset import SgpDataset
from ..storage import episodes, participants, studies
from ..storage.connection import Store
from .config import Study, StudyConfig, StudyError
from .ids import Clock, Ids, RandomIds, stable_hash, system_clock
from .monitor import coverage_figures
from .policy import best_first


def sgp_pool(ds: SgpDataset, cfg: StudyConfig) -> list[str]:
    """The episodes a study may assign as main items: the chosen numbers of geoms and c1, practice kept out."""
    practice = set(cfg.practice_scene_ids)
    return [e.episode_id for e in ds.episodes.values()
            if (not cfg.sgp_num_geoms or len(e.geoms) in cfg.sgp_num_geoms)
            and (not cfg.sgp_c1 or e.c1 in cfg.sgp_c1) and e.episode_id not in practice]


def plan_sgp_practice(ds: SgpDataset, cfg: StudyConfig) -> list[list[str]]:
    """Practice rounds on the easiest episodes (fewest geoms, then shortest path), a fresh set per attempt, so a
    retry never replays an episode whose solution was just shown; they are kept out of the main pool."""
    if not cfg.practice_items:
        return []
    need = cfg.practice_items * cfg.practice_max_attempts
    eps = sorted(ds.episodes.values(), key=lambda e: (len(e.geoms), e.c1, stable_hash(str(cfg.seed), e.episode_id)))
    if len(eps) < need + 1:
        raise StudyError(f"practice: need {need} practice episodes ({cfg.practice_items} per round × "
                         f"{cfg.practice_max_attempts} attempts) and a main pool; the dataset has {len(eps)}")
    ids = [e.episode_id for e in eps[:need]]
    return [ids[k * cfg.practice_items:(k + 1) * cfg.practice_items] for k in range(cfg.practice_max_attempts)]


def create_sgp_study(store: Store, ds: SgpDataset, cfg: StudyConfig, ids: Ids | None = None,
                     clock: Clock = system_clock) -> Study:
    """Check the configuration, plan practice episodes and store the study (its dataset hash: the SGP build's)."""
    if cfg.benchmark != "sgp":
        raise StudyError("benchmark: create_sgp_study makes SGP studies (benchmark='sgp')")
    problems = cfg.problems()
    if problems:
        raise StudyError("; ".join(problems))
    cfg.practice_rounds = plan_sgp_practice(ds, cfg)
    cfg.practice_scene_ids = [e for r in cfg.practice_rounds for e in r]
    if not sgp_pool(ds, cfg):
        raise StudyError("the chosen numbers of geoms and c1 select no episode outside the practice set")
    study = Study((ids or RandomIds()).study_id(), cfg.name.strip(), ds.dataset_hash, cfg, clock(), True)
    with store.write() as c:
        studies.insert_study(c, study)
    return study


def rank_episodes(pool: Sequence[str], ds: SgpDataset, cfg: StudyConfig, counts: dict[str, int], seen: set[str],
                  counterbalance: int, position: int, tiebreak: Callable[[str], str]) -> Iterator[str]:
    """Eligible episodes, best first: least assigned, never at the target. Counterbalanced: the shortest path
    length c1 wanted at each position rotates with the participant's arrival rank (those episodes first), so
    difficulty order differs across participants. Pure: counts, what they saw and the tie-break are passed in."""
    eligible = [e for e in pool if counts.get(e, 0) < cfg.target_per_instance and e not in seen]

    def key(e: str) -> tuple[int, str]:
        return counts.get(e, 0), tiebreak(e)

    if cfg.ordering == "counterbalanced" and eligible:
        levels = sorted({ds.episodes[e].c1 for e in pool})
        want = levels[(counterbalance + position) % len(levels)]
        yield from best_first([e for e in eligible if ds.episodes[e].c1 == want], key)
        yield from best_first([e for e in eligible if ds.episodes[e].c1 != want], key)
        return
    yield from best_first(eligible, key)


def pick_episode(pool: Sequence[str], ds: SgpDataset, cfg: StudyConfig, counts: dict[str, int], seen: set[str],
                 counterbalance: int, position: int, tiebreak: Callable[[str], str]) -> str | None:
    """The best episode of `rank_episodes`, or None when none is eligible."""
    return next(rank_episodes(pool, ds, cfg, counts, seen, counterbalance, position, tiebreak), None)


def sgp_progress(cfg: StudyConfig, answered: int) -> str:
    return f"Puzzle {min(answered + 1, cfg.items_per_participant)} of {cfg.items_per_participant}"


def sgp_coverage(store: Store, ds: SgpDataset, study: Study) -> dict[str, Any]:
    """Finished episodes per pool episode against the target, and participants needed (pool × target ÷ episodes
    each): the Studies page's figures for an SGP study, over its own pool. As `monitor.coverage`: `answers` every
    counted episode, the rest only what fills the targets."""
    pool = sgp_pool(ds, study.config)
    with store.connect() as c:
        every = episodes.main_result_counts(c, study.run_id)
        # what fills the targets (anonymous visitors' episodes only when the study says so): the assignment's rule
        counts = episodes.main_result_counts(c, study.run_id, study.config.counts_anonymous)
        ends = participants.status_counts(c, study.study_id)
    return coverage_figures(study, list(pool), every, counts, ends)

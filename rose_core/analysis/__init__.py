"""The ROSE paper's tables rebuilt from data, plus what the paper could not show: agreement, difficulty,
participants and exclusions. Plain functions over pandas frames; the dashboard pages only lay them out.

Conventions: rates are percentages; a solver is "Human" (participants pooled over the selected studies),
a model run's name, or "<name> (agent)"; published reference rows are labelled "(published)".

Modules, by job: `frame` (reading the responses), `selection` (filters, exclusions: the one selection path),
`answers` (decoding stored answers and cells), `tables` (the main table and its intervals), `gap`, `bridges`
(with McNemar's exact test), `failures`, `agreement` (Krippendorff's alpha, error consistency), `difficulty`,
`drilldown` (one instance, the replay of a participant's clicks).
"""
from .agreement import (
    MIN_SHARED_TRIALS, ErrorConsistency, HumanAgreement, error_consistency, error_consistency_pairs,
    error_consistency_summary, human_agreement, human_model_agreement, panel_consistency,
)
from .answers import AnalysisInputError, Answer, as_int, decode_answer, decode_cell
from .bridges import bridge_table, mcnemar_p, paired, published_bridges
from .difficulty import DIFFICULTY_PARAMS, difficulty_table, instance_params
from .drilldown import (
    Event, decode_event, drill_down, fmt_cells, replay, replay_disagrees,
)
from .failures import failure_table
from .frame import FrameCache, responses_frame, scorer_note, scorer_versions
from .gap import gap_table, published_gap
from .report import report_data
from .selection import (
    ExclusionRules, Filters, Selection, apply_exclusions, participant_table, select, select_from_store,
)
from .tables import (
    BOOT, LABELS, REFERENCE_DIR, SEED, main_rows, main_table, published_rows, run_summaries, solver_row, summarize_frame, table_columns, with_published,
)
from ..common.stats import solver_rng, wilson

__all__ = [
    "scorer_note", "scorer_versions",
    "AnalysisInputError", "Answer", "BOOT", "DIFFICULTY_PARAMS", "ErrorConsistency", "Event", "ExclusionRules",
    "Filters", "FrameCache", "HumanAgreement", "LABELS", "MIN_SHARED_TRIALS", "REFERENCE_DIR", "SEED", "Selection",
    "apply_exclusions", "as_int", "bridge_table", "decode_answer", "decode_cell", "decode_event", "difficulty_table",
    "drill_down", "error_consistency", "error_consistency_pairs", "error_consistency_summary", "failure_table",
    "fmt_cells", "gap_table", "human_agreement", "human_model_agreement", "instance_params",
    "main_rows", "main_table", "mcnemar_p", "paired", "panel_consistency", "participant_table", "published_bridges",
    "published_gap", "published_rows", "replay", "replay_disagrees", "report_data", "responses_frame", "run_summaries", "select", "select_from_store",
    "solver_row", "solver_rng", "summarize_frame", "table_columns", "wilson", "with_published",
]

"""Filters and participant exclusions, and the one selection path both `report` and the dashboards use."""
import pandas as pd

from rose_core.analysis import (
    ExclusionRules, Filters, apply_exclusions, participant_table, responses_frame, select, select_from_store,
)


def test_exclusions_switch_and_count(populated_db):
    on = participant_table(populated_db, ExclusionRules())
    reasons = dict(zip(on["external_id"], on["excluded"]))
    assert "attention" in reasons["H1"] and "streak" in reasons["H2"] and "too fast" in reasons["H3"]
    assert reasons["H0"] == ""
    assert list(on["external_id"]) == [f"H{k}" for k in range(8)]   # a total order, whatever ids were drawn
    df = responses_frame(populated_db)
    kept, n = apply_exclusions(df, on)
    assert n >= 3 and len(kept) < len(df)
    off = participant_table(populated_db, ExclusionRules.off())
    assert apply_exclusions(df, off)[1] == 0


def test_filters(populated_db):
    df = responses_frame(populated_db)
    assert set(Filters(split="dev").apply(df)["split"]) == {"dev"}
    assert set(Filters(templates=("T3",)).apply(df)["template"]) == {"T3"}
    assert set(Filters(solvers=("Human",)).apply(df)["solver"]) == {"Human"}
    assert Filters(studies=("nope",)).apply(df)["solver_kind"].eq("human").sum() == 0


def test_select_filters_first_then_excludes(populated_db):
    rules, filters = ExclusionRules(), Filters(split="dev", templates=("T1", "T3"))
    parts = participant_table(populated_db, rules)
    sel = select(responses_frame(populated_db), parts, filters, rules)
    excluded = set(parts.loc[parts["excluded"] != "", "participant_id"])
    assert set(sel.df["split"]) == {"dev"} and set(sel.df["template"]) <= {"T1", "T3"}
    assert not set(sel.df["participant_id"]) & excluded and sel.n_excluded == len(excluded)
    again = select_from_store(populated_db, filters, rules)
    pd.testing.assert_frame_equal(again.df, sel.df)
    assert again.n_excluded == sel.n_excluded


def test_participant_table_joins_cached_stats_to_fresh_participant_rows(populated_db, fresh_location):
    """The dashboards cache the costly half (`participant_stats`, by the participants' responses); the participants'
    own rows (end state, practice) are read afresh, so a participant who ends without answering again is shown."""
    from rose_core.analysis.selection import participant_stats
    from tests.backends import clone

    store = clone(populated_db, fresh_location())
    stats = participant_stats(store)
    pd.testing.assert_frame_equal(participant_table(store, ExclusionRules(), stats=stats),
                                  participant_table(store, ExclusionRules()))
    with store.write() as c:
        c.execute("UPDATE participants SET end_reason = 'returned' WHERE external_id = 'H0'")
    table = participant_table(store, ExclusionRules(), stats=stats).set_index("external_id")
    assert table.loc["H0", "end_reason"] == "returned"


def test_excluded_count_is_of_the_chosen_studies(small_dataset, store):
    """A page filtered to one study says how many of *its* participants the exclusions removed: another study's
    excluded participants were never in the selection (before: study B's too-fast participant was reported as
    "1 participants excluded" on a selection of study A, whose participants were all kept)."""
    from rose_core.instrument.ids import FakeClock, SequentialIds
    from rose_core.instrument.config import StudyConfig
    from rose_core.instrument.rose_study import create_study
    from rose_core.instrument.screens import End
    from tests.participants import new_session, right_answer, submit_payload

    ids, clock = SequentialIds("ex"), FakeClock()

    def study(name):
        return create_study(store, small_dataset, StudyConfig(
            name=name, split="all", templates=["T1", "T3"], items_per_participant=4, target_per_instance=3,
            practice_items=0, attention_every=0, seed=1), ids=ids, clock=clock)

    def play(s, ext, seconds):
        session = new_session(store, small_dataset, s, ext, ids=ids, clock=clock)
        while not isinstance(screen := session.screen(), End):
            clock.advance(seconds)   # server time, assigned -> answered
            session.submit(screen, submit_payload(screen, *right_answer(screen)))

    a, b = study("A"), study("B")
    play(a, "a1", 5.0)
    play(b, "b1", 5.0)
    play(b, "b2", 0.3)               # too fast
    rules = ExclusionRules()
    parts = participant_table(store, rules)
    assert dict(zip(parts["external_id"], parts["excluded"])) == {"a1": "", "b1": "", "b2": "too fast"}
    only_a = select_from_store(store, Filters(studies=(a.study_id,)), rules)
    assert set(only_a.df.loc[only_a.df["solver_kind"] == "human", "participant_id"]) == set(
        parts.loc[parts["external_id"] == "a1", "participant_id"])
    assert only_a.n_excluded == 0
    assert select_from_store(store, Filters(studies=(b.study_id,)), rules).n_excluded == 1
    assert select_from_store(store, Filters(), rules).n_excluded == 1


def test_one_person_in_two_pooled_studies_is_said_loudly(small_dataset, store):
    """The same Prolific id in two studies is two participants of the pooled human row (n, bootstrap units) and an
    instance answered in both is two trials: the report says so beside the numbers; one study alone is silent."""
    from rose_core.analysis.report import report_from_selection
    from rose_core.analysis.selection import repeated_people_note
    from rose_core.instrument.ids import FakeClock, SequentialIds
    from rose_core.instrument.config import StudyConfig
    from rose_core.instrument.rose_study import create_study
    from rose_core.instrument.screens import End
    from tests.participants import new_session, right_answer, submit_payload

    ids, clock = SequentialIds("pp"), FakeClock()

    pool = sum(1 for i in small_dataset.instances.values() if i.template == "T1" and i.subset == "ChineseGlyph")

    def study(name):   # one small pool (T1 of ChineseGlyph), each session answers all of it: shared instances
        return create_study(store, small_dataset, StudyConfig(
            name=name, split="all", templates=["T1"], subsets=["ChineseGlyph"], items_per_participant=pool,
            target_per_instance=3, practice_items=0, attention_every=0, seed=1), ids=ids, clock=clock)

    def play(s, ext):
        session = new_session(store, small_dataset, s, ext, ids=ids, clock=clock)
        while not isinstance(screen := session.screen(), End):
            clock.advance(5.0)
            session.submit(screen, submit_payload(screen, *right_answer(screen)))

    a, b = study("A"), study("B")
    play(a, "SAME")
    play(b, "SAME")
    play(b, "OTHER")
    rules = ExclusionRules()
    both = select_from_store(store, Filters(), rules)
    humans = both.df[both.df["solver_kind"] == "human"]
    same = set(participant_table(store, rules).query("external_id == 'SAME'")["participant_id"])
    twice = int((humans[humans["participant_id"].isin(same)].groupby("instance_id").size() > 1).sum())
    note = repeated_people_note(both.df, both.participants)
    assert note is not None and note.startswith("1 person (the same recruitment id)") and "(2 study sessions)" in note
    assert twice > 0 and f"and {twice} instances were answered twice by one person" in note
    assert report_from_selection(both, n_boot=20)[0]["people_warning"] == note
    only_b = select_from_store(store, Filters(studies=(b.study_id,)), rules)
    assert repeated_people_note(only_b.df, only_b.participants) is None
    assert report_from_selection(only_b, n_boot=20)[0]["people_warning"] is None


def test_repeated_people_are_those_who_answered_in_the_selection():
    """A person counts as repeated only through the participants with responses in the selection: a session of
    theirs that answered nothing here (another study, filtered out) is not one of the pooled sessions."""
    import pandas as pd

    from rose_core.analysis.selection import repeated_people_note

    rows = [("human", p, f"i{k}") for p in ("p1", "p2", "p3", "p4") for k in range(3)] + [("model", "", "i0")]
    df = pd.DataFrame(rows, columns=["solver_kind", "participant_id", "instance_id"])
    parts = pd.DataFrame({"participant_id": ["p1", "p2", "p3", "p4", "p5"],
                          "source": ["prolific", "prolific", "prolific", "link", "prolific"],
                          "external_id": ["X", "X", "", None, "X"]})
    note = repeated_people_note(df, parts)
    assert note is not None and note.startswith("1 person (the same recruitment id)") and "(2 study sessions)" in note
    assert "and 3 instances were answered twice by one person" in note
    assert repeated_people_note(df[df["participant_id"] != "p2"], parts) is None    # p5 answered nothing here
    assert repeated_people_note(df, parts.assign(external_id="")) is None
    assert repeated_people_note(df, parts.assign(external_id=None)) is None
    assert repeated_people_note(df[df["solver_kind"] == "model"], parts) is None
    typed = df.astype({"solver_kind": "string"})
    typed.loc[typed.index[-1], "solver_kind"] = pd.NA          # a missing kind is not a human's
    assert repeated_people_note(typed, parts) == note

"""A participant who games or breaks the study, on a real database (SQLite and PostgreSQL: the `store` fixture)
and a real dataset: server-timed
exclusions, answers that must not count, holds, identity and tabs, and storage faults.

Messages are the ones the click grid sends (tests.participants builds them); what a browser cannot send is
crafted by hand."""
import pytest

from rose_core.analysis.selection import ExclusionRules, participant_table
from rose_core.instrument.client_address import TrustedProxies, client_address
from rose_core.instrument.ids import FakeClock, SequentialIds
from rose_core.instrument.policy import CLOSED_TAB_GRACE_S, HOLDS_PER_ADDRESS_ENV
from rose_core.instrument.joining import IdentityMismatch
from rose_core.instrument.screens import End, ItemScreen, OtherTab, OtherTabError, Wait
from rose_core.instrument.session import ParticipantSession
from rose_core.instrument.storage_errors import StorageError
from rose_core.instrument.tabs import Client
from rose_core.instrument.config import StudyConfig
from rose_core.instrument.joining import join
from rose_core.instrument.policy import main_pool
from rose_core.instrument.rose_study import create_study
from tests.participants import (
    LAB_INFO,
    answer,
    events_for,
    new_session,
    right_answer,
    run_to_end,
    submit_payload,
)

_IDS = SequentialIds("guard")


def make(store, ds, **kw):
    base = dict(name="guards", split="dev", items_per_participant=4, target_per_instance=1, practice_items=0,
                attention_every=0, seed=3, templates=["T1"], subsets=["PixelContent"],
                anonymous_counts=True,  # these tests join anonymously and test the targets they fill
                info=dict(LAB_INFO))    # open, as a study browsers reach is (a tab of a closed study stores nothing)
    base.update(kw)
    return create_study(store, ds, StudyConfig(**base), ids=_IDS, clock=FakeClock())


class Tabs:
    """Which Streamlit sessions are connected: the probe a real server answers from its runtime."""

    def __init__(self):
        self.open: set[str] = set()

    def client(self, client_id: str, address: str | None = None) -> Client:
        self.open.add(client_id)
        return Client(client_id, address, lambda c: c in self.open)

    def close(self, client_id: str) -> None:
        self.open.discard(client_id)


def tab_session(store, ds, study, ext, clock, client) -> ParticipantSession:
    p = join(store, study, ext, "anonymous", clock=clock, ids=SequentialIds(ext))
    s = ParticipantSession(store, ds, study, p.participant_id, clock=clock, client=client)
    s.consent()
    s.finish_instructions()
    return s


def responses(store, **where) -> list[dict]:
    sql = "SELECT * FROM responses" + (" WHERE " + " AND ".join(f"{k} = ?" for k in where) if where else "")
    return store.query(sql, tuple(where.values()))


# --------------------------------------------------------------------------- 1. server timings

def test_a_bot_fast_on_the_server_clock_is_excluded_whatever_the_page_reports(store, small_dataset):
    study = make(store, small_dataset, items_per_participant=3, target_per_instance=3)
    clock = FakeClock()
    bot, human = (new_session(store, small_dataset, study, ext, clock=clock) for ext in ("BOT", "HUMAN"))
    for _ in range(3):
        for s, seconds in ((bot, 0.04), (human, 6.0)):
            screen = s.screen()
            clock.advance(seconds)
            cells, count = right_answer(screen)
            payload = submit_payload(screen, cells, count)
            payload.update(client_total_ms=9000.0, active_ms=8500.0, first_action_ms=3000.0)  # the bot's claim
            assert not s.submit(screen, payload).duplicate
    assert [s.screen().reason for s in (bot, human)] == ["completed", "completed"]   # both finished
    rows = {r["participant_id"]: r for r in responses(store)}
    assert rows[bot.participant_id]["total_ms"] == pytest.approx(40.0)       # server: assigned -> answered
    assert rows[bot.participant_id]["client_total_ms"] == 9000.0              # the page's figure, kept beside
    table = participant_table(store, ExclusionRules()).set_index("external_id")
    assert table.loc["BOT", "median_item_s"] == pytest.approx(0.04)
    assert "too fast" in table.loc["BOT", "excluded"] and table.loc["HUMAN", "excluded"] == ""


@pytest.mark.parametrize("value", [None, float("nan"), float("inf"), -5.0, 1e30, "9000", True, [1]])
def test_absurd_client_times_are_stored_as_null_never_trusted(store, small_dataset, value):
    study = make(store, small_dataset)
    s = new_session(store, small_dataset, study, "CT")
    screen = s.screen()
    s.clock.advance(3)
    payload = submit_payload(screen, *right_answer(screen))
    payload.update(client_total_ms=value, active_ms=value, first_action_ms=value, dpr=value,
                   viewport=[value, value])
    payload["events"] = [{**e, "t": value, "active_ms": value} for e in payload["events"]]
    assert not s.submit(screen, payload).duplicate
    row = responses(store)[0]
    assert row["total_ms"] == 3000.0
    assert all(row[k] is None for k in ("client_total_ms", "active_ms", "first_action_ms", "device_pixel_ratio",
                                        "viewport_w", "viewport_h"))
    assert {e["client_ts"] for e in store.query("SELECT client_ts FROM events")} == {None}


# --------------------------------------------------------------------------- 2. answers that must not count

def test_an_answer_for_a_released_item_never_counts_two_answers_target_one(store, small_dataset):
    study = make(store, small_dataset, release_after_minutes=1)
    clock = FakeClock()
    a = new_session(store, small_dataset, study, "A", clock=clock)
    held = a.screen()
    clock.advance(120)                                           # A goes silent: the hold is released
    b = new_session(store, small_dataset, study, "B", clock=clock)
    got = []
    run_to_end(b, on_item=lambda screen: got.append(screen.item.item_id))
    assert held.item.item_id in got
    rec = answer(a, held)                                        # A comes back and answers the old item
    assert rec.duplicate and rec.refused == "released"
    assert len(responses(store, instance_id=held.item.item_id)) == 1
    flag = store.query("SELECT * FROM participant_flags WHERE kind = 'released_answer'")
    assert [f["participant_id"] for f in flag] == [a.participant_id]
    assert not isinstance(a.screen(), ItemScreen) or a.screen().item.item_id != held.item.item_id


def test_an_answer_after_the_time_limit_is_refused_and_ends_the_study(store, small_dataset):
    study = make(store, small_dataset, time_limit_minutes=1)
    s = new_session(store, small_dataset, study, "LATE")
    screen = s.screen()
    s.clock.advance(61)                                          # no rerun in between: the page still shows it
    rec = answer(s, screen)
    assert rec.duplicate and rec.refused == "late"
    assert responses(store) == [] and s.screen() == End("timed_out", "", "")
    assert store.query("SELECT kind FROM participant_flags") == [{"kind": "late_answer"}]
    held = store.query("SELECT answered_at, released_at FROM assignments")
    assert [h["answered_at"] for h in held] == [None] and held[0]["released_at"] is not None  # out of the target
    assert isinstance(new_session(store, small_dataset, study, "NEXT").screen(), ItemScreen)   # count: free again


# --------------------------------------------------------------------------- 3. holds

def test_items_only_held_make_a_participant_wait_never_end(store, small_dataset):
    study = make(store, small_dataset)
    pool = main_pool(small_dataset, study.config)
    clock = FakeClock()
    holders = [new_session(store, small_dataset, study, f"H{k}", clock=clock) for k in range(len(pool))]
    screens = [h.screen() for h in holders]
    assert all(isinstance(x, ItemScreen) for x in screens)      # every instance of the pool is held
    late = new_session(store, small_dataset, study, "LATECOMER", clock=clock)
    assert late.screen() == Wait("held")
    assert store.query("SELECT finished_at FROM participants WHERE external_id = 'LATECOMER'")[0]["finished_at"] is None
    answer(holders[0], screens[0])                               # answered: that instance is full for good
    assert late.screen() == Wait("held")
    clock.advance(31 * 60)                                       # the others went silent: their holds come free
    assert isinstance(late.screen(), ItemScreen)


def test_the_pool_is_exhausted_only_by_answers(store, small_dataset):
    study = make(store, small_dataset, items_per_participant=100)
    run_to_end(new_session(store, small_dataset, study, "ALL"))
    assert new_session(store, small_dataset, study, "NEXT").screen() == End("pool_exhausted", "", "")


def test_a_closed_tab_loses_its_hold_after_the_grace_period(store, small_dataset):
    study = make(store, small_dataset)
    pool = main_pool(small_dataset, study.config)
    tabs, clock = Tabs(), FakeClock()
    sessions = [tab_session(store, small_dataset, study, f"I{k}", clock, tabs.client(f"tab{k}"))
                for k in range(len(pool))]
    held = [s.screen() for s in sessions]
    tabs.close("tab0")                                           # the websocket is gone
    newcomer = tab_session(store, small_dataset, study, "NEW", clock, tabs.client("tabN"))
    assert newcomer.screen() == Wait("held")                     # a reload gets a minute to come back
    clock.advance(CLOSED_TAB_GRACE_S + 1)
    got = newcomer.screen()
    assert isinstance(got, ItemScreen) and got.item.item_id == held[0].item.item_id
    assert answer(sessions[0], held[0]).refused == "released"   # the closed tab's late answer never counts
    assert answer(newcomer, got).refused is None
    assert len(responses(store, instance_id=got.item.item_id)) == 1


def test_invented_participants_from_one_address_hold_at_most_the_cap(store, small_dataset, monkeypatch):
    monkeypatch.setenv(HOLDS_PER_ADDRESS_ENV, "2")
    study = make(store, small_dataset)
    tabs, clock = Tabs(), FakeClock()
    bots = [tab_session(store, small_dataset, study, f"anything{k}", clock, tabs.client(f"b{k}", "203.0.113.9"))
            for k in range(5)]
    got = [b.screen() for b in bots]
    assert sum(isinstance(x, ItemScreen) for x in got) == 2 and got[2:] == [Wait("address")] * 3
    other = tab_session(store, small_dataset, study, "REAL", clock, tabs.client("r", "198.51.100.7"))
    assert isinstance(other.screen(), ItemScreen)                # a participant elsewhere is not held up
    tabs.close("b0")
    clock.advance(CLOSED_TAB_GRACE_S + 1)
    assert isinstance(bots[2].screen(), ItemScreen)              # a closed bot tab frees its place



def test_browsers_behind_an_untrusted_proxy_on_this_host_share_one_capped_address(store, small_dataset, monkeypatch):
    """A reverse proxy on this host without ROSE_TRUSTED_PROXIES: every browser arrives over loopback. Their
    address was None, and the cap skipped them all; they are now one address, capped together."""
    monkeypatch.setenv(HOLDS_PER_ADDRESS_ENV, "2")
    study = make(store, small_dataset)
    tabs, clock = Tabs(), FakeClock()
    address = client_address(None, ["203.0.113.9"], TrustedProxies())   # the header is not believed
    bots = [tab_session(store, small_dataset, study, f"anything{k}", clock, tabs.client(f"b{k}", address))
            for k in range(4)]
    got = [b.screen() for b in bots]
    assert sum(isinstance(x, ItemScreen) for x in got) == 2 and got[2:] == [Wait("address")] * 2


def test_a_bot_that_keeps_sending_events_loses_its_held_item_at_the_time_limit(store, small_dataset):
    """Events keep a tab from being silent, so the silence release never came: the held item stayed out of the
    pool after the study's time limit, when its answer could only be refused as late."""
    study = make(store, small_dataset, time_limit_minutes=2, release_after_minutes=30)
    pool = main_pool(small_dataset, study.config)
    tabs, clock = Tabs(), FakeClock()
    holders = [tab_session(store, small_dataset, study, f"H{k}", clock, tabs.client(f"h{k}"))
               for k in range(len(pool))]
    shown = [h.screen() for h in holders]
    assert all(isinstance(x, ItemScreen) for x in shown)
    bot, bot_item = holders[0], shown[0]
    for k in range(1, 26):                                       # 25 events, 6 s apart: never silent
        clock.advance(6)
        for h, sc in zip(holders, shown):
            h.record_events(sc, {"view_id": sc.view_id, "selection": [], "count": None,
                                 "events": events_for([(1, 1)] * k)})
    late = tab_session(store, small_dataset, study, "LATECOMER", clock, tabs.client("late"))
    got = late.screen()                                          # 150 s after consent: past the 2 min limit
    assert isinstance(got, ItemScreen), got
    assert answer(bot, bot_item).refused is not None             # the bot's answer no longer counts


# --------------------------------------------------------------------------- 4. identity and tabs

@pytest.mark.parametrize("source, study_id, session_id", [
    ("prolific", "S", "OTHER-SESSION"), ("prolific", "OTHER-STUDY", "X"), ("prolific", None, None),
    ("anonymous", None, None)])
def test_a_known_prolific_id_arriving_another_way_never_takes_over(store, small_dataset, source, study_id,
                                                                     session_id):
    study = make(store, small_dataset)
    s = new_session(store, small_dataset, study, "PPID")             # joined with STUDY_ID=S, SESSION_ID=X
    answer(s, s.screen())
    with pytest.raises(IdentityMismatch, match="another session"):
        join(store, study, "PPID", source, study_id, session_id)
    flag = store.query("SELECT participant_id, external_id, kind, detail FROM participant_flags")
    assert len(flag) == 1 and flag[0]["kind"] == "identity_mismatch" and flag[0]["participant_id"] == s.participant_id
    assert '"session_id": "X"' in flag[0]["detail"]
    assert join(store, study, "PPID", "prolific", "S", "X").participant_id == s.participant_id  # the real one


def test_two_tabs_of_one_participant_never_interleave_events(store, small_dataset):
    study = make(store, small_dataset)
    tabs, clock = Tabs(), FakeClock()
    first = tab_session(store, small_dataset, study, "TWO", clock, tabs.client("t1"))
    shown = first.screen()
    state = {"view_id": shown.view_id, "selection": [], "count": None}
    assert first.record_events(shown, {**state, "events": events_for([(1, 1)])}) == 0
    second = ParticipantSession(store, small_dataset, study, first.participant_id, clock=clock,
                                client=tabs.client("t2"))
    assert second.screen() == OtherTab()                          # the first tab is still open
    second.take_over()                                            # "continue here"
    again = second.screen()
    assert again.view_id == shown.view_id and again.restore.next_seq == 1   # numbering continues, no collision
    with pytest.raises(OtherTabError):                            # the first tab's seq 1 would collide: refused
        first.record_events(shown, {**state, "events": events_for([(2, 2)], start_seq=1)})
    assert first.screen() == OtherTab()
    assert answer(first, shown).refused == "other_tab"
    second.record_events(again, {**state, "events": events_for([(3, 3)], start_seq=1)})
    assert answer(second, again).refused is None
    ev = store.query("SELECT seq, row, col FROM events ORDER BY seq")
    assert [e["seq"] for e in ev] == list(range(len(ev))) and (ev[1]["row"], ev[1]["col"]) == (3, 3)


def test_a_reopened_tab_continues_once_the_old_one_is_gone(store, small_dataset):
    study = make(store, small_dataset)
    tabs, clock = Tabs(), FakeClock()
    first = tab_session(store, small_dataset, study, "RE", clock, tabs.client("old"))
    shown = first.screen()
    tabs.close("old")                                             # a reload: the old websocket closed
    again = ParticipantSession(store, small_dataset, study, first.participant_id, clock=clock,
                               client=tabs.client("new")).screen()
    assert isinstance(again, ItemScreen) and again.view_id == shown.view_id


# --------------------------------------------------------------------------- 6. storage faults

def _fault(store, how: str) -> None:
    """A real fault. SQLite, on this thread's connection: the database full, or read-only. PostgreSQL: the database
    made read-only for new sessions and the open ones ended (the pool replaces them with read-only ones)."""
    if store.dialect == "postgresql":
        assert how == "read-only"
        _pg_read_only(store, True)
        return
    with store.connect() as c:
        if how == "full":
            (pages,) = c.execute("PRAGMA page_count").fetchone()
            c.execute(f"PRAGMA max_page_count = {pages}")
        else:
            c.execute("PRAGMA query_only = 1")


def _pg_read_only(store, on: bool) -> None:
    import psycopg

    with psycopg.connect(store.location, autocommit=True) as admin:
        admin.execute("SET default_transaction_read_only = off")  # this session may change it back
        name = admin.execute("SELECT current_database()").fetchone()[0]
        admin.execute(f'ALTER DATABASE "{name}" ' + ("SET default_transaction_read_only = on" if on else
                                                     "RESET default_transaction_read_only"))
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
                      "AND pid <> pg_backend_pid()", (name,))


def _heal(store) -> None:
    if store.dialect == "postgresql":
        _pg_read_only(store, False)
        return
    with store.connect() as c:
        c.execute("PRAGMA query_only = 0")
        c.execute("PRAGMA max_page_count = 1073741823")


@pytest.mark.parametrize("how", ["full", "read-only"])
def test_a_storage_fault_on_submit_stores_nothing_and_the_answer_goes_through_once_healed(store, small_dataset,
                                                                                           how):
    if how == "full" and store.dialect == "postgresql":
        pytest.skip("a full disk is not made on a shared PostgreSQL server; the SQLite run covers it")
    study = make(store, small_dataset)
    s = new_session(store, small_dataset, study, "DISK")
    screen = s.screen()
    cells, count = right_answer(screen)
    payload = submit_payload(screen, cells, count)
    # typing in the number field for a long while: enough events that storing them needs new database pages
    payload["events"] = [{"seq": k, "type": "count_input", "value": f"{k:064d}", "t": 10.0 * k, "active_ms": 1.0}
                         for k in range(1500)] + [{"seq": 1500, "type": "count_input", "value": str(count),
                                                   "t": 15001.0, "active_ms": 2.0}]
    _fault(store, how)
    with pytest.raises(StorageError):
        s.submit(screen, payload)
    _heal(store)
    assert responses(store) == [] and store.query("SELECT count(*) AS n FROM events")[0]["n"] == 0
    assert s.screen() == screen                                # the same item, nothing half-stored
    assert s.submit(screen, payload).refused is None           # the page sends it again once storage works
    assert s.submit(screen, payload).refused == "answered"     # and a second copy never counts
    assert len(responses(store, view_id=screen.view_id)) == 1


def test_a_storage_fault_while_showing_a_screen_is_a_storage_error(store, small_dataset):
    study = make(store, small_dataset)
    s = new_session(store, small_dataset, study, "RO")
    _fault(store, "read-only")
    with pytest.raises(StorageError, match="read.?only"):
        s.screen()
    _heal(store)
    assert isinstance(s.screen(), ItemScreen)


_CHILD = r'''
import json, resource, sqlite3, sys
from rose_core.benchmarks.rose.dataset import Dataset
from rose_core.instrument.storage_errors import StorageError
from rose_core.storage import open_store
from rose_core.instrument.config import StudyConfig
from rose_core.instrument.rose_study import create_study
from tests.participants import events_for, new_session, right_answer, submit_payload

ds, store = Dataset.load(sys.argv[1]), open_store(sys.argv[2])
study = create_study(store, ds, StudyConfig(name="fsize", split="dev", items_per_participant=2, practice_items=0,
                                            attention_every=0, templates=["T3"], subsets=["PixelContent"]))
s = new_session(store, ds, study, "FSIZE")
screen = s.screen()
payload = submit_payload(screen, *right_answer(screen))
store.checkpoint()                                      # an empty WAL: the next commit must grow a file
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (0, hard))    # as a full disk: no file of this process may grow
out = {}
for what, call in (("submit", lambda: s.submit(screen, payload)),
                   ("events", lambda: s.record_events(screen, {"view_id": screen.view_id,
                                                               "events": events_for([(1, 1)])}))):
    try:
        call()
        out[what] = "stored"
    except StorageError as e:
        out[what] = "StorageError"
    except Exception as e:
        out[what] = type(e).__name__ + ": " + str(e)
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
out["retry"] = s.submit(screen, payload).refused
out["rows"] = store.query("SELECT count(*) AS n FROM responses")[0]["n"]
print(json.dumps(out))
'''


def test_a_commit_refused_by_a_full_disk_leaves_no_open_transaction(small_dataset, tmp_path):
    """RLIMIT_FSIZE 0 in a child process: SQLite cannot append to its (emptied) WAL at COMMIT, the way a full disk
    refuses it. The session reports StorageError, the next write of the same thread is a StorageError too (SQLite
    rolls this write error back itself; `storage()` also rolls back what a refused COMMIT leaves open), and once
    writes work the kept answer is stored exactly once."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    r = subprocess.run([sys.executable, "-c", _CHILD, str(small_dataset.root), str(tmp_path / "rose.db")],
                       cwd=root, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out == {"submit": "StorageError", "events": "StorageError", "retry": None, "rows": 1}

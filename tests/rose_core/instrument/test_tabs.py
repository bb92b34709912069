"""Several app server processes share one database (behind a proxy, sticky sessions): each knows only its own
tabs. Another process's tab is never taken for a closed one, a tab whose process died continues on another
without a question, a second tab elsewhere asks first, and the per-address cap counts every process's tabs.
Real database (both backends), real dataset."""
from rose_core.instrument.ids import FakeClock
from rose_core.instrument.policy import CLOSED_TAB_GRACE_S, HOLDS_PER_ADDRESS_ENV
from rose_core.instrument.screens import ItemScreen, OtherTab, Wait
from rose_core.instrument.session import ParticipantSession
from rose_core.instrument.tabs import Client, ProcessTabs, new_process_id, resumed_session, several_processes
from rose_core.instrument.policy import main_pool
from tests.participants import answer

from .test_guards import make, responses, tab_session


class Process:
    """One app server process: its id and its runtime's registry of connected sessions."""

    def __init__(self):
        self.open: set[str] = set()
        self.tabs = ProcessTabs(new_process_id(), lambda session: session in self.open, alone=False)

    def client(self, session: str, address: str | None = None, resumes: str | None = None) -> Client:
        self.open.add(session)
        return Client(self.tabs.client_id(session), address, self.tabs.live, resumes)

    def close(self, session: str) -> None:
        self.open.discard(session)


def test_a_process_answers_for_its_own_tabs_only():
    a, b = Process(), Process()
    assert a.tabs.process_id != b.tabs.process_id
    mine = a.client("s1").client_id
    assert a.tabs.live(mine) is True and b.tabs.live(mine) is None
    a.close("s1")
    assert a.tabs.live(mine) is False and b.tabs.live(mine) is None
    assert a.tabs.live("s1") is None                  # an id stored before ids named their process: not known here


def test_alone_on_its_database_a_process_knows_every_other_tab_is_gone():
    alone = ProcessTabs(new_process_id(), lambda session: True)
    assert alone.live("previous-run/s1") is False and alone.live("s1") is False
    assert alone.live(alone.client_id("s1")) is True
    assert not several_processes({}) and not several_processes({"ROSE_APP_PROCESSES": "1"})
    assert several_processes({"ROSE_APP_PROCESSES": "3"}) and several_processes({"ROSE_APP_PROCESSES": "three"})


def test_a_reconnecting_page_names_the_session_it_had():
    assert resumed_session("streamlit, 2|ab|cd|1, 5f1c-old-session") == "5f1c-old-session"
    assert resumed_session("streamlit, PLACEHOLDER_AUTH_TOKEN") is None      # a first connection
    assert resumed_session("streamlit, , ") is None and resumed_session(None) is None
    tab = Client("p2/new", resumes="old")
    assert tab.continues("p1/old") and tab.continues("old") and not tab.continues("p1/other")


def test_another_process_never_takes_a_thinking_participant_for_a_closed_tab(store, small_dataset):
    study = make(store, small_dataset, release_after_minutes=5)
    pool = main_pool(small_dataset, study.config)
    a, b, clock = Process(), Process(), FakeClock()
    thinkers = [tab_session(store, small_dataset, study, f"A{k}", clock, a.client(f"a{k}")) for k in range(len(pool))]
    held = [s.screen() for s in thinkers]
    newcomer = tab_session(store, small_dataset, study, "B0", clock, b.client("b0"))
    clock.advance(CLOSED_TAB_GRACE_S + 1)             # everyone on process A looks at their item for a long time
    assert newcomer.screen() == Wait("held")          # process B cannot see A's tabs: it does not take their items
    assert answer(thinkers[0], held[0]).refused is None
    a.close("a1")                                     # process A itself knows a closed tab of its own
    local = tab_session(store, small_dataset, study, "A-new", clock, a.client("a-new"))
    got = local.screen()
    assert isinstance(got, ItemScreen) and got.item.item_id == held[1].item.item_id
    clock.advance(5 * 60 + 1)                         # the study's silence limit applies to every process's tabs
    assert isinstance(newcomer.screen(), ItemScreen)


def test_a_participant_whose_process_died_continues_on_another_at_the_same_item(store, small_dataset):
    study = make(store, small_dataset)
    a, b, clock = Process(), Process(), FakeClock()
    on_a = tab_session(store, small_dataset, study, "MOVER", clock, a.client("tab"))
    first = on_a.screen()
    assert answer(on_a, first).refused is None
    shown = on_a.screen()
    a.open.clear()                                    # process A is killed: B knows nothing of its tabs
    stranger = ParticipantSession(store, small_dataset, study, on_a.participant_id, clock=clock,
                                  client=b.client("new-tab"))
    assert stranger.screen() == OtherTab()            # a new tab cannot tell whether the old one is open: it asks
    on_b = ParticipantSession(store, small_dataset, study, on_a.participant_id, clock=clock,
                              client=b.client("reconnected", resumes="tab"))
    again = on_b.screen()                             # the old tab itself, reconnected through the proxy: no question
    assert isinstance(again, ItemScreen) and again.view_id == shown.view_id
    assert answer(on_b, again).refused is None
    assert [r["instance_id"] for r in responses(store)] == [first.item.item_id, shown.item.item_id]


def test_the_address_cap_counts_every_process_s_tabs(store, small_dataset, monkeypatch):
    monkeypatch.setenv(HOLDS_PER_ADDRESS_ENV, "2")
    study = make(store, small_dataset)
    a, b, clock = Process(), Process(), FakeClock()
    bots = [tab_session(store, small_dataset, study, f"bot{k}", clock, a.client(f"a{k}", "203.0.113.9"))
            for k in range(2)]
    assert all(isinstance(x.screen(), ItemScreen) for x in bots)
    third = tab_session(store, small_dataset, study, "bot2", clock, b.client("b0", "203.0.113.9"))
    assert third.screen() == Wait("address")


def test_a_second_browser_on_another_process_asks_then_the_first_tab_is_refused(store, small_dataset):
    study = make(store, small_dataset)
    a, b, clock = Process(), Process(), FakeClock()
    first = tab_session(store, small_dataset, study, "TWICE", clock, a.client("tab-a"))
    shown = first.screen()
    second = ParticipantSession(store, small_dataset, study, first.participant_id, clock=clock,
                                client=b.client("tab-b"))
    assert second.screen() == OtherTab()              # B cannot know whether A's tab is open: it asks
    second.take_over()                                # "Continue here"
    again = second.screen()
    assert isinstance(again, ItemScreen) and again.view_id == shown.view_id
    assert first.screen() == OtherTab()               # A's tab is told (and cannot take B's tab for a closed one)
    assert answer(first, shown).refused == "other_tab"
    assert answer(second, again).refused is None
    assert len(responses(store)) == 1

"""The address a participant is recorded under, on the real server: X-Forwarded-For counts only when the connection
comes from a proxy named in ROSE_TRUSTED_PROXIES (HAProxy on this host: 127.0.0.1); by default nobody's."""
import pytest

from rose_core.instrument.client_address import LOOPBACK
from rose_core.instrument.config import StudyConfig
from rose_core.instrument.rose_study import create_study
from rose_core.storage import open_store

from .conftest import start_server
from .helpers import script_run
from tests.participants import LAB_INFO


@pytest.mark.parametrize("trusted, expected", [("", LOOPBACK), ("127.0.0.1", "203.0.113.9")])
def test_forwarded_for_is_read_only_from_a_trusted_proxy(small_dataset, tmp_path, trusted, expected):
    srv = start_server(small_dataset, tmp_path, ROSE_TRUSTED_PROXIES=trusted)
    try:
        store = open_store(srv.db)
        study = create_study(store, small_dataset, StudyConfig(
            info=LAB_INFO, name="xff", practice_items=0, allow_phones=True))  # a protocol-level visit runs no JS
        got = script_run(srv.port, query=f"study={study.study_id}&PROLIFIC_PID=XFF1",
                         headers={"X-Forwarded-For": "10.9.9.9, 203.0.113.9"})
        assert got["headings"] == ["Welcome"], got
        rows = store.query("SELECT client_address FROM participants WHERE external_id = 'XFF1'")
        assert rows == [{"client_address": expected}]   # untrusted: the loopback peer itself
    finally:
        srv.stop()


def test_a_setting_that_cannot_be_read_stops_every_page_loudly(small_dataset, tmp_path):
    srv = start_server(small_dataset, tmp_path, ROSE_TRUSTED_PROXIES="127.0.0.1, proxy.local")
    try:
        got = script_run(srv.port)
        assert got["headings"] == [] and any("ROSE_TRUSTED_PROXIES: entry 2 'proxy.local'" in a
                                             for a in got["alerts"]), got
    finally:
        srv.stop()

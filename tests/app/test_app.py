import pytest
from streamlit.testing.v1 import AppTest

from .conftest import PASSWORD, ROOT


def app() -> AppTest:
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)


def sign_in(at: AppTest, password: str = PASSWORD) -> AppTest:
    at.run()
    at.text_input(key="auth_given").input(password)
    at.button[0].click()
    return at.run()


def explorer() -> AppTest:
    at = sign_in(app())
    at.switch_page("app_pages/scene_explorer.py")
    return at.run()


def test_without_password_only_sign_in_is_reachable(app_env):
    at = app().run()
    assert not at.exception
    assert [t.value for t in at.title] == ["ROSE Studio"]
    assert len(at.dataframe) == 0 and len(at.get("image")) == 0
    # The explorer is not even registered as a page before sign-in, so no URL reaches it.
    with pytest.raises(ValueError, match="Known pages: \\['Sign in'\\]"):
        at.switch_page("app_pages/scene_explorer.py")


def test_wrong_password_is_refused(app_env):
    at = sign_in(app(), "nope")
    assert at.error and "Wrong password" in at.error[0].value
    assert "auth_experimenter" not in at.session_state
    assert [t.value for t in at.title] == ["ROSE Studio"]


def test_scene_explorer_shows_scene_instances_and_gold(app_env):
    at = explorer()
    assert not at.exception, at.exception
    assert at.title[0].value == "Scene explorer"
    first = next(s for s in app_env.scenes.values() if s.subset == "ChineseGlyph")
    assert first.scene_id in at.subheader[0].value
    table = at.dataframe[0].value
    assert list(table["template"]) == ["T1", "T2", "T3", "T4", "T5", "G-Clk", "mL-Cnt"]
    gold = {i.instance_id: i.protocol_answer for i in app_env.instances.values() if i.scene_id == first.scene_id}
    assert dict(zip(table["instance"], table["gold"])) == gold
    assert len(at.get("image")) == 3  # base, highlight, zoomed difference of the least visible odd cell
    vis = first.params["visibility"]
    assert at.metric[0].value == str(vis["visible_px_by_rendering"]["base"])  # read off the PNG = stored
    assert at.metric[4].value == f"{vis['floor']} · {vis['redraws']}"


def test_scene_explorer_filters_subset_split_and_pages(app_env):
    at = explorer()
    at.selectbox(key="explorer_subset").select("PixelEdit").run()
    at.selectbox(key="explorer_split").select("test").run()
    at.number_input(key="explorer_pos").set_value(2).run()
    assert not at.exception
    tests = [s.scene_id for s in app_env.scenes.values() if s.subset == "PixelEdit" and s.split == "test"]
    assert tests[1] in at.subheader[0].value
    at.toggle(key="explorer_targets").set_value(True).run()
    assert not at.exception

"""Page data: practice feedback images and the app's public address."""
from PIL import Image

from rose_core.benchmarks.rose.item import rose_item
from rose_core.instrument.page_data import (
    CLICK_COLOUR, EXCLUDED_COLOUR, GOLD_COLOUR, REGION_COLOUR, app_base_url, feedback_image, participant_links,
)


def _item(ds, template):
    inst = next(i for i in ds.instances.values() if i.template == template and ds.key(i.instance_id).gold_count)
    return rose_item(ds, inst.instance_id)


def test_feedback_image_outlines_region_and_gold_and_marks_the_clicks(small_dataset):
    for template, colour in (("T3", REGION_COLOUR), ("T5", EXCLUDED_COLOUR), ("T4", REGION_COLOUR)):
        item = _item(small_dataset, template)
        lay = item.layout
        gold = item.gold_cells()
        wrong = next((r, c) for r in range(1, lay.rows + 1) for c in range(1, lay.cols + 1) if (r, c) not in gold)
        plain = Image.open(small_dataset.root / item.image).convert("RGB")
        im = feedback_image(plain, lay, item.region, item.region_mode, gold, [gold[0], wrong])
        x0, y0, _, _ = lay.box(item.region.r0, item.region.c0)
        assert im.getpixel((x0 - 1, y0 + lay.cell // 2)) == colour          # the region's left edge
        gx0, gy0, gx1, _ = lay.box(*gold[0])
        assert im.getpixel((gx0 + 5, gy0 + lay.cell // 2)) == GOLD_COLOUR   # the correct cell's outline
        for cell in (gold[0], wrong):                                       # both clicks, the wrong one too
            x0, y0, x1, _ = lay.box(*cell)
            rad = max(4, lay.cell // 8)
            assert im.getpixel((x1 - 8 - rad, y0 + 8 + rad)) == CLICK_COLOUR
        wx0, wy0, _, _ = lay.box(*wrong)
        assert im.getpixel((wx0 + 5, wy0 + lay.cell // 2)) == plain.getpixel((wx0 + 5, wy0 + lay.cell // 2))


def test_app_base_url_never_guesses_localhost():
    pages = ("studies", "results")
    assert app_base_url("https://rose.example.org/", "http://10.0.0.5:8501/studies", {}, pages) == \
        "https://rose.example.org"
    assert app_base_url(None, "http://10.0.0.5:8501/studies", {}, pages) == "http://10.0.0.5:8501"
    assert app_base_url(None, "https://x.org/rose/studies", {}, pages) == "https://x.org/rose"
    assert app_base_url(None, None, {"Host": "h.example:9000", "X-Forwarded-Proto": "https"}, pages) == \
        "https://h.example:9000"
    assert app_base_url(None, None, {}, pages) is None
    prolific, plain = participant_links("https://x.org", "s1")
    assert plain == "https://x.org/?study=s1"
    assert prolific.startswith("https://x.org/?study=s1&PROLIFIC_PID={{%PROLIFIC_PID%}}")

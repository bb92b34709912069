"""The paper bundle from the populated test database, through the command line: every file present, every table's
numbers (CSV at full precision, Markdown and LaTeX rounded) equal to `report --json --tables`, LaTeX that compiles
(or, without a TeX engine, is syntactically sound), figures drawn by Matplotlib at their exact size with the
tables' intervals as error bars (no browser), a manifest whose hashes match, and a checklist that leaves what the
data cannot tell blank."""
from __future__ import annotations

import dataclasses

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

from rose_core.analysis.bundle import BundleError, bundle_zip, paper_report, write_bundle
from rose_core.analysis.bundle.checklist import BLANK
from rose_core.analysis.bundle.paper import Column, PaperTable
from rose_core.analysis.bundle.render import latex_escape, to_latex, to_markdown
from rose_core.analysis.display import MISSING
from tests.backends import clone
from tests.command_line import CliResult, run_cli

BOOT = ["--boot", "60", "--seed", "5"]
TABLES = ["main", "gap", "gap_conditioned", "bridge_global", "bridge_matched", "human_model_difference",
          "failure_kinds", "agreement_human",
          "agreement_model", "difficulty"]
FIGURES = ["main_pass", "gap", "gap_conditioned", "bridge_global", "bridge_matched", "failure_kinds"]


def _cli(*args: str) -> CliResult:
    return run_cli("report", *args)


@pytest.fixture(scope="module")
def bundle(populated_db, small_dataset, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "paper"
    r = _cli("--db", populated_db.location, "--dataset", str(small_dataset.root), "--out", str(out), *BOOT)
    assert r.returncode == 0, r.stderr
    assert "wrote" in r.stdout
    return out


@pytest.fixture(scope="module")
def report_json(populated_db, small_dataset) -> dict:
    r = _cli("--db", populated_db.location, "--dataset", str(small_dataset.root), "--json", "--tables", *BOOT)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def paper(populated_db, small_dataset):
    return paper_report(populated_db, small_dataset, n_boot=60, seed=5)


@pytest.fixture(scope="module")
def single_figures(paper) -> dict:
    """`paper_figures(paper)` (a column's width), drawn once for the tests that read its figures' artists: building
    them is most of a figure's cost, and none of those tests changes a figure."""
    from rose_core.analysis.bundle.figures import paper_figures

    return paper_figures(paper, "single")


def test_every_file_is_there(bundle):
    for name in TABLES:
        for ext in ("md", "tex", "csv"):
            assert (bundle / "tables" / f"{name}.{ext}").stat().st_size > 0, (name, ext)
    for name in FIGURES:
        for ext in ("svg", "pdf", "png"):
            assert (bundle / "figures" / f"{name}.{ext}").stat().st_size > 1000, (name, ext)
    for f in ("report.json", "manifest.json", "checklist.md", "checklist.json", "methods.md", "tables/all_tables.tex"):
        assert (bundle / f).is_file(), f
    assert not [p for p in bundle.parent.iterdir() if p.name.startswith(".")], "a temporary folder was left behind"


def test_report_json_is_the_bundles_and_the_main_report(bundle, report_json, populated_db):
    assert json.loads((bundle / "report.json").read_text()) == report_json
    assert set(report_json["tables"]) == set(TABLES)
    # the main table is exactly `report --json`'s (the one selection path)
    r = _cli("--db", populated_db.location, "--json", *BOOT)
    plain = json.loads(r.stdout)
    # the bundle's table adds only its n as shown ("5 ppl · 215", from the integer columns it sits beside)
    bundled = [dict(row) for row in report_json["tables"]["main"]["rows"]]   # the fixture stays as it is
    shown_n = [row.pop("n") for row in bundled]
    assert plain["rows"] == report_json["rows"] == bundled
    assert all(" · " in n for n, row in zip(shown_n, plain["rows"]) if row["responses"] is not None)
    assert [row["participants"] for row in plain["rows"]][0] == int(shown_n[0].split(" ppl")[0])
    assert {k: v for k, v in report_json.items() if k not in ("tables", "dataset_hash")} == plain


@pytest.mark.parametrize("name", TABLES)
def test_csv_holds_the_json_numbers_exactly(bundle, report_json, name):
    rows = report_json["tables"][name]["rows"]
    csv = pd.read_csv(bundle / "tables" / f"{name}.csv", keep_default_na=False, na_values=[""])
    assert len(csv) == len(rows)
    for k, row in enumerate(rows):
        for col, want in row.items():
            got = csv.at[k, col]
            if want is None or want == "":
                assert pd.isna(got) or got == "", (name, k, col, got)
            elif isinstance(want, (int, float)) and not isinstance(want, bool):
                assert float(got) == float(want), (name, k, col, got, want)  # full precision, not rounded
            else:
                assert str(got) == str(want), (name, k, col, got, want)


def _md_rows(text: str) -> tuple[list[str], list[list[str]]]:
    lines = [ln for ln in text.splitlines() if ln.startswith("|")]
    split = [[c.strip() for c in re.split(r"(?<!\\)\|", ln)[1:-1]] for ln in lines]
    return split[0], split[2:]


def _tex_parts(text: str) -> list[list[list[str]]]:
    r"""Per part of a table (a longtable, or each tabular of a `table*`), its body rows; an interval line (ending
    `\\[2pt]`) is joined to the row above it, each interval after its value, as `value {\scriptsize [lo, hi]}`."""
    if r"\endfoot" in text:
        bodies = [text.split(r"\endfoot", 1)[1].split(r"\end{longtable}")[0]]
    else:
        bodies = [part.split(r"\midrule", 1)[1].split(r"\bottomrule")[0]
                  for part in text.split(r"\begin{tabular}")[1:]]
    parts = []
    for body in bodies:
        rows: list[list[str]] = []
        for ln in body.splitlines():
            ln = ln.strip()
            if not ln or ln.startswith(r"\midrule"):
                continue
            cells = [c.strip() for c in re.split(r"(?<!\\)&", ln.removesuffix(r"\\[2pt]").removesuffix(r"\\"))]
            if ln.endswith(r"\\[2pt]"):
                assert rows and len(cells) == len(rows[-1]), ln
                rows[-1] = [f"{v} {iv}" if iv else v for v, iv in zip(rows[-1], cells)]
            else:
                rows.append(cells)
        parts.append(rows)
    return parts


def _tex_rows(text: str, keys: int = 1) -> list[list[str]]:
    """The body rows of a table, its parts side by side again (each part repeats the `keys` leading columns)."""
    parts = _tex_parts(text)
    assert all(len(p) == len(parts[0]) for p in parts)
    return [sum((p[k][keys:] if n else p[k] for n, p in enumerate(parts)), []) for k in range(len(parts[0]))]


def _keys(table) -> int:
    n = 0
    for c in table.columns:
        if c.kind != "text":
            break
        n += 1
    return n


def _number(cell: str, kind: str) -> tuple[str, bool, str | None]:
    """(value text, bold, interval text) of a shown cell, Markdown or LaTeX."""
    interval = None
    m = re.search(r"\{\\scriptsize (\[[^\]]*\])\}$|(\[[-\d., ]+\])$", cell)
    if m and kind == "rate":
        interval = m.group(1) or m.group(2)
        cell = cell[:m.start()].strip()
    bold = False
    for pre, post in (("**", "**"), (r"\textbf{", "}")):
        if cell.startswith(pre) and cell.endswith(post):
            cell, bold = cell[len(pre):-len(post)], True
    return cell, bold, interval


def _check_cell(shown: str, want, kind: str, where) -> None:
    if want is None:
        assert shown in ("–", "--"), where
    elif kind == "rate":
        assert abs(float(shown) - want) <= 0.05 + 1e-9, where
    elif kind == "stat":
        assert abs(float(shown) - want) <= 0.0005 + 1e-12, where
    elif kind == "p":
        if want < 0.001:
            assert shown in ("< 0.001", r"\textless{} 0.001"), where
        else:
            assert abs(float(shown) - want) <= 0.0005 + 1e-12, where
    elif kind == "count":
        assert int(shown.replace(",", "").replace("{,}", "")) == round(want), where


@pytest.mark.parametrize("fmt", ["md", "tex"])
@pytest.mark.parametrize("name", TABLES)
def test_markdown_and_latex_show_the_json_numbers(bundle, report_json, paper, name, fmt):
    table = paper.table(name)
    rows = report_json["tables"][name]["rows"]
    text = (bundle / "tables" / f"{name}.{fmt}").read_text()
    body = _md_rows(text)[1] if fmt == "md" else _tex_rows(text, _keys(table))
    if fmt == "md":
        assert _md_rows(text)[0] == [c.head for c in table.columns]
    assert len(body) == len(rows), (name, fmt)
    for k, (cells, row) in enumerate(zip(body, rows)):
        assert len(cells) == len(table.columns), (name, fmt, k, cells)
        for cell, col in zip(cells, table.columns):
            shown, _, interval = _number(cell, col.kind)
            want = row.get(col.key)
            where = (name, fmt, k, col.key, cell, want)
            if col.kind == "text":
                expect = "–" if want in (None, "") else str(want)
                assert shown == (latex_escape(expect) if fmt == "tex" else expect.replace("|", "\\|")), where
                continue
            _check_cell(shown, want, col.kind, where)
            if col.lo and want is not None and row.get(col.lo) is not None:
                lo, hi = map(float, interval.strip("[]").split(","))
                assert abs(lo - row[col.lo]) <= 0.05 + 1e-9 and abs(hi - row[col.hi]) <= 0.05 + 1e-9, where


def test_best_model_is_bold_and_only_it(bundle, report_json, paper):
    table = paper.table("main")
    rows = report_json["tables"]["main"]["rows"]
    _, body = _md_rows((bundle / "tables" / "main.md").read_text())
    models = [k for k, r in enumerate(rows)
              if r["kind"] == "model" or (r["kind"] == "published" and not r["solver"].startswith("Human"))]
    assert models, "the published rows are models"
    checked = 0
    for j, col in enumerate(table.columns):
        if not col.best:
            continue
        vals = {k: round(rows[k][col.key], 1) for k in models if rows[k][col.key] is not None}  # as printed
        top = max(vals.values())
        for k, cells in enumerate(body):
            bold = _number(cells[j], col.kind)[1]
            assert bold == (k in vals and vals[k] == top), (col.key, k)
            checked += bold
    assert checked >= 9
    assert r"\textbf{93.8}" in (bundle / "tables" / "main.tex").read_text()  # GPT-5.5's published G-Cnt


def _strip_comments(tex: str) -> str:
    return "\n".join(re.sub(r"(?<!\\)%.*$", "", ln) for ln in tex.splitlines())


@pytest.mark.parametrize("name", TABLES)
def test_latex_is_syntactically_sound(bundle, name):
    tex = _strip_comments((bundle / "tables" / f"{name}.tex").read_text())
    depth = 0
    for ch in re.sub(r"\\[{}%&$#_]", "", tex):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0, name
    assert depth == 0, name
    envs = re.findall(r"\\(begin|end)\{([\w*]+)\}", tex)
    stack = []
    for what, env in envs:
        if what == "begin":
            stack.append(env)
        else:
            assert stack and stack.pop() == env, (name, env)
    long = ("begin", "longtable") in envs
    assert not stack and (long or {("begin", "tabular"), ("begin", "table*")} <= set(envs))
    assert long == (tex.count("&") > 0 and len(_tex_parts(tex)[0]) > 40)  # long tables break across pages
    assert "resizebox" not in tex and "scalebox" not in tex                 # nothing is shrunk
    assert "\\hline" not in tex  # booktabs rules only
    for part in (tex.split(r"\begin{tabular}")[1:] if not long else [tex]):
        assert part.index(r"\toprule") < part.index(r"\midrule") < part.index(r"\bottomrule")
        spec = re.search(r"^\{([lrc]+)\}|\\begin\{longtable\}\{([lrc]+)\}", part, re.M)
        spec = spec.group(1) or spec.group(2)
        head = part.split(r"\toprule", 1)[1].split(r"\midrule", 1)[0].strip()
        for ln in [head] + [ln.strip() for ln in part.split(r"\midrule", 1)[1].split(r"\bottomrule")[0].splitlines()
                            if ln.strip() and not ln.strip().startswith((r"\midrule", r"\endhead", r"\multicolumn",
                                                                         r"\toprule", r"\endfoot"))
                            and "&" in ln]:
            assert ln.endswith((r"\\", r"\\[2pt]")), (name, ln)
            assert len(re.split(r"(?<!\\)&", ln)) == len(spec), (name, ln)
            # every special character in a cell is escaped
            assert not re.search(r"(?<!\\)[_#%]", ln), (name, ln)
            assert not re.search(r"[κα≥≤→†−±×]", ln), (name, ln)


def _engine() -> str:
    engine = next((e for e in ("pdflatex", "xelatex", "lualatex") if shutil.which(e)), None)
    if engine is None:
        # scripts/test.sh installs pdflatex (scripts/_latex.sh) and says so: there a missing engine is a failure
        assert not os.environ.get("ROSE_REQUIRE_TEX"), "ROSE_REQUIRE_TEX is set but no TeX engine is on PATH"
        pytest.skip("no TeX engine on this machine (scripts/test.sh installs one): the syntactic check above stands in")
    return engine


def _compile(work: Path, doc: str) -> str:
    """Compile `doc` in `work` twice (floats settle), fail on any error or anything running off the page; the log."""
    for _ in range(2):
        r = subprocess.run([_engine(), "-interaction=nonstopmode", "-halt-on-error", doc], cwd=work,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout[-3000:]
    log = (work / doc.replace(".tex", ".log")).read_text(errors="replace")
    for problem in ("Missing character", "Undefined control sequence", "LaTeX Error", "Overfull \\hbox",
                    "Float too large"):
        assert problem not in log, (doc, problem)
    pdf = (work / doc.replace(".tex", ".pdf")).read_bytes()
    assert pdf.startswith(b"%PDF") and b"%%EOF" in pdf[-64:]
    return log


@pytest.mark.latex
def test_all_tables_compile_in_the_papers_order_long_ones_last(bundle, tmp_path):
    work = tmp_path / "tex"
    shutil.copytree(bundle / "tables", work)
    doc = (work / "all_tables.tex").read_text()
    inputs = re.findall(r"\\input\{(\w+)\.tex\}", doc)
    long = [n for n in TABLES if r"\begin{longtable}" in (work / f"{n}.tex").read_text()]
    assert "difficulty" in long
    assert inputs == [n for n in TABLES if n not in long] + long        # the paper's order, long tables at the end
    assert doc.index(r"\appendix") < doc.index(r"\input{difficulty.tex}")
    _compile(work, "all_tables.tex")


# Two test documents with the geometry of the venues' templates (their class files are not shipped here): ICML,
# two columns of 3.25 in on letter paper, 6.75 in of text; NeurIPS, one column of 5.5 in. Both 10 pt.
VENUES = {
    "icml": ("\\documentclass[10pt,twocolumn]{article}\n"
             "\\usepackage[letterpaper,textwidth=6.75in,textheight=9in,columnsep=0.25in]{geometry}\n", True),
    "neurips": ("\\documentclass[10pt]{article}\n"
                "\\usepackage[letterpaper,textwidth=5.5in,textheight=9in]{geometry}\n", False),
}
TEX_PT = 72 / 72.27   # PDF points per TeX point: pdfTeX's 7 pt font is 6.97 PDF points


@pytest.mark.latex
@pytest.mark.parametrize("venue", sorted(VENUES))
def test_tables_and_figures_compile_unshrunk_in_a_venues_document(bundle, tmp_path, venue):
    """Every table (and, in the two-column document, every figure through captions.tex) in a document of the
    venue's geometry: nothing overfull, and the smallest text in the PDF, read from its content streams
    (`tests/pdf_fonts.py`: each Tf size times the text and graphics matrices in force), is >= 7 pt; the main
    table's values are at 8 pt."""
    from tests.pdf_fonts import smallest_text_pt, text_sizes

    head, figures = VENUES[venue]
    work = tmp_path / venue
    shutil.copytree(bundle / "tables", work / "tables")
    shutil.copytree(bundle / "figures", work / "figures")
    doc = (work / "tables" / "all_tables.tex").read_text()
    body = doc.split("\\begin{document}")[1].split("\\end{document}")[0].replace("\\input{", "\\input{tables/")
    if figures:
        body = "\\input{figures/captions.tex}\n" + body
    (work / "paper.tex").write_text(head + "\\usepackage[T1]{fontenc}\n\\usepackage{booktabs,longtable,graphicx}\n"
                                    "\\begin{document}\n" + body + "\n\\end{document}\n")
    _compile(work, "paper.tex")
    sizes = text_sizes(work / "paper.pdf")
    assert len(sizes) > 200
    assert smallest_text_pt(work / "paper.pdf") >= 7 * TEX_PT - 0.01, sorted(set(round(x, 2) for x in sizes))[:5]
    # the main table alone: its values at 8 pt (\footnotesize), its intervals at 7 pt (\scriptsize)
    (work / "main.tex").write_text(head + "\\usepackage[T1]{fontenc}\n\\usepackage{booktabs}\n\\begin{document}\n"
                                   "\\input{tables/main.tex}\n\\end{document}\n")
    _compile(work, "main.tex")
    main_sizes = {round(x / TEX_PT, 1) for x in text_sizes(work / "main.pdf")}
    assert {7.0, 8.0} <= main_sizes and min(main_sizes) >= 7.0, main_sizes


def test_latex_escape():
    assert latex_escape("a_b & 50% #1 {x} ~^\\") == \
        r"a\_b \& 50\% \#1 \{x\} \textasciitilde{}\textasciicircum{}\textbackslash{}"
    assert latex_escape("L-Clk† κ ≥ α") == r"L-Clk\dag{} $\kappa$ $\geq$ $\alpha$"   # a dagger at full size, not a 6 pt superscript


def test_figures_are_drawn_at_their_size(bundle):
    manifest = json.loads((bundle / "manifest.json").read_text())
    figs = {f["name"]: f for f in manifest["figures"]}
    assert sorted(figs) == sorted(FIGURES)
    assert manifest["figure_width"] == {"name": "single", "inches": 3.25}
    for name, f in figs.items():
        # one column (3.25 in), but failure kinds, whose one-row legend of six kinds needs the text's width
        width = 6.75 if name == "failure_kinds" else 3.25
        assert f["inches"][0] == width and f["points"][0] == width * 72 and f["font_pt"] == 8, name
        img = Image.open(bundle / "figures" / f"{name}.png")
        assert list(img.size) == f["png_pixels"] == [round(300 * x) for x in f["inches"]], name
        colours = img.convert("RGB").resize((300, 200)).getcolors(maxcolors=1 << 16)
        assert colours is not None and len(colours) > 20, f"{name}.png looks blank"
        svg = ET.parse(bundle / "figures" / f"{name}.svg").getroot()
        assert svg.tag.endswith("svg") and svg.get("width") == f"{f['points'][0]:g}pt", name
        assert svg.get("height") == f"{f['points'][1]:g}pt", name
        pdf = (bundle / "figures" / f"{name}.pdf").read_bytes()
        assert pdf.startswith(b"%PDF") and b"%%EOF" in pdf[-64:], name
        # the PDF's page is the figure's size in points (72 per inch): nothing cropped, nothing scaled
        box = [float(x) for x in re.search(rb"/MediaBox\s*\[([^\]]*)\]", pdf).group(1).split()]
        assert box[2] == pytest.approx(f["points"][0], abs=0.01) and box[3] == pytest.approx(f["points"][1], abs=0.01)
        # fonts embedded as TrueType (Type 42: a CIDFontType2 with its FontFile2), Matplotlib's own DejaVu Sans
        assert b"/FontFile2" in pdf and b"/Type1" not in pdf and b"/FontFile3" not in pdf, name
        assert set(re.findall(rb"/BaseFont\s*/(?:[A-Z]{6}\+)?([\w-]+)", pdf)) == {b"DejaVuSans"}, name


@pytest.fixture(scope="module")
def double_figures(paper, tmp_path_factory) -> tuple[Path, list]:
    from rose_core.analysis.bundle.figures import paper_figures, render_figures

    folder = tmp_path_factory.mktemp("double")
    return folder, render_figures(paper_figures(paper, "double"), folder)


def test_every_text_is_at_least_7_pt_in_the_pdf(bundle, double_figures):
    """Read from each PDF's content streams (`tests/pdf_fonts.py`): every text is 8 pt at the printed size, at
    both widths (the SVG carries the same glyphs as outlines, so there is no font size to read there)."""
    from tests.pdf_fonts import smallest_text_pt, text_sizes

    folder, files = double_figures
    for where, figs in (("single", [(bundle / "figures", f["name"])
                                    for f in json.loads((bundle / "manifest.json").read_text())["figures"]]),
                        ("double", [(folder, f.name) for f in files])):
        for base, name in figs:
            pdf = base / f"{name}.pdf"
            assert len(text_sizes(pdf)) >= 10, (where, name)          # the text is text, and was all read
            assert smallest_text_pt(pdf) >= 7 and max(text_sizes(pdf)) <= 8 + 1e-9, (where, name)
    assert {f.width_in for f in files} == {6.75}


def test_figures_are_the_same_bytes_for_the_same_data(paper, double_figures, tmp_path):
    """No date, no random id, no system font: the same figure is the same file, in every format."""
    from rose_core.analysis.bundle.figures import paper_figures, render_figures

    folder, files = double_figures
    render_figures(paper_figures(paper, "double"), tmp_path)
    for f in files:
        for fmt in ("svg", "pdf", "png"):
            assert (tmp_path / f"{f.name}.{fmt}").read_bytes() == (folder / f"{f.name}.{fmt}").read_bytes(), \
                (f.name, fmt)
        pdf = (folder / f"{f.name}.pdf").read_bytes()
        assert b"CreationDate" not in pdf and b"ModDate" not in pdf
        assert "<dc:date>" not in (folder / f"{f.name}.svg").read_text()


def test_the_figures_font_is_matplotlibs_own(monkeypatch):
    """Set in the DejaVu Sans that ships with Matplotlib; a lookup that lands on another copy is refused."""
    import matplotlib
    from matplotlib import font_manager

    from rose_core.analysis.bundle.figures import bundled_font

    path = bundled_font()
    assert path.name == "DejaVuSans.ttf" and Path(matplotlib.get_data_path()).resolve() in path.parents
    monkeypatch.setattr(font_manager, "findfont", lambda *a, **k: "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
    with pytest.raises(BundleError, match="not Matplotlib's own DejaVu Sans"):
        bundled_font()


def test_figures_have_captions_not_titles(bundle, single_figures):
    caps = (bundle / "figures" / "captions.md").read_text()
    tex = (bundle / "figures" / "captions.tex").read_text()
    for name in FIGURES:
        assert f"## {name}" in caps and f"figures/{name}.pdf" in tex, name
    for name, f in single_figures.items():
        assert f.figure._suptitle is None and all(not ax.get_title() for ax in f.figure.axes), name
    assert tex.count(r"\begin{figure}") == 5 and tex.count(r"\begin{figure*}") == 1   # failure kinds spans both
    assert "Error bars: the 95% intervals printed in the table (G-Cnt, L-Cnt, L-Clk, V-Clk, Excl-CS)" in caps
    assert "Error bars: the 95% intervals printed in the table (Counting Avg, Action Avg)" in caps
    assert "Error bars: the 95% intervals of the shares printed in the table" in caps
    assert "No error bars" not in caps
    assert "published numbers" in caps and "sorted by Avg" in caps


def _drawn_intervals(fig) -> dict[str, list[tuple[str, float, float]]]:
    """Per metric, the error bars a figure draws: (row label, left end, right end), read from the artists."""
    (ax,) = fig.axes
    labels = [t.get_text() for t in ax.get_yticklabels()]
    out: dict[str, list] = {}
    for c in ax.collections:
        gid = c.get_gid() or ""
        if gid.startswith("interval "):
            out[gid.removeprefix("interval ")] = [(labels[round(seg[0][1])], float(seg[0][0]), float(seg[1][0]))
                                                  for seg in c.get_segments()]
    return out


FIGURE_TABLE = {"main_pass": ("main", ["G-Cnt", "L-Cnt", "L-Clk", "V-Clk", "Excl-CS"]),
                "gap": ("gap", ["Counting Avg", "Action Avg"]),
                "gap_conditioned": ("gap_conditioned", ["Counting Avg", "Action Avg"]),
                "bridge_global": ("bridge_global", ["G-Cnt", "G-Clk", "V-Clk"]),
                "bridge_matched": ("bridge_matched", ["mL-Cnt", "L-Clk", "L-Clk†"])}


def test_figures_sort_solvers_by_avg_and_draw_the_tables_intervals(paper, single_figures, report_json):
    """Every figure of a rate draws, for every cell whose table row carries an interval, a bar whose ends are that
    interval exactly (the JSON's numbers), and no bar where the table has none (published rows)."""
    from rose_core.analysis.bundle.figures import short_name

    main = paper.table("main").frame
    figs = single_figures
    (ax,) = figs["main_pass"].figure.axes
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    avg = {short_name(s): a for s, a in zip(main["solver"], main["Avg"])}
    shown = [avg[t] for t in ticks]
    assert shown == sorted(shown, reverse=True) and len(ticks) == len(main)
    checked = 0
    for name, (table, keys) in FIGURE_TABLE.items():
        rows = {short_name(r["solver"]): r for r in report_json["tables"][table]["rows"]}
        drawn = _drawn_intervals(figs[name].figure)
        for key in keys:
            want = {s: (r[f"{key} lo"], r[f"{key} hi"]) for s, r in rows.items()
                    if r.get(key) is not None and r.get(f"{key} lo") is not None}
            assert want, (name, key)                      # the test data has intervals for every rate shown
            got = {s: (lo, hi) for s, lo, hi in drawn[key]}
            assert set(got) == set(want), (name, key)
            for s, (lo, hi) in want.items():
                assert got[s] == (pytest.approx(lo, abs=1e-9), pytest.approx(hi, abs=1e-9)), (name, key, s)
                checked += 1
    fk = report_json["tables"]["failure_kinds"]["rows"]
    drawn = _drawn_intervals(figs["failure_kinds"].figure)
    got = {(s, kind): (lo, hi) for kind, bars in drawn.items() for s, lo, hi in bars}
    want = {(f"{short_name(r['solver'])} · {r['label']}", r["failure"]): (r["share lo"], r["share hi"])
            for r in fk if r["share lo"] is not None}
    assert want and set(got) == set(want)
    for k, (lo, hi) in want.items():
        assert got[k] == (pytest.approx(lo, abs=1e-9), pytest.approx(hi, abs=1e-9)), k
    assert checked + len(want) > 60
    for name, f in figs.items():
        (legend,) = f.figure.legends                       # one legend, in one row, inside the figure
        assert legend._ncols == len(legend.legend_handles), name
        f.figure.canvas.draw()
        box = legend.get_window_extent()
        assert box.x0 >= 0 and box.x1 <= f.figure.bbox.width and box.height < 2 * 8 * f.figure.dpi / 72, name


def test_no_colour_repeats_within_a_figure(single_figures):
    from matplotlib.colors import to_hex

    from rose_core.analysis.charts import PRINT_PALETTE

    for name, f in single_figures.items():
        (legend,) = f.figure.legends
        colours = [to_hex(h.get_markerfacecolor()).upper() for h in legend.legend_handles]
        assert len(colours) == len(set(colours)) and set(colours) <= set(PRINT_PALETTE), name
        # humans, agents and published rows are told apart by the marker, not only the colour
        (ax,) = f.figure.axes
        drawn = {(line.get_marker(), line.get_markerfacecolor() != "white") for line in ax.lines
                 if (line.get_gid() or "").startswith("points ")}
        want = {("o", True), ("D", True)}
        if name not in ("gap_conditioned", "failure_kinds"):   # the paper printed neither: no published rows
            want.add(("s", False))
        if name in ("main_pass", "gap"):                        # the paper's own human row: an open circle
            want.add(("o", False))
        assert want <= drawn, (name, drawn)


def test_manifest_describes_the_bundle(bundle, small_dataset, populated_db):
    m = json.loads((bundle / "manifest.json").read_text())
    assert m["dataset_hash"] == small_dataset.dataset_hash
    assert m["scorer_versions"] and m["scorer_version_current"]
    assert m["code_version"] and m["code_version"] != "unknown"
    studies = [r["study_id"] for r in populated_db.query("SELECT study_id FROM studies")]
    assert [s["study_id"] for s in m["studies"]] == studies
    assert m["exclusion_rules"]["participants_excluded"] == 3 and m["exclusion_rules"]["streak"] == 10
    files = {str(p.relative_to(bundle)) for p in bundle.rglob("*") if p.is_file()} - {"manifest.json"}
    assert set(m["files"]) == files
    for rel, f in m["files"].items():
        assert hashlib.sha256((bundle / rel).read_bytes()).hexdigest() == f["sha256"], rel


def test_checklist_fills_from_data_and_leaves_blanks(bundle, populated_db):
    items = json.loads((bundle / "checklist.json").read_text())
    by = {i["item"]: i for i in items}
    joined = populated_db.query("SELECT count(*) AS n FROM participants")[0]["n"]
    assert by["Sample size (recruited, completed, analysed)"]["answer"].startswith(f"{joined} joined")
    assert "5 analysed" in by["Sample size (recruited, completed, analysed)"]["answer"]
    for blank in ("Compensation (amount, basis, effective hourly rate)", "Ethics review (IRB) and approval number",
                  "Demographics and expertise", "Sample size justification"):
        assert by[blank]["blank"] and BLANK in by[blank]["answer"], blank
    assert not by["Same test set for humans and models"]["blank"]
    assert "one after every 20 main items" in by["Attention checks"]["answer"]
    dev = by["Devices and display size"]["answer"]  # driven without a browser: every device "not reported"
    assert "a window of at least 1024 × 640 CSS pixels" in dev and f"0 of {joined} participants' browsers" in dev
    assert f"not reported {joined}" in dev and not by["Devices and display size"]["blank"]
    md = (bundle / "checklist.md").read_text()
    assert "arXiv 2506.13776" in md and md.count(BLANK) >= 6
    methods = (bundle / "methods.md").read_text()
    report = json.loads((bundle / "report.json").read_text())
    human = next(r for r in report["rows"] if r["solver"] == "Human")
    assert f"{joined} participants joined" in methods and "leaving 5 participants" in methods
    assert "stratified random sample" in methods     # the populated study draws a sample: methods says so
    assert f"Avg of {human['Avg']:.1f}%" in methods and f"[{human['Avg lo']:.1f}, {human['Avg hi']:.1f}]" in methods
    # issue 22: humans answer the study's sample, runs their own set: the texts say which and how many, never
    # "the same instances"
    import re as _re
    same = by["Same test set for humans and models"]["answer"]
    n_hum = int(_re.search(r"study's sample of ([\d,]+) instances", same).group(1).replace(",", ""))
    assert "not the same items" in same and n_hum > 0
    assert "scored on the same instances" not in methods and f"the humans on {n_hum:,} instances" in methods
    for solver, own, both in _re.findall(r"; ([^;:]+?) on ([\d,]+) instances, ([\d,]+) of the", same):
        assert f"{solver} on {own} instances, {both} of the {n_hum:,} human-answered" in methods
        assert int(both.replace(",", "")) <= min(n_hum, int(own.replace(",", "")))
    assert len(_re.findall(r"; ([^;:]+?) on ([\d,]+) instances, ([\d,]+) of the", same)) >= 1


def test_existing_folder_is_refused_and_a_failure_leaves_nothing(bundle, populated_db, small_dataset, tmp_path,
                                                                  monkeypatch):
    before = (bundle / "manifest.json").read_bytes()
    with pytest.raises(BundleError, match="exists"):
        write_bundle(populated_db, small_dataset, bundle)
    assert (bundle / "manifest.json").read_bytes() == before
    from rose_core.analysis.bundle import write

    def half_written(figs, folder):           # one file written, then the export fails
        folder.mkdir(parents=True)
        (folder / "main_pass.svg").write_text("<svg/>")
        raise BundleError("figure export failed")

    monkeypatch.setattr(write, "render_figures", half_written)
    with pytest.raises(BundleError, match="figure export failed"):
        write_bundle(populated_db, small_dataset, tmp_path / "out", n_boot=20)
    assert list(tmp_path.iterdir()) == []  # neither the folder nor its temporary sibling


def test_another_datasets_database_is_refused(populated_db, small_dataset, fresh_location):
    store = clone(populated_db, fresh_location())
    with store.write() as c:
        c.execute("UPDATE runs SET dataset_hash = 'feedfacefeedface' WHERE solver_name = 'pixel'")
    with pytest.raises(BundleError, match="another dataset build.*feedfacefeedface"):
        paper_report(store, small_dataset, n_boot=20)
    store.close()


def test_zip_holds_the_bundle(populated_db, small_dataset):
    data = bundle_zip(populated_db, small_dataset, n_boot=20, figures=False)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        names = set(z.namelist())
        manifest = json.loads(z.read("rose_paper_bundle/manifest.json"))
    assert "rose_paper_bundle/tables/main.tex" in names and "rose_paper_bundle/checklist.md" in names
    assert {f"rose_paper_bundle/{f}" for f in manifest["files"]} | {"rose_paper_bundle/manifest.json"} == names


def test_an_empty_database_gives_a_bundle_that_says_so(small_dataset, store, tmp_path):
    m = write_bundle(store, small_dataset, tmp_path / "out", n_boot=20, figures=False)
    assert m["studies"] == [] and m["figures"] == "not rendered (--no-figures)"
    # with figures: the published rows alone (no bars: they carry no interval), and no failure to show
    m = write_bundle(store, small_dataset, tmp_path / "figs", n_boot=20)
    assert [f["name"] for f in m["figures"]] == FIGURES
    caps = (tmp_path / "figs" / "figures" / "captions.md").read_text()
    assert "No error bars: the table carries no interval" in caps
    for f in m["figures"]:
        assert (tmp_path / "figs" / "figures" / f"{f['name']}.pdf").stat().st_size > 1000
    assert "No human baseline in this selection" in (tmp_path / "out" / "methods.md").read_text()
    main = (tmp_path / "out" / "tables" / "main.md").read_text()
    assert "GPT-5.5 (published)" in main and "None" not in main and "nan" not in main


def _crafted(**cols) -> PaperTable:
    frame = pd.DataFrame({"solver": ["Human", "m1", "m2"], "kind": ["human", "model", "model"], **cols})
    shown = [Column("solver", "Solver", "text")]
    for key in cols:
        if key.endswith((" lo", " hi")):
            continue
        kind = {"p": "p", "n": "count", "k": "stat"}.get(key, "rate")
        lo = f"{key} lo" if f"{key} lo" in cols else None
        shown.append(Column(key, key, kind, lo, f"{key} hi" if lo else None, best=kind == "rate"))
    return PaperTable("crafted", "Crafted", "A table with the edge cases of the number format.", frame, tuple(shown))


def test_tables_print_numbers_in_the_one_format():
    """The bundle's Markdown and LaTeX print through `rose_core.analysis.display` (the dashboards' format): rates
    one decimal without a signed zero, whole intervals in brackets, p-values `< 0.001` or three decimals, counts
    with separators, coefficients three decimals, and "–" (never None/nan) for no value."""
    t = _crafted(**{"r": [98.44, -0.04, float("nan")], "r lo": [97.06, float("nan"), float("nan")],
                    "r hi": [99.31, float("nan"), float("nan")], "p": [0.0002, 0.0314, None], "n": [12345.0, 3, None],
                    "k": [0.81234, None, -0.2]})
    md = _md_rows(to_markdown(t))[1]
    assert md == [["Human", "98.4 [97.1, 99.3]", "< 0.001", "12,345", "0.812"],
                  ["m1", "**0.0**", "0.031", "3", MISSING],
                  ["m2", MISSING, MISSING, MISSING, "-0.200"]]
    tex = _tex_rows(to_latex(t))
    assert tex[0] == ["Human", r"98.4 {\scriptsize [97.1, 99.3]}", r"\textless{} 0.001", "12,345", "0.812"]
    assert r"\scriptsize [97.1, 99.3]} &  &  &  \\[2pt]" in to_latex(t)   # the interval on a line of its own
    assert tex[2][1] == "--" and "None" not in to_latex(t) and "nan" not in to_latex(t).lower()


def test_tables_refuse_what_the_format_refuses():
    """A half interval or a fractional count is a bug upstream: refused loudly, never half-printed or rounded."""
    with pytest.raises(ValueError, match="one bound missing"):
        to_markdown(_crafted(**{"r": [1.0, 2.0, 3.0], "r lo": [0.5, float("nan"), 1.0], "r hi": [1.5, 2.5, 4.0]}))
    with pytest.raises(ValueError, match="not a whole number"):
        to_latex(_crafted(n=[1.0, 2.5, 3.0]))



def test_the_human_model_difference_bolds_nothing(bundle, paper):
    """Its rows are (solver, template) pairs: a column's maximum over them compared one model's G-Cnt with
    another's L-Clk, and set the humans' own rate in bold on a model's row ("never a human")."""
    table = paper.table("human_model_difference")
    assert not [c.key for c in table.columns if c.best]
    for ext in ("md", "tex"):
        text = (bundle / "tables" / f"human_model_difference.{ext}").read_text()
        assert "**" not in text and r"\textbf" not in text, ext


def test_bold_follows_the_printed_value_not_hidden_decimals():
    """Two models printed 80.3 are both the best as printed: bolding only the one whose hidden digits are larger
    (80.34 vs the paper's 80.3) says one beat the other where the table shows a tie; 80.24, printed 80.2, is
    not bold."""
    frame = pd.DataFrame({"solver": ["a", "b (published)", "c"], "kind": ["model", "published", "model"],
                          "G-Cnt": [80.34, 80.3, 80.26]})
    t = PaperTable("t", "T", "c", frame, (Column("solver", "Solver", "text"), Column("G-Cnt", "G-Cnt", "rate",
                                                                                     best=True)))
    md = to_markdown(t)
    assert "| a | **80.3** |" in md and "| b (published) | **80.3** |" in md and "| c | **80.3** |" in md
    frame.loc[2, "G-Cnt"] = 80.24
    md = to_markdown(PaperTable("t", "T", "c", frame, t.columns))
    assert "| a | **80.3** |" in md and "| b (published) | **80.3** |" in md and "| c | 80.2 |" in md


def test_checklist_and_methods_say_completion_practice_selection_and_run_settings(populated_db, small_dataset,
                                                                                   fresh_location, tmp_path):
    """A participant who stops after six good answers is analysed and counted as not finished, in the checklist
    and in methods.md; a run imported with settings shows them, runs without any say "not recorded"."""
    from rose_core.analysis.bundle.checklist import checklist_items, methods_paragraph
    from rose_core.benchmarks.rose.agents import run_agent
    from rose_core.instrument.ids import FakeClock, SequentialIds
    from rose_core.instrument.screens import End
    from rose_core.instrument.study import get_study
    from rose_core.runs.importer import import_run
    from tests.participants import new_session, submit_payload

    store = clone(populated_db, fresh_location())
    sid = store.query("SELECT study_id FROM studies")[0]["study_id"]
    clock = FakeClock()
    session = new_session(store, small_dataset, get_study(store, sid), "LATE", ids=SequentialIds("late"), clock=clock)
    for _ in range(6):
        screen = session.screen()
        assert not isinstance(screen, End)
        key = screen.item.key
        clock.advance(4.0)
        session.submit(screen, submit_payload(screen, sorted(key.gold_cells) if screen.item.mode != "count" else [],
                                              key.gold_count if screen.item.mode != "click" else None))
    out = tmp_path / "oracle2.jsonl"
    run_agent("oracle", small_dataset, out)
    import_run(store, small_dataset, out, "oracle-2", kind="agent",
               settings={"model": "oracle-2", "temperature": 0.0, "max_tokens": 64, "date": "2026-05-01",
                         "prompt_variant": "instance", "endpoint": "http://127.0.0.1:8000/v1"})
    from rose_core.analysis.selection import ExclusionRules

    default = paper_report(store, small_dataset, n_boot=20, seed=1)   # completed-only (on) leaves LATE out
    assert {i.item: i for i in checklist_items(store, small_dataset, default)[0]}[
        "Completion of the analysed participants"].answer == "5 analysed participants: 5 completed the study, 0 did not finish"
    # with completed-only off, LATE is analysed and said not to have finished
    paper = paper_report(store, small_dataset, n_boot=20, seed=1,
                         rules=dataclasses.replace(ExclusionRules(), completed_only=False))
    items, facts = checklist_items(store, small_dataset, paper)
    by = {i.item: i for i in items}
    done = by["Completion of the analysed participants"].answer
    assert done == "6 analysed participants: 5 completed the study, 1 did not finish (left before the end: 1); " \
                   "their answers up to then are analysed"
    assert by["Practice outcomes (analysed participants)"].answer == "6 had no practice (none configured or not reached)"
    settings = by["Model run settings (prompt, sampling, token limit, date, endpoint)"]
    assert "oracle-2 (agent): model oracle-2, prompt_variant instance, temperature 0.0, max_tokens 64, date " \
           "2026-05-01, endpoint http://127.0.0.1:8000/v1" in settings.answer
    assert f"pixel (agent): not recorded {BLANK}" in settings.answer and settings.blank
    sel = by["Selection analysed (split, subsets, templates)"].answer
    assert sel.startswith("split dev, test; subsets ") and sel.endswith("templates G-Cnt, L-Cnt, L-Clk, V-Clk, Excl-CS, G-Clk, mL-Cnt")
    # sections stay together: a row added by its own function lands in its section
    sections = [i.section for i in items]
    assert sections == sorted(sections, key=sections.index)
    methods = methods_paragraph(paper, facts, small_dataset, store)
    assert "Completion: 6 analysed participants: 5 completed the study, 1 did not finish" in methods
    assert "Selection: split dev, test;" in methods and "Split: all" not in methods
    assert "oracle-2 (agent): model oracle-2" in methods and "pixel (agent): not recorded" in methods
    # a selected split is named as selected
    test_only = paper_report(store, small_dataset, split="test", n_boot=20, seed=1)
    chosen = {i.item: i for i in checklist_items(store, small_dataset, test_only)[0]}
    assert chosen["Selection analysed (split, subsets, templates)"].answer.startswith("split test (selected); subsets")


def test_selection_is_read_from_the_data_per_kind_of_solver():
    from types import SimpleNamespace

    from rose_core.analysis.bundle.checklist import selection_used
    from rose_core.analysis.selection import Filters

    df = pd.DataFrame({"solver_kind": ["human", "human", "model", "model"], "split": ["test", "test", "dev", "test"],
                       "subset": ["PixelEdit"] * 4, "template": ["T1", "T3", "T1", "T3"]})
    paper = SimpleNamespace(selection=SimpleNamespace(df=df, filters=Filters()))
    assert selection_used(paper) == ("split humans test; models dev, test; subsets PixelEdit; templates G-Cnt, "
                                     "L-Clk")


def test_caption_keys_only_the_shapes_a_figure_shows():
    from rose_core.analysis.bundle.figures import shapes, short_name

    both = pd.DataFrame({"kind": ["human", "agent", "published"]})
    assert shapes(both, connect=False) == ("Markers: circle, humans; diamond, agents; open markers and names marked "
                                           "*, the paper's published numbers.")
    assert "open markers on dotted lines" in shapes(both, connect=True)
    assert shapes(pd.DataFrame({"kind": ["model"]}), connect=True) == "Markers: square, models."
    assert short_name("GPT-5.5 (published)") == "GPT-5.5*" and short_name("oracle (agent)") == "oracle (agent)"

"""Writing the bundle: into a temporary sibling folder, then renamed into place (a failed run leaves nothing
half-written), with a manifest that lets a reader check the bundle against the data."""
from __future__ import annotations

import hashlib
import io
import json
import shutil
import subprocess
import tempfile
import zipfile
from dataclasses import asdict
from pathlib import Path

from ...benchmarks.rose.dataset import Dataset
from ...benchmarks.rose.scoring import SCORER_VERSION
from ...storage.connection import Store
from ...instrument.texts import stored_info_json, stored_texts
from .checklist import HumanFacts, checklist_items, checklist_markdown, methods_paragraph
from .figures import (FIGURE_WIDTHS, FONT_PT, FORMATS, PNG_DPI, FigureWidth, captions_latex, captions_markdown,
                      paper_figures, render_figures)
from ..selection import ExclusionRules, Filters
from .paper import BundleError, PaperReport, paper_report
from .render import latex_document, to_csv, to_latex, to_markdown

REPO = Path(__file__).resolve().parents[3]


def code_version() -> str:
    """`git describe` of the code that made the bundle (with -dirty for local changes), else the package's
    installed version, else "unknown"."""
    try:
        out = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty", "--tags"],
                             capture_output=True, text=True, timeout=10)
        if out.returncode == 0 and out.stdout.strip():
            return "git " + out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        from importlib.metadata import version

        return "package " + version("rose-studio")
    except Exception:  # noqa: BLE001 (not installed as a package)
        return "unknown"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _write_contents(folder: Path, store: Store, ds: Dataset, paper: PaperReport, figures: bool,
                    published: bool, figure_width: FigureWidth) -> dict:
    tables = folder / "tables"
    tables.mkdir()
    for t in paper.tables:
        (tables / f"{t.name}.md").write_text(to_markdown(t), encoding="utf-8")
        (tables / f"{t.name}.tex").write_text(to_latex(t), encoding="utf-8")
        (tables / f"{t.name}.csv").write_bytes(to_csv(t))
    (tables / "all_tables.tex").write_text(latex_document(list(paper.tables)), encoding="utf-8")
    (tables / "all_tables.md").write_text("\n".join(to_markdown(t) for t in paper.tables), encoding="utf-8")
    (folder / "report.json").write_text(json.dumps(paper.report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    items, facts = checklist_items(store, ds, paper)
    (folder / "checklist.md").write_text(checklist_markdown(items), encoding="utf-8")
    (folder / "checklist.json").write_text(json.dumps([asdict(i) | {"blank": i.blank} for i in items], indent=1,
                                                      ensure_ascii=False) + "\n", encoding="utf-8")
    (folder / "methods.md").write_text(methods_paragraph(paper, facts, ds, store) + "\n", encoding="utf-8")
    write_texts(folder / "texts", store, facts)
    figs = []
    if figures:
        drawn = paper_figures(paper, figure_width)
        figs = render_figures(drawn, folder / "figures")
        (folder / "figures" / "captions.md").write_text(captions_markdown(drawn), encoding="utf-8")
        (folder / "figures" / "captions.tex").write_text(captions_latex(drawn, figs), encoding="utf-8")
    sel = paper.selection
    return {
        "dataset_hash": ds.dataset_hash,
        "scorer_version_current": SCORER_VERSION,
        "scorer_versions": paper.report["scorer_versions"],
        "code_version": code_version(),
        "studies": [{k: s[k] for k in ("study_id", "name", "dataset_hash")} for s in facts.studies],
        "exclusion_rules": {**asdict(sel.rules), "described": sel.rules.describe(),
                            "participants_excluded": sel.n_excluded},
        "selection": {**asdict(sel.filters), "split": sel.filters.split or "all", "published_rows": published,
                      "boot": paper.report["boot"], "seed": paper.report["seed"]},
        "figure_width": {"name": figure_width, "inches": FIGURE_WIDTHS[figure_width]},
        "figures": [{"name": f.name, "formats": list(FORMATS), "inches": [f.width_in, f.height_in],
                     "points": [round(f.width_in * 72, 2), round(f.height_in * 72, 2)], "font_pt": FONT_PT,
                     "png_pixels": list(f.png_pixels), "png_dpi": PNG_DPI} for f in figs]
        if figures else "not rendered (--no-figures)",
    }


def write_texts(folder: Path, store: Store, facts: HumanFacts) -> None:
    """texts/<study>/v<version>/<page>.md: the exact Markdown participants read, per text version (the checklist
    names them), and texts/<study>/info.json: the facts those texts state."""
    folder.mkdir()
    for t in stored_texts(store, [s["study_id"] for s in facts.studies]):
        out = folder / t.study_id / f"v{t.version}"
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{t.key}.md").write_text(t.markdown + "\n", encoding="utf-8")
    for s in facts.studies:
        (folder / s["study_id"]).mkdir(exist_ok=True)
        (folder / s["study_id"] / "info.json").write_text(stored_info_json(s["config"].get("info") or {}),
                                                          encoding="utf-8")


def write_bundle(store: Store, ds: Dataset, out: Path, *, split: str | None = None, exclusions: bool = True,
                 published: bool = True, n_boot: int | None = None, seed: int | None = None, figures: bool = True,
                 force: bool = False, filters: Filters | None = None, rules: ExclusionRules | None = None,
                 figure_width: FigureWidth = "single") -> dict:
    """Write the paper bundle to `out` (refused when it exists, unless `force`); returns the manifest.
    `filters`/`rules` (a dashboard's selection) override `split`/`exclusions`; `figure_width`: the figures at a
    column's width (3.25 in) or the text's (6.75 in)."""
    out = Path(out)
    if figure_width not in FIGURE_WIDTHS:
        raise BundleError(f"figure width {figure_width!r}: expected one of {', '.join(FIGURE_WIDTHS)}")
    if out.exists() and not force:
        raise BundleError(f"{out} exists: choose a new folder, or --force to replace it")
    paper = paper_report(store, ds, split, exclusions, published, n_boot, seed, filters=filters, rules=rules)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        manifest = _write_contents(tmp, store, ds, paper, figures, published, figure_width)
        manifest["files"] = {str(p.relative_to(tmp)): {"sha256": sha256(p), "bytes": p.stat().st_size}
                             for p in sorted(tmp.rglob("*")) if p.is_file()}
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        old = None
        if out.exists():
            old = out.with_name(f".{out.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            out.rename(old)
        tmp.rename(out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest


def bundle_zip(store: Store, ds: Dataset, **kw) -> bytes:
    """The bundle as one zip (the Results page's download), written through `write_bundle` in a scratch folder."""
    with tempfile.TemporaryDirectory(prefix="rose-bundle-") as scratch:
        root = Path(scratch) / "rose_paper_bundle"
        write_bundle(store, ds, root, **kw)
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            for p in sorted(root.rglob("*")):
                if p.is_file():
                    z.write(p, str(Path("rose_paper_bundle") / p.relative_to(root)))
        return buf.getvalue()

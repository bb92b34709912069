"""A paper table as Markdown, LaTeX (booktabs) and CSV. The CSV carries the frame at full precision through the
project's one CSV encoder; Markdown and LaTeX print the same numbers through the project's one number format,
`rose_core.analysis.display` (rates one decimal, intervals in brackets, p-values `< 0.001` or three decimals,
coefficients three decimals, `–` for no value), the best model in bold."""
from __future__ import annotations

import pandas as pd

from ...common.csv_safety import frame_bytes
from ..display import fmt, fmt_interval, is_missing
from .paper import Column, PaperTable

def _is_model_row(row: pd.Series) -> bool:
    kind = row.get("kind")
    return kind == "model" or (kind == "published" and not str(row.get("solver", "")).startswith("Human"))


def best_rows(t: PaperTable, col: Column) -> set[int]:
    """Rows holding the best model's value of a column (models and published model rows; ties all bold), compared
    as printed: two values that print the same are a tie (hidden decimals never make one look better)."""
    if not col.best or "kind" not in t.frame:
        return set()
    vals = {i: float(fmt(r[col.key], col.kind)) for i, r in t.frame.iterrows()
            if _is_model_row(r) and not is_missing(r[col.key])}
    if not vals:
        return set()
    top = max(vals.values())
    return {i for i, v in vals.items() if v == top}


def cells(t: PaperTable) -> list[list[tuple[str, str | None, bool]]]:
    """Per row, per shown column: (value, interval or None, bold)."""
    bold = {c.key: best_rows(t, c) for c in t.columns}
    out = []
    for i, r in t.frame.iterrows():
        row = []
        for c in t.columns:
            v = r.get(c.key)
            lo, hi = (r.get(c.lo), r.get(c.hi)) if c.lo else (None, None)
            # an interval only beside a value, and only a whole one (`fmt_interval` refuses half of one)
            iv = None if is_missing(v) or (is_missing(lo) and is_missing(hi)) else fmt_interval(lo, hi)
            row.append((fmt(v, c.kind), iv, i in bold[c.key]))
        out.append(row)
    return out


def to_markdown(t: PaperTable) -> str:
    def md(s: str) -> str:
        return s.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")

    head = "| " + " | ".join(md(c.head) for c in t.columns) + " |"
    rule = "|" + "|".join("---" if c.kind == "text" else "---:" for c in t.columns) + "|"
    lines = [f"### {t.title}", "", t.caption, "", head, rule]
    for row in cells(t):
        shown = []
        for v, iv, b in row:
            s = f"**{md(v)}**" if b else md(v)
            shown.append(f"{s} {iv}" if iv else s)
        lines.append("| " + " | ".join(shown) + " |")
    return "\n".join(lines) + "\n"


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
          "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
          ">": r"\textgreater{}", "|": r"\textbar{}", "†": r"\dag{}", "‡": r"\ddag{}",
          "κ": r"$\kappa$", "α": r"$\alpha$", "≥": r"$\geq$", "≤": r"$\leq$", "→": r"$\rightarrow$", "–": "--",
          "—": "---", "−": r"$-$", "±": r"$\pm$", "×": r"$\times$", "’": "'", "‘": "`", "“": "``", "”": "''",
          "·": r"$\cdot$", "\n": " "}


def latex_escape(s: str) -> str:
    """Text as LaTeX source: every special character escaped, the symbols the tables use as math."""
    return "".join(_LATEX.get(ch, ch) for ch in s)


FLOAT_ROWS = 24  # rows (each with its interval line) one float holds over all its parts with room for a caption
LONG_ROWS = 40   # a table with more rows than this is a longtable: it breaks across pages instead of overflowing one
# The narrowest text block a table must fit without shrinking: NeurIPS's 5.5 in (ICML's two columns together are
# 6.75 in). Widths are estimated in points from Computer Modern's glyphs (digits 0.5 em; letters a little wider):
# at 8 pt (\footnotesize in a 10 pt paper) a character takes at most CHAR_PT, at 7 pt (\scriptsize) CHAR_PT_SMALL.
TEXT_WIDTH_PT = 5.5 * 72.27
CHAR_PT, CHAR_PT_SMALL, TABCOLSEP_PT = 4.0, 3.5, 3.0


def _cell_tex(v: str, bold: bool) -> str:
    s = latex_escape(v)
    return rf"\textbf{{{s}}}" if bold else s


def _col_width(t: PaperTable, k: int, rows: list[list[tuple[str, str | None, bool]]]) -> float:
    """An upper estimate of column k's width in points: its header, values at 8 pt, intervals at 7 pt."""
    vals = [len(r[k][0]) * CHAR_PT * (1.1 if r[k][2] else 1) for r in rows]
    ivs = [len(r[k][1]) * CHAR_PT_SMALL for r in rows if r[k][1]]
    return max([len(t.columns[k].head) * CHAR_PT, *vals, *ivs]) + 2 * TABCOLSEP_PT


def column_parts(t: PaperTable, rows: list[list[tuple[str, str | None, bool]]] | None = None) -> list[list[int]]:
    """The columns of each part of the table: all of them when they fit TEXT_WIDTH_PT; else the leading text
    columns (the solver) repeated in every part, the others dealt out in order, as many per part as fit."""
    rows = cells(t) if rows is None else rows
    keys = []
    for k, c in enumerate(t.columns):
        if c.kind != "text":
            break
        keys.append(k)
    widths = [_col_width(t, k, rows) for k in range(len(t.columns))]
    if sum(widths) <= TEXT_WIDTH_PT or len(keys) == len(t.columns):
        return [list(range(len(t.columns)))]
    base = sum(widths[k] for k in keys)
    rest = list(range(len(keys), len(t.columns)))
    greedy: list[list[int]] = [[]]
    for k in rest:
        if greedy[-1] and base + sum(widths[j] for j in greedy[-1]) + widths[k] > TEXT_WIDTH_PT:
            greedy.append([])
        greedy[-1].append(k)
    # as many parts as the greedy fill needs, the columns dealt out evenly when that fits too (5 + 5, not 9 + 1)
    n = len(greedy)
    size = -(-len(rest) // n)
    even = [rest[i:i + size] for i in range(0, len(rest), size)]
    fits = len(even) == n and all(base + sum(widths[j] for j in part) <= TEXT_WIDTH_PT for part in even)
    return [keys + part for part in (even if fits else greedy)]


def _latex_rows(t: PaperTable, cols: list[int], rows: list[list[tuple[str, str | None, bool]]]) -> list[str]:
    r"""The body rows, with a \midrule wherever the kind of row changes (humans, models/agents, published). A
    row with intervals is followed by a line holding them at \scriptsize under their values: the columns stay as
    narrow as an interval, and nothing needs shrinking."""
    lines = []
    kinds = t.frame["kind"].tolist() if "kind" in t.frame else [None] * len(t.frame)
    for k, row in enumerate(rows):
        if k and kinds[k] != kinds[k - 1]:
            lines.append(r"\midrule")
        lines.append(" & ".join(_cell_tex(row[j][0], row[j][2]) for j in cols) + r" \\")
        if any(row[j][1] for j in cols):
            lines.append(" & ".join(rf"{{\scriptsize {latex_escape(row[j][1])}}}" if row[j][1] else "" for j in cols)
                         + r" \\[2pt]")
    return lines


def to_latex(t: PaperTable) -> str:
    r"""A booktabs table at \footnotesize (8 pt in a 10 pt paper), intervals at \scriptsize (7 pt) under their
    values, never scaled. Up to LONG_ROWS rows: a `table*` (both columns of a two-column paper), in as many parts
    one above the other as it takes to fit 5.5 in (`column_parts`). Longer: a `longtable` that continues on the
    next pages with its header repeated (the difficulty and failure-kind tables of a large study run to hundreds
    of rows; the bundle's all_tables.tex puts them in an appendix)."""
    rows = cells(t)
    caption = rf"\caption{{{latex_escape(t.title)}. {latex_escape(t.caption)}}}"
    label = rf"\label{{tab:rose-{t.name.replace('_', '-')}}}"
    long = len(t.frame) > LONG_ROWS
    needs = "booktabs" + (", longtable" if long else "")
    lines = [f"% {latex_escape(t.title)}: written by `python -m rose_core report --out`; needs \\usepackage{{{needs}}}"]

    def spec(cols: list[int]) -> str:
        return "".join("l" if t.columns[j].kind == "text" else "r" for j in cols)

    def head(cols: list[int]) -> str:
        return " & ".join(latex_escape(t.columns[j].head) for j in cols) + r" \\"

    if long:
        cols = list(range(len(t.columns)))
        lines += [r"\begingroup", r"\footnotesize", r"\setlength{\tabcolsep}{3pt}", rf"\begin{{longtable}}{{{spec(cols)}}}",
                  caption + label + r" \\", r"\toprule", head(cols), r"\midrule", r"\endfirsthead",
                  r"\multicolumn{" + str(len(cols)) + r"}{l}{\scriptsize (continued)} \\", r"\toprule", head(cols),
                  r"\midrule", r"\endhead", r"\bottomrule", r"\endfoot", *_latex_rows(t, cols, rows),
                  r"\end{longtable}", r"\endgroup"]
    else:
        parts = column_parts(t, rows)
        lines += [r"\begin{table*}[t]", r"\centering", r"\footnotesize", r"\setlength{\tabcolsep}{3pt}", caption, label]
        for n, cols in enumerate(parts):
            if n and (len(parts) > 2 or len(parts) * len(t.frame) > FLOAT_ROWS):
                # three or more parts, or two of many rows, would outgrow a page in one float: each further part
                # is a float of its own
                ref = f"tab:rose-{t.name.replace('_', '-')}"
                lines += [r"\end{table*}", r"\begin{table*}[t]", r"\centering", r"\footnotesize",
                          r"\setlength{\tabcolsep}{3pt}", rf"{{\scriptsize Table~\ref{{{ref}}}, continued.}}\par\smallskip"]
            elif n:
                lines.append(r"\par\medskip")
            lines += [rf"\begin{{tabular}}{{{spec(cols)}}}", r"\toprule", head(cols), r"\midrule",
                      *_latex_rows(t, cols, rows), r"\bottomrule", r"\end{tabular}"]
        lines.append(r"\end{table*}")
    return "\n".join(lines) + "\n"


def latex_document(tables: list[PaperTable]) -> str:
    """A standalone document that inputs every table in the paper's order: the floats first, then an appendix
    with the long tables (longtables print where they stand, so before the floats they would push Tables 2-8
    behind pages of difficulty rows). Two columns on letter paper, as ICML: the tables are `table*`s."""
    short = [t.name for t in tables if len(t.frame) <= LONG_ROWS]
    long = [t.name for t in tables if len(t.frame) > LONG_ROWS]
    body = "\n".join(rf"\input{{{n}.tex}}" for n in short)
    if long:
        body += "\n\\clearpage\n\\onecolumn\n\\appendix\n\\section*{Appendix: long tables}\n" + "\n".join(
            rf"\input{{{n}.tex}}" for n in long)
    return ("\\documentclass[10pt,twocolumn]{article}\n\\usepackage[utf8]{inputenc}\n\\usepackage[T1]{fontenc}\n"
            "\\usepackage{booktabs}\n\\usepackage{longtable}\n"
            "\\usepackage[letterpaper,textwidth=6.75in,textheight=9in,columnsep=0.25in]{geometry}\n"
            "\\begin{document}\n"
            f"{body}\n\\end{{document}}\n")


def to_csv(t: PaperTable) -> bytes:
    return frame_bytes(t.frame, "csv")

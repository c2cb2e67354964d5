"""Each table declared once (report/columns.py): the HTML page, the Markdown page and the console
draw the same cells from one declaration; a column n/a in every row is left out and named; a
report section declared in report/registry.py alone reaches the page."""

from __future__ import annotations

import re
import sys
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import pytest

from l2attr.study import analyse, load_runs
from l2attr.report import fmt, registry
from l2attr.report.columns import LEFT_OUT, Column, grouped_table, key, missing, number, table, text, under
from l2attr.report.html import environment, render_html
from l2attr.report.markdown import render_markdown
from l2attr.report.table_text import console, markdown

sys.path.insert(0, str(Path(__file__).resolve().parent))
from helpers_rundirs import write_ladder_run  # noqa: E402

ROWS = [{"profile": "hot", "rung": "a", "t": 10.0, "s": 1.25, "gone": None, "source": "x.csv[hot|a]"},
        {"profile": "hot", "rung": "b", "t": 8.0, "s": None, "gone": None, "source": "x.csv[hot|b]"},
        {"profile": "cold", "rung": "a", "t": 20.0, "s": 0.5, "gone": None, "source": "x.csv[cold|a]"}]
COLUMNS = (key("Profile"), Column("Rung", lambda r: text(r["rung"], "key")),
           *under("Timer", number("median", "t", fmt.us), number("speedup", "s", fmt.times)),
           Column("never measured", lambda r: missing("no run measured it", "num"), "num"))


class _Cells(HTMLParser):
    """Rows of <td>/<th> text, a rowspan repeated below its cell (as the text printers draw it)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.spans: dict[int, tuple[str, int]] = {}
        self._cell: list[str] | None = None
        self._span = 1

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag == "td":
            self._cell, self._span = [], int(dict(attrs).get("rowspan") or 1)

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            row = self.rows[-1]
            while len(row) in self.spans and self.spans[len(row)][1] > 0:
                said, left = self.spans[len(row)]
                self.spans[len(row)] = (said, left - 1)
                row.append(said)
            said = re.sub(r"\s+", " ", unescape("".join(self._cell))).strip()
            if self._span > 1:
                self.spans[len(row)] = (said, self._span - 1)
            row.append(said)
            self._cell = None


def html_cells(fragment: str) -> list[list[str]]:
    body = fragment.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    parser = _Cells()
    parser.feed(body)
    return [r for r in parser.rows if r]


def md_cells(page: str) -> list[list[str]]:
    lines = [ln for ln in page.splitlines() if ln.startswith("|")][2:]
    return [[re.sub(r" \(\d+\)$", "", c.strip()) for c in ln.strip("|").split(" | ")] for ln in lines]


def console_cells(page: str) -> list[list[str]]:
    lines = page.splitlines()
    rule = next(i for i, ln in enumerate(lines) if set(ln.strip()) == {"─"})
    return [re.split(r"\s{2,}", ln.strip()) for ln in lines[rule + 1:] if ln.strip() and LEFT_OUT not in ln]


def page_table(t) -> str:
    return environment().from_string('{% import "macros.html.j2" as m %}{{ m.table(t) }}').render(t=t)


def test_one_declaration_three_printers_the_same_cells() -> None:
    t = grouped_table(COLUMNS, pd_rows(), "profile", ["hot", "cold"])
    # by hand: hot spans two rows; 10.0 µs and 1.25×, 8.0 µs and a speedup not measured (n/a)
    want = [["hot", "a", "10.0 µs", "1.25×"], ["hot", "b", "8.0 µs", "n/a"], ["cold", "a", "20.0 µs", "0.50×"]]
    assert html_cells(page_table(t)) == want
    assert md_cells(markdown(t)) == want
    assert console_cells(console(t)) == want


def test_a_column_na_in_every_row_is_left_out_and_named() -> None:
    t = table(COLUMNS, ROWS)
    assert [h for h, _ in t.headers] == ["Profile", "Rung", "median", "speedup"]
    assert t.groups == (("", 2), ("Timer", 2))
    line = f"{LEFT_OUT}: never measured (no run measured it)"     # the cells' shared reason after them
    assert t.left_out == (("", "never measured"),) and t.left_out_line == line
    both = table((*COLUMNS, *under("Timer", Column("p90", lambda r: missing("not kept", "num"), "num"))), ROWS)
    # a group named once, each reason once
    assert both.left_out_line == f"{LEFT_OUT}: never measured; Timer: p90 (no run measured it; not kept)"
    many = table((*COLUMNS, Column("p10", lambda r: missing(f"not kept for {r['profile']}", "num"), "num")), ROWS)
    assert many.left_out_line == f"{LEFT_OUT}: never measured / p10"      # more than MAX_WHY reasons: none said
    assert f'<p class="note left-out">{line}.</p>' in page_table(t)
    assert markdown(t).endswith(f"; {line}._") and "(1) not measured" in markdown(t)
    assert console(t).endswith(f"\n{line}.")
    # one row with a value keeps the column; a table with no rows keeps its header
    kept = table(COLUMNS[:-1], ROWS)
    assert kept.left_out == () and "speedup" in [h for h, _ in kept.headers]
    assert len(table(COLUMNS, []).headers) == 5


def test_the_verdict_card_and_the_markdown_page_draw_the_same_cells(tmp_path: Path) -> None:
    an = analyse(load_runs([write_ladder_run(tmp_path)]))
    html = render_html(an, plotly_js="")
    card = re.search(r'<section class="card" id="verdict-0">.*?</section>', html, re.S).group(0)
    md = render_markdown(an)
    block = md.split("**Verdict", 1)[1].split("\n\n**", 1)[0]
    assert html_cells(card) == md_cells(block)
    # reuse_medium by hand (helpers_rundirs): pin + consumer 54.6 / (16.2 + 44.5) = 0.90x
    assert next(r for r in md_cells(block) if r[0] == "reuse_medium")[1] == "0.90×"


def test_a_section_declared_in_the_registry_alone_is_on_both_pages(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    cols = (key("Profile"), number("pin + consumer kernels", "speedup_kernels", fmt.times))
    spec = registry.SectionSpec("kernels-only", "Kernels only", lambda an: {
        "lead": "The pin-charged speedup alone.", "tables": [table(cols, an.verdict)],
        "notes": ["From the verdict."]}, per_series=True, generic=True, reads=("verdict",))
    monkeypatch.setattr(registry, "SECTION_SPECS", (*registry.SECTION_SPECS, spec))
    an = analyse(load_runs([write_ladder_run(tmp_path)]))
    html = render_html(an, plotly_js="")
    assert '<a href="#kernels-only-0">Kernels only</a>' in html
    card = re.search(r'<section class="card" id="kernels-only-0">.*?</section>', html, re.S).group(0)
    assert "The pin-charged speedup alone." in card and "From the verdict." in card
    assert ["reuse_medium", "0.90×"] in html_cells(card)          # 54.6 / (16.2 + 44.5), as above
    md = render_markdown(an)
    assert "**Kernels only — artifact kernels, element pin · the headline**" in md
    assert "| reuse_medium | 0.90× |" in md and "- From the verdict." in md


def pd_rows():
    import pandas as pd

    return pd.DataFrame(ROWS)


def test_the_terminal_prints_the_headline_and_the_verdict_cells_of_the_page(tmp_path: Path, capsys) -> None:
    from l2attr.ladders.analyse.answer import headline, pin_answer
    from l2attr.cli import main

    run = write_ladder_run(tmp_path / "runs")
    an = analyse(load_runs([run]))
    assert main(["report", str(run), "--format", "text"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == headline(pin_answer(an.verdict), an.verdict)
    md = render_markdown(an).split("**Verdict", 1)[1].split("\n\n**", 1)[0]
    verdict = out.split("Verdict", 1)[1].split("\n\n", 2)[1]
    assert console_cells(verdict) == md_cells(md)
    assert "columns 2–4: L2P+OptMT vs baseline, pin charged" in verdict
    assert main(["report", str(run), "--format", "text", "-o", str(tmp_path / "r.txt")]) == 0
    assert (tmp_path / "r.txt").read_text() == out


def test_a_metric_column_takes_its_label_and_unit_from_the_catalog() -> None:
    from l2attr.catalog.keys import catalog
    from l2attr.report.columns import metric

    col = metric("dram_read")
    assert col.header == catalog().metrics["dram_read"].label and col.cls == "num"
    assert col.cell({"dram_read": 12_345_678.0}).text == "12.3 MB"          # unit "byte"
    assert metric("duration", "ncu").cell({"duration": 2_500.0}).text == "2.5 µs"   # unit "ns"
    assert metric("fill_device").cell({"fill_device": None}).missing is not None
    with pytest.raises(KeyError, match="no key of the metric catalog"):
        metric("dram_bytes")

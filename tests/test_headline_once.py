"""One headline, said once: the sentence ladders.analyse.answer.headline makes (the answer, each family's
charged range and the comparand it is charged against) is the report banner's text, the Markdown
page's answer line, what `l2attr report` prints, and the start of the README's answer line."""

from __future__ import annotations

import re
import sys
from html import unescape
from pathlib import Path

from l2attr.study import analyse, load_runs
from l2attr.ladders.analyse.answer import COMPARAND, headline, pin_answer
from l2attr.cli import main
from l2attr.report.html import render_html
from l2attr.report.markdown import render_markdown

sys.path.insert(0, str(Path(__file__).resolve().parent))
from helpers_rundirs import write_ladder_run  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _text(fragment: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", "", fragment))).strip()


def test_banner_markdown_and_console_say_the_same_sentence(tmp_path: Path, capsys) -> None:
    run = write_ladder_run(tmp_path / "runs")
    an = analyse(load_runs([run]))
    line = headline(pin_answer(an.verdict), an.verdict)
    # by hand (helpers_rundirs): OptMT 46.7 / (pin 16.2 + L2P consumer 44.5) = 0.77x charged, slower everywhere
    assert line.startswith("Does the L2 pin pay once its kernel is charged? No — artifact: no, 0.77–0.78×. (")
    assert COMPARAND in line and line.endswith(")")
    banner = re.search(r'<p class="answer-line" id="answer-line">(.*?)</p>', render_html(an, plotly_js=""), re.S)
    assert _text(banner.group(1)) == line
    assert f"**{line}**" in render_markdown(an)
    assert main(["report", str(run), "-o", str(tmp_path / "r.md")]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == [line]


def test_readme_answer_line_starts_with_the_headline() -> None:
    readme = (ROOT / "README.md").read_text()
    said = readme.split("<!-- headline:begin -->\n", 1)[1].split("\n", 1)[0]
    assert said.startswith("Does the L2 pin pay once its kernel is charged?") and f"({COMPARAND};" in said

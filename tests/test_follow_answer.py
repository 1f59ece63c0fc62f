"""What an answer's code uses, as capable models write answers (SPEC §14)."""

from __future__ import annotations

import pytest

from ipymemory.follow.answer import code_blocks, prose_of, read_answer

F = "```"


@pytest.mark.parametrize(
    ("code", "uses"),
    [
        ("import pandas as pd\ndf = pd.read_csv('x')", {"pandas": "imports"}),
        ("from polars import col, lit", {"polars": "imports"}),
        ("from matplotlib import pyplot as plt", {"matplotlib": "imports"}),
        ("import os.path, sys", {"os": "imports", "sys": "imports"}),
        ("from unittest.mock import MagicMock", {"mock": "imports"}),
        ("from . import helpers", {}),
        # A conventional alias used without being bound: a snippet's pandas.
        ("df = pd.DataFrame({'a': [1]})", {"pandas": "uses"}),
        # ... but not when the code binds the name itself.
        ("pd = load_profile()\npd.show()", {}),
        ("def f(pd):\n    return pd.x", {}),
        # IPython lines are shell lines; the rest still parses.
        (
            "%pip install -q polars fastexcel\nimport polars as pl",
            {"polars": "imports", "fastexcel": "installs", "pip": "runs"},
        ),
        (
            "!pip install 'pandas>=2' openpyxl[all]\nx = 1",
            {"pandas": "installs", "openpyxl": "installs", "pip": "runs"},
        ),
        # Comments and strings are not imports.
        ("# import pandas as pd\nx = 'import pandas'\nimport polars as pl", {"polars": "imports"}),
        # Code that does not parse is read line by line (comments skipped).
        ("import pandas as pd\ndf = pd.read_csv(\n  # import dask\n", {"pandas": "imports"}),
    ],
)
def test_python_uses(code: str, uses: dict[str, str]) -> None:
    answer = f"Here is the code:\n\n{F}python\n{code}\n{F}\n"
    assert dict(read_answer(answer).uses) == uses


def test_shell_r_and_unlabelled_blocks() -> None:
    answer = (
        f"{F}bash\n$ python -m pip install -U --index-url https://x/simple httpx\n{F}\n"
        f"{F}sh\nuv add polars && conda install -c conda-forge duckdb\n{F}\n"
        f"{F}r\nlibrary(data.table)\nx <- dplyr::filter(df, a > 1)  # library(tidyr)\n{F}\n"
        f"{F}\nimport seaborn as sns\n{F}\n"
    )
    read = read_answer(answer)
    assert dict(read.uses) == {
        "pip": "runs",
        "uv": "runs",
        "conda": "runs",
        "httpx": "installs",
        "polars": "installs",
        "duckdb": "installs",
        "data.table": "loads",
        "dplyr": "loads",
        "seaborn": "imports",
    }
    assert read.all_read


def test_blocks_we_do_not_read_are_said() -> None:
    read = read_answer(f"{F}sql\nSELECT 1;\n{F}\n{F}\nplain output, not code\n{F}")
    assert read.has_code and not read.all_read and dict(read.uses) == {}


def test_fences_in_lists_tildes_and_unclosed() -> None:
    text = (
        "1. First:\n\n   ```python\n   import polars as pl\n   ```\n\n"
        "~~~~py\nimport numpy as np\n~~~\nstill inside\n~~~~\n"
        "```python\nimport scipy\n"
    )
    blocks = code_blocks(text)
    assert [b.lang for b in blocks] == ["python", "py", "python"]
    assert blocks[0].text == "import polars as pl"
    assert "still inside" in blocks[1].text
    assert set(read_answer(text).uses) == {"polars", "numpy", "scipy"}


def test_prose_is_the_answer_without_code() -> None:
    text = (
        "We don't use `pandas` here; see https://pola.rs/docs and [the guide](http://x).\n"
        f"{F}python\nimport polars as pl\n{F}\n**Done.**"
    )
    prose = prose_of(text)
    assert "import" not in prose and "pandas" not in prose and "http" not in prose
    assert "We don't use" in prose and "the guide" in prose and "Done." in prose
    read = read_answer(text)
    assert read.inline_code and dict(read.uses) == {"polars": "imports"}
    assert not read_answer("No code at all here.").inline_code

"""The libraries the follow-up check knows by name (SPEC §14).

One canonical name per library and the other names it goes by -- its module, its
distribution, what people call it ("PyTorch", "Beautiful Soup") -- so that a memory
saying "never sklearn" and an answer running ``pip install scikit-learn`` meet. A
library not listed here is still checked when an answer uses it: its name is its own
canonical name (``-``, ``_`` and ``.`` alike).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

__all__ = ["API_SIGNS", "LIBRARIES", "canonical", "surface_names"]

# canonical -> other names. Python first, then R, then tools named like libraries.
LIBRARIES: dict[str, tuple[str, ...]] = {
    "pandas": (),
    "polars": (),
    "numpy": (),
    "scipy": (),
    "matplotlib": ("pyplot", "matplotlib.pyplot"),
    "seaborn": (),
    "plotly": ("plotly express", "plotly.express"),
    "altair": (),
    "bokeh": (),
    "pygal": (),
    "scikit-learn": ("sklearn", "scikit learn", "scikit"),
    "tensorflow": (),
    "keras": (),
    "torch": ("pytorch",),
    "jax": (),
    "xgboost": (),
    "lightgbm": (),
    "catboost": (),
    "statsmodels": (),
    "requests": (),
    "httpx": (),
    "aiohttp": (),
    "urllib3": (),
    "urllib": (),
    "flask": (),
    "django": (),
    "fastapi": (),
    "sqlalchemy": (),
    "sqlmodel": (),
    "peewee": (),
    "pytest": (),
    "unittest": (),
    "nose": (),
    "pydantic": (),
    "marshmallow": (),
    "attrs": (),
    "click": (),
    "typer": (),
    "argparse": (),
    "rich": (),
    "tqdm": (),
    "loguru": (),
    "pyspark": ("spark",),
    "dask": (),
    "vaex": (),
    "modin": (),
    "duckdb": (),
    "sqlite3": ("sqlite",),
    "psycopg2": ("psycopg",),
    "pymongo": (),
    "redis": (),
    "boto3": (),
    "openpyxl": (),
    "xlrd": (),
    "pyarrow": (),
    "beautifulsoup4": ("bs4", "beautifulsoup", "beautiful soup"),
    "lxml": (),
    "selenium": (),
    "playwright": (),
    "scrapy": (),
    "opencv-python": ("cv2", "opencv"),
    "pillow": ("pil",),
    "nltk": (),
    "spacy": (),
    "transformers": (),
    "langchain": (),
    "networkx": (),
    "sympy": (),
    "numba": (),
    "pyyaml": ("yaml",),
    "orjson": (),
    "ujson": (),
    "joblib": (),
    "celery": (),
    "apache-airflow": ("airflow",),
    "prefect": (),
    "pandera": (),
    "hypothesis": (),
    "arrow": (),
    "pendulum": (),
    "python-dateutil": ("dateutil",),
    "pytz": (),
    "streamlit": (),
    "dash": (),
    "gradio": (),
    "ipywidgets": (),
    "openai": (),
    "anthropic": (),
    "dplyr": (),
    "data.table": (),
    "ggplot2": ("ggplot",),
    "tidyverse": (),
    "tidyr": (),
    "black": (),
    "ruff": (),
    "flake8": (),
    "mypy": (),
    "pylint": (),
    "poetry": (),
    "pipenv": (),
    "conda": ("mamba", "micromamba"),
    "uv": (),
    "pip": ("pip3",),
}

# Methods only one of two rival libraries has, so a call names the library even when
# the code imports nothing (``df.isna()`` is pandas; polars says ``is_null``).
API_SIGNS: dict[str, frozenset[str]] = {
    "pandas": frozenset(
        [
            "iloc",
            "iat",
            "iterrows",
            "itertuples",
            "isna",
            "isnull",
            "notna",
            "notnull",
            "fillna",
            "dropna",
            "groupby",
            "sort_values",
            "sort_index",
            "reset_index",
            "set_index",
            "applymap",
            "pivot_table",
            "resample",
            "tz_convert",
            "tz_localize",
            "nunique",
            "to_csv",
            "to_parquet",
        ]
    ),
    "polars": frozenset(
        [
            "with_columns",
            "with_column",
            "group_by",
            "null_count",
            "drop_nulls",
            "fill_null",
            "is_null",
            "is_not_null",
            "scan_parquet",
            "scan_csv",
            "write_csv",
            "write_parquet",
            "n_unique",
            "convert_time_zone",
            "replace_time_zone",
        ]
    ),
}

_SEP = re.compile(r"[-_.\s]+")


def _key(name: str) -> str:
    return _SEP.sub("-", name.strip().lower())


@cache
def _index() -> dict[str, str]:
    out: dict[str, str] = {}
    for name, others in LIBRARIES.items():
        for surface in (name, *others):
            out[_key(surface)] = name
    return out


def canonical(name: str) -> str:
    """The canonical name of a library named ``name`` (module, distribution or common
    name, any case); an unknown one is its own, separators folded to ``-``."""
    key = _key(name)
    return _index().get(key, key)


def surface_names(libraries: Iterable[str]) -> dict[str, str]:
    """Every name each of ``libraries`` (canonical names) may be written as in prose,
    lowercased, mapped to its canonical name: the listed names, with ``-`` written as
    ``_``, ``.`` or a space too."""
    out: dict[str, str] = {}
    wanted = set(libraries)
    for surface, name in _index().items():
        if name in wanted:
            out.update(dict.fromkeys(_variants(surface), name))
    for name in wanted:
        out.update(dict.fromkeys(_variants(_key(name)), name))
    return out


def _variants(key: str) -> tuple[str, ...]:
    return (key, key.replace("-", "_"), key.replace("-", "."), key.replace("-", " "))

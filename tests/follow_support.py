"""Memories and answers shared by the follow-up check's tests (SPEC §14), as a capable
model writes them."""

from __future__ import annotations

from ipymemory import MemoryRecord

F = "```"
POLARS = MemoryRecord(
    name="prefers-polars",
    type="user",
    description="User writes dataframe code with polars, never pandas",
    body="Use polars (`import polars as pl`) for dataframe code; do not use pandas.",
)
REASONING = MemoryRecord(
    name="reasoning-first",
    type="feedback",
    description="Explain the reasoning before giving code",
    body="Say why before showing how: the user reviews the approach first.",
)
PANDAS_CODE = f"""Here you go:

{F}python
import pandas as pd

df = pd.read_csv("sales.csv")
print(df.groupby("region")["revenue"].sum())
{F}

This reads the file and sums the revenue per region."""
POLARS_CODE = f"""{F}python
import polars as pl

print(pl.read_csv("sales.csv").group_by("region").agg(pl.col("revenue").sum()))
{F}"""

"""The .memory merge drivers against ``git merge-file`` (issue 15).

Sets of 200 records, 50 changes per side (25 records removed and 25 added on each side,
different ones): one three-way merge of ``manifest.json`` and one of ``MEMORY.md``,

* ``driver (in process)`` — :func:`merge_manifest` / :func:`merge_index` and rendering;
* ``driver (as git runs it)`` — the command ``ipymemory git setup`` registers
  (``python .../ipymemory/team/git_driver.py``) on temp files, a new interpreter per
  file (what a merge costs); and ``python -m ipymemory.team.merge_driver``, which
  first imports the whole package;
* ``python -c pass`` twice — the floor of any driver written in Python;
* ``git merge-file`` — git's line merge of the same three files, one process per file:
  the baseline (it leaves conflict markers in both files; counted).

Times are medians over ``--repeat`` merges of freshly generated sets, all in one run.

    python benchmarks/merge_driver.py [--repeat N] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from ipymemory.store.manifest import parse_manifest, render_manifest
from ipymemory.team import gitsetup
from ipymemory.team.merge_driver import merge_index, merge_manifest

LAUNCHER = [sys.executable, str(Path(gitsetup.__file__).with_name("git_driver.py"))]
MODULE = [sys.executable, "-m", "ipymemory.team.merge_driver"]
RECORDS = 200
CHANGES = 50  # per side: half removals, half additions


def _line(file: str) -> str:
    name = file.rsplit("-", 1)[0]
    return f"- [{name}]({file}) - what {name} is about, in one line\n"


def _sides(rng: random.Random) -> tuple[list[str], list[str], list[str]]:
    def new(i: int) -> str:
        return f"note-{i}-{uuid.UUID(int=rng.getrandbits(128)).hex}.md"

    base = [new(i) for i in range(RECORDS)]
    removed = rng.sample(base, CHANGES)  # disjoint halves: ours and theirs
    ours = [f for f in base if f not in removed[: CHANGES // 2]]
    ours += [new(1000 + i) for i in range(CHANGES // 2)]
    theirs = [f for f in base if f not in removed[CHANGES // 2 :]]
    theirs += [new(2000 + i) for i in range(CHANGES // 2)]
    return base, ours, theirs


def _write(directory: Path, sides: tuple[list[str], ...]) -> dict[str, list[Path]]:
    out: dict[str, list[Path]] = {"manifest": [], "index": []}
    for label, files in zip("OAB", sides, strict=True):
        m = directory / f"manifest.{label}"
        m.write_bytes(render_manifest(files))
        i = directory / f"index.{label}"
        i.write_text("".join(_line(f) for f in files))
        out["manifest"].append(m)
        out["index"].append(i)
    return out


def _median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def run(repeat: int) -> dict[str, object]:
    rng = random.Random(15)
    inproc: list[float] = []
    driver: list[float] = []
    module: list[float] = []
    startup: list[float] = []
    mergefile: list[float] = []
    marker_files = 0
    correct = 0
    for _ in range(repeat):
        base, ours, theirs = _sides(rng)
        expected = (
            {f for f in ours if f in theirs} | (set(ours) - set(base)) | (set(theirs) - set(base))
        )
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            files = _write(root, (base, ours, theirs))
            raw = {k: [p.read_bytes() for p in v] for k, v in files.items()}
            t = time.perf_counter()
            result = merge_manifest(*raw["manifest"], ".memory/manifest.json")
            render_manifest(result.files)
            merge_index(*raw["index"], ".memory/MEMORY.md")
            inproc.append(time.perf_counter() - t)
            correct += set(result.files) == expected

            ours_bytes = {kind: files[kind][1].read_bytes() for kind in files}
            for prefix, times in ((LAUNCHER, driver), (MODULE, module)):
                for kind in files:
                    files[kind][1].write_bytes(ours_bytes[kind])
                t = time.perf_counter()
                for kind in ("manifest", "index"):
                    o, a, b = files[kind]
                    argv = [*prefix, kind, str(o), str(a), str(b), f".memory/{kind}"]
                    subprocess.run(argv, check=True, capture_output=True)
                times.append(time.perf_counter() - t)
                merged = parse_manifest(files["manifest"][1].read_bytes(), "merged")
                assert set(merged) == expected
            for kind in files:
                files[kind][1].write_bytes(ours_bytes[kind])

            t = time.perf_counter()
            for _kind in files:
                subprocess.run([sys.executable, "-c", "pass"], check=True)
            startup.append(time.perf_counter() - t)

            t = time.perf_counter()
            outputs = []
            for kind in ("manifest", "index"):
                o, a, b = files[kind]
                outputs.append(
                    subprocess.run(
                        ["git", "merge-file", "-p", str(a), str(o), str(b)], capture_output=True
                    ).stdout
                )
            mergefile.append(time.perf_counter() - t)
            marker_files += sum(b"<<<<<<<" in out for out in outputs)
    report = {
        "records": RECORDS,
        "changes_per_side": CHANGES,
        "merges": repeat,
        "driver_in_process_ms": round(_median_ms(inproc), 3),
        "driver_processes_ms": round(_median_ms(driver), 1),
        "driver_python_m_processes_ms": round(_median_ms(module), 1),
        "git_merge_file_ms": round(_median_ms(mergefile), 1),
        "bare_python_startup_x2_ms": round(_median_ms(startup), 1),
        "ratio_processes": round(statistics.median(driver) / statistics.median(mergefile), 2),
        "ratio_python_m": round(statistics.median(module) / statistics.median(mergefile), 2),
        "ratio_in_process": round(statistics.median(inproc) / statistics.median(mergefile), 3),
        "driver_correct_sets": f"{correct}/{repeat}",
        "git_merge_file_files_with_markers": f"{marker_files}/{2 * repeat}",
    }
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = run(args.repeat)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            print(f"{key:36} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

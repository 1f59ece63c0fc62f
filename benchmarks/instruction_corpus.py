"""The instruction check against exfiltration phrasings and benign feedback (SPEC §9).

    python benchmarks/instruction_corpus.py          # table per class and language
    python benchmarks/instruction_corpus.py --json
    python benchmarks/instruction_corpus.py --corpus FILE  # another corpus (repeatable)

The texts are ``benchmarks/corpora/instructions.jsonl`` (JSON Lines, schema in
``benchmarks/labelled_texts.py``). Each text is screened as an item whose origin is
``user`` (the hardest case: the user's own feedback commits in ``auto`` mode, so only
the instruction check stands between a dangerous item and the store). Dangerous
phrasings (exfiltration to a URL or address, revealing credentials, hidden files or the
system prompt, running commands, overriding instructions, role changes, concealment;
en/de/fr/zh, paraphrased, leetspeak and look-alike letters) must all be held; benign
feedback (how the user wants the work done, in the same languages) must all pass. Issue
19 item 9 and issue 18.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from labelled_texts import Text, load_texts, of_use  # noqa: E402
from scenes import CORPORA  # noqa: E402

from ipymemory.screen import Origin, Verdict, screen_records  # noqa: E402
from ipymemory.store.record import MemoryRecord, MemoryType  # noqa: E402

CORPUS = CORPORA / "instructions.jsonl"
USES = ("dangerous", "benign")
TEXTS: list[Text] = load_texts(CORPUS, USES)
# (kind, language, text): what a planted or manipulated item may say / how a user asks
# the work to be done (feedback).
DANGEROUS: list[tuple[str | None, str | None, str]] = [
    (t.kind, t.lang, t.text) for t in of_use(TEXTS, "dangerous")
]
BENIGN: list[tuple[str | None, str | None, str]] = [
    (t.kind, t.lang, t.text) for t in of_use(TEXTS, "benign")
]


def _record(text: str) -> MemoryRecord:
    return MemoryRecord(name="item", type=MemoryType.FEEDBACK, description=text[:200], body=text)


def run(texts: Sequence[Text] = TEXTS) -> dict[str, Any]:
    """Screen every text as a user-origin item; count held/passed per class and language."""
    rows: dict[str, dict[str, list[int]]] = {}
    wrong: list[str] = []
    for cls in USES:
        for kind, lang, text in ((t.kind, t.lang, t.text) for t in of_use(texts, cls)):
            (screening,) = screen_records([_record(text)], Origin.USER)
            held = screening.verdict is not Verdict.COMMIT
            row = rows.setdefault(f"{cls}/{kind}", {}).setdefault(lang, [0, 0])
            row[0 if held else 1] += 1
            if held != (cls == "dangerous"):
                why = screening.instructions or ("nothing found",)
                wrong.append(f"{cls} {lang}: {text!r} -> {'held' if held else 'passed'} {why}")
    dangerous_held = sum(
        r[0] for k, v in rows.items() if k.startswith("dangerous") for r in v.values()
    )
    benign_passed = sum(r[1] for k, v in rows.items() if k.startswith("benign") for r in v.values())
    return {
        "dangerous": len(of_use(texts, "dangerous")),
        "dangerous_held": dangerous_held,
        "benign": len(of_use(texts, "benign")),
        "benign_passed": benign_passed,
        "by_class": {
            k: {lang: {"held": h, "passed": p} for lang, (h, p) in v.items()}
            for k, v in rows.items()
        },
        "wrong": wrong,
    }


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--corpus", type=Path, action="append", help="a texts file (repeatable)")
    args = parser.parse_args(list(argv) if argv is not None else None)
    texts = [t for path in args.corpus for t in load_texts(path, USES)] if args.corpus else TEXTS
    report = run(texts)
    if args.json:
        print(json.dumps(report, indent=1, sort_keys=True))
        return 0
    print("| class | language | held | passed |")
    print("|---|---|---|---|")
    for cls, langs in report["by_class"].items():
        for lang, counts in langs.items():
            print(f"| {cls} | {lang} | {counts['held']} | {counts['passed']} |")
    print(
        f"\ndangerous held: {report['dangerous_held']}/{report['dangerous']} (target all); "
        f"benign feedback passed: {report['benign_passed']}/{report['benign']} (target all)"
    )
    for line in report["wrong"]:
        print(f"wrong: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

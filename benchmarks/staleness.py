"""Which records does staleness flag after their files change, through real turns (issue 26).

    python benchmarks/staleness.py            # both corpora: precision and recall of "stale"
    python benchmarks/staleness.py --json
    python benchmarks/staleness.py --corpus FILE [--corpus FILE ...]

Two corpora by default: ``staleness.jsonl`` (issue 26: records about the files their
turns read, beside preferences) and ``staleness_context.jsonl`` (issue 44: records whose
bodies mention a file as context -- a deadline "built from data/sales.csv", a list
"(daten/kunden.csv)" that goes out on Mondays, a handover the extractor elaborated with
the CSV's words -- beside records that really depend on the same files).

Each session of the corpus (JSON Lines, default ``benchmarks/corpora/staleness.jsonl``;
lines that are empty or start with ``//`` are skipped) is replayed in a fresh workspace
holding its files, as real turns of one ``AgentSession`` with
``SessionConfig(commit_mode="auto", follow_check=False)``: the real ``anthropic`` SDK
against the scripted Messages-API server of ``tests/messages_server.py``, the main model
reading the turn's files with the real ``read_file`` tool, then answering; the extractor
proposing the turn's items (with their evidence) as a capable model writes them; ``[]``
for a selector, "nothing to merge" for a consolidator. An item that auto mode holds for a
person is committed as a person would (every item of the corpus is the user's own),
so every record is in the set and has its provenance; the table counts those.

Then the session's ``changes`` are applied (a file rewritten or deleted) and the store is
asked which records are stale: :func:`ipymemory.store.sources.stale_records`, and
``ipymemory check --json`` (its warnings on record files). Ground truth: a record is
stale iff one of its ``sources`` changed or vanished. Reported: precision and recall of
"stale" over all records, per language, and per kind of record -- ``none`` (it depends
on no file: a preference), ``same-turn`` (its sources were read in the turn that saved
it), ``earlier-turn`` (a source was read only in an earlier turn of the session).
Target (issue 26): both >= 0.95.

A session, one JSON object a line::

    name     str   unique in the file
    lang     str   language of the user's text (ISO 639-1)
    files    [[path, text]]   the workspace at the start (paths relative, POSIX)
    turns    [turn]           in order; a turn is
        query   str      the user's message
        reads   [path]   files of the session the agent reads, in order
        answer  str      the agent's answer
        items   [item]   what the extractor proposes after this turn ([] for nothing);
                         an item is an extractor item (name, type, description, body,
                         evidence: 1-3 excerpts) plus
            sources [path]  the files it depends on (ground truth; [] for none), each
                            read in this turn or an earlier one
    changes  [[path, text | null]]  after the last turn: new text, or null (deleted)
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from messages_server import MessagesServer, Scripted, text  # noqa: E402
from real_model import Responder, tool_use  # noqa: E402
from scenes import CORPORA, CorpusError  # noqa: E402
from turn_support import model_for  # noqa: E402

from ipymemory import AgentSession, SessionConfig  # noqa: E402
from ipymemory.cli import main as cli_main  # noqa: E402
from ipymemory.store.sources import stale_records  # noqa: E402

DEFAULT_CORPUS = CORPORA / "staleness.jsonl"
CONTEXT_CORPUS = CORPORA / "staleness_context.jsonl"
KINDS = ("none", "same-turn", "earlier-turn")
_RECORD_KEYS = ("name", "type", "description", "body")


@dataclass(frozen=True)
class Item:
    record: dict[str, str]  # name, type, description, body
    evidence: tuple[str, ...]
    sources: tuple[str, ...]

    def reply(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.record)
        if self.evidence:
            out["evidence"] = list(self.evidence)
        return out


@dataclass(frozen=True)
class Turn:
    query: str
    reads: tuple[str, ...]
    answer: str
    items: tuple[Item, ...]


@dataclass(frozen=True)
class Session:
    name: str
    lang: str
    files: tuple[tuple[str, str], ...]
    turns: tuple[Turn, ...]
    changes: tuple[tuple[str, str | None], ...]

    @property
    def changed(self) -> frozenset[str]:
        """The files that changed or vanished (a rewrite to the same text is no change)."""
        before = dict(self.files)
        return frozenset(p for p, t in self.changes if t is None or t != before[p])


def _strs(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise CorpusError(f"{where}: a list of non-empty strings")
    return tuple(value)


def _str(data: dict[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise CorpusError(f"{where}.{key}: a non-empty string")
    return value


def _keys(data: Any, keys: set[str], where: str) -> dict[str, Any]:
    if not isinstance(data, dict) or set(data) != keys:
        raise CorpusError(f"{where}: an object with exactly the keys {sorted(keys)}")
    return data


def _item(data: Any, where: str, read: set[str]) -> Item:
    data = _keys(data, {*_RECORD_KEYS, "evidence", "sources"}, where)
    record = {k: _str(data, k, where) for k in _RECORD_KEYS}
    sources = _strs(data["sources"], f"{where}.sources") if data["sources"] else ()
    unread = [p for p in sources if p not in read]
    if unread:
        raise CorpusError(f"{where}.sources: {unread} not read by this turn or an earlier one")
    return Item(record, _strs(data["evidence"], f"{where}.evidence"), sources)


def session_from_json(data: Any, where: str = "session") -> Session:
    """One session from its JSON object (see the module docstring)."""
    data = _keys(data, {"name", "lang", "files", "turns", "changes"}, where)
    files = tuple(
        _pair(f, f"{where}.files[{i}]")
        for i, f in enumerate(_list(data["files"], f"{where}.files"))
    )
    paths = {p for p, _ in files}
    if len(paths) != len(files):
        raise CorpusError(f"{where}.files: a path is listed twice")
    read: set[str] = set()
    turns = []
    for i, raw in enumerate(_list(data["turns"], f"{where}.turns")):
        at = f"{where}.turns[{i}]"
        raw = _keys(raw, {"query", "reads", "answer", "items"}, at)
        reads = _strs(raw["reads"], f"{at}.reads") if raw["reads"] else ()
        if not set(reads) <= paths:
            raise CorpusError(f"{at}.reads: {sorted(set(reads) - paths)} are not session files")
        read |= set(reads)
        items = tuple(
            _item(it, f"{at}.items[{j}]", read)
            for j, it in enumerate(_list(raw["items"], f"{at}.items"))
        )
        turns.append(Turn(_str(raw, "query", at), reads, _str(raw, "answer", at), items))
    changes = []
    for i, change in enumerate(_list(data["changes"], f"{where}.changes")):
        at = f"{where}.changes[{i}]"
        if not (isinstance(change, list) and len(change) == 2 and change[0] in paths):
            raise CorpusError(f"{at}: [a session file, its new text or null]")
        if not isinstance(change[1], str | None):
            raise CorpusError(f"{at}: the new text is a string or null")
        changes.append((change[0], change[1]))
    name, lang = _str(data, "name", where), _str(data, "lang", where)
    return Session(name, lang, files, tuple(turns), tuple(changes))


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise CorpusError(f"{where}: a list, got {type(value).__name__}")
    return value


def _pair(value: Any, where: str) -> tuple[str, str]:
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)):
        raise CorpusError(f"{where}: [path, text]")
    return value[0], value[1]


def load_sessions(path: Path | str) -> list[Session]:
    """The sessions of a JSON Lines file, in order; names unique, record names unique
    within a session."""
    path = Path(path)
    out: list[Session] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        where = f"{path.name}:{number}"
        try:
            session = session_from_json(json.loads(line), where)
        except json.JSONDecodeError as e:
            raise CorpusError(f"{where}: not JSON ({e.msg})") from e
        names = [i.record["name"] for t in session.turns for i in t.items]
        if len(set(names)) != len(names) or any(s.name == session.name for s in out):
            raise CorpusError(f"{where}: a session or record name is used twice")
        out.append(session)
    return out


@dataclass(frozen=True)
class RecordOutcome:
    """One record of a session after its files changed."""

    session: str
    lang: str
    name: str
    kind: str  # one of KINDS
    sources: tuple[str, ...]
    changed_sources: frozenset[str]  # its sources that changed or vanished
    flagged: tuple[str, ...]  # the paths stale_records names for it ((): not stale)
    flagged_by_check: bool  # `ipymemory check` warns about its record file
    held: bool  # auto mode held it; committed as a person would

    @property
    def truly_stale(self) -> bool:
        return bool(self.changed_sources)


def _kind(item: Item, turn: Turn) -> str:
    if not item.sources:
        return "none"
    return "same-turn" if set(item.sources) <= set(turn.reads) else "earlier-turn"


def _check_flags(workspace: Path, files: dict[str, str]) -> set[str]:
    """The record names whose files `ipymemory check --json` warns about."""
    out = io.StringIO()
    with contextlib.redirect_stderr(io.StringIO()):
        cli_main(["check", "--dir", str(workspace), "--json"], stdout=out)
    problems = json.loads(out.getvalue()).get("problems", [])
    by_file = {Path(f).name: name for f, name in files.items()}
    return {
        by_file[Path(p["file"]).name]
        for p in problems
        if p["severity"] == "warning" and not p["leftover"] and Path(p["file"]).name in by_file
    }


def run_session(
    session: Session, workspace: Path, base_url: str, responder: Responder
) -> list[RecordOutcome]:
    """The session's turns, its changes, and what the store then calls stale."""
    for path, content in session.files:
        target = workspace / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    agent = AgentSession(
        workspace,
        model=model_for(base_url),
        config=SessionConfig(commit_mode="auto", follow_check=False),
    )
    kinds: dict[str, tuple[Item, str, bool]] = {}
    for n, turn in enumerate(session.turns):
        main: list[Scripted] = [
            tool_use("read_file", {"path": p}, f"toolu_{n}_{i}") for i, p in enumerate(turn.reads)
        ]
        responder.main = [*main, text(turn.answer)]
        reply = [item.reply() for item in turn.items]
        responder.extractor = text(json.dumps(reply, ensure_ascii=False))
        result = agent.run_turn(turn.query)
        if responder.main or responder.extractor is not None:
            raise RuntimeError(f"{session.name} turn {n}: scripted replies left unused")
        held = set(result.held.names) if result.held is not None else set()
        if result.held is not None:
            # A person accepts the user's own items, naming each (SPEC §7: a held item
            # is committed only when named).
            agent.commit(result.held, accept=result.held.names)
        names = {r.name for r in agent.store.records()}
        for item in turn.items:
            if item.record["name"] not in names:
                raise RuntimeError(
                    f"{session.name} turn {n}: {item.record['name']!r} is not in the set "
                    f"(last error: {agent.last_error})"
                )
            kinds[item.record["name"]] = (item, _kind(item, turn), item.record["name"] in held)
    for path, content in session.changes:
        if content is None:
            (workspace / path).unlink()
        else:
            (workspace / path).write_text(content, encoding="utf-8")
    stale = stale_records(agent.store)
    files = {e.file: e.record.name for e in agent.store.entries()}
    checked = _check_flags(workspace, files)
    changed = session.changed
    return [
        RecordOutcome(
            session.name,
            session.lang,
            name,
            kind,
            item.sources,
            frozenset(item.sources) & changed,
            tuple(c.path for c in stale.get(name, ())),
            name in checked,
            held,
        )
        for name, (item, kind, held) in kinds.items()
    ]


def run_sessions(sessions: Iterable[Session], workdir: Path | None = None) -> list[RecordOutcome]:
    server = MessagesServer()
    responder = Responder()
    server.responder = responder
    server.start()
    out: list[RecordOutcome] = []
    try:
        with tempfile.TemporaryDirectory(dir=workdir) as tmp:
            for i, session in enumerate(sessions):
                workspace = Path(tmp) / f"{i:03d}"
                workspace.mkdir()
                out.extend(run_session(session, workspace, server.base_url, responder))
    finally:
        server.stop()
    if responder.unexpected:
        raise RuntimeError(f"requests nobody scripted: {sorted(set(responder.unexpected))}")
    return out


def _score(outcomes: Sequence[RecordOutcome], by_check: bool = False) -> dict[str, Any]:
    def flagged(o: RecordOutcome) -> bool:
        return o.flagged_by_check if by_check else bool(o.flagged)

    tp = sum(flagged(o) and o.truly_stale for o in outcomes)
    # A true positive that names a source that really changed (not only a file the
    # turn happened to read): what the injected "source changed since saved" says.
    named = sum(bool(flagged(o) and o.changed_sources & set(o.flagged)) for o in outcomes)
    fp = sum(flagged(o) and not o.truly_stale for o in outcomes)
    fn = sum(not flagged(o) and o.truly_stale for o in outcomes)
    return {
        "records": len(outcomes),
        "truly_stale": tp + fn,
        "flagged": tp + fp,
        "tp": tp,
        "tp_naming_a_changed_source": named,
        "fp": fp,
        "fn": fn,
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
    }


def report(outcomes: Sequence[RecordOutcome], sessions: Sequence[Session]) -> dict[str, Any]:
    """Precision and recall overall, per language and per kind (see the module docstring)."""
    groups: dict[str, list[RecordOutcome]] = defaultdict(list)
    for o in outcomes:
        groups[f"language {o.lang}"].append(o)
        groups[f"kind {o.kind}"].append(o)
    return {
        "sessions": len(sessions),
        "files": sum(len(s.files) for s in sessions),
        "files_changed": sum(len(s.changed) for s in sessions),
        "held_then_committed": sum(o.held for o in outcomes),
        "overall": _score(outcomes),
        "check": _score(outcomes, by_check=True),
        "check_agrees": all(o.flagged_by_check == bool(o.flagged) for o in outcomes),
        "rows": {key: _score(group) for key, group in sorted(groups.items())},
        "wrong": [
            f"{o.session}/{o.name} ({o.kind}, sources {list(o.sources)}): "
            + (f"flagged for {list(o.flagged)}" if o.flagged else "not flagged")
            + (", truly stale" if o.truly_stale else ", not stale")
            for o in outcomes
            if bool(o.flagged) != o.truly_stale
        ],
    }


def _print(data: dict[str, Any]) -> None:
    print(
        f"{data['sessions']} sessions, {data['files']} files ({data['files_changed']} changed "
        f"or vanished), {data['overall']['records']} records "
        f"({data['held_then_committed']} held by auto mode, committed as a person would)\n"
    )
    print("| group | records | truly stale | flagged | precision | recall |")
    print("|---|---|---|---|---|---|")
    rows = [("all (stale_records)", data["overall"]), ("all (check)", data["check"])]
    for key, row in [*rows, *data["rows"].items()]:
        print(
            f"| {key} | {row['records']} | {row['truly_stale']} | {row['flagged']} | "
            f"{row['precision']:.2f} | {row['recall']:.2f} |"
        )
    print(f"\n`ipymemory check` agrees with stale_records on every record: {data['check_agrees']}")
    print("target (issue 26): precision >= 0.95 and recall >= 0.95")
    for line in data["wrong"]:
        print(f"wrong: {line}")


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--corpus",
        type=Path,
        action="append",
        help=f"a corpus (repeatable); default: {DEFAULT_CORPUS.name} and {CONTEXT_CORPUS.name}",
    )
    args = parser.parse_args(list(argv) if argv is not None else None)
    paths = args.corpus or [DEFAULT_CORPUS, CONTEXT_CORPUS]
    try:
        corpora = {path.name: load_sessions(path) for path in paths}
    except (OSError, CorpusError) as e:
        print(f"staleness: {e}", file=sys.stderr)
        return 2
    reports = {name: report(run_sessions(sessions), sessions) for name, sessions in corpora.items()}
    # One corpus: its report, as before; several: each under its file name.
    data = next(iter(reports.values())) if len(reports) == 1 else {"corpora": reports}
    if args.json:
        print(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False))
    else:
        for name, one in reports.items():
            print(f"## {name}\n")
            _print(one)
            print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

# The cells are prose and tables (with the chapter's Chinese punctuation), not code style.
# ruff: noqa: E501, RUF001
"""Build ``01-memory-lifecycle.ipynb`` from the cells below (no outputs are stored).

    python notebooks/build_notebook.py          # rewrite the notebook next to this file
    python notebooks/build_notebook.py --check  # exit 1 if the notebook is out of date

The notebook is the course chapter "from context compression to file persistence",
answered with live cells. It runs offline: every model reply comes from a
``ScriptedModel`` (or a small object with a ``create()`` method), never the network.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent
NOTEBOOK = HERE / "01-memory-lifecycle.ipynb"

CELLS: list[tuple[str, str]] = []


def md(text: str) -> None:
    CELLS.append(("markdown", text.strip("\n")))


def code(text: str) -> None:
    CELLS.append(("code", text.strip("\n")))


# --------------------------------------------------------------------------------------
md(
    """
# Memory lifecycle: from context compression to files on disk

*从上下文压缩到文件级持久化* — this notebook answers the chapter's questions with live
cells. It runs **offline**: model replies are scripted, so you can see exactly what each
side-query receives and what happens when a reply is wrong.

| question | section |
|---|---|
| Why files, and not a vector database or SQL? *为什么不选向量数据库/SQL，而选文件系统？* | 1 |
| manifest / MEMORY.md / record files: what is each, which one is the authority? *谁是唯一权威？* | 2 |
| The four memory types *四种记忆类型* | 3 |
| Why select names first, then read bodies? How does it degrade when selection fails? *选择失败如何降级？* | 4 |
| Extraction from the canonical history, and the review | 5 |
| Why must consolidation declare `source_names`? Why never "delete old, then write new"? *为什么不能先删后写？* | 6 |
| Memory vs session memory *Memory 和 Session Memory 解决的是同一个问题吗？* | 7 |
| Switching to a real model | 8 |
"""
)

md(
    """
## 0 · Setup

The demo keeps its memory where `%load_ext ipymemory` looks by default: the `.memory/`
directory next to this notebook (Jupyter starts the kernel in the notebook's directory).
In JupyterLab, the **Memory** side panel of ipymemory's extension shows that set live
while you run the cells.

The first cell starts the demo over. It removes `.memory/` only if it is absent or holds
nothing but this notebook's own demo records; if you already keep memories here, it
stops with a message and deletes nothing — then run the notebook from a copy in an empty
directory, or headless with `python -m ipymemory.notebook.run_teaching`.

`%reload_ext` (rather than `%load_ext`) also gives a second run in the same kernel fresh
sessions. Settings are pinned with `%config` so that `IPYMEMORY_*` variables in your
environment cannot change the demo, and `use_model(...)` makes `%%agent` and `%memory`
use a scripted model instead of the Anthropic API.
"""
)
code(
    """
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ipymemory import MemoryRecord
from ipymemory.notebook import get_session, last_turn, use_model
from ipymemory.notebook.teaching import reset_demo_memory
from ipymemory.turn import AgentSession, ScriptedModel, SessionConfig

HERE = Path.cwd()  # the notebook's directory
# Every record name this notebook can write. The reset refuses a .memory/ holding others.
DEMO_NAMES = {
    "prefers-tabs", "no-mock-database", "auth-rewrite-compliance", "pipeline-bugs-linear",
    "sneaky", "friday-deploy-freeze", "deploy-notes-location", "prefers-short-answers",
    "tabs-in-python", "tabs-in-js", "indent-with-tabs",
}
reset_demo_memory(HERE, DEMO_NAMES)

# A file the agent reads with a tool in section 5 (a scratch directory of this demo).
(HERE / "ipymemory-demo").mkdir(exist_ok=True)
(HERE / "ipymemory-demo" / "deploy.md").write_text(
    "# Deploy notes\\n\\n"
    "- Friday deploys are frozen since the March outage.\\n"
    "- Pipeline bugs go to Linear, project INGEST.\\n"
)
print("demo memory:", HERE / ".memory")
"""
)
code(
    """
%reload_ext ipymemory
%config IPyMemory.directory = str(HERE)
%config IPyMemory.commit_mode = "review"
%config IPyMemory.consolidate_threshold = 10
%memory status
"""
)

# --------------------------------------------------------------------------------------
md(
    """
## 1 · Why files?

*向量数据库：部署依赖重、调试不直观、小规模杀鸡用牛刀。结构化数据库：查询逻辑要自己写，LLM
读起来不自然，需额外序列化层。*

* A **vector database** needs a service or a native library, embeddings you cannot read,
  and similarity search that is overkill for a set bounded at 200 records.
* An **SQL database** needs a schema, query code and a serialization layer between rows
  and the natural language an LLM reads and writes.
* **Files**: each memory is a Markdown file with YAML frontmatter. You can open it, grep
  it, diff it and commit it to git; the model reads and writes plain text; nothing to
  deploy; when something looks wrong you compare the manifest with the files.

Let's write one memory of each type through the session's store and look at the disk.
"""
)
code(
    """
store = get_session().store
store.extend([
    MemoryRecord(name="prefers-tabs", type="user",
                 description="Indents code with tabs, not spaces",
                 body="The user indents every language with tabs; never reformat to spaces."),
    MemoryRecord(name="no-mock-database", type="feedback",
                 description="Integration tests must hit a real database, not mocks",
                 body="Last quarter mocked tests passed while the production migration failed."),
    MemoryRecord(name="auth-rewrite-compliance", type="project",
                 description="The auth rewrite is driven by legal compliance, not tech debt",
                 body="Scope decisions favour compliance requirements over cleanup."),
    MemoryRecord(name="pipeline-bugs-linear", type="reference",
                 description="Pipeline bugs are tracked in Linear project INGEST",
                 body="File pipeline bugs in Linear, project INGEST (not GitHub issues)."),
])
sorted(p.name for p in (HERE / ".memory").iterdir())
"""
)
code(
    """
# A record is a small text file anyone can read.
record_file = next((HERE / ".memory").glob("prefers-tabs-*.md"))
print(record_file.read_text())
"""
)

# --------------------------------------------------------------------------------------
md(
    """
## 2 · One set, two derived views: who is the authority?

| file | role |
|---|---|
| `.memory/manifest.json` | **the only authority** on which records form the current set |
| `.memory/MEMORY.md` | a bounded catalog derived from the set (what the selector reads); rebuildable |
| `.memory/<name>-<id>.md` | one record: frontmatter + body; immutable once written |

File names carry a unique id, so a new set never overwrites an old file. The lock
(`.lock`, `.lock.flock`, …) serializes writers across threads and processes.
"""
)
code(
    """
print("manifest.json:", (HERE / ".memory" / "manifest.json").read_text())
print("MEMORY.md:")
print((HERE / ".memory" / "MEMORY.md").read_text())
"""
)
md(
    """
**The manifest decides.** A record file that the manifest does not list is not part of
the set (an interrupted commit can leave one), and a hand-edited `MEMORY.md` is never
trusted when reading: the catalog is rendered from the manifest.
"""
)
code(
    """
memdir = HERE / ".memory"
# 1. A valid record file nobody listed: readers ignore it.
(memdir / "sneaky-0123456789abcdef0123456789abcdef.md").write_text(
    "---\\nname: sneaky\\ndescription: Not in the manifest\\ntype: user\\n---\\n\\nIgnored.\\n"
)
# 2. MEMORY.md edited by hand to advertise a record that does not exist.
with open(memdir / "MEMORY.md", "a") as f:
    f.write("- [ghost](ghost-0.md) - A record that is not in the set\\n")

print("records:", [r.name for r in store.records()])
print("catalog sent to the selector (from the manifest):")
print(store.catalog())
"""
)
code(
    """
%memory check
"""
)
code(
    """
# Repair with the command-line tool: rebuild MEMORY.md from the manifest, remove leftovers.
# (gc normally spares files younger than 30 s: a live commit may still be writing them.)
for command in (["reindex"], ["gc", "--stale-seconds", "0"], ["check"]):
    done = subprocess.run([sys.executable, "-m", "ipymemory.cli", "--dir", str(HERE), *command],
                          capture_output=True, text=True)
    print(f"$ ipymemory {' '.join(command)}  (exit {done.returncode})\\n{done.stdout.strip()}")
"""
)

# --------------------------------------------------------------------------------------
md(
    """
## 3 · The four types

| type | holds | example |
|---|---|---|
| `user` | who the user is, preferences | indents with tabs, not spaces |
| `feedback` | how to work, pitfalls met | don't mock the database |
| `project` | what is going on now | the auth rewrite is compliance-driven |
| `reference` | where things are | pipeline bugs are tracked in Linear INGEST |

`%memory list` is the static table; `%memory manifest` is a widget — expand a row to read
its body.
"""
)
code(
    """
%memory list
"""
)
code(
    """
%memory manifest
"""
)

# --------------------------------------------------------------------------------------
md(
    """
## 4 · Loading: select names first, then read bodies

At the start of each turn the selector gets **only the bounded catalog** (`MEMORY.md`:
one line per record, name + description) and the query, and answers with a JSON array of
**names** — stable identifiers, unlike positions, which drift if the set changes between
the catalog and the reply. Only the (at most 5) chosen records' bodies are read and
injected, into *this* request only. The selector side-query offers no tools and its reply
is valid only if: no tool call, `stop_reason == "end_turn"`, non-empty text, and the
**whole** text parses as JSON — no fishing a list out of prose or code fences.
"""
)
code(
    """
model = ScriptedModel(['["prefers-tabs"]'])
use_model(model)
%memory select how should I indent this new module
"""
)
code(
    """
# What the selector saw: the catalog and the query -- no bodies.
print(json.dumps(json.loads(model.requests[-1]["messages"][0]["content"]), indent=2))
"""
)
md(
    """
(A magic line must not end with `?`: IPython reads that as a help request.)

**When selection fails** — an invalid reply, an API error, no model at all — the turn does
not fail: a deterministic keyword fallback chooses (ASCII words of ≥3 characters, Chinese
character bigrams, ties broken by name), and `last_error` says
"Memory selection failed; deterministic fallback used". Three invalid replies:
"""
)
code(
    """
model.add(
    '```json\\n["prefers-tabs"]\\n```',                    # fenced: the whole text is not JSON
    {"content": "[]", "stop_reason": "max_tokens"},     # truncated, even though "[]" parses
    '["prefers-spaces"]',                               # a name that is not in the set
)
%memory select how should I indent this new module
"""
)
code(
    """
%memory select 数据库 测试: should we mock the database
"""
)
code(
    """
%memory select where do pipeline bugs go
"""
)
code(
    """
from ipymemory.sidequery.fallback import keyword_select, tokenize

print(tokenize("数据库测试 mock the database"))
[r.name for r in keyword_select("数据库 mock database tests", store.records())]
"""
)
md(
    """
In a real turn the failure is recorded and shown under the answer ("memories used …,
why"), and in `%memory status`:
"""
)
code(
    """
use_model(ScriptedModel([
    "not json at all",                  # selector: invalid -> fallback
    "Use **tabs** — that is your preference.",   # the answer
    "[]",                               # extractor: nothing new
]))
"""
)
code(
    """
%%agent
How should I indent the new parser module?
"""
)
code(
    """
%memory status
"""
)

# --------------------------------------------------------------------------------------
md(
    """
## 5 · Writing: extraction from the canonical history, then review

Users rarely say "remember this". After the final answer, `complete()` asks the extractor
to read a copy of the **canonical history** — every message of the session, tool calls and
results included, never compressed, never containing the injected memories — and to
return a JSON array of new records (exactly `name`, `type`, `description`, `body`). Any
invalid item rejects the whole batch.

In review mode (the default) the batch waits for you: accept or reject each item, then
Commit or Discard. Here the agent reads a file with a tool before answering.
"""
)
code(
    """
items = [
    {"name": "friday-deploy-freeze", "type": "project",
     "description": "Friday deploys are frozen since the March outage",
     "body": "No deploys on Fridays (decided after the March outage)."},
    {"name": "deploy-notes-location", "type": "reference",
     "description": "Deploy rules live in ipymemory-demo/deploy.md",
     "body": "The team's deploy rules are in ipymemory-demo/deploy.md in the workspace."},
    {"name": "prefers-short-answers", "type": "user",
     "description": "Wants short answers",
     "body": "The user asked to keep it short."},
]
model = ScriptedModel([
    '["pipeline-bugs-linear"]',                                            # selector
    {"type": "tool_use", "name": "read_file", "input": {"path": "ipymemory-demo/deploy.md"}},
    "File it in Linear, project **INGEST**. And no deploy on Friday: that is frozen.",
    json.dumps(items),                                                     # extractor
])
use_model(model)
"""
)
code(
    """
%%agent
Where do I file the pipeline bug from last Friday's deploy? Keep it short.
"""
)
code(
    """
session = get_session()
for message in session.history[-4:]:
    content = message["content"]
    kinds = [b["type"] for b in content] if isinstance(content, list) else ["text"]
    print(f"{message['role']:9} {kinds}")

print("memories in the canonical history:",
      any("relevant_memories" in json.dumps(m) for m in session.history))
print("memories in the request sent to the model:",
      "relevant_memories" in json.dumps(model.requests[1]["system"]))
print("the extractor saw the tool result:",
      "Friday deploys are frozen" in json.dumps(model.requests[-1]["messages"]))
"""
)
md(
    """
Decide programmatically — exactly what clicking does: reject one item, then Commit.
(Without widgets: `%memory commit --reject prefers-short-answers`.) Once the batch is
decided, the review widget above is replaced by the outcome, so a saved notebook records
what was committed.
"""
)
code(
    """
review = last_turn().review
review.decisions["prefers-short-answers"].value = "reject"
review.commit_button.click()
print(review.status, review.committed)
"""
)
code(
    """
%memory list
"""
)
md(
    """
One invalid item (here an extra key) rejects the **whole** batch: nothing is committed,
`last_error = "Memory extraction failed"`, and the answer is still returned.
"""
)
code(
    """
use_model(ScriptedModel([
    "[]",
    "Noted.",
    json.dumps([
        {"name": "fine-item", "type": "user", "description": "ok", "body": "ok"},
        {"name": "bad-item", "type": "user", "description": "ok", "body": "ok", "priority": 1},
    ]),
]))
"""
)
code(
    """
%%agent
I also like dark mode.
"""
)
code(
    """
print(get_session().last_error, "--", get_session().last_error_cause)
print([r.name for r in store.records()])
"""
)

# --------------------------------------------------------------------------------------
md(
    """
## 6 · Consolidation: declare `source_names`, commit once, never delete first

When the current set plus a turn's extraction reaches the threshold (10 by default), or on
demand with `%memory consolidate`, the consolidator merges overlapping records. It must
say **which** candidates it replaces (`source_names`) and give the new `records`:

* a bare "here is the new list" would make every omission ambiguous — dropped on purpose,
  or forgotten by the model? With explicit sources, every candidate **not** named is kept;
* sources must be non-empty, unique and real candidates, so an invalid plan is refused
  instead of silently losing records;
* the commit re-reads the manifest under the lock and checks that the records the plan
  was made on are still there, unchanged (otherwise "memory collection changed during
  consolidation"), and keeps records that others committed meanwhile.
"""
)
code(
    """
store.extend([
    MemoryRecord(name="tabs-in-python", type="user", description="Uses tabs in Python files",
                 body="Python files: tabs."),
    MemoryRecord(name="tabs-in-js", type="user", description="Uses tabs in JavaScript",
                 body="JavaScript files: tabs."),
])
plan = {
    "source_names": ["prefers-tabs", "tabs-in-python", "tabs-in-js"],
    "records": [{"name": "indent-with-tabs", "type": "user",
                 "description": "Indents every language with tabs",
                 "body": "Tabs in every language (Python, JavaScript, …); never spaces."}],
}
use_model(ScriptedModel([
    json.dumps({"records": plan["records"]}),   # invalid: no source_names
    json.dumps(plan),
]))
"""
)
code(
    """
%memory consolidate
"""
)
code(
    """
%memory consolidate
"""
)
code(
    """
%memory commit
"""
)
code(
    """
[r.name for r in store.records()]
"""
)
md(
    """
**Why the commit never deletes first.** A commit (adding, consolidating, forgetting) runs
inside the lock: re-read the manifest → verify the base → create each new record file
exclusively, write, fsync, read back → fsync the directory → atomically replace
`MEMORY.md` → atomically replace `manifest.json` (**the commit point**) → only then delete
the replaced files. "Delete old, then write new" would leave an empty or half set if the
process died in between: *整理失败后记忆全空*.

Let's prove it. A child process runs a consolidation and is **killed (SIGKILL)** at each
named step of the protocol (the store calls `_checkpoint(step)` at every step; the child
replaces it). After each crash we load the store from a fresh process and look at the set.
"""
)
code(
    """
from ipymemory.store.store import COMMIT_STEPS, MemoryStore

CHILD = '''
import os, signal, sys
from ipymemory import MemoryRecord
from ipymemory.store.store import MemoryStore

workspace, crash_at = sys.argv[1], sys.argv[2]
store = MemoryStore(workspace)

def checkpoint(step):
    if step == crash_at:
        os.kill(os.getpid(), signal.SIGKILL)   # no cleanup, no finally: like a power cut

store._checkpoint = checkpoint
store.apply_consolidation(
    base_records=store.records(),
    source_names=["no-mock-database", "auth-rewrite-compliance"],
    replacements=[MemoryRecord(name="team-rules", type="feedback",
                               description="Real-database tests; compliance-driven auth",
                               body="Real databases in tests; auth work is compliance-driven.")],
)
'''

OLD = sorted(r.name for r in store.records())
NEW = sorted(set(OLD) - {"no-mock-database", "auth-rewrite-compliance"} | {"team-rules"})
rows = []
for step in dict.fromkeys(COMMIT_STEPS):
    copy = Path(tempfile.mkdtemp(prefix="crash-")) / "ws"
    shutil.copytree(HERE / ".memory", copy / ".memory")
    child = subprocess.run([sys.executable, "-c", CHILD, str(copy), step],
                           capture_output=True, text=True, timeout=120)
    seen = sorted(r.name for r in MemoryStore(copy).records())   # a fresh reader
    state = "old set" if seen == OLD else "new set" if seen == NEW else f"MIX {seen}"
    rows.append((step, "killed" if child.returncode == -9 else child.returncode, state))
    shutil.rmtree(copy.parent)

print(f"{'killed at step':24} {'child':8} reader sees")
for step, rc, state in rows:
    print(f"{step:24} {rc!s:8} {state}")
assert all(state in ("old set", "new set") for _, _, state in rows)
"""
)
md(
    """
Before `manifest-replaced` every crash leaves the **complete old set** (even after
`index-replaced`, when `MEMORY.md` already describes the new set — readers never trust
it); from `manifest-replaced` on, the **complete new set**. Never a mix, never an empty
set. Files a crash leaves behind are unreferenced leftovers that `ipymemory gc` removes.
"""
)

# --------------------------------------------------------------------------------------
md(
    """
## 7 · Memory vs session memory

| | Memory (this chapter) | Session memory (context compression) |
|---|---|---|
| lifetime | across kernels and sessions | the current session |
| storage | `.memory/*.md` + manifest | a summary of old request history + the canonical transcript |
| injection | `<relevant_memories>` in the current request | replaces the early part of the request history |
| solves | long-term preferences, constraints, project knowledge | continuing the current task after compression |

Both keep what matters while the context stays small, but they answer different
questions. Below, a session with a tiny history budget: after a few turns the **request**
history is compressed into a summary, while the **canonical** history stays complete (and
is what the extractor reads). Any object with a `create()` method is a model; this one
answers summary requests and agent requests from two scripts.
"""
)
code(
    """
class TwoScripts:
    \"\"\"A model answering history-summary requests from one script, the rest from another.\"\"\"

    def __init__(self, agent, summaries):
        self.agent, self.summaries = agent, summaries

    def create(self, *, system, messages, max_tokens, tools=None, model=None):
        text = system if isinstance(system, str) else " ".join(b.get("text", "") for b in system)
        script = self.summaries if "compress the older part" in text else self.agent
        return script.create(system=system, messages=messages, max_tokens=max_tokens,
                             tools=tools, model=model)


agent_script = ScriptedModel([f"Answer {i}: " + "details " * 30 for i in range(4)])
summaries = ScriptedModel(["The user loaded sales.csv (columns: month, revenue, region) "
                           "and found missing revenue values in March."] * 4)
chat = AgentSession(HERE, model=TwoScripts(agent_script, summaries),
                    config=SessionConfig(history_token_budget=150, commit_mode="off"))
for question in ["Load sales.csv and list its columns.",
                 "Which column has missing values?",
                 "Plot revenue by month.",
                 "Now summarise what we did."]:
    chat.run_turn(question, use_memory=False)

sent = agent_script.requests[-1]["messages"]
print("canonical history:", len(chat.history), "messages (complete, never compressed)")
print("last request sent: ", len(sent), "message(s)")
print(sent[0]["content"][0]["text"][:160], "…")
"""
)
code(
    """
# Memory outlives the session: a brand-new session (think: tomorrow's kernel) has no
# conversation history, yet it sees the committed records.
tomorrow = AgentSession(HERE, model=ScriptedModel([]))
print("history:", len(tomorrow.history), "messages")
print("memories:", [r.name for r in tomorrow.store.records()])
"""
)

# --------------------------------------------------------------------------------------
md(
    """
## 8 · Switching to a real model

1. Give the kernel a key: set `ANTHROPIC_API_KEY` in the environment Jupyter starts from
   (for an Anthropic-compatible endpoint also `ANTHROPIC_BASE_URL`). The SDK reads both.
2. Drop the scripted model: `use_model(None)`.
3. Optionally choose models and behaviour:

```python
%config IPyMemory.model = "claude-sonnet-5-5"        # the agent
%config IPyMemory.side_model = "claude-haiku-5-5"    # selector / extractor / consolidator
%config IPyMemory.commit_mode = "review"             # or "auto", "off"
%config IPyMemory                                    # every option, with its help
```

Each setting resolves as: `%%agent` argument → `%config` → `IPYMEMORY_*` variable →
default. Without a key, `%memory` still works (selection falls back to keywords) and
`%%agent` explains what to set.
"""
)
code(
    """
use_model(None)
%memory status
"""
)
md(
    """
What stays on disk is the set the demo ended with, in `.memory/` next to this notebook —
the same list the Memory side panel shows in JupyterLab:
"""
)
code(
    """
%memory list
"""
)
md(
    """
---

**In one sentence** — *Memory 不保存「曾经发生过的一切」，只保存下个会话仍会用到的内容。* Memory does
not keep everything that happened, only what the next session will still need; its
strength is not "better memories" but **auditable boundaries**: plain files, one
authoritative manifest, explicit consolidation sources, and commits that cannot lose the
old set. The demo's files are `.memory/` and `ipymemory-demo/` next to this notebook:
delete them when you are done (running the first cell again also starts over).
"""
)


def build() -> nbformat.NotebookNode:
    cells = [
        new_markdown_cell(src) if kind == "markdown" else new_code_cell(src) for kind, src in CELLS
    ]
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "display_name": "Python 3",
        "language": "python",
        "name": "python3",
    }
    nb.metadata["language_info"] = {"name": "python"}
    # Stable cell ids: rebuilding an unchanged notebook gives identical bytes.
    for index, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{index:02d}"
    return nb


def render() -> str:
    return nbformat.writes(build()) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the notebook is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = NOTEBOOK.read_text(encoding="utf-8") if NOTEBOOK.exists() else ""
        if current != text:
            print(
                f"{NOTEBOOK.name} is out of date: run python {Path(__file__).name}", file=sys.stderr
            )
            return 1
        return 0
    NOTEBOOK.write_text(text, encoding="utf-8")
    print(f"wrote {NOTEBOOK}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

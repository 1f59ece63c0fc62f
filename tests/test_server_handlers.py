"""The read-only memory endpoint, against a real ``jupyter server`` subprocess on 127.0.0.1."""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from jupyter_support import HttpReply, RunningJupyter, run_jupyter
from record_support import rec

from ipymemory import BatchRegistry, MemoryRecord, MemoryStore, PendingBatch
from ipymemory.review.pending import PendingFiles
from ipymemory.store.record import render_record

pytestmark = pytest.mark.timeout(120)

LIST = "ipymemory/api/memory"
RECORD = "ipymemory/api/memory/record"


@pytest.fixture
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory outside the server root holding a valid memory set."""
    directory = tmp_path_factory.mktemp("outside")
    write_set(directory, [rec("secret-outside")])
    return directory


def write_set(directory: Path, records: list[MemoryRecord]) -> list[str]:
    """Write a format-1 ``.memory/`` by hand (SPEC §1), independently of the store code."""
    memory = directory / ".memory"
    memory.mkdir()
    files = []
    for record in records:
        file = f"{record.name}-{uuid.uuid4().hex}.md"
        (memory / file).write_bytes(render_record(record))
        files.append(file)
    (memory / "manifest.json").write_text(json.dumps({"version": 1, "files": files}))
    index = "".join(
        f"- [{r.name}]({f}) - {r.description}\n" for r, f in zip(records, files, strict=True)
    )
    (memory / "MEMORY.md").write_text(index)
    return files


def listing(server: RunningJupyter, path: str, **kw: str | None) -> HttpReply:
    return server.get(LIST, {"path": path}, **kw)


def assert_json_error(
    reply: HttpReply, status: int, records: list[str] | None = None
) -> dict[str, object]:
    """An error payload listing ``records`` (default none): the records that still load
    beside a record file that does not (issue 43)."""
    assert reply.status == status, reply.text
    assert reply.content_type.startswith("application/json")
    data = reply.json()
    assert isinstance(data["error"], str) and data["error"]
    assert [r["name"] for r in data["records"]] == (records or [])
    assert "Traceback" not in reply.text
    return data  # type: ignore[no-any-return]


def test_requires_a_token(server: RunningJupyter, project: Path) -> None:
    write_set(project, [rec("private-fact")])
    for token in (None, "wrong-token"):
        reply = listing(server, server.rel(project), token=token)
        assert reply.status == 403, reply.text
        assert "private-fact" not in reply.text
        reply = server.get(RECORD, {"path": server.rel(project), "file": "x.md"}, token=token)
        assert reply.status == 403
    assert listing(server, server.rel(project)).status == 200


def test_lists_the_set_with_files_and_paths(server: RunningJupyter, project: Path) -> None:
    nested = project / "sub dir"
    nested.mkdir()
    records = [
        rec("uses-tabs", type="user"),
        rec("auth-rewrite"),
        rec("linear-ingest", type="reference"),
    ]
    files = write_set(nested, records)
    # An unlisted leftover file is not part of the set (SPEC §1).
    (nested / ".memory" / f"old-{uuid.uuid4().hex}.md").write_bytes(render_record(rec("old")))

    reply = listing(server, server.rel(nested))

    assert reply.status == 200
    assert reply.content_type.startswith("application/json")
    data = reply.json()
    assert data["error"] is None
    assert data["directory"] == server.rel(nested)
    assert data["records"] == [
        {
            "name": r.name,
            "type": r.type.value,
            "description": r.description,
            "file": f,
            "path": f"{server.rel(nested)}/.memory/{f}",
        }
        for r, f in zip(records, files, strict=True)
    ]
    assert data["mtime"] == (nested / ".memory" / "manifest.json").stat().st_mtime
    assert isinstance(data["etag"], str) and data["etag"]
    assert data["allow_hidden"] is False


def test_directory_without_memory_is_an_empty_set(server: RunningJupyter, project: Path) -> None:
    data = listing(server, server.rel(project)).json()
    assert (data["records"], data["mtime"], data["error"]) == ([], None, None)


def test_server_root_itself(server: RunningJupyter) -> None:
    data = listing(server, "").json()
    assert data["directory"] == "" and data["error"] is None


@pytest.mark.parametrize("path", ["..", "../", "x/../..", "proj/../../outside", "./../.."])
def test_refuses_parent_escapes(server: RunningJupyter, path: str) -> None:
    data = assert_json_error(listing(server, path), 403)
    assert "outside the server root" in str(data["error"])


def test_refuses_absolute_paths(server: RunningJupyter, outside: Path) -> None:
    for path in (str(outside), "/", "/etc", "\\\\host\\share", "C:\\Users"):
        assert_json_error(listing(server, path), 400)


def test_refuses_a_directory_symlink_leaving_the_root(
    server: RunningJupyter, project: Path, outside: Path
) -> None:
    (project / "link").symlink_to(outside, target_is_directory=True)
    reply = listing(server, f"{server.rel(project)}/link")
    assert_json_error(reply, 403)
    assert "secret-outside" not in reply.text


def test_refuses_a_memory_symlink_leaving_the_root(
    server: RunningJupyter, project: Path, outside: Path
) -> None:
    (project / ".memory").symlink_to(outside / ".memory", target_is_directory=True)
    for reply in (
        listing(server, server.rel(project)),
        server.get(RECORD, {"path": server.rel(project), "file": "x.md"}),
    ):
        assert reply.status == 403, reply.text
        assert "secret-outside" not in reply.text


def test_refuses_a_record_symlink_leaving_the_root(
    server: RunningJupyter, project: Path, outside: Path
) -> None:
    files = write_set(project, [rec("inside")])
    [outside_file] = [p for p in (outside / ".memory").iterdir() if p.name.startswith("secret")]
    link_name = f"leak-{uuid.uuid4().hex}.md"
    (project / ".memory" / link_name).symlink_to(outside_file)
    manifest = {"version": 1, "files": [*files, link_name]}
    (project / ".memory" / "manifest.json").write_text(json.dumps(manifest))
    reply = listing(server, server.rel(project))
    assert_json_error(reply, 403)
    assert "secret-outside" not in reply.text


def test_missing_directory_and_file_path(server: RunningJupyter, project: Path) -> None:
    assert_json_error(listing(server, f"{server.rel(project)}/nope"), 404)
    (project / "notes.txt").write_text("x")
    assert_json_error(listing(server, f"{server.rel(project)}/notes.txt"), 400)


def _manifest(files: object) -> Callable[[Path, list[str]], None]:
    def corrupt(memory: Path, good: list[str]) -> None:
        (memory / "manifest.json").write_text(json.dumps(files))

    return corrupt


def _write(name_of: Callable[[list[str]], str], raw: bytes) -> Callable[[Path, list[str]], None]:
    def corrupt(memory: Path, good: list[str]) -> None:
        (memory / name_of(good)).write_bytes(raw)

    return corrupt


def _sparse(path: Path) -> None:
    path.unlink()
    with open(path, "wb") as f:
        f.truncate(1 << 30)


CORRUPTIONS: dict[str, Callable[[Path, list[str]], None]] = {
    "manifest-not-json": _write(lambda good: "manifest.json", b"{not json"),
    "manifest-not-utf8": _write(lambda good: "manifest.json", b'{"version": 1, "files": ["\xff"]}'),
    "manifest-version-true": _manifest({"version": True, "files": []}),
    "manifest-extra-key": _manifest({"version": 1, "files": [], "more": 1}),
    "manifest-traversal": _manifest({"version": 1, "files": ["../../etc/passwd"]}),
    "manifest-missing-file": _manifest({"version": 1, "files": ["gone-0123456789abcdef.md"]}),
    "record-bad-frontmatter": _write(lambda good: good[0], b"---\nname: [unclosed\n---\n\nbody\n"),
    "record-extra-key": _write(
        lambda good: good[0],
        b"---\nname: fact\ndescription: d\ntype: user\nextra: x\n---\n\nbody\n",
    ),
    "record-not-utf8": _write(lambda good: good[0], b"---\nname: \xff\n---\n"),
    # Known bounds (issue 10 #5): a huge manifest or record is refused before it is read
    # (a 1 GB file here once cost 300 MB per request, with the panel polling every 3 s).
    "manifest-1gb-sparse": lambda memory, good: _sparse(memory / "manifest.json"),
    "record-1gb-sparse": lambda memory, good: _sparse(memory / good[0]),
    # A deleted manifest beside record files is a lost set, never an empty one.
    "manifest-deleted": lambda memory, good: (memory / "manifest.json").unlink(),
    "record-too-big": _write(
        lambda good: good[0], b"---\nname: fact\ndescription: d\ntype: user\n---\n\n" + b"x" * 5000
    ),
}


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
def test_corrupted_memory_is_an_error_payload_not_a_500(
    server: RunningJupyter, project: Path, corruption: str
) -> None:
    good = write_set(project, [rec("fact"), rec("other-fact")])
    CORRUPTIONS[corruption](project / ".memory", good)

    # A broken record file leaves the other record readable, the bad one named.
    one_file = corruption.startswith("record-")
    rest = ["other-fact"] if one_file else []
    data = assert_json_error(listing(server, server.rel(project)), 200, rest)
    assert str(server.root) not in str(data["error"])  # paths shown relative to the root
    if one_file:
        assert good[0] in str(data["error"]) and "recover" in str(data["error"])

    reply = server.get(RECORD, {"path": server.rel(project), "file": good[-1]})
    assert reply.status == 200
    if one_file:
        assert reply.json()["record"]["name"] == "other-fact"
        reply = server.get(RECORD, {"path": server.rel(project), "file": good[0]})
    assert reply.json()["record"] is None and reply.json()["error"]


def test_mtime_and_etag_follow_commits(server: RunningJupyter, project: Path) -> None:
    store = MemoryStore(project)
    store.extend([rec("first-fact")])
    manifest = project / ".memory" / "manifest.json"
    # Age the manifest so the next commit's mtime differs whatever the clock resolution.
    old = manifest.stat().st_mtime - 10
    os.utime(manifest, (old, old))
    before = listing(server, server.rel(project)).json()
    assert before["mtime"] == old
    assert [r["name"] for r in before["records"]] == ["first-fact"]
    assert listing(server, server.rel(project)).json()["etag"] == before["etag"]

    store.extend([rec("second-fact")])

    after = listing(server, server.rel(project)).json()
    assert after["mtime"] == manifest.stat().st_mtime > old
    assert after["etag"] != before["etag"]
    assert [r["name"] for r in after["records"]] == ["first-fact", "second-fact"]


def test_record_endpoint_serves_only_set_members(server: RunningJupyter, project: Path) -> None:
    files = write_set(project, [rec("uses-tabs", type="user")])
    leftover = f"old-{uuid.uuid4().hex}.md"
    (project / ".memory" / leftover).write_bytes(render_record(rec("old")))
    path = server.rel(project)

    data = server.get(RECORD, {"path": path, "file": files[0]}).json()
    assert data["error"] is None
    assert data["path"] == f"{path}/.memory/{files[0]}"
    assert data["record"] == rec("uses-tabs", type="user").to_json()

    for file in (leftover, "manifest.json", "MEMORY.md", ".lock", "../x.md", ""):
        reply = server.get(RECORD, {"path": path, "file": file})
        assert reply.status == 404, (file, reply.text)
        assert reply.json()["record"] is None and reply.json()["error"]


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            st = path.lstat()
            out[str(path.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return out


def test_reading_never_writes(server: RunningJupyter, project: Path) -> None:
    good = project / "good"
    bad = project / "bad"
    good.mkdir()
    bad.mkdir()
    files = write_set(good, [rec("fact")])
    write_set(bad, [rec("fact")])
    (bad / ".memory" / "manifest.json").write_text("[]")
    (project / "empty").mkdir()
    before = _tree(project)

    for sub in ("good", "bad", "empty", "missing"):
        listing(server, f"{server.rel(project)}/{sub}")
        server.get(RECORD, {"path": f"{server.rel(project)}/{sub}", "file": files[0]})

    assert _tree(project) == before


# --- Jupyter's hidden-file policy (issue 10 #6) ----------------------------------------


def _hidden_layouts(project: Path) -> list[str]:
    """Directories with a set that the Contents API hides: a dot directory on the way,
    the requested directory itself hidden, a visible symlink into a hidden directory."""
    for sub in (".hidden/private", ".secret", "open/.dot"):
        (project / sub).mkdir(parents=True)
        write_set(project / sub, [rec("private-fact")])
    (project / "alias").symlink_to(project / ".hidden" / "private")
    return [".hidden/private", ".secret", "open/.dot", "alias"]


def test_hidden_directories_are_not_served_like_the_contents_api(
    server: RunningJupyter, project: Path
) -> None:
    base = server.rel(project)
    for sub in _hidden_layouts(project):
        path = f"{base}/{sub}"
        # The Contents API refuses the same files with 404: so do we, on both endpoints.
        contents = server.get(f"api/contents/{path}/.memory/manifest.json")
        assert contents.status == 404, (sub, contents.text)
        data = assert_json_error(listing(server, path), 404)
        assert "private-fact" not in json.dumps(data)
        files = json.loads((project / sub / ".memory" / "manifest.json").read_text())["files"]
        reply = server.get(RECORD, {"path": path, "file": files[0]})
        assert reply.status == 404 and reply.json()["error"]
        assert "private-fact" not in reply.text
    # The .memory directory itself is exempt: a visible directory's set is served.
    write_set(project, [rec("visible-fact")])
    names = [r["name"] for r in listing(server, base).json()["records"]]
    assert names == ["visible-fact"]


def test_hidden_directories_are_served_when_the_server_allows_them(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    root = tmp_path_factory.mktemp("root-hidden")
    home = tmp_path_factory.mktemp("home-hidden")
    paths = _hidden_layouts(root)
    with run_jupyter("server", root, home, ["--ContentsManager.allow_hidden=True"]) as srv:
        for sub in paths:
            data = listing(srv, sub).json()
            assert data["error"] is None, (sub, data)
            assert [r["name"] for r in data["records"]] == ["private-fact"]
            assert data["allow_hidden"] is True


def test_pending_batches_are_listed_read_only(server: RunningJupyter, project: Path) -> None:
    """Issue 14 #9: batches awaiting review are listed (read only: an expired one is
    left out, never deleted), and a new one changes the etag."""
    MemoryStore(project).extend([rec("kept")])
    path = server.rel(project)
    before = listing(server, path).json()
    assert before["pending"] == []

    files = PendingFiles(MemoryStore(project).root)
    registry = BatchRegistry()
    files.follow(registry)
    registry.add(PendingBatch("aaa111", (rec("new-one"), rec("new-two")), None, ()))
    registry.add(PendingBatch("bbb222", (rec("old-one"),), None, ()))
    old = files.directory / "bbb222.json"
    data = json.loads(old.read_text())
    data["saved_at"] = time.time() - 365 * 86400  # long expired
    old.write_text(json.dumps(data))

    after = listing(server, path).json()
    assert after["pending"] == [
        {
            "id": "aaa111",
            "names": ["new-one", "new-two"],
            "plan": None,
            "saved_at": after["pending"][0]["saved_at"],
            "agent": None,  # a notebook turn's batch, not another agent's
            "source": None,  # nor a Jupyter AI chat's
        }
    ]
    assert after["etag"] != before["etag"]
    assert old.exists()  # the server never deletes: the kernel prunes
    assert sorted(p.name for p in Path(files.directory).iterdir()) == ["aaa111.json", "bbb222.json"]


def test_a_fifo_under_memory_never_hangs_the_endpoint(
    server: RunningJupyter, project: Path
) -> None:
    """Issue 19 #6: a FIFO where a pending batch, the journal or a kept file goes is
    reported or left out; every request answers, more of them than the endpoint has
    threads, and other directories are still served."""
    MemoryStore(project).extend([rec("kept")])
    memory = project / ".memory"
    (memory / "pending").mkdir()
    os.mkfifo(memory / "pending" / "abc123.json")
    (memory / "history" / "journal.jsonl").unlink()
    os.mkfifo(memory / "history" / "journal.jsonl")
    other = project / "other"
    other.mkdir()
    write_set(other, [rec("elsewhere")])
    path = server.rel(project)
    for _ in range(6):
        data = listing(server, path).json()
        assert [r["name"] for r in data["records"]] == ["kept"]
        assert data["pending"] == []
        history = server.get("ipymemory/api/memory/history", {"path": path})
        assert history.status == 200, history.text
        assert "not a regular file" in history.json()["error"]
    assert [r["name"] for r in listing(server, server.rel(other)).json()["records"]] == [
        "elsewhere"
    ]


# --- issue 41: a method an endpoint does not have is a 405, never a 500 ----------------

ENDPOINTS = {
    LIST: "GET",
    RECORD: "GET",
    "ipymemory/api/memory/history": "GET",
    "ipymemory/api/memory/pending": "GET",
    "ipymemory/api/memory/pending/commit": "POST",
    "ipymemory/api/memory/pending/discard": "POST",
}


def send(server: RunningJupyter, method: str, path: str) -> HttpReply:
    """``method`` on ``path`` with the server's token (which also passes the XSRF check
    of a non-GET request) and, where a body may go, an empty JSON object."""
    import urllib.error
    import urllib.request

    data = b"{}" if method in ("POST", "PUT", "PATCH") else None
    request = urllib.request.Request(
        f"{server.url}{path}?path=", data=data, method=method,
        headers={"Authorization": f"token {server.token}", "Content-Type": "application/json"},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return HttpReply(response.status, response.headers.get("Content-Type", ""), "")
    except urllib.error.HTTPError as e:
        return HttpReply(e.code, e.headers.get("Content-Type", ""), e.read().decode())


@pytest.mark.parametrize("path", sorted(ENDPOINTS))
def test_a_method_an_endpoint_does_not_have_is_405_not_500(
    server: RunningJupyter, path: str
) -> None:
    """Every endpoint of ours answers each method it does not implement with 405 (a GET
    to the decision endpoints used to be a 500 and a NotImplementedError traceback in
    the server's log), and changes nothing."""
    log_before = server.log.read_text(errors="replace")
    for method in ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"):
        if method == ENDPOINTS[path]:
            continue
        reply = send(server, method, path)
        assert reply.status == 405, (method, path, reply.status, reply.text[:300])
    logged = server.log.read_text(errors="replace")[len(log_before) :]
    assert "NotImplementedError" not in logged and "Uncaught exception" not in logged

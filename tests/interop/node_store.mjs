// A tiny stand-in for the reference TypeScript agent's store, used by
// tests/test_store_interop.py. It handles `.memory/` with the same npm packages the
// reference agent uses, in the same way: `yaml` (v2, default options: YAML 1.2 core
// schema, 80-column folding) for frontmatter and `proper-lockfile` (v4) for the lock.
//
//   node node_store.mjs write DIR NAME TYPE DESCRIPTION BODY...   add one record
//   node node_store.mjs write-batch DIR      add records read as a JSON array on stdin
//   node node_store.mjs read DIR             print the set as JSON, or exit 1 with the error
//   node node_store.mjs reindex DIR          rewrite manifest.json and MEMORY.md from the set
//   node node_store.mjs hold-lock DIR SECS   print "locked", hold until SECS pass or a line
//                                            (or EOF) arrives on stdin, release, "released"
//   node node_store.mjs try-lock DIR         one attempt: print "locked" (and release) or "busy"
//
// DIR is the `.memory` directory itself.

import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import process from "node:process";
import lockfile from "proper-lockfile";
import YAML from "yaml";

const TYPES = new Set(["user", "feedback", "project", "reference"]);
const KEYS = ["description", "name", "type"];

function fail(message) {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

// --- the lock --------------------------------------------------------------------------

function lockOptions(dir) {
  return {
    lockfilePath: path.join(dir, ".lock"),
    realpath: true,
    stale: 30000,
    update: 10000,
    retries: 0,
    onCompromised: (err) => {
      process.stderr.write(`lock compromised: ${err.message}\n`);
      process.exit(2);
    },
  };
}

async function withLock(dir, fn) {
  fs.mkdirSync(dir, { recursive: true }); // realpath: true needs the directory to exist
  const release = await lockfile.lock(dir, lockOptions(dir));
  try {
    return await fn();
  } finally {
    await release();
  }
}

// --- reading ---------------------------------------------------------------------------

function readManifest(dir) {
  const file = path.join(dir, "manifest.json");
  if (!fs.existsSync(file)) return [];
  const data = JSON.parse(fs.readFileSync(file, "utf8"));
  const keys = Object.keys(data ?? {}).sort().join(",");
  if (keys !== "files,version" || data.version !== 1 || !Array.isArray(data.files)) {
    throw new Error(`${file}: not a version 1 manifest`);
  }
  for (const f of data.files) {
    if (typeof f !== "string") throw new Error(`${file}: a file name is not a string`);
  }
  return data.files;
}

function parseRecord(file, text) {
  if (!text.startsWith("---\n")) throw new Error(`${file}: no frontmatter`);
  const end = text.indexOf("\n---\n", 3);
  if (end < 0) throw new Error(`${file}: frontmatter not closed`);
  const meta = YAML.parse(text.slice(4, end));
  if (meta === null || typeof meta !== "object" || Array.isArray(meta)) {
    throw new Error(`${file}: frontmatter is not a mapping`);
  }
  const keys = Object.keys(meta).sort();
  if (keys.join(",") !== KEYS.join(",")) {
    throw new Error(`${file}: frontmatter keys are ${JSON.stringify(keys)}`);
  }
  for (const key of KEYS) {
    if (typeof meta[key] !== "string") {
      throw new Error(`${file}: ${key} is not a string (${JSON.stringify(meta[key])})`);
    }
  }
  if (!TYPES.has(meta.type)) throw new Error(`${file}: unknown type ${meta.type}`);
  // Body as SPEC §1 defines it: CRLF/CR to LF, outer newlines stripped.
  const body = text
    .slice(end + 5)
    .replace(/\r\n?/g, "\n")
    .replace(/^\n+|\n+$/g, "");
  // The reference agent's own text checks: one blank text refuses the whole set.
  if (/[\r\n]/.test(meta.description)) throw new Error(`${file}: description is not one line`);
  if (!meta.description.trim()) throw new Error(`${file}: description is empty`);
  if (!body.trim()) throw new Error(`${file}: body is empty`);
  return { name: meta.name, type: meta.type, description: meta.description, body };
}

function readSet(dir) {
  return readManifest(dir).map((file) => {
    const text = fs.readFileSync(path.join(dir, file), "utf8");
    return { file, ...parseRecord(file, text) };
  });
}

// --- writing ---------------------------------------------------------------------------

function renderRecord({ name, description, type, body }) {
  const front = YAML.stringify({ name, description, type }).trimEnd();
  return `---\n${front}\n---\n\n${body}\n`;
}

function replaceFile(dir, name, data) {
  const temp = path.join(dir, `.${name}.${randomUUID().replaceAll("-", "")}.tmp`);
  fs.writeFileSync(temp, data, { flag: "wx" });
  fs.renameSync(temp, path.join(dir, name));
}

function writeIndexAndManifest(dir, entries) {
  const index = entries.map((e) => `- [${e.name}](${e.file}) - ${e.description}\n`).join("");
  replaceFile(dir, "MEMORY.md", index);
  replaceFile(dir, "manifest.json", JSON.stringify({ version: 1, files: entries.map((e) => e.file) }));
}

async function addRecords(dir, records) {
  await withLock(dir, async () => {
    const entries = readSet(dir);
    for (const record of records) {
      const file = `${record.name}-${randomUUID().replaceAll("-", "")}.md`;
      fs.writeFileSync(path.join(dir, file), renderRecord(record), { flag: "wx" });
      entries.push({ file, ...record });
    }
    writeIndexAndManifest(dir, entries);
  });
}

// Not fs.readFileSync(0): on a pipe that can fail with EAGAIN before the writer is done.
async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

// --- commands --------------------------------------------------------------------------

async function holdLock(dir, seconds) {
  await withLock(dir, async () => {
    process.stdout.write("locked\n");
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, seconds * 1000);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      process.stdin.once("data", done);
      process.stdin.once("end", done);
    });
    process.stdin.pause();
  });
  process.stdout.write("released\n");
}

async function tryLock(dir) {
  try {
    await withLock(dir, async () => process.stdout.write("locked\n"));
  } catch (err) {
    if (err.code !== "ELOCKED") throw err;
    process.stdout.write("busy\n");
  }
}

async function main(argv) {
  const [command, dir, ...rest] = argv;
  if (!dir) fail("usage: node_store.mjs COMMAND DIR ...");
  switch (command) {
    case "write": {
      const [name, type, description, ...body] = rest;
      if (body.length === 0) fail("usage: write DIR NAME TYPE DESCRIPTION BODY...");
      await addRecords(dir, [{ name, type, description, body: body.join(" ") }]);
      break;
    }
    case "write-batch":
      await addRecords(dir, JSON.parse(await readStdin()));
      break;
    case "read":
      process.stdout.write(`${JSON.stringify(readSet(dir))}\n`);
      break;
    case "reindex":
      await withLock(dir, async () => writeIndexAndManifest(dir, readSet(dir)));
      break;
    case "hold-lock":
      await holdLock(dir, Number(rest[0] ?? "30"));
      break;
    case "try-lock":
      await tryLock(dir);
      break;
    default:
      fail(`unknown command ${command}`);
  }
}

main(process.argv.slice(2)).catch((err) => fail(`${err?.code ?? "error"}: ${err?.stack ?? err}`));

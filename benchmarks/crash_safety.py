"""Crash safety and concurrency (issue 14): kill -9 at random points, readers during rebuilds, hooks at once.

Run from the repo root:
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/crash_safety.py [--files 2000] [--kills 12] [--full-kills 8]
        [--readers 4] [--hook-rounds 3] [--seed 14] [--no-embed] [--only-hooks [--hooks-tree OTHER_CHECKOUT]]

On a deterministic subset of the tldr-pages corpus (../shared/corpora, read at run time, never copied):
1. Incremental kills: each round edits, adds, deletes and renames files, starts `vaultrag reindex`
   in a child process and SIGKILLs it at a random moment of its expected run time. The index must
   pass `PRAGMA integrity_check` and FTS5 'integrity-check' right after the kill, and after one
   more (uninterrupted) reindex equal a from-scratch build of the same vault: every file's chunks,
   headings, line ranges, hashes, links, keys, and vectors.
2. Full-rebuild kills: the same with `reindex --full`. The live index must be the old one, intact,
   while leftover `.rebuild-PID` files exist; the next run must remove them and converge.
3. Readers during full rebuilds: N processes run search() in a loop (a fresh open per search, as a
   hook does) while the index is rebuilt with --full; every exception is counted.
4. Hooks at once on one session: 20 UserPromptSubmit hooks with different prompts, then 10 with one
   prompt, all started together; counts keys lost (injected but not remembered) and repeat
   injections. Hooks run with a 10 s deadline here so a loaded machine measures races, not timeouts.
Prints one JSON summary on stdout (progress on stderr). Bounded: every loop has a fixed count.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpora" / "tldr-pages.tar.gz"
PY = str(REPO / ".venv" / "bin" / "python")
if not Path(PY).exists():
    PY = sys.executable
sys.path.insert(0, str(REPO))

QUERIES = ["list files sorted by size", "compress a directory into a tar archive", "which process listens on a port",
           "undo the last git commit", "convert a video to a gif", "show disk usage of a folder",
           "download a file and resume it", "search text recursively ignoring case", "change file permissions",
           "create a new user account", "copy files over ssh", "show the network interfaces",
           "kill a process by name", "list docker containers", "print the current date", "count lines in a file",
           "extract a zip archive", "follow the end of a log file", "make a symbolic link", "show the calendar",
           "replace text in a file with sed", "sort lines of a file", "schedule a cron job", "mount a disk image"]

READER = r"""
import json, sys, time
from pathlib import Path
from vaultrag.config import load_config
from vaultrag.retrieve import search
cfg = load_config(vault=sys.argv[1], db=sys.argv[2])
stop = Path(sys.argv[3]); queries = json.loads(sys.argv[4])
n = errors = 0; kinds = {}
while not stop.exists():
    try:
        search(queries[n % len(queries)], cfg)
    except Exception as exc:
        errors += 1; kinds[type(exc).__name__] = kinds.get(type(exc).__name__, 0) + 1
    n += 1
print(json.dumps({"searches": n, "errors": errors, "kinds": kinds}))
"""


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def build_vault(dest: Path, n: int, seed: int) -> None:
    with tarfile.open(CORPUS) as tf:  # one pass: random access into a .tar.gz re-reads it from the start
        members = sorted((m for m in tf.getmembers() if m.isfile() and m.name.endswith(".md")), key=lambda m: m.name)
        chosen = {m.name for m in random.Random(seed).sample(members, min(n, len(members)))}
    with tarfile.open(CORPUS) as tf:
        for m in tf:
            if m.name in chosen:
                m.name = m.name.replace("pages/", "", 1)
                tf.extract(m, dest, filter="data")


def mutate(vault: Path, rng: random.Random, n: int) -> dict:
    files = sorted(vault.rglob("*.md"))
    counts = {"edited": 0, "added": 0, "deleted": 0, "renamed": 0}
    for p in rng.sample(files, min(n, len(files))):
        action = rng.choice(["edit", "edit", "edit", "add", "delete", "rename"])
        if action == "edit":
            p.write_text(p.read_text(encoding="utf-8") + f"\n- Note {rng.randrange(10**6)}: `{p.stem} --verbose`\n",
                         encoding="utf-8")
            counts["edited"] += 1
        elif action == "add":
            q = p.with_name(f"{p.stem}-copy{rng.randrange(10**6)}.md")
            q.write_text(p.read_text(encoding="utf-8").replace("# ", "# copy of ", 1), encoding="utf-8")
            counts["added"] += 1
        elif action == "delete":
            p.unlink()
            counts["deleted"] += 1
        else:
            p.rename(p.with_name(f"{p.stem}-moved.md"))
            counts["renamed"] += 1
    return counts


def run_reindex(vault: Path, db: Path, env: dict, full: bool, embed: bool, kill_after: float | None = None):
    """(return code, seconds, killed?) of `vaultrag reindex` in a child, SIGKILLed after kill_after s."""
    cmd = [PY, "-m", "vaultrag", "reindex", "--vault", str(vault), "--db", str(db), "--json"]
    cmd += ["--full"] if full else []
    cmd += [] if embed else ["--no-embed"]
    t = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=str(REPO))
    killed = False
    if kill_after is not None:
        try:
            p.wait(timeout=kill_after)
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGKILL)
            killed = True
    err = p.communicate()[1]
    if not killed and p.returncode != 0:
        raise SystemExit(f"reindex failed ({p.returncode}): {err.decode()[-2000:]}")
    return p.returncode, time.perf_counter() - t, killed


def integrity(db: Path) -> list[str]:
    from vaultrag.store.connection import connect, load_vec

    conn = connect(db, readonly=True)
    load_vec(conn)
    problems = [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall() if r[0] != "ok"]
    conn.close()
    w = sqlite3.connect(db)  # FTS5's own check needs a write statement (it changes nothing)
    try:
        w.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")
    except sqlite3.Error as exc:
        problems.append(f"fts5: {exc}")
    w.close()
    return problems


def fingerprint(db: Path) -> dict:
    """Everything a search can see, keyed by note path (a redacted path's random tag aside)."""
    from vaultrag.paths import shown_part
    from vaultrag.store.connection import connect, load_vec

    from vaultrag.store.sqlite.store import SqliteStore

    text_of = SqliteStore(db, readonly=True, with_vec=False)  # chunk text as stored: deflated, with a dictionary
    conn = connect(db, readonly=True)
    has_vec = load_vec(conn) is None and conn.execute(
        "SELECT 1 FROM sqlite_master WHERE name = 'chunks_vec'").fetchone() is not None
    files = {}
    for fid, path, h, title in conn.execute("SELECT id, path, hash, title FROM files"):
        chunks = conn.execute("SELECT id, section_index, chunk_index, heading_path, text, line_start, line_end, "
                              "content_hash FROM chunks WHERE file_id = ? ORDER BY section_index, chunk_index",
                              (fid,)).fetchall()
        vecs = []
        if has_vec:
            for cid, *_ in chunks:
                row = conn.execute("SELECT embedding FROM chunks_vec WHERE rowid = ?", (cid,)).fetchone()
                vecs.append(row[0] if row else None)
        links = sorted(conn.execute("SELECT target_key, kind, line FROM links WHERE file_id = ?", (fid,)).fetchall())
        keys = sorted(conn.execute("SELECT key, kinds, chunk_id != 0 FROM keys WHERE file_id = ?", (fid,)).fetchall())
        files[shown_part(path)] = (h, title, [c[1:4] + (text_of.unpack(c[4]),) + c[5:] for c in chunks], vecs, links, keys)
    fts_hits = {}
    for q in ("tar", "git commit", "process port", "file"):
        rows = conn.execute("SELECT f.path, c.section_index, c.chunk_index FROM chunks_fts JOIN chunks c ON "
                            "c.id = chunks_fts.rowid JOIN files f ON f.id = c.file_id WHERE chunks_fts MATCH ?",
                            (q,)).fetchall()
        fts_hits[q] = sorted((shown_part(p), s, c) for p, s, c in rows)
    conn.close()
    text_of.close()
    return {"files": files, "fts": fts_hits}


def _has(conn, table: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone() is not None


def diff(a: dict, b: dict) -> str | None:
    if a == b:
        return None
    fa, fb = a["files"], b["files"]
    if set(fa) != set(fb):
        return f"paths differ: {sorted(set(fa) ^ set(fb))[:3]}"
    names = ("hash", "title", "chunks", "vectors", "links", "keys")
    for p in fa:
        if fa[p] != fb[p]:
            return f"{p}: {[n for n, x, y in zip(names, fa[p], fb[p]) if x != y]} differ"
    return "fts results differ"


def leftovers(db: Path) -> list[Path]:
    return sorted(db.parent.glob(db.name + ".rebuild-*"))


def incremental_kills(vault, db, env, args, rng, embed) -> dict:
    res = {"kills": 0, "finished_before_kill": 0, "integrity_failures": 0, "converged": 0, "not_converged": [],
           "kill_at_s": []}
    for i in range(args.kills):
        mutate(vault, rng, args.mutations)
        # a dry run on a copy tells how long this round's reindex takes; kill somewhere inside it
        probe = db.with_name("probe.sqlite")
        for p in db.parent.glob("probe.sqlite*"):
            p.unlink()
        shutil.copy(db, probe)
        _, took, _ = run_reindex(vault, probe, env, full=False, embed=embed)
        for p in db.parent.glob("probe.sqlite*"):
            p.unlink()
        at = rng.uniform(0.2, max(0.3, took))
        _, _, killed = run_reindex(vault, db, env, full=False, embed=embed, kill_after=at)
        res["kills"] += killed
        res["finished_before_kill"] += not killed
        res["kill_at_s"].append(round(at, 2))
        problems = integrity(db)
        res["integrity_failures"] += bool(problems)
        run_reindex(vault, db, env, full=False, embed=embed)
        verdict = converge(vault, db, env, embed)
        res["converged"] += verdict is None
        if verdict:
            res["not_converged"].append(verdict)
        log(f"incremental {i + 1}/{args.kills}: killed={killed} at {at:.2f}/{took:.2f} s, integrity "
            f"{'ok' if not problems else problems[:2]}, converged={verdict is None}")
    return res


def converge(vault, db, env, embed) -> str | None:
    scratch = db.with_name("scratch.sqlite")
    for p in db.parent.glob("scratch.sqlite*"):
        p.unlink()
    run_reindex(vault, scratch, env, full=True, embed=embed)
    verdict = diff(fingerprint(db), fingerprint(scratch))
    for p in db.parent.glob("scratch.sqlite*"):
        p.unlink()
    return verdict


def full_kills(vault, db, env, args, rng, embed) -> dict:
    res = {"kills": 0, "finished_before_kill": 0, "live_index_intact": 0, "leftover_files_after_kill": 0,
           "leftovers_removed_by_next_run": 0, "integrity_failures": 0, "converged": 0, "not_converged": []}
    _, took, _ = run_reindex(vault, db, env, full=True, embed=embed)
    for i in range(args.full_kills):
        mutate(vault, rng, args.mutations // 2)
        before = fingerprint(db)
        at = rng.uniform(0.2, took)
        _, _, killed = run_reindex(vault, db, env, full=True, embed=embed, kill_after=at)
        res["kills"] += killed
        res["finished_before_kill"] += not killed
        problems = integrity(db)
        res["integrity_failures"] += bool(problems)
        left = leftovers(db)
        if killed:
            res["leftover_files_after_kill"] += len(left)
            res["live_index_intact"] += fingerprint(db) == before or not left  # not swapped yet: the old one
        run_reindex(vault, db, env, full=False, embed=embed)
        res["leftovers_removed_by_next_run"] += bool(left) and not leftovers(db)
        verdict = converge(vault, db, env, embed)
        res["converged"] += verdict is None
        if verdict:
            res["not_converged"].append(verdict)
        log(f"full {i + 1}/{args.full_kills}: killed={killed} at {at:.2f}/{took:.2f} s, leftovers {len(left)} -> "
            f"{len(leftovers(db))}, integrity {'ok' if not problems else problems[:2]}, converged={verdict is None}")
    return res


def readers_during_rebuild(vault, db, env, args, embed) -> dict:
    stop = db.with_name("stop-readers")
    stop.unlink(missing_ok=True)
    procs = [subprocess.Popen([PY, "-c", READER, str(vault), str(db), str(stop), json.dumps(QUERIES)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(REPO)) for _ in range(args.readers)]
    t = time.perf_counter()
    for _ in range(2):
        run_reindex(vault, db, env, full=True, embed=embed)
    stop.touch()
    out = {"readers": args.readers, "rebuilds": 2, "seconds": round(time.perf_counter() - t, 1), "searches": 0,
           "errors": 0, "error_kinds": {}}
    for p in procs:
        o, e = p.communicate(timeout=120)
        r = json.loads(o.decode().strip().splitlines()[-1]) if o.strip() else {"searches": 0, "errors": 1,
                                                                              "kinds": {"crashed": 1}}
        out["searches"] += r["searches"]
        out["errors"] += r["errors"]
        for k, v in r["kinds"].items():
            out["error_kinds"][k] = out["error_kinds"].get(k, 0) + v
    stop.unlink()
    return out


def remembered(state: Path, session: str) -> int:
    """Keys the session memory holds: this tree's SQLite state, or an older tree's JSON file."""
    import hashlib

    legacy = state / "sessions" / (hashlib.sha256(session.encode()).hexdigest()[:24] + ".json")
    if legacy.exists():
        return len(json.loads(legacy.read_text()))
    from vaultrag.session_memory import seen_count

    return seen_count(state, session)


def hooks_at_once(vault, db, env, args) -> dict:
    import sysconfig

    tree = Path(args.hooks_tree).resolve() if args.hooks_tree else REPO
    hook = str(tree / "hooks" / "user_prompt_submit.py")
    henv = dict(env, VAULTRAG_VAULT=str(vault), VAULTRAG_DB=str(db), VAULTRAG_HOOK_TIMEOUT_MS="10000")
    # -S + PYTHONPATH: the editable install's finder would otherwise always import this tree
    henv["PYTHONPATH"] = f"{tree}{os.pathsep}{sysconfig.get_paths()['purelib']}"
    state = Path(henv["XDG_STATE_HOME"]) / "vaultrag"
    res = {"rounds": args.hook_rounds, "distinct": {"hooks": 20, "keys_injected": [], "keys_lost": []},
           "same_prompt": {"hooks": 10, "times_injected": []}, "exit_nonzero": 0}

    def burst(payloads):
        procs = [subprocess.Popen([PY, "-S", hook], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=henv) for _ in payloads]
        for p, pl in zip(procs, payloads):  # write all stdins first: they start together
            p.stdin.write(json.dumps(pl).encode())
            p.stdin.close()
        outs = []
        for p in procs:
            outs.append(p.stdout.read().decode())
            p.wait()
            res["exit_nonzero"] += p.returncode != 0
        return outs

    for r in range(args.hook_rounds):
        sid = f"bench-{r}-{random.random()}"
        outs = burst([{"session_id": sid, "transcript_path": "", "cwd": "/", "hook_event_name": "UserPromptSubmit",
                       "prompt": q} for q in QUERIES[:20]])
        keys = set()
        for o in outs:
            if o.strip():
                ctx = json.loads(o)["hookSpecificOutput"]["additionalContext"]
                keys |= set(re.findall(r"Source: (.+?):L(\d+)-L\d+", ctx))
        stored = remembered(state, sid)
        res["distinct"]["keys_injected"].append(len(keys))
        res["distinct"]["keys_lost"].append(len(keys) - stored)
        sid2 = sid + "-same"
        outs = burst([{"session_id": sid2, "transcript_path": "", "cwd": "/", "hook_event_name": "UserPromptSubmit",
                       "prompt": QUERIES[1]}] * 10)
        res["same_prompt"]["times_injected"].append(sum(bool(o.strip()) for o in outs))
        log(f"hooks round {r + 1}: {len(keys)} keys injected, {len(keys) - stored} lost; same prompt injected "
            f"{res['same_prompt']['times_injected'][-1]}x of 10")
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--mutations", type=int, default=300, help="files changed before each incremental kill")
    ap.add_argument("--kills", type=int, default=12)
    ap.add_argument("--full-kills", type=int, default=8)
    ap.add_argument("--readers", type=int, default=4)
    ap.add_argument("--hook-rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--no-embed", action="store_true", help="lexical index only (faster; vectors not checked)")
    ap.add_argument("--only-hooks", action="store_true", help="skip the kills and readers (part 4 only)")
    ap.add_argument("--hooks-tree", help="run part 4 with the hook scripts of another checkout (before/after)")
    args = ap.parse_args()
    if not CORPUS.exists():
        log(f"corpus {CORPUS} not found: nothing to benchmark")
        return 0
    rng = random.Random(args.seed)
    embed = not args.no_embed
    out: dict = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "cpus": os.cpu_count(), "files": args.files,
                 "mutations_per_round": args.mutations, "embed": embed, "seed": args.seed}
    with tempfile.TemporaryDirectory(prefix="crash-bench-") as tmp:
        tmp = Path(tmp)
        vault, db = tmp / "vault", tmp / "db" / "index.sqlite"
        vault.mkdir()
        db.parent.mkdir()
        env = dict(os.environ, HF_HUB_OFFLINE="1", VAULTRAG_MODEL="bundled", HOME=str(tmp),
                   XDG_STATE_HOME=str(tmp / "state"), XDG_CONFIG_HOME=str(tmp / "config"),
                   XDG_CACHE_HOME=str(tmp / "cache"), XDG_DATA_HOME=str(tmp / "data"))
        build_vault(vault, args.files, args.seed)
        _, took, _ = run_reindex(vault, db, env, full=True, embed=embed)
        out["first_full_s"] = round(took, 2)
        log(f"built {args.files} files in {took:.1f} s")
        if not args.only_hooks:
            out["incremental_kills"] = incremental_kills(vault, db, env, args, rng, embed)
            out["full_kills"] = full_kills(vault, db, env, args, rng, embed)
            out["readers_during_full_rebuild"] = readers_during_rebuild(vault, db, env, args, embed)
        out["hooks_at_once"] = hooks_at_once(vault, db, env, args)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Cold paths (issue 18) and the forwarded hook (issue 16), this tree against another revision, in one run.

    .venv/bin/python benchmarks/scale_corpus.py /tmp/tldr            # the tldr vault (once)
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/cold_bench.py --vault /tmp/tldr --db /tmp/tldr.sqlite \\
        [--against main [--against-db FILE]] [--against REV2 --against-db FILE2] [--rounds 30] \\
        [--rows floor,hook,search_cli,warm]

The index at --db is built with this tree when missing (and read by both trees: pass --against-db
for a revision whose schema differs). --against REV is exported with `git archive` into a temporary
folder and run with a throwaway venv whose only site path is this venv's site-packages (so the
same dependencies, and `vaultrag` resolves to that tree, not to this editable install).

Rows, round robin (a shuffled order per round), every fresh process timed around `subprocess.run`
(wall) and by its own CPU time (`wait4`: less sensitive to a loaded machine):
- floor: `python -I -c pass`, what no command hook can beat;
- hook: exactly the command settings.snippet.json registers (`python -I hooks/user_prompt_submit.py`)
  with a real UserPromptSubmit JSON on stdin and a new session id per call (so each one searches),
  no server running;
- search_cli: `vaultrag search "q" --json` (the console script);
- forwarded: the same hook command while `vaultrag serve --socket` of that tree runs;
- warm: `search(q, cfg, store=store)` in a resident process of that tree (index open, --warm-queries
  warm-up queries first: 1, or past store/sqlite/resident.py's RESIDENT_AFTER for a process that has
  run a while); its CPU is the worker process's (`time.process_time`: BLAS helper threads included).
Prints one JSON object: per tree and row p50/p95 (wall), CPU p50, outputs seen; and the ratios
this/against of the p50s. Progress on stderr.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import pct  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
VENV_PY = REPO / ".venv" / "bin" / "python"
PY = str(VENV_PY if VENV_PY.exists() else sys.executable)
PROMPTS = ["how do I list files sorted by size", "compress a directory into a tar archive",
           "find which process is listening on a port", "undo the last git commit but keep changes",
           "convert a video to a gif", "show disk usage of a folder", "download a file over http and resume it",
           "search text recursively in files ignoring case", "create a symbolic link", "show the git log as a graph"]
ROWS = ("floor", "hook", "search_cli", "forwarded", "warm")
FAILURES: list[int] = []  # non-zero exit codes of fresh processes (all rows, both trees)
SERVE_START_S = 600  # a loaded 2-core machine took minutes to import the server's dependencies

# A resident process of one tree: reads a query per line, answers with the search's wall time in ms.
WARM_WORKER = r"""
import json, sys, time
from vaultrag.config import load_config
from vaultrag.retrieve.pipeline import search
from vaultrag.store import open_store
cfg = load_config()
store = open_store(cfg, readonly=True)
for i in range(int(sys.argv[1])):
    search(f"warm up the page cache and the encoder {i}", cfg, store=store)
print("ready", flush=True)
for line in sys.stdin:
    q = json.loads(line)
    t, c = time.perf_counter(), time.process_time()
    ans = search(q, cfg, store=store)
    print(json.dumps([(time.perf_counter() - t) * 1000, ans.status, (time.process_time() - c) * 1000]), flush=True)
"""
CONSOLE_SCRIPT = "import sys\nfrom vaultrag.cli import main\nif __name__ == '__main__':\n    sys.exit(main())\n"


def run_child(cmd: list[str], env: dict, stdin: bytes | None = None) -> tuple[float, float, bytes]:
    """(wall ms, CPU ms of the child, stdout) of one fresh process: forked and reaped here, so `wait4`
    gives that child's own CPU time."""
    t = time.perf_counter()
    r, w = os.pipe()
    ri, wi = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: stdin from ri, stdout to w, stderr to /dev/null
        try:
            os.dup2(ri, 0)
            os.dup2(w, 1)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)
            for fd in (r, w, ri, wi, devnull):
                os.close(fd)
            os.execve(cmd[0], cmd, env)
        finally:
            os._exit(127)
    os.close(w)
    os.close(ri)
    if stdin:
        os.write(wi, stdin)  # payloads here are small (< pipe buffer)
    os.close(wi)
    chunks = []
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    _, status, ru = os.wait4(pid, 0)
    wall = (time.perf_counter() - t) * 1000
    code = os.waitstatus_to_exitcode(status)
    if code != 0:  # counted, not fatal: a hook killed by a signal is a finding (e.g. -14, SIGALRM)
        print(f"{' '.join(cmd[:3])}: exit {code}", file=sys.stderr, flush=True)
        FAILURES.append(code)
    return wall, (ru.ru_utime + ru.ru_stime) * 1000, b"".join(chunks)


def export_tree(rev: str, dest: Path) -> Path:
    """`git archive REV` into dest/tree, and a venv at dest/venv whose site path is this venv's site-packages."""
    tree = dest / "tree"
    tree.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def shim_venv(tree: Path, dest: Path) -> Path:
    """A venv (no pip) that starts up like this one and finds `vaultrag` in `tree`: this venv's .pth
    files are copied, its editable-install finder rewritten to point at `tree`, and a path line
    adds this venv's site-packages (a path line's folder gets no .pth processing, so this tree's
    own finder stays out). Same dependencies, same interpreter start-up work."""
    venv = dest / "venv"
    subprocess.run([PY, "-m", "venv", "--without-pip", str(venv)], check=True)
    site_here = Path(subprocess.run([PY, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                    capture_output=True, text=True, check=True).stdout.strip())
    site_there = Path(subprocess.run([str(venv / "bin" / "python"), "-c",
                                      "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                     capture_output=True, text=True, check=True).stdout.strip())
    for f in site_here.glob("*.pth"):
        shutil.copy(f, site_there / f.name)
    for f in site_here.glob("__editable__*finder.py"):
        text = f.read_text()
        installed = installed_root(text) or REPO  # the checkout the shared venv's editable install maps
        (site_there / f.name).write_text(text.replace(str(installed / "vaultrag"), str(tree / "vaultrag"))
                                         .replace(str(installed), str(tree)))
    (site_there / "00_vaultrag_bench_deps.pth").write_text(f"{site_here}\n")
    script = venv / "bin" / "vaultrag"
    script.write_text(f"#!{venv / 'bin' / 'python'}\n{CONSOLE_SCRIPT}")
    script.chmod(0o755)
    return venv


def installed_root(finder_text: str) -> Path | None:
    """The checkout an editable finder maps `vaultrag` to (its MAPPING line), or None."""
    m = re.search(r"MAPPING[^=]*=\s*\{'vaultrag':\s*'([^']+)'", finder_text)
    return Path(m.group(1)).parent if m else None


def this_venv(tmp: Path) -> Path:
    """This venv when its editable install maps `vaultrag` to this checkout; else (a venv shared by
    several worktrees, installed from another) a shim venv that does."""
    probe = subprocess.run([PY, "-I", "-c", "import vaultrag; print(vaultrag.__file__)"], capture_output=True, text=True)
    if Path(probe.stdout.strip()).resolve().parent == (REPO / "vaultrag").resolve():
        return REPO / ".venv"
    print(f"this venv imports {probe.stdout.strip()}: timing this tree through a shim venv", file=sys.stderr)
    return shim_venv(REPO, tmp / "this")


class Tree:
    def __init__(self, name: str, root: Path, venv: Path, db: Path, tmp: Path, env: dict):
        self.name, self.root, self.db = name, root, db
        self.py = str(venv / "bin" / "python")
        self.cli = str(venv / "bin" / "vaultrag")
        self.sock = tmp / f"{name}.sock"
        self.env = {**env, "VAULTRAG_DB": str(db)}
        self.server = self.worker = None
        self.warm_queries = 1

    def start(self, vault: Path, port: int, *, server: bool = True, worker: bool = True) -> None:
        if worker:
            self.worker = subprocess.Popen([self.py, "-I", "-c", WARM_WORKER, str(self.warm_queries)], env=self.env, stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            if self.worker.stdout.readline().strip() != "ready":
                raise SystemExit(f"{self.name}: the warm worker did not start")
        if not server:
            return
        self.server = subprocess.Popen([self.py, "-m", "vaultrag", "serve", "--vault", str(vault), "--store",
                                        str(self.db), "--port", str(port), "--socket", str(self.sock)],
                                       env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sys.path.insert(0, str(REPO))
        from vaultrag.serve_client import request

        deadline = time.monotonic() + SERVE_START_S
        while time.monotonic() < deadline:
            try:
                if self.sock.exists() and request(str(self.sock), "GET", "/healthz", timeout=5)[0] == 200:
                    return
            except OSError:
                pass
            if self.server.poll() is not None:
                raise SystemExit(f"{self.name}: vaultrag serve exited {self.server.returncode}")
            time.sleep(0.5)
        raise SystemExit(f"{self.name}: vaultrag serve did not answer within {SERVE_START_S} s")

    def stop(self) -> None:
        for proc in (self.server, self.worker):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    proc.kill()

    def measure(self, row: str, prompt: str) -> tuple[float, float, bool]:
        """(wall ms, CPU ms or nan, answered with output) for one call of `row`."""
        if row == "warm":
            self.worker.stdin.write(json.dumps(prompt) + "\n")
            self.worker.stdin.flush()
            ms, status, cpu = json.loads(self.worker.stdout.readline())
            return ms, cpu, status == "ok"
        if row == "floor":
            wall, cpu, _ = run_child([self.py, "-I", "-c", "pass"], self.env)
            return wall, cpu, True
        if row == "search_cli":
            wall, cpu, out = run_child([self.cli, "search", prompt, "--json"], self.env)
            try:
                return wall, cpu, json.loads(out).get("status") == "ok"
            except ValueError:
                return wall, cpu, False
        payload = json.dumps({"session_id": f"cold-{uuid.uuid4()}", "transcript_path": "", "cwd": str(self.root),
                              "hook_event_name": "UserPromptSubmit", "permission_mode": "default",
                              "prompt": prompt}).encode()
        sock = str(self.sock) if row == "forwarded" else str(self.sock) + ".absent"
        wall, cpu, out = run_child([self.py, "-I", str(self.root / "hooks" / "user_prompt_submit.py")],
                                   {**self.env, "VAULTRAG_SOCKET": sock}, payload)
        return wall, cpu, bool(out.strip())


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vault", required=True, type=Path)
    ap.add_argument("--db", required=True, type=Path, help="index of --vault (built with this tree when missing)")
    ap.add_argument("--against", action="append", default=[],
                    help="a git revision to compare with (e.g. main); repeat for several (against, against2, ...)")
    ap.add_argument("--against-db", type=Path, action="append", default=[],
                    help="an index built by the matching --against's tree (in the same order; default: --db)")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--rows", default=",".join(ROWS),
                    help="comma-separated subset of " + ",".join(ROWS) + " (without `forwarded` no server is started)")
    ap.add_argument("--hook-timeout-ms", type=int, default=60_000, help="VAULTRAG_HOOK_TIMEOUT_MS of the fresh hooks")
    ap.add_argument("--warm-queries", type=int, default=1,
                    help="queries the warm worker asks before it is timed (past RESIDENT_AFTER: a process that has run a while)")
    ap.add_argument("--prompts", type=Path, help="a UTF-8 file of prompts, one a line (default: the English PROMPTS)")
    args = ap.parse_args()
    rows = tuple(r for r in ROWS if r in args.rows.split(","))
    if "floor" not in rows or set(args.rows.split(",")) - set(ROWS):
        ap.error(f"--rows: a subset of {','.join(ROWS)} that includes floor")
    prompts = [ln.strip() for ln in args.prompts.read_text(encoding="utf-8").splitlines() if ln.strip()] \
        if args.prompts else PROMPTS
    tmp = Path(tempfile.mkdtemp(prefix="cold-bench-"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VAULTRAG_CONFIG", "VAULTRAG_SOCKET")}
    env.update(HF_HUB_OFFLINE="1", VAULTRAG_MODEL="bundled", HOME=str(tmp / "home"),
               XDG_STATE_HOME=str(tmp / "state"), XDG_CONFIG_HOME=str(tmp / "config"),
               XDG_CACHE_HOME=str(tmp / "cache"), XDG_DATA_HOME=str(tmp / "data"),
               VAULTRAG_VAULT=str(args.vault.resolve()),
               # A loaded machine pushes a fresh hook past its 1.5 s deadline, where it gives up (fails
               # open, no output) and stops early: measured then is the deadline, not the work.
               VAULTRAG_HOOK_TIMEOUT_MS=str(args.hook_timeout_ms))
    (tmp / "home").mkdir()
    db = args.db.resolve()
    if not db.exists():
        print("building the index...", file=sys.stderr, flush=True)
        subprocess.run([PY, "-m", "vaultrag", "reindex", "--vault", str(args.vault), "--db", str(db)], env=env,
                       check=True, cwd=str(REPO), stdout=subprocess.DEVNULL)
    trees = [Tree("this", REPO, this_venv(tmp), db, tmp, env)]
    for i, rev in enumerate(args.against):
        name = "against" if i == 0 else f"against{i + 1}"
        other = export_tree(rev, tmp / name)
        other_db = args.against_db[i] if i < len(args.against_db) else args.db
        trees.append(Tree(name, other, shim_venv(other, tmp / name), other_db.resolve(), tmp, env))
    out: dict = {"vault": str(args.vault), "db": str(db), "rounds": args.rounds, "cpus": os.cpu_count(),
                 "this": subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                                        text=True).stdout.strip() + ("+dirty" if subprocess.run(
                     ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                     text=True).stdout.strip() else ""),
                 "against": args.against[0] if len(args.against) == 1 else args.against or None,
                 "load_before": os.getloadavg()}
    for t in trees:  # which checkout each tree's interpreter really runs
        out[f"{t.name}_imports"] = subprocess.run([t.py, "-I", "-c", "import vaultrag; print(vaultrag.__file__)"],
                                                  capture_output=True, text=True).stdout.strip()
    times = {(t.name, r): ([], [], 0) for t in trees for r in rows}
    try:
        for t in trees:
            print(f"starting {t.name}'s server and warm worker...", file=sys.stderr, flush=True)
            t.warm_queries = args.warm_queries
            t.start(args.vault, free_port(), server="forwarded" in rows, worker="warm" in rows)
        rng = random.Random(args.seed)
        jobs = [(t, r) for t in trees for r in rows]
        for i in range(args.rounds):
            rng.shuffle(jobs)
            prompt = prompts[i % len(prompts)]
            for t, r in jobs:
                wall, cpu, ok = t.measure(r, prompt)
                walls, cpus, n_ok = times[(t.name, r)]
                walls.append(wall)
                cpus.append(cpu)
                times[(t.name, r)] = (walls, cpus, n_ok + ok)
            print(f"round {i + 1}/{args.rounds}", file=sys.stderr, flush=True)
    finally:
        for t in trees:
            t.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    out["load_after"] = os.getloadavg()
    out["failed_processes"] = FAILURES
    for t in trees:
        out[t.name + "_rows"] = {}
        for r in rows:
            walls, cpus, n_ok = times[(t.name, r)]
            cpus = [c for c in cpus if c == c]
            out[t.name + "_rows"][r] = {"p50_ms": pct(walls, 50), "p95_ms": pct(walls, 95), "min_ms": pct(walls, 0),
                                        "cpu_p50_ms": pct(cpus, 50) if cpus else None, "with_output": n_ok,
                                        "n": len(walls)}
    for t in trees[1:]:
        out[f"ratio_this_over_{t.name}_p50"] = {
            r: round(out["this_rows"][r]["p50_ms"] / out[t.name + "_rows"][r]["p50_ms"], 3) for r in rows}
        out[f"ratio_this_over_{t.name}_cpu_p50"] = {
            r: round(out["this_rows"][r]["cpu_p50_ms"] / out[t.name + "_rows"][r]["cpu_p50_ms"], 3)
            for r in rows if out["this_rows"][r]["cpu_p50_ms"]}
    for t in trees:  # above the floor: what vaultrag itself adds to a fresh process
        floor = out[t.name + "_rows"]["floor"]["p50_ms"]
        got = out[t.name + "_rows"]
        fresh = [r for r in ("hook", "search_cli", "forwarded") if r in got]
        out[t.name + "_over_floor_p50_ms"] = {r: round(got[r]["p50_ms"] - floor, 2) for r in fresh}
        out[t.name + "_over_floor_ratio_p50"] = {r: round(got[r]["p50_ms"] / floor, 3) for r in fresh}
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

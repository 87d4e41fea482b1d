#!/usr/bin/python3
"""A fake Weights & Biases server for sweep's export tests, standard library only.

serve:  fake_wandb.py serve --port-file F --log L --key K [--fail SPEC] [--delay S] [--sink]
        Listens on 127.0.0.1 (a free port, written to F once listening) and
        answers the part of W&B's API that `sweep export wandb` speaks:
        POST /graphql (UpsertSweep, UpsertBucket, CreateRunFiles, StopRun),
        POST /files/E/P/RUN/file_stream, and PUT of the upload URLs it
        hands out.
        Every request is appended to L as one JSON line, with the problems
        found in its shape ("problems": [...]). It checks the Basic auth
        (api:K) on API requests and its absence on uploads.
        --fail takes N:KIND,... where N is a request number (from 1) or
        "all", and KIND is 401, 403, 429 (with Retry-After: 1), 500, drop
        (the connection closed without an answer), slow (2 s late) or gql
        (200 with a GraphQL error).
        --sink (for benchmarks) reads file_stream bodies without parsing
        them and logs nothing.
        GET /_fake/state answers the server's state as JSON; POST
        /_fake/reset forgets every sweep and run (a deleted project).

report: fake_wandb.py report --log L --port-file F [--from N]
        Prints one JSON object: what the requests of L from line N on did
        (counts per operation, history rows sent, problems) and the state
        of every run the server holds.
"""
import argparse
import base64
import json
import math
import os
import re
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

RUN_NAME = re.compile(r"^[a-z0-9]{8}$")
UPLOAD_HEADER = ("X-Fake-Upload", "yes")


class State:
    def __init__(self, args):
        self.lock = threading.Lock()
        self.args = args
        self.count = 0
        self.bytes = 0
        self.sweeps = {}
        self.runs = {}
        self.fail = {}
        for item in filter(None, (args.fail or "").split(",")):
            n, kind = item.split(":")
            self.fail[n] = kind


def problem(probs, fmt, *a):
    probs.append(fmt % a if a else fmt)


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = -1  # one write per answer: no Nagle and delayed-ACK stalls
    disable_nagle_algorithm = True

    def log_message(self, *a):
        pass

    # ---- plumbing -------------------------------------------------------
    def answer(self, status, obj=None, headers=()):
        body = json.dumps(obj if obj is not None else {}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def auth_ok(self):
        want = "Basic " + base64.b64encode(("api:" + S.args.key).encode()).decode()
        return self.headers.get("Authorization") == want

    def record(self, entry):
        if S.args.sink:
            return
        with open(S.args.log, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def injected(self, n, entry):
        """Answers an injected failure; True when one was."""
        kind = S.fail.get(str(n)) or S.fail.get("all")
        if not kind:
            return False
        if kind == "slow":
            time.sleep(2)
            entry["slow"] = True
            return False
        entry["failed"] = kind
        self.record(entry)
        if kind == "drop":
            self.close_connection = True
            self.connection.shutdown(2)
        elif kind == "429":
            self.answer(429, {"error": "rate limited"}, [("Retry-After", "1")])
        elif kind == "gql":
            self.answer(200, {"data": None,
                              "errors": [{"message": "injected\nGraphQL error"}]})
        else:
            self.answer(int(kind), {"errors": [{"message": "injected " + kind}]})
        return True

    def handle_any(self, method):
        raw = self.body()
        if self.path == "/_fake/state":
            return self.answer(200, state_view())
        if self.path == "/_fake/reset":  # as if the project were deleted
            with S.lock:
                S.sweeps.clear()
                S.runs.clear()
            return self.answer(200, {})
        with S.lock:
            S.count += 1
            S.bytes += len(raw)
            n = S.count
        entry = {"n": n, "method": method, "path": self.path, "bytes": len(raw),
                 "problems": []}
        if S.args.delay:
            time.sleep(S.args.delay)
        if self.injected(n, entry):
            return
        if S.args.sink:
            return self.sink(method, raw)
        try:
            self.route(method, raw, entry)
        finally:
            self.record(entry)

    def do_POST(self):
        self.handle_any("POST")

    def do_PUT(self):
        self.handle_any("PUT")

    def do_GET(self):
        self.handle_any("GET")

    # ---- routes ---------------------------------------------------------
    def route(self, method, raw, entry):
        probs = entry["problems"]
        if self.path.startswith("/_upload/"):
            return self.upload(method, raw, entry)
        entry["auth"] = self.auth_ok()
        if not entry["auth"]:
            return self.answer(401, {"errors": [{"message": "bad key"}]})
        if method != "POST":
            problem(probs, "%s to an API path", method)
            return self.answer(405, {})
        if self.headers.get("Content-Type") != "application/json":
            problem(probs, "Content-Type is %s", self.headers.get("Content-Type"))
        try:
            body = json.loads(raw)
        except ValueError as e:
            problem(probs, "body is not JSON: %s", e)
            return self.answer(400, {})
        if self.path == "/graphql":
            return self.graphql(body, entry)
        m = re.match(r"^/files/([^/]+)/([^/]+)/([^/]+)/file_stream$", self.path)
        if m:
            return self.file_stream(m.groups(), body, entry)
        problem(probs, "unknown path %s", self.path)
        self.answer(404, {})

    def graphql(self, body, entry):
        probs = entry["problems"]
        if set(body) != {"query", "variables", "operationName"}:
            problem(probs, "GraphQL body keys %s", sorted(body))
        op = body.get("operationName")
        q = body.get("query") or ""
        v = body.get("variables") or {}
        entry["op"] = op
        if not q.startswith("mutation %s(" % op):
            problem(probs, "query does not start with 'mutation %s('", op)
        if op and "%s%s(input:" % (op[0].lower(), op[1:]) not in q:
            problem(probs, "query does not call %s(input: ...)", op)
        handler = {"UpsertSweep": self.upsert_sweep,
                   "UpsertBucket": self.upsert_bucket,
                   "CreateRunFiles": self.create_run_files,
                   "StopRun": self.stop_run}.get(op)
        if not handler:
            problem(probs, "unknown operation %s", op)
            return self.answer(200, {"errors": [{"message": "unknown op"}]})
        with S.lock:
            data = handler(v, entry)
        if isinstance(data, str):
            return self.answer(200, {"data": None, "errors": [{"message": data}]})
        self.answer(200, {"data": {op[0].lower() + op[1:]: data}})

    def upsert_sweep(self, v, entry):
        probs = entry["problems"]
        cfg = v.get("config")
        if not isinstance(cfg, str):
            problem(probs, "config is not a string")
        elif not re.search(r"(^|\n)controller:\n  type: local\n|\"controller\": \{\"type\": \"local\"\}", cfg):
            problem(probs, "config has no controller of type local")
        for k in ("entityName", "projectName"):
            if not isinstance(v.get(k), str):
                problem(probs, "%s missing", k)
        if v.get("id"):
            sw = next((s for s in S.sweeps.values() if s["id"] == v["id"]), None)
            if not sw:
                return "no sweep with id %s" % v["id"]
            sw["state"] = v.get("state") or sw["state"]
            sw["updates"] += 1
        else:
            name = "sw%06d" % (len(S.sweeps) + 1)
            sw = {"id": "U3dlZXA6" + name, "name": name, "config": cfg,
                  "state": "RUNNING", "updates": 0, "display": v.get("displayName"),
                  "entity": v.get("entityName"), "project": v.get("projectName")}
            S.sweeps[name] = sw
        entry["sweep"] = sw["name"]
        return {"sweep": {"id": sw["id"], "name": sw["name"],
                          "project": {"id": "p", "name": sw["project"],
                                      "entity": {"id": "e", "name": sw["entity"]}}}}

    def upsert_bucket(self, v, entry):
        probs = entry["problems"]
        name = v.get("name")
        entry["run"] = name
        if not isinstance(name, str) or not RUN_NAME.match(name):
            problem(probs, "run name %r is not 8 of [a-z0-9]", name)
        for k in ("project", "entity", "displayName"):
            if not isinstance(v.get(k), str):
                problem(probs, "%s missing", k)
        try:
            cfg = json.loads(v.get("config"))
            if not isinstance(cfg, dict) or any(
                    not isinstance(x, dict) or set(x) != {"value"} for x in cfg.values()):
                problem(probs, "config is not {key: {value: v}}")
            # wandb-core's RunConfig.AddInternalData
            # (core/internal/runconfig/runconfig.go) always sets _wandb's
            # `t` (telemetry) and `m` (define_metric's list)
            w = cfg.get("_wandb", {}).get("value") if isinstance(cfg, dict) else None
            if not isinstance(w, dict) or not isinstance(w.get("t"), dict) \
                    or not isinstance(w.get("m"), list):
                problem(probs, "config lacks _wandb: {value: {t: {}, m: []}}")
        except (TypeError, ValueError, AttributeError):
            problem(probs, "config is not a JSON string")
            cfg = None
        if v.get("sweep") is not None and v.get("sweep") not in S.sweeps:
            problem(probs, "unknown sweep %s", v.get("sweep"))
        if not isinstance(v.get("tags"), list) or not all(
                isinstance(t, str) and 0 < len(t) <= 64 for t in v["tags"]):
            problem(probs, "tags is not a list of 1 to 64 characters each")
        if v.get("notes") is not None and not isinstance(v.get("notes"), str):
            problem(probs, "notes is not a string")
        key = (v.get("entity"), v.get("project"), name)
        run = S.runs.get(key)
        inserted = run is None
        if inserted:
            run = S.runs[key] = {"lines": [], "summary": None, "complete": False,
                                 "exitcode": None, "uploaded": [], "files": {},
                                 "overlaps": 0, "gaps": 0, "upserts": 0,
                                 "name": name, "stopped": False}
        run["upserts"] += 1
        for k in ("displayName", "sweep", "commit", "repo", "program", "host",
                  "groupName", "tags", "notes"):
            run[k] = v.get(k)
        run["config"] = cfg
        return {"bucket": {"id": "UnVuOg" + name, "name": name,
                           "displayName": v.get("displayName"),
                           "historyLineCount": len(run["lines"])},
                "inserted": inserted}

    def stop_run(self, v, entry):
        """W&B's StopRun (core/api/graphql/mutation_stop_run.graphql): sets
        the `stopped` flag of a run, by its storage id, as the App's Stop
        button, wandb.Api().run(...).stop() and the sweep controller's
        early stops do: to a run still running. The run's SDK reads the
        flag back in file_stream answers (filestreamimpl.go)."""
        probs = entry["problems"]
        if set(v) != {"id"}:
            problem(probs, "StopRun variables %s", sorted(v))
        run = next((r for r in S.runs.values()
                    if "UnVuOg" + r["name"] == v.get("id")), None)
        if run is None:
            return "run %s not found" % v.get("id")
        entry["run"] = run["name"]
        if run["complete"]:
            problem(probs, "StopRun after the run's end (W&B stops running runs)")
        run["stopped"] = True
        return {"success": True}

    def create_run_files(self, v, entry):
        probs = entry["problems"]
        files = v.get("files")
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            problem(probs, "files is not a list of names")
            files = []
        key = (v.get("entity"), v.get("project"), v.get("run"))
        if key not in S.runs:
            return "run %s not found" % v.get("run")
        port = self.server.server_address[1]
        return {"runID": "UnVuOg" + v["run"],
                "uploadHeaders": ["%s:%s" % UPLOAD_HEADER],
                "files": [{"name": f, "uploadUrl": "http://127.0.0.1:%d/_upload/%s/%s/%s/%s"
                           % (port, key[0], key[1], key[2], f)} for f in files]}

    def upload(self, method, raw, entry):
        probs = entry["problems"]
        if method != "PUT":
            problem(probs, "upload with %s", method)
        if "Authorization" in self.headers:
            problem(probs, "upload carries an Authorization header")
        if self.headers.get(UPLOAD_HEADER[0]) != UPLOAD_HEADER[1]:
            problem(probs, "upload lacks the header W&B asked for")
        # wandb-core's DefaultFileTransfer.Upload sends W&B's upload
        # headers alone (core/internal/filetransfer/file_transfer_default.go)
        if self.headers.get("Content-Type") is not None:
            problem(probs, "upload has Content-Type %s",
                    self.headers.get("Content-Type"))
        parts = self.path.split("/")[2:]
        with S.lock:
            run = S.runs.get(tuple(parts[:3]))
            if run is None:
                problem(probs, "upload for an unknown run")
            else:
                run["files"][parts[3]] = raw.decode("utf-8", "replace")
        entry["op"] = "upload"
        self.answer(200, {})

    def file_stream(self, path, body, entry):
        probs = entry["problems"]
        entry["op"] = "file_stream"
        entry["run"] = path[2]
        extra = set(body) - {"files", "uploaded", "complete", "exitcode", "preempting"}
        if extra:
            problem(probs, "unknown keys %s", sorted(extra))
        files = body.get("files", {})
        if set(files) - {"wandb-history.jsonl", "wandb-summary.json"}:
            problem(probs, "unknown files %s", sorted(files))
        with S.lock:
            run = S.runs.get(path)
            if run is None:
                problem(probs, "file_stream for a run never upserted")
                return self.answer(404, {})
            hist = files.get("wandb-history.jsonl")
            entry["rows"] = 0
            if hist is not None:
                self.history(run, hist, entry)
            summ = files.get("wandb-summary.json")
            if summ is not None:
                self.summary(run, summ, probs)
            if "uploaded" in body:
                run["uploaded"] = body["uploaded"]
            if "complete" in body:
                if body["complete"] is not True or not isinstance(body.get("exitcode"), int):
                    problem(probs, "complete without an integer exitcode")
                run["complete"] = True
                run["exitcode"] = body.get("exitcode")
            stopped = run["stopped"]
        self.answer(200, {"exitcode": None, "limits": {}, "stopped": stopped})

    def history(self, run, hist, entry):
        probs = entry["problems"]
        off, content = hist.get("offset"), hist.get("content")
        if not isinstance(off, int) or not isinstance(content, list):
            return problem(probs, "history without an integer offset and a content list")
        held = len(run["lines"])
        if off < held:
            run["overlaps"] += min(held - off, len(content))
        elif off > held:
            run["gaps"] += off - held
        entry["rows"] = len(content)
        entry["offset"] = off
        for i, line in enumerate(content):
            if not isinstance(line, str):
                problem(probs, "history line %d is not a string", off + i)
                continue
            try:
                row = json.loads(line)
            except ValueError:
                problem(probs, "history line %d is not JSON", off + i)
                continue
            # as the SDK numbers lines: _step goes up from line to line (W&B
            # drops a line whose _step does not), and is the trainer's own
            # step when it gave one that goes up (wandb.log(step=s))
            at = off + i
            prev = run["lines"][at - 1] if 0 < at <= len(run["lines"]) else None
            prev = json.loads(prev).get("_step") if prev else -1
            step = row.get("_step")
            if not isinstance(step, int) or step <= prev:
                problem(probs, "line %d has _step %r after %r", at, step, prev)
            elif isinstance(row.get("step"), int) and row["step"] > prev \
                    and step != row["step"]:
                problem(probs, "line %d has _step %r, not its step %r", at,
                        step, row["step"])
            if not is_number(row.get("_runtime")) or not is_number(row.get("_timestamp")):
                problem(probs, "line %d lacks _runtime or _timestamp", off + i)
            if "null" in line:
                problem(probs, "line %d holds null", off + i)
            at = off + i
            if at < len(run["lines"]):
                run["lines"][at] = line
            else:
                run["lines"].extend([None] * (at - len(run["lines"])))
                run["lines"].append(line)

    def summary(self, run, summ, probs):
        content = summ.get("content")
        if summ.get("offset") != 0 or not isinstance(content, list) or len(content) != 1:
            return problem(probs, "summary is not one line at offset 0")
        try:
            run["summary"] = json.loads(content[0])
        except ValueError:
            problem(probs, "summary is not JSON")

    def sink(self, method, raw):
        """Answers without keeping anything: GraphQL bodies are small and
        parsed, history and uploads are read and dropped."""
        if self.path != "/graphql":
            return self.answer(200, {})
        body = json.loads(raw)
        op, v = body.get("operationName"), body.get("variables") or {}
        port = self.server.server_address[1]
        data = {
            "UpsertSweep": {"upsertSweep": {"sweep": {"id": "x", "name": "sink0001"}}},
            "UpsertBucket": {"upsertBucket": {"bucket": {"id": "x", "name": v.get("name"),
                                                         "historyLineCount": 0},
                                              "inserted": True}},
            "StopRun": {"stopRun": {"success": True}},
            "CreateRunFiles": {"createRunFiles": {
                "uploadHeaders": [], "files": [
                    {"name": f, "uploadUrl": "http://127.0.0.1:%d/_upload/%s" % (port, f)}
                    for f in v.get("files") or []]}},
        }.get(op)
        self.answer(200, {"data": data})


def finite(v):
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    return v


def run_state(r):
    """The state W&B's App shows for a run (the states of
    wandb/apis/public/runs.py, Run.state): running until its end; then
    killed when W&B had stopped it (docs.wandb.ai/models/runs/stop-runs:
    "the run's state changes from running to Killed"), else finished or
    failed by its exit code."""
    if not r["complete"]:
        return "running"
    if r["stopped"]:
        return "killed"
    return "finished" if r["exitcode"] == 0 else "failed"


def state_view():
    with S.lock:
        runs = {}
        for (e, p, name), r in S.runs.items():
            steps = []
            bare = 0
            for line in r["lines"]:
                if line is None:
                    steps.append(None)
                    continue
                steps.append(json.loads(line).get("_step"))
                bare += bool(re.search(r": (NaN|Infinity|-Infinity)[,}]", line))
            summary = r["summary"] or {}
            runs[name] = {
                "entity": e, "project": p, "display": r["displayName"],
                "sweep": r["sweep"], "commit": r["commit"], "repo": r["repo"],
                "program": r["program"], "tags": r["tags"], "notes": r["notes"],
                "config": r["config"],
                "lines": len(r["lines"]),
                "missing": sum(x is None for x in r["lines"]),
                "in_order": None not in steps and all(
                    a < b for a, b in zip(steps, steps[1:])),
                "nonfinite_lines": bare, "overlaps": r["overlaps"], "gaps": r["gaps"],
                "upserts": r["upserts"], "complete": r["complete"],
                "exitcode": r["exitcode"], "uploaded": r["uploaded"],
                "stopped": r["stopped"], "state": run_state(r),
                "files": sorted(r["files"]),
                "patch": r["files"].get("diff.patch"),
                "metadata": json.loads(r["files"].get("wandb-metadata.json", "null")),
                "summary": {k: finite(v) for k, v in summary.items()},
                "first_line": r["lines"][0] if r["lines"] else None,
            }
        sweeps = {k: {kk: vv for kk, vv in v.items()} for k, v in S.sweeps.items()}
        return {"requests": S.count, "bytes": S.bytes, "runs": runs, "sweeps": sweeps}


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # a client killed or giving up mid-request is part of the tests
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def serve(args):
    global S
    S = State(args)
    httpd = Server(("127.0.0.1", 0), Handler)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % httpd.server_address[1])
    os.rename(tmp, args.port_file)
    httpd.serve_forever()


def report(args):
    with open(args.port_file) as f:
        port = int(f.read())
    ops, problems, rows, failed, n = {}, [], 0, 0, 0
    if os.path.exists(args.log):
        with open(args.log) as f:
            for i, line in enumerate(f):
                if i < args.from_line:
                    continue
                e = json.loads(line)
                n += 1
                if "failed" in e:
                    failed += 1
                    continue
                op = e.get("op", e["path"])
                ops[op] = ops.get(op, 0) + 1
                rows += e.get("rows", 0)
                problems += ["request %d: %s" % (e["n"], p) for p in e["problems"]]
    with urllib.request.urlopen("http://127.0.0.1:%d/_fake/state" % port) as r:
        state = json.load(r)
    state.update({"log_requests": n, "ops": ops, "rows_sent": rows,
                  "failed": failed, "problems": problems})
    json.dump(state, sys.stdout)
    sys.stdout.write("\n")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--port-file", required=True)
    s.add_argument("--log", default=os.devnull)
    s.add_argument("--key", required=True)
    s.add_argument("--fail")
    s.add_argument("--delay", type=float, default=0)
    s.add_argument("--sink", action="store_true")
    r = sub.add_parser("report")
    r.add_argument("--log", required=True)
    r.add_argument("--port-file", required=True)
    r.add_argument("--from", dest="from_line", type=int, default=0)
    args = ap.parse_args()
    serve(args) if args.cmd == "serve" else report(args)


if __name__ == "__main__":
    main()

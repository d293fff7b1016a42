#!/usr/bin/env python3
"""pyworker: a finger module written in Python (stdlib only) speaking the stdio JSON-lines protocol.

Host -> module (stdin):  {"type":"call","id","tool","args","meta"}, {"type":"cancel","id"}, {"type":"ping","id"}
Module -> host (stdout): {"type":"result","id","result"}, {"type":"error","id","code","message"},
                         {"type":"progress","id","message","fraction"}, {"type":"pong","id"},
                         {"type":"lease.extend","id","ttl_ms"}, {"type":"event","name","data"}
stderr is the module's log.

The main thread only reads stdin; slow tools run in their own thread, so cancel and ping are
answered while calls are busy. Every write is one whole line, under a lock, flushed at once.
"""

import json
import os
import sys
import threading
import time

_out_lock = threading.Lock()
# call id -> threading.Event set when the host cancels that call
_cancels = {}
_cancels_lock = threading.Lock()


def send(obj):
    data = (json.dumps(obj, separators=(",", ":")) + "\n").encode("utf-8")
    send_raw(data)


def send_raw(data):
    with _out_lock:
        try:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        except BrokenPipeError:
            os._exit(0)  # the host is gone


def log(msg):
    sys.stderr.write("pyworker: %s\n" % msg)
    sys.stderr.flush()


def result(call_id, value):
    send({"type": "result", "id": call_id, "result": value})


def error(call_id, code, message):
    send({"type": "error", "id": call_id, "code": code, "message": message})


def number(args, name, default):
    v = args.get(name, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
        raise ValueError("%s must be a non-negative number" % name)
    return v


# ---- tools ---------------------------------------------------------------------------------


def tool_sleep(call_id, args, cancel):
    ms = number(args, "ms", 0)
    if cancel.wait(ms / 1000.0):
        error(call_id, "E_CANCELLED", "sleep cancelled")
        return
    result(call_id, {"slept_ms": ms})


def tool_heartbeat_sleep(call_id, args, cancel):
    ms = number(args, "ms", 0)
    every = max(number(args, "every_ms", 1000), 1)
    ttl = number(args, "ttl_ms", every * 3)
    start = time.monotonic()
    while True:
        elapsed = (time.monotonic() - start) * 1000.0
        if elapsed >= ms:
            break
        if cancel.wait(min(every, ms - elapsed) / 1000.0):
            error(call_id, "E_CANCELLED", "heartbeat_sleep cancelled")
            return
        elapsed = min((time.monotonic() - start) * 1000.0, ms)
        send({"type": "lease.extend", "id": call_id, "ttl_ms": ttl})
        send({
            "type": "progress",
            "id": call_id,
            "message": "slept %d of %d ms" % (elapsed, ms),
            "fraction": (elapsed / ms) if ms else 1.0,
        })
    result(call_id, {"slept_ms": ms})


def tool_ignore_cancel_sleep(call_id, args, cancel):
    time.sleep(number(args, "ms", 60000) / 1000.0)
    result(call_id, {"slept_ms": args.get("ms", 60000)})


def tool_crash(call_id, args, cancel):
    code = args.get("code", 3)
    log("crash requested (exit code %s)" % code)
    os._exit(int(code))


def tool_fail(call_id, args, cancel):
    error(call_id, str(args.get("code", "E_INVALID_ARGS")), str(args.get("message", "failed on request")))


def tool_garbage(call_id, args, cancel):
    size = int(number(args, "bytes", 1536 * 1024))
    send_raw(b"this is not json\n")
    send_raw(b"x" * size + b"\n")
    send({"hello": "world"})
    send({"type": "result", "id": "no-such-call", "result": 1})
    result(call_id, {"ok": True})


def tool_env(call_id, args, cancel):
    names = args.get("names", [])
    result(call_id, {
        "names": sorted(os.environ.keys()),
        "values": {n: os.environ.get(n) for n in names if isinstance(n, str)},
    })


# name -> (function, runs in its own thread)
TOOLS = {
    "sleep": (tool_sleep, True),
    "heartbeat_sleep": (tool_heartbeat_sleep, True),
    "ignore_cancel_sleep": (tool_ignore_cancel_sleep, True),
    "crash": (tool_crash, False),
    "fail": (tool_fail, False),
    "garbage": (tool_garbage, False),
    "env": (tool_env, False),
}


def run(fn, call_id, args, cancel):
    try:
        fn(call_id, args, cancel)
    except ValueError as e:
        error(call_id, "E_INVALID_ARGS", str(e))
    except Exception as e:  # a bug in a tool must not kill the worker
        error(call_id, "E_PYWORKER", "%s: %s" % (type(e).__name__, e))
    finally:
        with _cancels_lock:
            _cancels.pop(call_id, None)


def handle(msg):
    kind = msg.get("type")
    msg_id = msg.get("id")
    if kind == "ping":
        send({"type": "pong", "id": msg_id})
    elif kind == "cancel":
        with _cancels_lock:
            ev = _cancels.get(msg_id)
        if ev is not None:
            ev.set()
    elif kind == "call":
        tool = msg.get("tool")
        args = msg.get("args")
        if tool == "echo":  # any JSON value comes back unchanged
            result(msg_id, args)
            return
        if not isinstance(args, dict):
            args = {}
        entry = TOOLS.get(tool)
        if entry is None:
            error(msg_id, "E_NO_TARGET", "pyworker has no tool %r" % (tool,))
            return
        fn, threaded = entry
        cancel = threading.Event()
        with _cancels_lock:
            _cancels[msg_id] = cancel
        if threaded:
            threading.Thread(target=run, args=(fn, msg_id, args, cancel), daemon=True).start()
        else:
            run(fn, msg_id, args, cancel)
    else:
        log("ignoring message of type %r" % (kind,))


def main():
    log("started, pid %d" % os.getpid())
    for raw in sys.stdin.buffer:
        line = raw.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            log("ignoring a line that is not JSON")
            continue
        if isinstance(msg, dict):
            handle(msg)
    log("stdin closed, exiting")
    # daemon threads die with the process
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()

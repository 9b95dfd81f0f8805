#!/usr/bin/env python3
"""A webhook receiver written only with Python's standard library, to check
denar's Service-Signature against an implementation that is not ours.

It binds 127.0.0.1 on a free port and prints "port N", reads the endpoint
secret (whsec_...) from the first line of stdin, then serves: each POST is
verified from its raw bytes (HMAC-SHA256 keyed with the whole secret string
over "<t>.<body>", any of the v1= signatures, timestamp within 300 s of this
machine's clock, digests compared with hmac.compare_digest) and answered 204,
or 400 when it does not verify. One line per request goes to stdout:
"ok <event id> <event type>" or "bad <reason>".
"""

import hashlib
import hmac
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOLERANCE = 300
OUT = threading.Lock()


def say(line):
    # Requests are served on threads: one whole line at a time.
    with OUT:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def verify(secret, header, body):
    t, sigs = None, []
    for part in header.split(","):
        key, sep, value = part.strip().partition("=")
        if not sep:
            return "malformed"
        if key == "t":
            if t is not None:
                return "malformed"
            t = value
        elif key == "v1":
            sigs.append(value)
    if t is None or not t.isdigit() or not sigs:
        return "malformed"
    if abs(time.time() - int(t)) > TOLERANCE:
        return "stale"
    expected = hmac.new(secret, t.encode() + b"." + body, hashlib.sha256).hexdigest()
    if any(hmac.compare_digest(expected, s) for s in sigs):
        return None
    return "mismatch"


def main():
    server = None

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            why = verify(SECRET, self.headers.get("Service-Signature", ""), body)
            if why is None:
                event = json.loads(body)
                say("ok %s %s" % (event["id"], event["type"]))
                self.send_response(204)
            else:
                say("bad " + why)
                self.send_response(400)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, fmt, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    say("port %d" % server.server_address[1])
    global SECRET
    SECRET = sys.stdin.readline().strip().encode()
    server.serve_forever()


SECRET = b""

if __name__ == "__main__":
    main()

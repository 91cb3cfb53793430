#!/usr/bin/env python3
"""otlp_receiver.py: a tiny OTLP/HTTP collector for tests, on 127.0.0.1 only.

Usage: otlp_receiver.py PORTFILE LOGFILE [FAIL_FIRST [STATUS]]
Writes its port to PORTFILE, appends one JSON line per POST to LOGFILE (path, content
type, body text), and answers STATUS (default 503) to the first FAIL_FIRST POSTs, 200 after.
"""
import http.server
import json
import sys

port_file, log_file = sys.argv[1], sys.argv[2]
fail_first = int(sys.argv[3]) if len(sys.argv) > 3 else 0
fail_status = int(sys.argv[4]) if len(sys.argv) > 4 else 503
seen = 0


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        global seen
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        seen += 1
        with open(log_file, "a", encoding="utf-8") as f:
            f.write(json.dumps({"path": self.path,
                                "content_type": self.headers.get("Content-Type", ""),
                                "body": body.decode("utf-8")}) + "\n")
        status = fail_status if seen <= fail_first else 200
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.rename(port_file + ".tmp", port_file)
server.serve_forever()

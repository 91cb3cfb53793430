#!/usr/bin/env python3
"""otlp_hang_collector.py PORTFILE LOGFILE: an OTLP collector that hangs. It listens on
127.0.0.1 (a free port, written to PORTFILE), accepts every connection, reads what comes
and never answers; LOGFILE gets one line per connection accepted."""
import socket
import sys
import threading

port_file, log_file = sys.argv[1], sys.argv[2]
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(64)
with open(port_file + ".tmp", "w") as f:
    f.write(str(srv.getsockname()[1]))
import os
os.rename(port_file + ".tmp", port_file)
held = []


def swallow(conn):
    try:
        while conn.recv(65536):
            pass
    except OSError:
        pass


while True:
    conn, _ = srv.accept()
    held.append(conn)  # never closed, never answered
    with open(log_file, "a") as f:
        f.write("accepted\n")
    threading.Thread(target=swallow, args=(conn,), daemon=True).start()

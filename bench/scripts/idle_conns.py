#!/usr/bin/env python3
"""Server memory per idle connection, plain or TLS.

Usage: idle_conns.py PORT COUNT SERVER_PID [tls]

Opens COUNT connections to 127.0.0.1:PORT (TLS without certificate checks when `tls` is
given), has each answered one `GET /index.html`, waits past the server's warm period (its
connections then give their rings back), and prints the server's VmRSS growth per connection
with its anonymous, file and shared parts. Raise `ulimit -n` for large counts.
"""

import re
import socket
import ssl
import sys
import time


def status(pid):
    fields = {}
    for line in open(f"/proc/{pid}/status"):
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile", "RssShmem"):
            fields[key] = int(value.split()[0])
    return fields


def main():
    port, count, pid = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    tls = len(sys.argv) > 4 and sys.argv[4] == "tls"
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    before = status(pid)
    conns = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port))
        if tls:
            s = context.wrap_socket(s, server_hostname="localhost")
        s.sendall(b"GET /index.html HTTP/1.1\r\nHost: localhost\r\n\r\n")
        data = b""
        while b"\r\n\r\n" not in data:
            data += s.recv(65536)
        head = data.index(b"\r\n\r\n") + 4
        body = int(re.search(rb"content-length: (\d+)", data, re.I).group(1))
        while len(data) - head < body:
            data += s.recv(65536)
        conns.append(s)
    time.sleep(2.5)
    after = status(pid)
    kind = "tls" if tls else "plain"
    per = {k: (after[k] - before[k]) * 1024 / count for k in after}
    print(
        f"{kind}: {count} idle connections: {per['VmRSS']:.0f} B each "
        f"(anon {per['RssAnon']:.0f}, file {per['RssFile']:.0f}, shmem {per['RssShmem']:.0f})"
    )


if __name__ == "__main__":
    main()

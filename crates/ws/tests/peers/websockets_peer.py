"""Python `websockets` as a permessage-deflate peer for crates/ws/tests/interop.rs.

    websockets_peer.py server CONFIG   echo server on 127.0.0.1; prints its port, serves one
                                       connection, then exits
    websockets_peer.py client PORT CONFIG
                                       sends the corpus, checks every echo, prints the
                                       negotiated Sec-WebSocket-Extensions

CONFIG is JSON: the keyword arguments of the PerMessageDeflate factory for that side.
"""

import json
import sys
import threading

from websockets.extensions.permessage_deflate import (
    ClientPerMessageDeflateFactory,
    ServerPerMessageDeflateFactory,
)
from websockets.sync.client import connect
from websockets.sync.server import serve


def corpus():
    yield "Hello"
    yield ""
    yield b""
    yield "κόσμε € 𝄞 " * 5000
    for n in (1, 125, 126, 65535, 65536, 1 << 20):
        yield bytes((i * 31) % 253 for i in range(n))
    yield "repeat " * 100000


def server(config):
    def handler(ws):
        for message in ws:
            ws.send(message)
        threading.Thread(target=srv.shutdown).start()

    factory = ServerPerMessageDeflateFactory(**config)
    with serve(handler, "127.0.0.1", 0, extensions=[factory], compression=None,
               max_size=None) as srv:
        print(srv.socket.getsockname()[1], flush=True)
        srv.serve_forever()


def client(port, config):
    factory = ClientPerMessageDeflateFactory(**config)
    with connect(f"ws://127.0.0.1:{port}/echo", extensions=[factory], compression=None,
                 max_size=None) as ws:
        for i, message in enumerate(corpus()):
            ws.send(message)
            echo = ws.recv()
            if echo != message:
                sys.exit(f"message {i}: echo differs ({len(echo)} vs {len(message)})")
        print(ws.response.headers.get("Sec-WebSocket-Extensions", ""), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "server":
        server(json.loads(sys.argv[2]))
    else:
        client(int(sys.argv[2]), json.loads(sys.argv[3]))

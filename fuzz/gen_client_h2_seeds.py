#!/usr/bin/env python3
"""Writes fuzz/seeds/client_h2/ and client_h2_shared/: a setup byte, then what a server sends
(on stream 1; on streams 1, 3, 5 and 7 for the shared connection, a tunnel's among them)."""
import os
import struct


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


DATA, HEADERS, SETTINGS, WINDOW_UPDATE = 0, 1, 4, 8
END_STREAM, END_HEADERS, ACK = 1, 4, 1
settings = frame(SETTINGS, 0, 0) + frame(SETTINGS, ACK, 0)
# HPACK: `:status 200` indexed (8); `:status 100` and `content-length 5` literal, name indexed.
ok = b"\x88"
length5 = b"\x0f\x0d\x015"
go_ahead = b"\x08\x03100"
window = struct.pack(">I", 1 << 20)

seeds = {
    # A GET answered with a body, one byte a piece.
    "get": bytes([0]) + settings + frame(HEADERS, END_HEADERS, 1, ok + length5)
    + frame(DATA, END_STREAM, 1, b"hello"),
    # A HEAD answered with no DATA, 16-byte pieces.
    "head": bytes([1 | 2 << 2]) + settings
    + frame(HEADERS, END_HEADERS | END_STREAM, 1, ok + length5),
    # The held POST: 100 Continue, windows opened for its 70,000 bytes, then the answer.
    "post-continue": bytes([3 | 4 << 2]) + settings
    + frame(HEADERS, END_HEADERS, 1, go_ahead)
    + frame(WINDOW_UPDATE, 0, 0, window) + frame(WINDOW_UPDATE, 0, 1, window)
    + frame(HEADERS, END_HEADERS, 1, ok + length5) + frame(DATA, END_STREAM, 1, b"hello"),
}
RST_STREAM, CANCEL = 3, 8
shared = {
    # Four exchanges answered out of order, their frames interleaved, windows opened for the
    # POSTs, one body reset midway; whole.
    "interleaved": bytes([3 | 7 << 2]) + settings
    + frame(WINDOW_UPDATE, 0, 0, window) + frame(WINDOW_UPDATE, 0, 3, window)
    + frame(WINDOW_UPDATE, 0, 7, window)
    + frame(HEADERS, END_HEADERS, 5, ok + length5) + frame(HEADERS, END_HEADERS, 1, ok + length5)
    + frame(DATA, 0, 5, b"he") + frame(HEADERS, END_HEADERS, 3, ok + length5)
    + frame(DATA, 0, 1, b"hello") + frame(DATA, END_STREAM, 5, b"llo")
    + frame(RST_STREAM, 0, 3, struct.pack(">I", CANCEL))
    + frame(HEADERS, END_HEADERS | END_STREAM, 7, ok) + frame(DATA, END_STREAM, 1, b""),
    # Two GETs in 4-byte pieces, the first given up after its head.
    "given-up": bytes([1 | 1 << 2 | 0x80]) + settings
    + frame(HEADERS, END_HEADERS, 1, ok + length5) + frame(HEADERS, END_HEADERS, 3, ok + length5)
    + frame(DATA, END_STREAM, 1, b"hello") + frame(DATA, END_STREAM, 3, b"hello"),
    # A GET on stream 1 and a tunnel (an extended CONNECT, opened once the SETTINGS allow
    # it) on stream 3: answered 200, a WebSocket frame down it, then both ended; 16-byte pieces.
    "tunnel": bytes([0 | 2 << 2 | 0x40])
    + frame(SETTINGS, 0, 0, struct.pack(">HI", 8, 1)) + frame(SETTINGS, ACK, 0)
    + frame(HEADERS, END_HEADERS, 3, ok) + frame(DATA, 0, 3, b"\x82\x02hi")
    + frame(HEADERS, END_HEADERS | END_STREAM, 1, ok) + frame(DATA, END_STREAM, 3, b""),
}
here = os.path.dirname(os.path.abspath(__file__))
for target, written in (("client_h2", seeds), ("client_h2_shared", shared)):
    out = os.path.join(here, "seeds", target)
    os.makedirs(out, exist_ok=True)
    for name, seed in written.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(seed)

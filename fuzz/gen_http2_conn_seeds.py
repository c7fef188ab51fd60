#!/usr/bin/env python3
"""Writes the `http2_conn` seeds to fuzz/seeds/http2_conn/: a few valid exchanges.

Each seed is the target's input: a setup byte (see fuzz_targets/http2_conn.rs), a seed byte
for piece sizes, then what a client sends after the preface. HPACK by hand: static indices,
literals without Huffman coding.
"""

import os
import struct

DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = range(10)
END_STREAM, ACK, END_HEADERS, PADDED, PRIO = 0x1, 0x1, 0x4, 0x8, 0x20


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def settings(*params):
    return frame(SETTINGS, 0, 0, b"".join(struct.pack(">HI", i, v) for i, v in params))


def lit(name, value, index=False):
    """A literal field with a new name, with incremental indexing or without indexing."""
    return bytes([0x40 if index else 0x00, len(name)]) + name + bytes([len(value)]) + value


def authority(value):
    return bytes([0x01, len(value)]) + value  # literal without indexing, name index 1


GET = b"\x82\x87\x84" + authority(b"example.com")  # :method GET, :scheme https, :path /
POST = b"\x83\x87" + bytes([0x04, 7]) + b"/upload" + authority(b"example.com")


def headers(stream, block, flags=END_HEADERS | END_STREAM):
    return frame(HEADERS, flags, stream, block)


def data(stream, payload, flags=0):
    return frame(DATA, flags, stream, payload)


def window_update(stream, n):
    return frame(WINDOW_UPDATE, 0, stream, struct.pack(">I", n))


SEEDS = {
    "get": (0x30, settings(), headers(1, GET)),
    "post-body-padded": (
        0x20,
        settings((4, 65535)),
        headers(1, POST + lit(b"content-length", b"11"), END_HEADERS),
        data(1, b"hello "),
        frame(DATA, PADDED | END_STREAM, 1, b"\x03world\0\0\0"),
        window_update(0, 1000),
        frame(PING, 0, 0, b"pingpong"),
    ),
    "continuation-dynamic-table-trailers": (
        0x10,
        settings((1, 4096)),
        headers(1, GET[:2], 0),
        frame(CONTINUATION, END_HEADERS, 1, GET[2:] + lit(b"x-custom", b"value", index=True)),
        headers(3, POST + b"\xbe", END_HEADERS),  # x-custom: value, by index 62
        data(3, b"body"),
        headers(3, lit(b"x-checksum", b"0")),
        frame(PRIORITY, 0, 5, b"\x00\x00\x00\x03\x10"),
    ),
    "send-flow-control": (
        0x70,
        settings((4, 10), (5, 16384), (2, 0)),
        headers(1, GET),
        window_update(1, 10),
        settings((4, 4)),
        window_update(1, 30),
        window_update(0, 100),
        frame(SETTINGS, ACK, 0),
        frame(RST_STREAM, 0, 1, struct.pack(">I", 8)),
        frame(GOAWAY, 0, 0, struct.pack(">II", 1, 0) + b"bye"),
    ),
    # RFC 8441: a WebSocket on a stream (setup bit 7 allows it), its frames as DATA.
    "extended-connect": (
        0x80 | 0x30,
        settings(),
        headers(
            1,
            b"\x02\x07CONNECT"  # :method CONNECT, name index 2
            + lit(b":protocol", b"websocket")
            + b"\x87\x04\x05/chat"  # :scheme https, :path /chat
            + authority(b"example.com")
            + lit(b"sec-websocket-version", b"13"),
            END_HEADERS,
        ),
        data(1, b"\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58"),
        data(1, b"", END_STREAM),
    ),
    "concurrency-and-send-buffer": (
        0x36,
        settings(),
        *(headers(id, GET, END_HEADERS) for id in (1, 3, 5, 7)),
        data(3, b"x", END_STREAM),
        *(frame(PING, 0, 0, bytes([i]) * 8) for i in range(20)),
    ),
}

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds", "http2_conn")
os.makedirs(out, exist_ok=True)
for name, (setup, *frames) in SEEDS.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(bytes([setup, 0x5a]) + b"".join(frames))

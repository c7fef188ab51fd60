#!/usr/bin/env python3
# Python 3 `websockets` as a peer for the Autobahn harness self-test (scripts/autobahn/selftest.sh):
#
#   websockets_peer.py client   Autobahn client protocol against the fuzzingserver at $WS_URL:
#                               GET /getCaseCount, /runCase?case=N&agent=$AGENT for each N (echo every
#                               message back), then /updateReports?agent=$AGENT.
#   websockets_peer.py server   echo server on $WS_URL's host:port (stops on SIGTERM / SIGINT).
#
# permessage-deflate is offered / accepted (websockets' default), so cases 12.* and 13.* apply.
import asyncio
import json
import os
import signal
import sys
import time
import urllib.parse

from websockets.asyncio.client import connect
from websockets.asyncio.server import serve
from websockets.exceptions import WebSocketException

WS_URL = os.environ.get("WS_URL", "ws://127.0.0.1:9001").rstrip("/")
AGENT = os.environ.get("AGENT", "websockets")
MAX_SIZE = 2**25  # the 9.* cases send 16 MiB messages


async def echo(ws):
    try:
        async for message in ws:
            await ws.send(message)
    except WebSocketException:
        pass


async def client():
    async with connect(WS_URL + "/getCaseCount") as ws:
        count = json.loads(await ws.recv())
    print("%d cases" % count, flush=True)
    agent = urllib.parse.quote(AGENT)
    started = time.monotonic()
    for case in range(1, count + 1):
        try:
            async with connect("%s/runCase?case=%d&agent=%s" % (WS_URL, case, agent),
                               max_size=MAX_SIZE, open_timeout=30, close_timeout=10) as ws:
                await echo(ws)
        except (WebSocketException, OSError, asyncio.TimeoutError) as exc:
            # A case that makes the handshake or the connection fail is the suite's to judge.
            print("case %d: %s" % (case, exc), flush=True)
        if case % 50 == 0:
            print("%d/%d cases, %.1f s" % (case, count, time.monotonic() - started), flush=True)
    async with connect("%s/updateReports?agent=%s" % (WS_URL, agent), open_timeout=60) as ws:
        try:
            await ws.recv()
        except WebSocketException:
            pass
    print("done in %.1f s" % (time.monotonic() - started), flush=True)


async def server():
    url = urllib.parse.urlsplit(WS_URL)
    stop = asyncio.get_running_loop().create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set_result, None)
    async with serve(echo, url.hostname or "127.0.0.1", url.port or 80, max_size=MAX_SIZE):
        print("echo server on %s" % WS_URL, flush=True)
        await stop


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("client", "server"):
        sys.exit("usage: websockets_peer.py client|server")
    asyncio.run(client() if sys.argv[1] == "client" else server())

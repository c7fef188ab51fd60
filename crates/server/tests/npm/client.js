// npm `ws` as a client of a ringwire echo endpoint: every message of
// messages.js goes out and must come back byte for byte, as the same type.
// Usage: node client.js URL deflate|plain   (prints "ok <extensions>")

const WebSocket = require('ws');
const { SIZES, text, binary } = require('./messages');

const [url, mode] = process.argv.slice(2);
const ws = new WebSocket(url, { perMessageDeflate: mode === 'deflate', maxPayload: 64 << 20 });
const fail = (why) => { console.error(why); process.exit(1); };
ws.on('error', (e) => fail(`error: ${e.message}`));

const echoes = [];
ws.on('message', (data, isBinary) => echoes.shift()({ data, isBinary }));
const echo = (message) => new Promise((resolve) => { echoes.push(resolve); ws.send(message); });

ws.on('open', async () => {
  for (const size of SIZES) {
    for (const message of [text(size), binary(size)]) {
      const sent = typeof message === 'string' ? Buffer.from(message) : message;
      const { data, isBinary } = await echo(message);
      if (isBinary !== Buffer.isBuffer(message)) fail(`${size} B: type changed`);
      if (!sent.equals(data)) fail(`${size} B ${isBinary ? 'binary' : 'text'}: echo differs`);
    }
  }
  ws.close(1000, 'done');
});
ws.on('close', (code) => {
  if (code !== 1000) fail(`closed with ${code}`);
  console.log(`ok ${ws.extensions}`);
});

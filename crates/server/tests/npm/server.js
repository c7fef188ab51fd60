// npm `ws` as an echo server for ringwire's client: prints its port, then
// echoes every message with its type until the process is killed.
// Usage: node server.js deflate|plain

const { WebSocketServer } = require('ws');

const mode = process.argv[2];
const server = new WebSocketServer({
  host: '127.0.0.1',
  port: 0,
  perMessageDeflate: mode === 'deflate',
  maxPayload: 64 << 20,
});
server.on('listening', () => console.log(server.address().port));
server.on('connection', (ws) => {
  ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
});

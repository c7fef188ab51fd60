// The messages both npm `ws` scripts exchange with ringwire: text and binary
// from 0 B to 16 MiB, each length exact (the frame-length encodings' edges
// included). Text mixes 1- to 4-byte UTF-8 so validation sees characters
// split across reads; binary is incompressible noise.

const SIZES = [0, 1, 125, 126, 127, 65535, 65536, 65537, 1 << 20, 16 << 20];
const PATTERN = Buffer.from('ringwire é ✓ 𝄞 ');

function text(size) {
  const bytes = Buffer.alloc(size, 'a');
  // Whole patterns only, so no character is cut; ASCII pads the rest.
  const whole = size - (size % PATTERN.length);
  for (let at = 0; at < whole; at += PATTERN.length) PATTERN.copy(bytes, at);
  return bytes.toString('utf8');
}

function binary(size) {
  const bytes = Buffer.alloc(size);
  let x = 0x9e3779b9 ^ size;
  for (let i = 0; i < size; i++) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
    bytes[i] = x & 0xff;
  }
  return bytes;
}

module.exports = { SIZES, text, binary };

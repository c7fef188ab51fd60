//! Test fixture: a receive callback that delivers a fixed list of chunks, one per call, then EOF.
//! Parsers fed through it split at every position must give the same results as fed whole.

use std::io::{self, Read};

/// Delivers `data` in the chunks given at construction: one chunk (or, if the caller's buffer
/// is smaller, the part that fits) per `read`, then `Ok(0)` forever.
#[derive(Debug, Clone)]
pub struct Chunks {
    data: Vec<u8>,
    /// End offset of each chunk, ascending.
    ends: Vec<usize>,
    pos: usize,
    chunk: usize,
}

impl Chunks {
    /// The given chunks, in order (empty chunks are skipped: a read of 0 bytes means EOF).
    pub fn new<I, C>(chunks: I) -> Self
    where
        I: IntoIterator<Item = C>,
        C: AsRef<[u8]>,
    {
        let (mut data, mut ends) = (Vec::new(), Vec::new());
        for chunk in chunks {
            if !chunk.as_ref().is_empty() {
                data.extend_from_slice(chunk.as_ref());
                ends.push(data.len());
            }
        }
        Self::from_parts(data, ends)
    }

    /// `data` in pieces of `size` bytes (the last may be shorter).
    pub fn every(data: &[u8], size: usize) -> Self {
        assert!(size > 0, "chunk size must be positive");
        let ends = (1..=data.len().div_ceil(size))
            .map(|i| (i * size).min(data.len()))
            .collect();
        Self::from_parts(data.to_vec(), ends)
    }

    /// `data` split once, at `at`: the split-at-every-byte tests iterate `at` over the input.
    pub fn split_at(data: &[u8], at: usize) -> Self {
        let (head, tail) = data.split_at(at);
        Self::new([head, tail])
    }

    fn from_parts(data: Vec<u8>, ends: Vec<usize>) -> Self {
        Self {
            data,
            ends,
            pos: 0,
            chunk: 0,
        }
    }

    /// Starts delivering from the first chunk again (benchmarks reuse one fixture).
    pub fn rewind(&mut self) {
        self.pos = 0;
        self.chunk = 0;
    }

    /// Number of chunks.
    pub fn chunk_count(&self) -> usize {
        self.ends.len()
    }
}

impl Read for Chunks {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(&end) = self.ends.get(self.chunk) else {
            return Ok(0);
        };
        let n = buf.len().min(end - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        if self.pos == end {
            self.chunk += 1;
        }
        Ok(n)
    }
}

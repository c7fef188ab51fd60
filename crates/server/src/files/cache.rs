//! Open files and their metadata, kept for a short time so that repeated
//! requests for the same path skip `canonicalize`, `open` and `stat`.
//!
//! Entries are shared (`Arc`) with the responses that send them and are
//! checked on use: one older than the time to live is dropped and loaded
//! again, so a file replaced on disk is seen within that time. The map is
//! bounded; inserting into a full map first drops the expired entries, then
//! an arbitrary one. A dropped entry's descriptor closes when the last
//! response still sending it is done, so nothing is counted by hand.

use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, UNIX_EPOCH};

use bytes::Bytes;
use ringwire_http1::encode::{DateCache, FieldBlock};

use super::content_type;
use crate::clock;
use crate::middleware::compress::{preferred_encoding, KEPT_ORDER};
use crate::middleware::Encoding;

/// One open regular file and what its responses say about it.
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) file: Arc<File>,
    pub(super) len: u64,
    /// Whole seconds since the epoch of the last modification (0 before it).
    pub(super) mtime: u64,
    /// `"<len-hex>-<mtime-nanoseconds-hex>"`, quotes included: strong.
    pub(super) etag: Bytes,
    /// What every full answer says: `content-type`, `accept-ranges`,
    /// `etag` and `last-modified` (`mtime` as an IMF-fixdate), encoded once.
    pub(super) fields: FieldBlock,
    /// The bytes of a small file, read once per cache lifetime: sent from
    /// memory with the head in one `send`, where `sendfile` would cost a
    /// second system call for a few hundred bytes.
    pub(super) contents: Option<Bytes>,
    /// When it was loaded ([`clock::monotonic`]).
    loaded: Duration,
    /// Whether answers depend on `accept-encoding`: the file has precompressed forms, or is
    /// one.
    pub(super) varies: bool,
    /// The file's precompressed forms (`X.br`, `X.gz` beside `X`), each answered with its
    /// `content-encoding` to a client that accepts it.
    encoded: Vec<(Encoding, Entry)>,
}

/// Files up to this size are kept in memory by the cache.
const SMALL_FILE: u64 = 16 << 10;

impl Entry {
    fn age(&self) -> Duration {
        clock::monotonic().saturating_sub(self.loaded)
    }

    /// Opens `path`, with the precompressed forms of it in `sidecars` that open (a file at
    /// `X.br` is only worth anything if it opens); `NotFound` when `path` is not a regular
    /// file.
    pub(super) async fn open(path: &Path, sidecars: &[(Encoding, PathBuf)]) -> io::Result<Entry> {
        let content_type = content_type(path);
        let mut encoded = Vec::new();
        for (coding, sidecar) in sidecars {
            if let Ok(entry) = Entry::load(sidecar, content_type, Some(*coding), true).await {
                encoded.push((*coding, entry));
            }
        }
        let mut entry = Entry::load(path, content_type, None, !encoded.is_empty()).await?;
        entry.encoded = encoded;
        Ok(entry)
    }

    /// The entry to answer a request with `accept-encoding` (looked up only for a file that
    /// has precompressed forms): the form the client prefers, if there is one, else this.
    pub(super) fn select<'a>(&self, accept: impl FnOnce() -> Option<&'a [u8]>) -> &Entry {
        if self.encoded.is_empty() {
            return self;
        }
        let offered = |coding| self.encoded.iter().any(|(c, _)| *c == coding);
        let chosen = accept().and_then(|accept| preferred_encoding(accept, offered, &KEPT_ORDER));
        chosen
            .and_then(|coding| self.encoded.iter().find(|(c, _)| *c == coding))
            .map_or(self, |(_, entry)| entry)
    }

    /// Opens `path` as a file of `content_type`, coded with `coding`.
    async fn load(
        path: &Path,
        content_type: &str,
        coding: Option<Encoding>,
        varies: bool,
    ) -> io::Result<Entry> {
        // Non-blocking, so a FIFO in the tree cannot hold the open until a writer comes
        // (the check below then refuses it); reads of a regular file ignore the flag.
        let nonblocking = rustix::fs::OFlags::NONBLOCK.bits() as i32;
        let mut file = tokio::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nonblocking)
            .open(path)
            .await?;
        // The metadata of the descriptor we keep, not of whatever the path
        // names a moment later.
        let meta = file.metadata().await?;
        if !meta.is_file() {
            return Err(io::ErrorKind::NotFound.into());
        }
        let mut contents = None;
        if meta.len() <= SMALL_FILE {
            let mut buf = Vec::with_capacity(meta.len() as usize);
            tokio::io::AsyncReadExt::read_to_end(&mut file, &mut buf).await?;
            // Changed while we looked: leave it to `sendfile`, which sends
            // what the metadata promised or ends the connection.
            contents = (buf.len() as u64 == meta.len()).then(|| buf.into());
        }
        let file = file.into_std().await;
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .unwrap_or_default();
        let len = meta.len();
        let etag = format!("\"{len:x}-{:x}\"", modified.as_nanos());
        let mut date = DateCache::new();
        let last_modified = date.update(UNIX_EPOCH + modified);
        Ok(Entry {
            file: Arc::new(file),
            len,
            mtime: modified.as_secs(),
            fields: FieldBlock::new(
                [
                    ("content-type", content_type.as_bytes()),
                    ("accept-ranges", b"bytes"),
                    ("etag", etag.as_bytes()),
                    ("last-modified", last_modified),
                ]
                .into_iter()
                .chain(coding.map(|c| ("content-encoding", c.token().as_bytes())))
                .chain(varies.then_some(("vary", &b"accept-encoding"[..]))),
            )
            .map_err(io::Error::other)?,
            etag: etag.into(),
            contents,
            loaded: clock::monotonic(),
            varies,
            encoded: Vec::new(),
        })
    }
}

/// Entries by request path, bounded in number and age.
pub(super) struct FileCache {
    ttl: Duration,
    capacity: usize,
    entries: Mutex<Map>,
}

/// Keys are request paths of files that exist, in a bounded map: a seeded
/// fast hash is enough (SipHash was 2.4% of a pipelined static-file profile).
type Map = HashMap<Vec<u8>, Arc<Entry>, foldhash::fast::RandomState>;

impl FileCache {
    /// Keeps at most `capacity` entries, each for `ttl`. Either being zero
    /// turns the cache off.
    pub(super) fn new(ttl: Duration, capacity: usize) -> Self {
        FileCache {
            ttl,
            capacity,
            entries: Mutex::new(Map::default()),
        }
    }

    /// An empty cache of the same size and time to live.
    pub(super) fn emptied(&self) -> Self {
        FileCache::new(self.ttl, self.capacity)
    }

    /// What `f` makes of the fresh entry for `key`, dropping a stale one.
    /// (Under the lock, rather than handing out a clone of the entry's
    /// `Arc`: a hit is answered without touching its count.)
    pub(super) fn with<R>(&self, key: &[u8], f: impl FnOnce(&Entry) -> R) -> Option<R> {
        let mut entries = self.lock();
        let entry = entries.get(key)?;
        if entry.age() < self.ttl {
            return Some(f(entry));
        }
        entries.remove(key);
        None
    }

    /// Keeps `entry` under `key`, making room when the cache is full.
    pub(super) fn insert(&self, key: Vec<u8>, entry: Arc<Entry>) {
        if self.capacity == 0 || self.ttl.is_zero() {
            return;
        }
        let mut entries = self.lock();
        if entries.len() >= self.capacity && !entries.contains_key(&key) {
            entries.retain(|_, e| e.age() < self.ttl);
            if entries.len() >= self.capacity {
                if let Some(victim) = entries.keys().next().cloned() {
                    entries.remove(&victim);
                }
            }
        }
        entries.insert(key, entry);
    }

    /// Entries held, fresh or not.
    pub(super) fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Map> {
        // No code panics while holding the lock; a poisoned map is still a
        // valid map.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for FileCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileCache")
            .field("ttl", &self.ttl)
            .field("capacity", &self.capacity)
            .field("len", &self.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(dir: &Path, name: &str) -> Arc<Entry> {
        let path = dir.join(name);
        std::fs::write(&path, name).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        Arc::new(runtime.block_on(Entry::open(&path, &[])).unwrap())
    }

    #[test]
    fn entries_expire_and_the_map_stays_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let a = entry(dir.path(), "a.txt");
        assert_eq!(a.len, 5);
        assert_eq!(a.etag.first(), Some(&b'"'));
        let fields: Vec<_> = a.fields.iter().collect();
        assert_eq!(
            fields[0],
            ("content-type", &b"text/plain; charset=utf-8"[..])
        );
        assert_eq!(fields[2], ("etag", &a.etag[..]));
        assert_eq!(fields[3].1.len(), 29);
        assert!(a.mtime > 0);

        let cache = FileCache::new(Duration::from_millis(200), 2);
        cache.insert(b"a".to_vec(), Arc::clone(&a));
        assert!(cache.with(b"a", |_| ()).is_some());
        cache.insert(b"b".to_vec(), entry(dir.path(), "b"));
        cache.insert(b"c".to_vec(), entry(dir.path(), "c"));
        assert_eq!(cache.len(), 2, "bounded");
        assert!(cache.with(b"c", |_| ()).is_some());

        std::thread::sleep(Duration::from_millis(250));
        assert!(cache.with(b"c", |_| ()).is_none(), "expired");
        assert_eq!(cache.len(), 1, "the stale entry was dropped on use");
        // Only the test's own handle keeps `a` now that it may be evicted.
        cache.insert(b"d".to_vec(), entry(dir.path(), "d"));
        cache.insert(b"e".to_vec(), entry(dir.path(), "e"));
        assert_eq!(cache.len(), 2);
        assert_eq!(Arc::strong_count(&a), 1, "evicted entries are released");

        let off = FileCache::new(Duration::ZERO, 8);
        off.insert("a".into(), a);
        assert_eq!(off.len(), 0);
    }
}

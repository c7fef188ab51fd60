//! Kafka's primitive types: fixed-width integers, (compact) strings, bytes and arrays, tagged
//! fields. One reader and one writer serve every message; `flexible` switches them between the
//! classic encodings (i16/i32 lengths) and the compact ones (unsigned varint length + 1).

mod reader;
mod writer;

pub use reader::Reader;
pub use writer::Writer;

//! The `date` field: formatted at most once per second per worker thread.

use ringwire_http1::encode::{DateCache, EncodeError, ResponseWriter};
use std::cell::RefCell;

thread_local! {
    static DATE: RefCell<DateCache> = RefCell::new(DateCache::new());
}

/// Writes the current `date` field.
pub(crate) fn write_date(head: &mut ResponseWriter<'_>) -> Result<(), EncodeError> {
    DATE.with(|date| {
        let mut date = date.borrow_mut();
        date.update(crate::clock::now());
        head.date(&date).map(drop)
    })
}

/// The current `date` field's value.
pub(crate) fn date() -> [u8; 29] {
    DATE.with(|date| *date.borrow_mut().update(crate::clock::now()))
}

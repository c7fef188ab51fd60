//! What the fuzz targets drive that is the compression middleware's own (built only under
//! `cfg(fuzzing)`, which `cargo fuzz` sets): a client's `accept-encoding`.

use super::{preferred_encoding, Encoding, FRESH_ORDER, KEPT_ORDER};

/// The coding `accept` prefers among those `setup`'s low three bits offer (in
/// [`KEPT_ORDER`]'s order), ties broken as for a kept body, or with bit 3 for a body
/// compressed for one answer. Nothing may panic; the choice must be one offered;
/// offering fewer that still include it must not change it (nor a choice of none); a
/// refusal of it appended (`, coding;q=0`) must change it; an offered coding appended at
/// `q=1` must give a choice; the two orders may differ only on a tie, so a choice at the
/// other order, if it is another, must be one this order put after it.
pub fn accept_encoding(setup: u8, accept: &[u8]) {
    let offered = setup & 7;
    let (order, other) = if setup & 8 == 0 {
        (&KEPT_ORDER, &FRESH_ORDER)
    } else {
        (&FRESH_ORDER, &KEPT_ORDER)
    };
    let choose = |accept: &[u8], offered: u8| {
        preferred_encoding(accept, |coding| offered & bit(coding) != 0, order)
    };
    let best = choose(accept, offered);
    if let Some(coding) = best {
        assert_ne!(offered & bit(coding), 0, "{coding:?} not offered");
        let refused = [accept, b",", coding.token().as_bytes(), b";q=0"].concat();
        assert_ne!(choose(&refused, offered), best);
    }
    for fewer in (0..8u8).filter(|fewer| fewer & !offered == 0) {
        if best.is_none_or(|coding| fewer & bit(coding) != 0) {
            assert_eq!(choose(accept, fewer), best, "offering {fewer:03b}");
        }
    }
    for coding in KEPT_ORDER.into_iter().filter(|&c| offered & bit(c) != 0) {
        let welcome = [accept, b",", coding.token().as_bytes(), b";q=1"].concat();
        assert!(choose(&welcome, offered).is_some(), "{coding:?} at q=1");
    }
    let elsewise = preferred_encoding(accept, |coding| offered & bit(coding) != 0, other);
    assert_eq!(elsewise.is_some(), best.is_some());
    if let (Some(theirs), Some(ours)) = (elsewise, best) {
        let place = |coding| order.iter().position(|&c| c == coding);
        assert!(place(theirs) >= place(ours), "{theirs:?} over {ours:?}");
    }
}

/// `coding`'s bit: its place in [`KEPT_ORDER`].
fn bit(coding: Encoding) -> u8 {
    let place = KEPT_ORDER.iter().position(|&c| c == coding);
    1 << place.expect("every coding is in the order")
}

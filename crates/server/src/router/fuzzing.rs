//! What the fuzz targets drive that is the router's own (built only under `cfg(fuzzing)`,
//! which `cargo fuzz` sets): patterns, and paths from the network matched against them.

use ringwire_http1::Target;

use super::{matches, parse_pattern, Params, Segment, MAX_PARAMS};

/// `pattern` parsed (or refused), `target`'s path matched against it, then against
/// patterns made of that path's own segments: one with the segments `pick`'s bits choose
/// as `:name` parameters, and the same with its tail from a segment `pick` chooses as a
/// `*name` rest.
///
/// Nothing may panic; a match fills one parameter per parameter segment, named as the
/// pattern names it and a slice of the path, a `:name` one non-empty and within one
/// segment, a `*name` one the path's end; the patterns made of the path must match it
/// and give back its segments as sent.
pub fn route(pick: u8, pattern: &str, target: &[u8]) {
    let path = Target::new(target).path();
    if let Ok(pattern) = parse_pattern(pattern) {
        matched(&pattern, path);
    }
    let raw: Vec<&[u8]> = Target::new(path).segments().map(|s| s.raw()).collect();
    let Some(own) = own_pattern(pick, path) else {
        return;
    };
    let text = pattern_text(&own);
    let own = parse_pattern(&text).unwrap_or_else(|why| panic!("{text:?}: {why}"));
    let params = matched(&own, path).unwrap_or_else(|| panic!("{text:?} misses its path"));
    let expected: Vec<&[u8]> = own
        .iter()
        .zip(&raw)
        .filter(|(segment, _)| matches!(segment, Segment::Param(_)))
        .map(|(_, raw)| *raw)
        .collect();
    assert_eq!(params, expected, "{text:?}");

    // The tail from segment `k` as a rest: what follows its slash.
    let k = usize::from(pick) % raw.len();
    let mut rest = own;
    rest.truncate(k);
    rest.push(Segment::Rest("rest".into()));
    if rest
        .iter()
        .filter(|s| !matches!(s, Segment::Literal(_)))
        .count()
        > MAX_PARAMS
    {
        return;
    }
    let text = pattern_text(&rest);
    let rest = parse_pattern(&text).unwrap_or_else(|why| panic!("{text:?}: {why}"));
    let params = matched(&rest, path).unwrap_or_else(|| panic!("{text:?} misses its path"));
    let start = raw[k].as_ptr() as usize - path.as_ptr() as usize;
    assert_eq!(params.last(), Some(&&path[start..]), "{text:?}");
}

/// The parameters `path` gives `pattern`, checked; `None` when it does not match.
fn matched<'p>(pattern: &'p [Segment], path: &'p [u8]) -> Option<Vec<&'p [u8]>> {
    let mut params = Params::new();
    if !matches(pattern, path, &mut params) {
        return None;
    }
    let named: Vec<_> = pattern
        .iter()
        .filter(|s| !matches!(s, Segment::Literal(_)))
        .collect();
    assert_eq!(params.len(), named.len());
    let span = path.as_ptr_range();
    for ((name, value), segment) in params.iter().zip(named) {
        let within = span.start <= value.as_ptr() && value.as_ptr_range().end <= span.end;
        assert!(within, "a parameter outside the path");
        match segment {
            Segment::Param(expected) => {
                assert_eq!(name, expected);
                assert!(!value.is_empty() && !value.contains(&b'/'));
            }
            Segment::Rest(expected) => {
                assert_eq!(name, expected);
                assert_eq!(
                    value.as_ptr_range().end,
                    span.end,
                    "a rest short of the end"
                );
            }
            Segment::Literal(_) => unreachable!("filtered out"),
        }
    }
    Some(params.iter().map(|(_, value)| value).collect())
}

/// A pattern of `path`'s segments: literals (their decoded text), those `pick` chooses
/// parameters. A segment a literal cannot say (not UTF-8, a `/` decoded, a leading `:` or
/// `*`) is a parameter too; `None` when that takes more than [`MAX_PARAMS`], or the path
/// has no segments.
fn own_pattern(pick: u8, path: &[u8]) -> Option<Vec<Segment>> {
    let mut params = 0;
    let mut pattern = Vec::new();
    for (i, segment) in Target::new(path).segments().enumerate() {
        let literal = segment
            .to_str()
            .ok()
            .filter(|s| !s.contains('/') && !s.starts_with([':', '*']));
        // An empty segment is always a literal (a parameter is never empty).
        let chosen = pick & (1 << (i % 8)) != 0 && !segment.raw().is_empty();
        pattern.push(match literal {
            Some(text) if !chosen => Segment::Literal(text.into()),
            _ => {
                params += 1;
                Segment::Param(format!("p{i}"))
            }
        });
    }
    (params <= MAX_PARAMS && !pattern.is_empty()).then_some(pattern)
}

/// `pattern` written as a route's pattern.
fn pattern_text(pattern: &[Segment]) -> String {
    pattern
        .iter()
        .map(|segment| match segment {
            Segment::Literal(text) => format!("/{text}"),
            Segment::Param(name) => format!("/:{name}"),
            Segment::Rest(name) => format!("/*{name}"),
        })
        .collect()
}

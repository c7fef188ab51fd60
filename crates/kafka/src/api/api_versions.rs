//! ApiVersions (18): what the broker serves, and the versions both sides speak.

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// ApiVersions request. `client_software_*` are sent from v3 on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiVersionsRequest<'a> {
    /// Client library name (v3+).
    pub client_software_name: &'a str,
    /// Client library version (v3+).
    pub client_software_version: &'a str,
}

impl Default for ApiVersionsRequest<'_> {
    fn default() -> Self {
        ApiVersionsRequest {
            client_software_name: "ringwire-kafka",
            client_software_version: env!("CARGO_PKG_VERSION"),
        }
    }
}

impl Request for ApiVersionsRequest<'_> {
    const API_KEY: ApiKey = ApiKey::ApiVersions;

    fn encode(&self, w: &mut Writer<'_>, version: i16) {
        if version >= 3 {
            w.string("client software name", self.client_software_name);
            w.string("client software version", self.client_software_version);
            w.tagged_fields();
        }
    }
}

/// One API the broker serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiVersionRange {
    /// API key (any, including ones this crate does not implement).
    pub api_key: i16,
    /// Oldest version served.
    pub min_version: i16,
    /// Newest version served.
    pub max_version: i16,
}

/// ApiVersions response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiVersionsResponse {
    /// Top-level error. `UNSUPPORTED_VERSION` comes with the broker's ranges encoded as v0, so
    /// the client can retry at a version the broker serves.
    pub error_code: ErrorCode,
    /// Every API the broker serves.
    pub api_keys: Vec<ApiVersionRange>,
    /// Quota throttle (v1+).
    pub throttle_time_ms: i32,
}

impl Response<'_> for ApiVersionsResponse {
    const API_KEY: ApiKey = ApiKey::ApiVersions;

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let error_code = ErrorCode(r.i16()?);
        if error_code == ErrorCode::UNSUPPORTED_VERSION && version > 0 {
            // The broker fell back to the v0 body it can always write.
            let mut v0 = Reader::new(r.remaining(), false);
            let api_keys = v0.array("api versions", decode_range)?;
            return Ok(ApiVersionsResponse {
                error_code,
                api_keys,
                throttle_time_ms: 0,
            });
        }
        let api_keys = r.array("api versions", decode_range)?;
        let throttle_time_ms = if version >= 1 { r.i32()? } else { 0 };
        r.tagged_fields()?;
        Ok(ApiVersionsResponse {
            error_code,
            api_keys,
            throttle_time_ms,
        })
    }
}

fn decode_range(r: &mut Reader<'_>) -> Result<ApiVersionRange, DecodeError> {
    let range = ApiVersionRange {
        api_key: r.i16()?,
        min_version: r.i16()?,
        max_version: r.i16()?,
    };
    r.tagged_fields()?;
    Ok(range)
}

/// The version to use for each API this crate implements: the highest that both sides serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Negotiated {
    versions: [Option<i16>; ApiKey::ALL.len()],
}

impl Negotiated {
    /// Intersects the broker's ranges with [`ApiKey::versions`].
    #[must_use]
    pub fn new(broker: &[ApiVersionRange]) -> Self {
        let mut negotiated = Negotiated::default();
        for (slot, key) in negotiated.versions.iter_mut().zip(ApiKey::ALL) {
            let ours = key.versions();
            *slot = broker
                .iter()
                .find(|range| range.api_key == key.code())
                .and_then(|range| {
                    let high = range.max_version.min(*ours.end());
                    let low = range.min_version.max(*ours.start());
                    (low <= high).then_some(high)
                });
        }
        negotiated
    }

    /// The version to use for `key`, or `None` when the broker serves none this crate speaks.
    #[must_use]
    pub fn version(&self, key: ApiKey) -> Option<i16> {
        let index = ApiKey::ALL.iter().position(|k| *k == key)?;
        self.versions[index]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(api_key: i16, min_version: i16, max_version: i16) -> ApiVersionRange {
        ApiVersionRange {
            api_key,
            min_version,
            max_version,
        }
    }

    #[test]
    fn negotiation_takes_the_highest_common_version() {
        let broker = [
            range(0, 3, 13), // Produce: ours stops at 12
            range(1, 4, 8),  // Fetch: the broker stops at 8
            range(3, 0, 3),  // Metadata: no overlap with 4..=12
            range(19, 2, 7), // CreateTopics
            range(99, 0, 1), // unknown to us
        ];
        let n = Negotiated::new(&broker);
        assert_eq!(n.version(ApiKey::Produce), Some(12));
        assert_eq!(n.version(ApiKey::Fetch), Some(8));
        assert_eq!(n.version(ApiKey::Metadata), None);
        assert_eq!(n.version(ApiKey::CreateTopics), Some(7));
        assert_eq!(n.version(ApiKey::ListOffsets), None);
    }

    #[test]
    fn unsupported_version_answer_is_read_as_v0() {
        // error 35, one range in the v0 layout, although v3 was asked for.
        let body = [0, 35, 0, 0, 0, 1, 0, 18, 0, 0, 0, 3];
        let mut r = Reader::new(&body, true);
        let resp = ApiVersionsResponse::decode(&mut r, 3).unwrap();
        assert_eq!(resp.error_code, ErrorCode::UNSUPPORTED_VERSION);
        assert_eq!(resp.api_keys, [range(18, 0, 3)]);
    }
}

//! ListGroups (16): the groups a broker coordinates. Each broker answers for its own, so a
//! whole cluster's groups are every broker's answers together.

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// ListGroups request. The filters (empty: every group) reach brokers that read them: states
/// from v4 (`Stable`, `Empty`, ...), types from v5 (`classic`, `consumer`, ...); an older
/// broker lists every group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListGroupsRequest<'a> {
    /// Only groups in these states.
    pub states_filter: &'a [&'a str],
    /// Only groups of these types.
    pub types_filter: &'a [&'a str],
}

impl Request for ListGroupsRequest<'_> {
    const API_KEY: ApiKey = ApiKey::ListGroups;

    fn encode(&self, w: &mut Writer<'_>, version: i16) {
        let names = |w: &mut Writer<'_>, name: &&str| w.string("filter", name);
        if version >= 4 {
            w.array("states filter", self.states_filter, names);
        }
        if version >= 5 {
            w.array("types filter", self.types_filter, names);
        }
        w.tagged_fields();
    }
}

/// One group a broker coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListedGroup<'a> {
    /// The group's id.
    pub group_id: &'a str,
    /// `consumer` for consumer groups (either protocol), empty for a group that only
    /// commits offsets, `connect` for Kafka Connect's workers, ...
    pub protocol_type: &'a str,
    /// Its state (v4+).
    pub group_state: Option<&'a str>,
    /// Its type (v5+): `classic` or `consumer` (KIP-848), `share`, `streams`.
    pub group_type: Option<&'a str>,
}

/// ListGroups response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListGroupsResponse<'a> {
    /// Quota throttle (v1+).
    pub throttle_time_ms: i32,
    /// Error (`COORDINATOR_LOAD_IN_PROGRESS` while the broker loads its groups).
    pub error_code: ErrorCode,
    /// The groups.
    pub groups: Vec<ListedGroup<'a>>,
}

impl<'a> Response<'a> for ListGroupsResponse<'a> {
    const API_KEY: ApiKey = ApiKey::ListGroups;

    fn decode(r: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError> {
        let throttle_time_ms = if version >= 1 { r.i32()? } else { 0 };
        let error_code = ErrorCode(r.i16()?);
        let groups = r.array("listed groups", |r| {
            let group = ListedGroup {
                group_id: r.string("group id")?,
                protocol_type: r.string("protocol type")?,
                group_state: if version >= 4 {
                    Some(r.string("group state")?)
                } else {
                    None
                },
                group_type: if version >= 5 {
                    Some(r.string("group type")?)
                } else {
                    None
                },
            };
            r.tagged_fields()?;
            Ok(group)
        })?;
        r.tagged_fields()?;
        Ok(ListGroupsResponse {
            throttle_time_ms,
            error_code,
            groups,
        })
    }
}

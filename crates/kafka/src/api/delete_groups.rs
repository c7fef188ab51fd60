//! DeleteGroups (42): removes groups with no members left, their committed offsets with them.

use super::{ApiKey, Request, Response};
use crate::codec::{Reader, Writer};
use crate::{DecodeError, ErrorCode};

/// DeleteGroups request, sent to the groups' coordinator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeleteGroupsRequest<'a> {
    /// The groups.
    pub groups_names: &'a [&'a str],
}

impl Request for DeleteGroupsRequest<'_> {
    const API_KEY: ApiKey = ApiKey::DeleteGroups;

    fn encode(&self, w: &mut Writer<'_>, _version: i16) {
        w.array("group names", self.groups_names, |w, name| {
            w.string("group id", name);
        });
        w.tagged_fields();
    }
}

/// One group's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeletedGroup<'a> {
    /// The group's id.
    pub group_id: &'a str,
    /// Error: `NON_EMPTY_GROUP` while it has members, `GROUP_ID_NOT_FOUND`, `NOT_COORDINATOR`.
    pub error_code: ErrorCode,
}

/// DeleteGroups response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeleteGroupsResponse<'a> {
    /// Quota throttle.
    pub throttle_time_ms: i32,
    /// One entry per group asked about.
    pub results: Vec<DeletedGroup<'a>>,
}

impl<'a> Response<'a> for DeleteGroupsResponse<'a> {
    const API_KEY: ApiKey = ApiKey::DeleteGroups;

    fn decode(r: &mut Reader<'a>, _version: i16) -> Result<Self, DecodeError> {
        let throttle_time_ms = r.i32()?;
        let results = r.array("deleted groups", |r| {
            let group = DeletedGroup {
                group_id: r.string("group id")?,
                error_code: ErrorCode(r.i16()?),
            };
            r.tagged_fields()?;
            Ok(group)
        })?;
        r.tagged_fields()?;
        Ok(DeleteGroupsResponse {
            throttle_time_ms,
            results,
        })
    }
}

//! A coordinator: the broker that keeps a consumer group's members and committed offsets (or
//! a transactional id's transactions), found through the cluster and found again when it
//! moves. One connection, shared by its users (a consumer and its heartbeat task).

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cluster::Cluster;
use crate::{ClientError, Connection};

/// The wait before asking again for a group's coordinator that is moving or loading.
const BACKOFF: Duration = Duration::from_millis(100);

#[derive(Debug)]
pub(crate) struct Coordinator {
    /// The group (or transactional id).
    group: String,
    /// Which of the two `group` is (`GROUP` or `TRANSACTION` of
    /// [`find_coordinator`](ringwire_kafka::api::find_coordinator)).
    key_type: i8,
    cluster: Arc<Cluster>,
    /// The connection, once found; held for the length of each call.
    conn: tokio::sync::Mutex<Option<Found>>,
}

/// A connection to the broker last found to coordinate the group.
#[derive(Debug)]
struct Found {
    address: String,
    conn: Connection,
}

impl Coordinator {
    pub(crate) fn new(group: String, key_type: i8, cluster: Arc<Cluster>) -> Self {
        Coordinator {
            group,
            key_type,
            cluster,
            conn: tokio::sync::Mutex::new(None),
        }
    }

    /// Runs `call` on the connection to the group's coordinator, found (again) when there is
    /// none or it moved, and retried while the coordinator is being elected or loads, up to
    /// the request timeout. `call` takes the connection and the group's name and gives the
    /// connection back with its answer: owned, not borrowed, so that the futures of its
    /// callers stay `Send` (a closure over borrowed arguments makes them higher-ranked,
    /// which the compiler cannot prove `Send` for yet).
    ///
    /// As Java's client: a coordinator still loading the group is asked again on the same
    /// connection, one that says it is not (or no longer) the coordinator is looked up
    /// again, and its connection kept when the answer names the same broker. Only a broken
    /// connection is replaced.
    pub(crate) async fn call<'s, T, F, Fut>(&'s self, mut call: F) -> Result<T, ClientError>
    where
        F: FnMut(Connection, &'s str) -> Fut,
        Fut: Future<Output = (Connection, Result<T, ClientError>)>,
    {
        let deadline = Instant::now() + self.cluster.config.request_timeout;
        let mut held = self.conn.lock().await;
        let mut look_up = held.is_none();
        loop {
            if look_up {
                if let Err(e) = self.find(&mut held).await {
                    retry(e, deadline).await?;
                    continue;
                }
            }
            let Found { address, conn } = held.take().expect("found above");
            let (conn, answer) = call(conn, &self.group).await;
            match answer {
                Ok(out) => {
                    *held = Some(Found { address, conn });
                    return Ok(out);
                }
                Err(e) => {
                    look_up = e.is_connection() || e.is_not_coordinator();
                    if !e.is_connection() {
                        *held = Some(Found { address, conn });
                    }
                    retry(e, deadline).await?;
                }
            }
        }
    }

    /// Looks the coordinator up, and connects to it unless `held` goes there already.
    async fn find(&self, held: &mut Option<Found>) -> Result<(), ClientError> {
        let address = self.cluster.coordinator(&self.group, self.key_type).await?;
        if held.as_ref().is_some_and(|found| found.address == address) {
            return Ok(());
        }
        *held = None;
        let conn = Connection::connect(&address, &self.cluster.config).await?;
        *held = Some(Found { address, conn });
        Ok(())
    }
}

/// After `e` from the group's coordinator (or from finding it): waits a moment and returns
/// `Ok` to try again when it moved, is loading or its connection broke, and `deadline` is not
/// past; else `e`.
async fn retry(e: ClientError, deadline: Instant) -> Result<(), ClientError> {
    if !e.is_coordinator_gone() || Instant::now() >= deadline {
        return Err(e);
    }
    tokio::time::sleep(BACKOFF).await;
    Ok(())
}

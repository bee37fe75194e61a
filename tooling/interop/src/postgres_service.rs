//! The PostgreSQL half of `serve`: a RustStream app on `ruststream-sqlx`'s `SqlxBroker` (its
//! inbox, on Postgres), reading and writing the queue table `@ruststream/postgres` creates.
//!
//! The crate has no table of its own: a struct gives the columns roles. This one gives the roles
//! to the columns of our schema (`packages/postgres/src/schema.ts`), which is what a team sharing
//! one table between a Rust and a TypeScript service would write: `queue` is the crate's group,
//! `run_at` its `retry_after`, `attempts` its attempt, `locked_until` its lease (so the crate takes
//! rows by lease, as ours does), `done_at` its `processed_at`, and `partition_key`, `priority`
//! and `payload` the columns of the same names. What does not map (our `lease` id, the header
//! arrays, `dedup_key`, the dead-letter origin columns) the crate neither reads nor writes; the
//! README of this folder lists the differences.
//!
//! Publishing is the crate's route to the row's `Publish`: the service's own INSERT, here the one
//! our package writes (header arrays and the key column included), minus the NOTIFY.

use std::time::Duration;

use ruststream::OutgoingMessage;
use ruststream_sqlx::prelude::*;
use sqlx::postgres::PgPoolOptions;
use sqlx::{PgConnection, Postgres};
use time::OffsetDateTime;

use crate::service::{config, consume, handle, Outgoing, Payload, Service};

/// The header that carries a publish's partition key to the INSERT: the crate has no key on an
/// outgoing message, so the service's own `Publish` decides where it goes; this one writes it to
/// the `partition_key` column and leaves it out of the header arrays.
const KEY_HEADER: &str = "x-interop-partition-key";

/// A row of our schema, created under the name `ruststream_interop` by the test (the derive takes
/// the table's name as a literal).
// `run_at` and `done_at` give the claim and the ack their columns; no Rust code reads them.
#[allow(dead_code)]
#[derive(Inbox, sqlx::FromRow)]
#[inbox(table = "ruststream_interop")]
struct Job {
    #[field(id, generated)]
    id: i64,
    #[field(group)]
    queue: String,
    #[field(partition_key)]
    partition_key: Option<Vec<u8>>,
    #[field(priority)]
    priority: i32,
    #[field(retry_after, generated)]
    run_at: OffsetDateTime,
    #[field(attempt, generated)]
    attempts: i32,
    #[field(locked_until)]
    locked_until: Option<OffsetDateTime>,
    #[field(processed_at, generated)]
    done_at: Option<OffsetDateTime>,
    #[field(payload)]
    payload: Vec<u8>,
}

impl Publish<Postgres> for Job {
    async fn publish(
        conn: &mut PgConnection,
        message: &OutgoingMessage<'_>,
    ) -> Result<(), sqlx::Error> {
        let headers = message.headers();
        let mut names = Vec::new();
        let mut values = Vec::new();
        for (name, value) in headers.iter() {
            if name != KEY_HEADER {
                names.push(name.to_string());
                values.push(value.to_vec());
            }
        }
        sqlx::query(
            "INSERT INTO ruststream_interop (queue, payload, header_names, header_values, partition_key) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(message.name())
        .bind(message.payload())
        .bind(names)
        .bind(values)
        .bind(headers.get(KEY_HEADER).map(<[u8]>::to_vec))
        .execute(conn)
        .await?;
        Ok(())
    }
}

// The crate's default poll is a second; the tests' queues are woken faster.
#[subscriber(
    InboxQueue::<Job>::new(consume().key.clone()).poll_interval(Duration::from_millis(100))
)]
async fn inbox(
    payload: &Payload<'_>,
    ctx: &mut Context<'_, keys::InboxContext>,
    Ctx(attempt): Ctx<keys::Attempt>,
) -> HandlerOutcome {
    // The runtime's attempt is the row's `attempt` column as the claim read it. The key column
    // is the delivery's partition key, which a payload-mode handler does not see.
    handle("postgres", payload.0, ctx.headers(), None, attempt).await
}

pub struct PostgresService {
    running: RunningApp,
    publisher: <Routed as PublishPolicy<ruststream_sqlx::ConnectedSqlxBroker<Postgres>>>::Live,
}

pub async fn start() -> Result<PostgresService, String> {
    let cfg = config();
    // Every name leads into the one table.
    let broker = SqlxBroker::from_url(cfg.url.clone(), PgPoolOptions::new().max_connections(4))
        .route::<Job>("*")
        .bindable();
    let egress = broker.bind(Routed);
    let app = RustStream::new(AppInfo::new("interop-rust", "0.1.0")).with_broker(broker, |b| {
        let Some(c) = cfg.consume.as_ref() else {
            return;
        };
        let cap = std::num::NonZeroU32::new(c.max_attempts).unwrap_or(std::num::NonZeroU32::MIN);
        b.include(inbox)
            .max_attempts(cap)
            .dead_letter(c.dead_letter.clone());
    });
    let running = app.start().await.map_err(|e| format!("start: {e}"))?;
    let publisher = running
        .publisher(egress)
        .await
        .map_err(|e| format!("publisher: {e}"))?;
    Ok(PostgresService { running, publisher })
}

/// Raw bytes, published as they are.
#[derive(Outgoing, Serialized)]
struct Raw(Vec<u8>);

impl Service for PostgresService {
    async fn publish(&self, m: Outgoing) -> Result<(), String> {
        let mut headers = m.headers;
        if let Some(key) = m.partition_key {
            headers.insert(KEY_HEADER, key);
        }
        let raw = Raw(m.payload);
        self.publisher
            .message(&raw)
            .with_headers(headers)
            .to(m.key.as_str())
            .publish()
            .await
            .map_err(|e| format!("publish to {}: {e}", m.key))
    }

    async fn shutdown(self) -> Result<(), String> {
        self.running
            .shutdown()
            .await
            .map_err(|e| format!("shutdown: {e}"))
    }
}

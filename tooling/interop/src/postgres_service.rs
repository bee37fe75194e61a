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
//! Publishing is the crate's route to the row's `Publish`: the service's own INSERT of the queue
//! and the payload. The crate refuses, before the INSERT runs, a header the row cannot hold byte
//! for byte, and a struct over our table has no headers column (the crate's role is one column,
//! ours two arrays): so a publish carries no header, and no key (an outgoing message has none of
//! its own here).

use std::time::Duration;

use ruststream::OutgoingMessage;
use ruststream_sqlx::prelude::*;
use sqlx::postgres::PgPoolOptions;
use sqlx::{PgConnection, Postgres};
use time::OffsetDateTime;

use crate::service::{config, consume, handle, Outgoing, Payload, Service};

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
        sqlx::query("INSERT INTO ruststream_interop (queue, payload) VALUES ($1, $2)")
            .bind(message.name())
            .bind(message.payload())
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
        if m.partition_key.is_some() {
            return Err("the crate's publish carries no partition key into this table".to_owned());
        }
        let raw = Raw(m.payload);
        self.publisher
            .message(&raw)
            .with_headers(m.headers)
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

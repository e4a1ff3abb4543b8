//! toolgate-core: decides, for every tool call an LLM emits, "run it with exactly these
//! arguments" or "send this back to the model". Pure Rust: no napi, no I/O, and no knowledge of
//! its consumers: the bindings' JSON envelopes are `toolgate-wire`'s, the host blocks of a config
//! (`proxy`) `toolgate-host-config`'s. How the crates fit together: docs/architecture.md.
//!
//! ```
//! let gate = toolgate_core::Gate::from_json(r#"{"tools":[{"name":"search","inputSchema":
//!   {"type":"object","properties":{"limit":{"type":"integer"}},"required":["limit"]}}]}"#).unwrap();
//! let v = gate.check("search", r#"{"limit":"10"}"#);
//! assert_eq!(v.outcome, toolgate_core::Outcome::Repaired);
//! assert_eq!(v.arguments.unwrap()["limit"], 10);
//! ```

#![warn(missing_docs)]

pub mod audit;
pub mod config;
pub mod context;
pub mod dialect;
pub mod error;
pub mod gate;
pub mod identity_config;
pub mod json;
pub mod pending_call;
pub mod pending_turn;
pub mod policy;
pub mod rate_limit;
pub mod receipt;
pub mod schema;
pub mod state;
pub mod stream;
pub mod suggest;
mod summary;
pub mod time;
pub mod tool_list;
pub mod turn;
pub mod verdict;

pub use config::Config;
pub use context::CallContext;
pub use dialect::{Dialect, TurnOptions, TurnRefusal};
pub use error::GateError;
pub use gate::who::{EngineAnswer, Stage, Who};
pub use gate::Gate;
/// The pipeline after the schema, and what a decision records: parts of [`Gate`], reachable
/// at their old paths.
pub use gate::{authorize, record};
pub use pending_call::{CallStep, PendingCall};
pub use pending_turn::{EngineQuestion, PendingTurn, TurnStep};
pub use schema::flag::{Flag, FlagCode};
pub use stream::GateStream;
pub use tool_list::PreparedTools;
pub use turn::{DialectChoice, Patch, TurnCall, TurnReport, MAX_TURN_CALLS};
pub use verdict::{Confirmation, Facts, Outcome, Reason, RulesAnswer, Verdict};

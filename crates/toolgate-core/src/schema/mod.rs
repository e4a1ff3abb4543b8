//! Tool schemas: compiled once (validator plus a repair plan), then used for every call.

pub mod coerce;
pub mod compile;
pub mod flag;
pub mod message;
pub mod references;
pub mod registry;
pub mod types;

pub use compile::CompiledSchema;
pub use registry::SchemaRegistry;

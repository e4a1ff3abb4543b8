//! PLACEHOLDER codec for LangChain, being written now; every method refuses.

use serde_json::Value;

use super::{Codec, Dialect, Found, Refusal, TurnOptions};
use crate::error::GateError;

/// The LangChain codec.
pub struct LangChain;

impl Codec for LangChain {
    fn dialect(&self) -> Dialect {
        Dialect::LangChain
    }
    fn recognizes(&self, _payload: &Value) -> bool {
        false
    }
    fn read(&self, _payload: &Value, _opts: &TurnOptions) -> Result<Found, GateError> {
        Err(GateError::Dialect(format!("{} is not implemented yet", self.dialect())))
    }
    fn feedback(&self, _payload: &Value, _refused: &[Refusal<'_>]) -> Vec<Value> {
        Vec::new()
    }
    fn filter_tools(&self, _tools: &mut Value, _keep: &dyn Fn(&str) -> bool) -> Result<(), GateError> {
        Err(GateError::Dialect(format!("{} is not implemented yet", self.dialect())))
    }
}

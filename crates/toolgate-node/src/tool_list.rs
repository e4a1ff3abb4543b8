//! Tool lists prepared once (`gate.prepareTools(tools, { dialect })` in TypeScript): the list is
//! read and checked when prepared, and each filter for a caller asks the core about names only
//! (see `toolgate_core::tool_list`), so a host offering one list to many callers does not send
//! it across, or have it parsed, again.

use std::sync::Arc;

use napi::Error;
use napi_derive::napi;
use toolgate_core::{CallContext, Gate, GateError, PreparedTools, Stage, Who};

use crate::{caller, gate_of, guarded};

/// A tool list read once. Raw binding: use `gate.prepareTools(tools, { dialect })` from the package.
#[napi]
pub struct BindingTools {
    list: Arc<PreparedTools>,
}

#[napi]
impl BindingTools {
    /// Reads and checks `tools` (JSON text in `dialect`'s request shape) on the gate `handle`:
    /// the checks and errors of `filterTools` (`E_PAYLOAD` / `E_DIALECT` naming what and where).
    #[napi(constructor)]
    pub fn new(handle: u32, dialect: String, tools: String) -> std::result::Result<Self, Error<String>> {
        let gate = gate_of(handle)?;
        let list = guarded("tool list", || gate.prepare_tools(dialect.parse()?, &tools))?;
        Ok(BindingTools { list: Arc::new(list) })
    }

    /// The list filtered for a caller on the gate `handle`, as JSON text: what `filterTools`
    /// answers for the text it was prepared from. The caller is the prepared caller `caller`
    /// when given, else the context `ctx` (JSON text, `""` for none).
    #[napi]
    pub fn filter(&self, handle: u32, ctx: String, caller: Option<u32>) -> std::result::Result<String, Error<String>> {
        self.run(handle, &ctx, caller, |g, l, who| g.filter_prepared(l, who).map(|t| t.to_string()))
    }

    /// What [`BindingTools::filter`] takes out, as `filterToolsRemovals` answers it (paths into
    /// the list as prepared, `toolgate_wire::paths`).
    #[napi]
    pub fn removals(&self, handle: u32, ctx: String, caller: Option<u32>) -> std::result::Result<String, Error<String>> {
        self.run(handle, &ctx, caller, |g, l, who| g.filter_prepared_removals(l, who).map(|r| toolgate_wire::paths(&r)))
    }

    /// The dialect it was read in.
    #[napi(getter)]
    pub fn dialect(&self) -> String {
        self.list.dialect().to_string()
    }
}

impl BindingTools {
    fn run(
        &self,
        handle: u32,
        ctx: &str,
        prepared: Option<u32>,
        answer: impl FnOnce(&Gate, &PreparedTools, &Who<'_>) -> std::result::Result<String, GateError>,
    ) -> std::result::Result<String, Error<String>> {
        let gate = gate_of(handle)?;
        let known = match prepared {
            Some(c) => Some(caller::lookup(c).ok_or_else(|| Error::new("E_CONFIG".to_string(), "options.caller: this caller has been released".to_string()))?),
            None => None,
        };
        guarded("tool list", || {
            let read;
            let ctx: &CallContext = match &known {
                Some(c) => c,
                None => {
                    read = CallContext::from_json(ctx)?;
                    &read
                }
            };
            answer(&gate, &self.list, &gate.who(ctx, Stage::Full))
        })
    }
}

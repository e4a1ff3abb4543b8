//! Tool lists prepared once (`gate.prepareTools(tools, { dialect })` in TypeScript): the list is
//! read and checked when prepared, and each filter for a caller asks the core about names only
//! (see `toolgate_core::tool_list`), so a host offering one list to many callers does not send
//! it across, or have it parsed, again. A filter names the list by handle, as `check` names a
//! gate: a free function taking numbers costs less per call than a class method.

use std::sync::Arc;

use napi::Error;
use napi_derive::napi;
use toolgate_core::{CallContext, Gate, GateError, PreparedTools, Stage, Who};

use crate::slots::Slots;
use crate::{caller, gate_of, guarded};

/// Every live prepared list, by handle (the slot is freed when its `BindingTools` is collected).
static TOOL_LISTS: Slots<PreparedTools> = Slots::new();

/// A tool list read once. Raw binding: use `gate.prepareTools(tools, { dialect })` from the package.
#[napi]
pub struct BindingTools {
    handle: u32,
}

impl Drop for BindingTools {
    fn drop(&mut self) {
        TOOL_LISTS.remove(self.handle);
    }
}

#[napi]
impl BindingTools {
    /// Reads and checks `tools` (JSON text in `dialect`'s request shape) on the gate `gate`:
    /// the checks and errors of `filterTools` (`E_PAYLOAD` / `E_DIALECT` naming what and where).
    #[napi(constructor)]
    pub fn new(gate: u32, dialect: String, tools: String) -> std::result::Result<Self, Error<String>> {
        let g = gate_of(gate)?;
        let list = guarded("tool list", || g.prepare_tools(dialect.parse()?, &tools))?;
        Ok(BindingTools { handle: TOOL_LISTS.insert(Arc::new(list)) })
    }

    /// The handle to pass to `filterPrepared` / `filterPreparedRemovals` while this object is alive.
    #[napi(getter)]
    pub fn handle(&self) -> u32 {
        self.handle
    }
}

/// The prepared list `list` filtered for a caller on the gate `gate`, as JSON text: what
/// `filterTools` answers for the text it was prepared from. The caller is the prepared caller
/// `caller` when given, else the context `ctx` (JSON text, `""` for none).
#[napi]
pub fn filter_prepared(gate: u32, list: u32, ctx: String, caller: Option<u32>) -> std::result::Result<String, Error<String>> {
    run(gate, list, &ctx, caller, |g, l, who| g.filter_prepared(l, who).map(|t| t.to_string()))
}

/// What [`filter_prepared`] takes out, as `filterToolsRemovals` answers it (paths into the list
/// as prepared, `toolgate_wire::paths`).
#[napi]
pub fn filter_prepared_removals(gate: u32, list: u32, ctx: String, caller: Option<u32>) -> std::result::Result<String, Error<String>> {
    run(gate, list, &ctx, caller, |g, l, who| g.filter_prepared_removals(l, who).map(|r| toolgate_wire::paths(&r)))
}

/// One filter of the list `list` on the gate `gate` for the caller named by `prepared` or `ctx`.
fn run(
    gate: u32,
    list: u32,
    ctx: &str,
    prepared: Option<u32>,
    answer: impl FnOnce(&Gate, &PreparedTools, &Who<'_>) -> std::result::Result<String, GateError>,
) -> std::result::Result<String, Error<String>> {
    let g = gate_of(gate)?;
    let l = TOOL_LISTS.get(list).ok_or_else(|| Error::new("E_CONFIG".to_string(), "this prepared tool list has been released".to_string()))?;
    guarded("tool list", || {
        let ctx = match prepared {
            Some(c) => caller::known(c)?,
            None => Arc::new(CallContext::from_json(ctx)?),
        };
        answer(&g, &l, &g.who(&ctx, Stage::Full))
    })
}

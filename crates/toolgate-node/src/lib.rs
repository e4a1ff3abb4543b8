//! napi-rs binding of toolgate-core. It only converts: strings in, one string out, one call per
//! decision. Core errors become JS errors whose `code` is the stable `ToolGateError` code;
//! panics are caught here and never cross into Node.
//!
//! Wire format of `check` (read by `src-ts/gate.ts`; fields split on `\n`, which compact JSON
//! never holds unescaped, and the message comes last):
//! - `""`: passed untouched — run the caller's own arguments text;
//! - `ARGS \n OUTCOME \n FLAGS`: allowed with these arguments (compact JSON) and flags (JSON);
//! - `\n OUTCOME \n REASON \n MESSAGE`: refused.

mod stream;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, RwLock};

use napi::Error;
use napi_derive::napi;
use toolgate_core::{Dialect, DialectChoice, Gate, GateError, TurnOptions, Verdict};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Fail-closed answer used if the core ever panics on an input: refuse the call.
const PANIC_WIRE: &str = "\nrejected\nbad_arguments\ntoolgate could not process these arguments; the call was not run.";

fn to_wire(v: &Verdict) -> String {
    if v.untouched {
        return String::new();
    }
    let mut out = String::new();
    match &v.arguments {
        Some(args) => {
            let (Ok(a), Ok(f)) = (serde_json::to_string(args), serde_json::to_string(&v.flags)) else {
                return PANIC_WIRE.to_string();
            };
            out.reserve(a.len() + f.len() + 12);
            out.push_str(&a);
            out.push('\n');
            out.push_str(v.outcome.as_str());
            out.push('\n');
            out.push_str(&f);
        }
        None => {
            out.push('\n');
            out.push_str(v.outcome.as_str());
            out.push('\n');
            out.push_str(v.reason.map_or("bad_arguments", |r| r.as_str()));
            out.push('\n');
            out.push_str(v.message.as_deref().unwrap_or(""));
        }
    }
    out
}

fn to_js_error(e: GateError) -> Error<String> {
    Error::new(e.code().to_string(), e.to_string())
}

/// Every live gate, by handle. The hot path is a free function taking a handle: it costs less
/// per call than a class method (no class-identity or borrow bookkeeping), measured in bench/.
static GATES: RwLock<Vec<Option<Arc<Gate>>>> = RwLock::new(Vec::new());

fn register(gate: Arc<Gate>) -> u32 {
    let mut gates = GATES.write().unwrap_or_else(|e| e.into_inner());
    let gate = Some(gate);
    match gates.iter().position(Option::is_none) {
        Some(i) => {
            gates[i] = gate;
            i as u32
        }
        None => {
            gates.push(gate);
            (gates.len() - 1) as u32
        }
    }
}

fn lookup(handle: u32) -> Option<Arc<Gate>> {
    let gates = GATES.read().unwrap_or_else(|e| e.into_inner());
    gates.get(handle as usize).and_then(Clone::clone)
}

/// Owns one registered gate; dropping it (when JS collects it) unregisters the gate.
/// Raw binding: use `ToolGate` from the package instead.
#[napi]
pub struct BindingGate {
    handle: u32,
    gate: Arc<Gate>,
}

impl Drop for BindingGate {
    fn drop(&mut self) {
        let mut gates = GATES.write().unwrap_or_else(|e| e.into_inner());
        if let Some(slot) = gates.get_mut(self.handle as usize) {
            *slot = None;
        }
    }
}

#[napi]
impl BindingGate {
    /// Compiles a gate from config JSON text. Throws with `code` `E_CONFIG` on a bad config.
    #[napi(constructor)]
    pub fn new(config_json: String) -> std::result::Result<Self, Error<String>> {
        match catch_unwind(|| Gate::from_json(&config_json)) {
            Ok(Ok(gate)) => {
                let gate = Arc::new(gate);
                Ok(BindingGate { handle: register(Arc::clone(&gate)), gate })
            }
            Ok(Err(e)) => Err(to_js_error(e)),
            Err(_) => Err(Error::new("E_CONFIG".to_string(), "toolgate could not compile this config".to_string())),
        }
    }

    /// The handle to pass to `check` while this object is alive.
    #[napi(getter)]
    pub fn handle(&self) -> u32 {
        self.handle
    }

    /// Refuses arguments the host could not serialize (see `Gate::check_unreadable`).
    #[napi]
    pub fn check_unreadable(&self, tool: String, detail: String) -> String {
        let gate = &self.gate;
        catch_unwind(AssertUnwindSafe(|| to_wire(&gate.check_unreadable(&tool, &detail))))
            .unwrap_or_else(|_| PANIC_WIRE.to_string())
    }

    /// Declared tool names, in config order.
    #[napi]
    pub fn tool_names(&self) -> Vec<String> {
        self.gate.tool_names().map(str::to_owned).collect()
    }
}

/// Checks one call on the gate `handle` (the hot path); answers in the wire format of this
/// module's docs. Never throws: an unknown handle is a refusal.
#[napi]
pub fn check(handle: u32, tool: String, args: String) -> String {
    let Some(gate) = lookup(handle) else {
        return "\nrejected\nbad_arguments\nThis gate has been released; the call was not run.".to_string();
    };
    catch_unwind(AssertUnwindSafe(|| to_wire(&gate.check(&tool, &args)))).unwrap_or_else(|_| PANIC_WIRE.to_string())
}

const RELEASED: &str = "This gate has been released.";

fn gate_of(handle: u32) -> std::result::Result<Arc<Gate>, Error<String>> {
    lookup(handle).ok_or_else(|| Error::new("E_CONFIG".to_string(), RELEASED.to_string()))
}

/// Runs `f`, turning a core error into a coded JS error and a panic into `E_PAYLOAD`.
fn guarded<T>(what: &str, f: impl FnOnce() -> std::result::Result<T, GateError>) -> std::result::Result<T, Error<String>> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(to_js_error(e)),
        Err(_) => Err(Error::new("E_PAYLOAD".to_string(), format!("toolgate could not process this {what}; nothing was allowed"))),
    }
}

/// Options of a turn, from the JSON text the TS layer sends (`""` when there are none).
fn turn_options(json: &str) -> std::result::Result<TurnOptions, GateError> {
    if json.is_empty() {
        return Ok(TurnOptions::default());
    }
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| GateError::Payload(format!("options: {e}")))?;
    Ok(TurnOptions { protocol_version: v.get("protocolVersion").and_then(|p| p.as_str()).map(str::to_owned) })
}

/// Guards a whole turn (`payload` is JSON text) in `dialect` (or `"auto"`); answers the report as
/// JSON (see `TurnReport::to_wire_patches`: repairs come as patches to the caller's payload). Throws `E_PAYLOAD` / `E_DIALECT` with a message naming the
/// dialect and the JSON path.
#[napi]
pub fn guard(handle: u32, dialect: String, payload: String, options: String) -> std::result::Result<String, Error<String>> {
    let gate = gate_of(handle)?;
    guarded("payload", || {
        let choice: DialectChoice = dialect.parse()?;
        Ok(gate.guard(choice, &payload, &turn_options(&options)?)?.to_wire_patches())
    })
}

/// Filters a tool list (JSON text in `dialect`'s request shape) to what a caller may call;
/// answers the same shape as JSON text.
#[napi]
pub fn filter_tools(handle: u32, dialect: String, tools: String) -> std::result::Result<String, Error<String>> {
    let gate = gate_of(handle)?;
    guarded("tool list", || {
        let d: Dialect = dialect.parse()?;
        gate.filter_tools(d, &tools)
    })
}

/// Which of `names` a caller may see (for tool lists held as live objects: AI SDK records,
/// LangChain tool instances).
#[napi]
pub fn visible_tools(handle: u32, names: Vec<String>) -> std::result::Result<Vec<bool>, Error<String>> {
    let gate = gate_of(handle)?;
    guarded("tool list", || Ok(gate.visible(&names)))
}

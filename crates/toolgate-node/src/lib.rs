//! napi-rs binding of toolgate-core. It only converts: strings in, one string out, one call per
//! decision. Core errors become JS errors whose `code` is the stable `ToolGateError` code;
//! panics are caught here and never cross into Node.
//!
//! Wire format of `check` (read by `src-ts/gate.ts`; fields split on `\n`, which compact JSON
//! never holds unescaped, and the message comes last):
//! - `""`: passed untouched — run the caller's own arguments text;
//! - `= FACTS`: the same, with policy facts (compact JSON: `action`, `resource`, `engine`);
//! - `ARGS \n OUTCOME \n FLAGS [\n FACTS]`: allowed with these arguments (compact JSON), flags
//!   (JSON) and, when policy ran, its facts;
//! - `\n OUTCOME \n REASON \n FACTS \n MESSAGE`: refused (FACTS may be empty; it also carries a
//!   `confirm` outcome's `confirmation`).

// A test build of this cdylib (clippy --all-targets) does not register the #[napi] exports, so
// they read as dead code there; the binding is tested through the built addon (__test__/).
#![cfg_attr(test, allow(dead_code))]

mod caller;
mod decide_async;
mod pending;
mod pending_call;
mod pending_turn;
mod slots;
mod state;
mod stream;
mod tool_list;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use napi::Error;
use napi_derive::napi;
use toolgate_core::{CallContext, Dialect, DialectChoice, EngineAnswer, Gate, GateError, Stage, TurnOptions, TurnReport, Verdict, Who};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Fail-closed answer used if the core ever panics on an input: refuse the call.
const PANIC_WIRE: &str = "\nrejected\nbad_arguments\n\ntoolgate could not process these arguments; the call was not run.";

fn to_wire(v: &Verdict) -> String {
    let mut out = Vec::new();
    write_wire(v, &mut out);
    // serde_json writes UTF-8 and every other part is a `&str`
    String::from_utf8(out).unwrap_or_else(|_| PANIC_WIRE.to_string())
}

/// Writes the wire of `v` into `out` (cleared first): one buffer, no intermediate strings.
fn write_wire(v: &Verdict, out: &mut Vec<u8>) {
    out.clear();
    let facts = v.facts();
    let facts = if facts.is_empty() { None } else { Some(facts) };
    if v.untouched {
        if let Some(f) = facts {
            push_facts(out, Some(b'='), &f);
        }
        return;
    }
    match &v.arguments {
        Some(args) => {
            let ok = serde_json::to_writer(&mut *out, args).is_ok() && {
                out.push(b'\n');
                out.extend_from_slice(v.outcome.as_str().as_bytes());
                out.push(b'\n');
                serde_json::to_writer(&mut *out, &v.flags).is_ok()
            };
            if !ok {
                out.clear();
                out.extend_from_slice(PANIC_WIRE.as_bytes());
                return;
            }
            if let Some(f) = facts {
                push_facts(out, Some(b'\n'), &f);
            }
        }
        None => {
            out.push(b'\n');
            out.extend_from_slice(v.outcome.as_str().as_bytes());
            out.push(b'\n');
            out.extend_from_slice(v.reason.map_or("bad_arguments", |r| r.as_str()).as_bytes());
            out.push(b'\n');
            if let Some(f) = facts {
                push_facts(out, None, &f);
            }
            out.push(b'\n');
            out.extend_from_slice(v.message.as_deref().unwrap_or("").as_bytes());
        }
    }
}

/// Appends `sep` and the facts as compact JSON; appends nothing if they cannot be serialized.
fn push_facts(out: &mut Vec<u8>, sep: Option<u8>, f: &toolgate_core::Facts<'_>) {
    let at = out.len();
    out.extend(sep);
    if serde_json::to_writer(&mut *out, f).is_err() {
        out.truncate(at);
    }
}

/// The caller from the context JSON text the TS layer sends (`""`: no context).
fn context(json: &str) -> std::result::Result<CallContext, Error<String>> {
    CallContext::from_json(json).map_err(to_js_error)
}

/// The engines' answer for `check`/`confirm`: `""` asks (stage one), else an
/// [`EngineAnswer`] word (stage two); `None` runs the whole pipeline (a gate without engines).
fn engine_answer(text: &str) -> std::result::Result<EngineAnswer, Error<String>> {
    text.parse().map_err(to_js_error)
}

/// Runs `f` with the stage `engine` names: `None` whole pipeline, `Some("")` ask, else answers.
fn with_stage<T>(engine: Option<&str>, f: impl FnOnce(Stage<'_>) -> T) -> std::result::Result<T, Error<String>> {
    match engine {
        None => Ok(f(Stage::Full)),
        Some("") => Ok(f(Stage::Ask)),
        Some(a) => {
            let answers = [engine_answer(a)?];
            Ok(f(Stage::Answers(&answers)))
        }
    }
}

fn to_js_error(e: GateError) -> Error<String> {
    Error::new(e.code().to_string(), e.to_string())
}

/// Every live gate, by handle. The hot path is a free function taking a handle: it costs less
/// per call than a class method (no class-identity or borrow bookkeeping), measured in bench/.
static GATES: slots::Slots<Gate> = slots::Slots::new();

fn lookup(handle: u32) -> Option<Arc<Gate>> {
    GATES.get(handle)
}

/// Owns one registered gate; dropping it (when JS collects it) unregisters the gate.
/// Raw binding: use `ToolGate` from the package instead.
#[napi]
pub struct BindingGate {
    handle: u32,
    gate: Arc<Gate>,
    /// The Redis store built from this gate's own `state.redis` (not a shared `GateState`'s).
    owned_redis: Option<Arc<toolgate_redis::RedisStore>>,
}

impl Drop for BindingGate {
    fn drop(&mut self) {
        GATES.remove(self.handle);
    }
}

#[napi]
impl BindingGate {
    /// Compiles a gate from config JSON text. Throws with `code` `E_CONFIG` on a bad config.
    /// With `state`, the gate keeps loop, taint, rate and token state in that shared store
    /// instead of its own (the config's `state` block then does not apply: the store's does);
    /// without it, a config with `state.redis` gets a Redis store of its own.
    /// With `learning`, policy globs that match no declared tool yet are warnings (`warnings`),
    /// not `E_CONFIG` (see `Gate::from_json_learning`).
    #[napi(constructor)]
    pub fn new(config_json: String, state: Option<&state::BindingState>, learning: Option<bool>) -> std::result::Result<Self, Error<String>> {
        let shared = state.map(|s| Arc::clone(&s.store));
        let redis_config = if shared.is_none() { state::redis_config_of(&config_json) } else { None };
        let learning = learning.unwrap_or(false);
        match catch_unwind(move || {
            let gate = if learning { Gate::from_json_learning(&config_json) } else { Gate::from_json(&config_json) }?;
            // the core leaves the host blocks (`proxy`) unread: checked once it compiled the config
            toolgate_host_config::check(&config_json).map(|()| gate)
        }) {
            Ok(Ok(gate)) => {
                let mut owned_redis = None;
                let gate = match (shared, redis_config) {
                    (Some(store), _) => gate.with_store(store),
                    (None, Some(rc)) => {
                        let store = Arc::new(state::redis_store(&rc)?);
                        owned_redis = Some(Arc::clone(&store));
                        gate.with_store(store)
                    }
                    (None, None) => gate,
                };
                let gate = Arc::new(gate);
                Ok(BindingGate { handle: GATES.insert(Arc::clone(&gate)), gate, owned_redis })
            }
            Ok(Err(e)) => Err(to_js_error(e)),
            Err(_) => Err(Error::new("E_CONFIG".to_string(), "toolgate could not compile this config".to_string())),
        }
    }

    /// Whether this gate's state is remote (Redis): its sync decisions are refused (`E_ASYNC`).
    #[napi(getter)]
    pub fn remote_state(&self) -> bool {
        self.gate.has_remote_state()
    }

    /// Drops the connections of the Redis store this gate built from its own `state.redis`
    /// (a shared `GateState` is closed by its owner); decisions after it are refused
    /// (`state_unavailable`).
    #[napi]
    pub fn close(&self) {
        if let Some(r) = &self.owned_redis {
            r.close();
        }
    }

    /// The handle to pass to `check` while this object is alive.
    #[napi(getter)]
    pub fn handle(&self) -> u32 {
        self.handle
    }

    /// Refuses arguments the host could not serialize (see `Gate::check_unreadable`).
    #[napi]
    pub fn check_unreadable(&self, tool: String, detail: String, ctx: String) -> std::result::Result<String, Error<String>> {
        let gate = &self.gate;
        let ctx = context(&ctx)?;
        Ok(catch_unwind(AssertUnwindSafe(|| to_wire(&gate.check_unreadable(&tool, &detail, &gate.who(&ctx, Stage::Full)))))
            .unwrap_or_else(|_| PANIC_WIRE.to_string()))
    }

    /// Raises a session's taint by hand; `E_CONFIG` for a label the config does not declare.
    #[napi]
    pub fn mark_session(&self, session: String, label: String) -> std::result::Result<(), Error<String>> {
        self.gate.mark_session(&session, &label).map_err(to_js_error)
    }

    /// Takes the buffered audit records (each line ending in `\n`; `""` when none or no audit).
    #[napi]
    pub fn drain_audit(&self) -> String {
        catch_unwind(AssertUnwindSafe(|| self.gate.audit().map(|a| a.drain()).unwrap_or_default())).unwrap_or_default()
    }

    /// The host's audit sink failed (`true`) or recovered (`false`).
    #[napi]
    pub fn set_audit_failed(&self, failed: bool) {
        if let Some(a) = self.gate.audit() {
            a.set_failed(failed);
        }
    }

    /// The config's hash as audit records carry it (`None` without an `audit` block).
    #[napi(getter)]
    pub fn audit_config_hash(&self) -> Option<String> {
        self.gate.audit().map(|a| a.config_hash().to_owned())
    }

    /// Audit records lost since the gate was built (buffer full or sink failed).
    #[napi(getter)]
    pub fn audit_dropped(&self) -> f64 {
        self.gate.audit().map_or(0.0, |a| a.dropped() as f64)
    }

    /// The receipts' verifying key (base64url), when receipts are configured.
    #[napi(getter)]
    pub fn public_key(&self) -> Option<String> {
        self.gate.public_key().map(str::to_owned)
    }

    /// Whether the config has a `policy` block (deny by default).
    #[napi(getter)]
    pub fn has_policy(&self) -> bool {
        self.gate.has_policy()
    }

    /// What a `learning` build let through (rule globs matching no declared tool yet).
    #[napi(getter)]
    pub fn warnings(&self) -> Vec<String> {
        self.gate.warnings().to_vec()
    }

    /// Declared tool names, in config order.
    #[napi]
    pub fn tool_names(&self) -> Vec<String> {
        self.gate.tool_names().map(str::to_owned).collect()
    }
}

/// Checks one call on the gate `handle` (the hot path) for the prepared caller `caller` (a
/// `BindingCaller` handle; absent: no context); answers in the wire format of this module's
/// docs. Never throws: an unknown gate or caller handle is a refusal.
#[napi]
pub fn check(handle: u32, tool: String, args: String, caller: Option<u32>) -> String {
    let Some(gate) = lookup(handle) else {
        return RELEASED_WIRE.to_string();
    };
    let ctx = match caller {
        None => None,
        Some(c) => match caller::lookup(c) {
            Some(ctx) => Some(ctx),
            None => return RELEASED_CALLER_WIRE.to_string(),
        },
    };
    catch_unwind(AssertUnwindSafe(|| match &ctx {
        None => to_wire(&gate.check(&tool, &args)),
        Some(ctx) => to_wire(&gate.check_as(&tool, &args, &gate.who(ctx, Stage::Full))),
    }))
    .unwrap_or_else(|_| PANIC_WIRE.to_string())
}

/// The hot path without napi-rs's generic glue (measured in bench/check.bench.ts: that glue builds
/// a borrow scope per call and copies each string twice). Installed over the generated `check`
/// export below: same name, arguments, answers and errors' meaning. The strings are read into
/// per-thread buffers reused across calls, the gate is used under the registry's read lock (no
/// `Arc` clone), and the wire is written into a reused buffer and handed to V8 directly.
mod fast {
    use std::cell::RefCell;
    use std::ffi::c_char;
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::ptr;

    use napi::sys;

    use toolgate_core::Stage;

    use super::{write_wire, GATES, PANIC_WIRE, RELEASED_CALLER_WIRE, RELEASED_WIRE};

    thread_local! {
        /// Tool name, arguments text and the answer's wire, reused by every call on this thread.
        static BUFS: RefCell<(Vec<u8>, Vec<u8>, Vec<u8>)> = RefCell::new((Vec::with_capacity(256), Vec::with_capacity(4096), Vec::with_capacity(4096)));
    }

    /// Largest buffer kept between calls; a larger call's buffer is freed after it.
    const KEEP: usize = 1 << 16;

    /// Reads the JS string `v` as UTF-8 into `buf` (lone surrogates become U+FFFD, as napi-rs's
    /// `String` conversion does). `false` when `v` is not a string.
    unsafe fn read_string(env: sys::napi_env, v: sys::napi_value, buf: &mut Vec<u8>) -> bool {
        buf.clear();
        let cap = buf.capacity();
        let mut len = 0usize;
        if sys::napi_get_value_string_utf8(env, v, buf.as_mut_ptr().cast::<c_char>(), cap, &mut len) != sys::Status::napi_ok {
            return false;
        }
        // V8 stops before a character (at most 4 bytes) that does not fit in `cap - 1`: a
        // shorter answer is the whole string; otherwise ask the length and read again.
        if len + 5 > cap {
            if sys::napi_get_value_string_utf8(env, v, ptr::null_mut(), 0, &mut len) != sys::Status::napi_ok {
                return false;
            }
            buf.reserve(len + 1);
            if sys::napi_get_value_string_utf8(env, v, buf.as_mut_ptr().cast::<c_char>(), len + 1, &mut len) != sys::Status::napi_ok {
                return false;
            }
        }
        buf.set_len(len);
        true
    }

    /// Throws an `Error` with napi-rs's code for the failed conversion (as the generated glue would).
    unsafe fn throw(env: sys::napi_env, code: &std::ffi::CStr, msg: &std::ffi::CStr) -> sys::napi_value {
        sys::napi_throw_error(env, code.as_ptr(), msg.as_ptr());
        ptr::null_mut()
    }

    unsafe fn answer(env: sys::napi_env, wire: &[u8]) -> sys::napi_value {
        let mut out = ptr::null_mut();
        if sys::napi_create_string_utf8(env, wire.as_ptr().cast::<c_char>(), wire.len() as isize, &mut out) != sys::Status::napi_ok {
            return ptr::null_mut();
        }
        out
    }

    /// `check(handle: number, tool: string, args: string, caller?: number): string`.
    pub(super) unsafe extern "C" fn check(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
        let mut argc = 4usize;
        let mut argv = [ptr::null_mut(); 4];
        if sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), ptr::null_mut()) != sys::Status::napi_ok {
            return ptr::null_mut();
        }
        let mut handle = 0u32;
        if sys::napi_get_value_uint32(env, argv[0], &mut handle) != sys::Status::napi_ok {
            return throw(env, c"NumberExpected", c"check: `handle` must be a number");
        }
        // the prepared caller: absent or `undefined` for none, else a `BindingCaller` handle
        let mut caller = None;
        if argc > 3 {
            let mut kind = sys::ValueType::napi_undefined;
            if sys::napi_typeof(env, argv[3], &mut kind) != sys::Status::napi_ok {
                return ptr::null_mut();
            }
            if kind != sys::ValueType::napi_undefined {
                let mut c = 0u32;
                if sys::napi_get_value_uint32(env, argv[3], &mut c) != sys::Status::napi_ok {
                    return throw(env, c"NumberExpected", c"check: `caller` must be a number");
                }
                caller = Some(c);
            }
        }
        // taken out for the call (left empty meanwhile), put back after it
        let Some(mut bufs) = BUFS.try_with(|b| b.try_borrow_mut().ok().map(|mut g| std::mem::take(&mut *g))).ok().flatten() else {
            return answer(env, PANIC_WIRE.as_bytes());
        };
        let (tool, args, wire) = &mut bufs;
        let result = if !read_string(env, argv[1], tool) {
            throw(env, c"StringExpected", c"check: `tool` must be a string")
        } else if !read_string(env, argv[2], args) {
            throw(env, c"StringExpected", c"check: `args` must be a string")
        } else {
            let decided = catch_unwind(AssertUnwindSafe(|| {
                let (Ok(tool), Ok(args)) = (std::str::from_utf8(tool), std::str::from_utf8(args)) else {
                    return false;
                };
                let gates = GATES.read();
                let Some(gate) = gates.get(handle as usize).and_then(Option::as_ref) else {
                    wire.clear();
                    wire.extend_from_slice(RELEASED_WIRE.as_bytes());
                    return true;
                };
                match caller {
                    None => write_wire(&gate.check(tool, args), wire),
                    Some(c) => {
                        let callers = super::caller::CALLERS.read();
                        match callers.get(c as usize).and_then(Option::as_ref) {
                            Some(ctx) => write_wire(&gate.check_as(tool, args, &gate.who(ctx, Stage::Full)), wire),
                            None => {
                                wire.clear();
                                wire.extend_from_slice(RELEASED_CALLER_WIRE.as_bytes());
                            }
                        }
                    }
                }
                true
            }));
            match decided {
                Ok(true) => answer(env, wire),
                _ => answer(env, PANIC_WIRE.as_bytes()),
            }
        };
        for b in [&mut *tool, &mut *args, &mut *wire] {
            if b.capacity() > KEEP {
                *b = Vec::with_capacity(4096);
            }
        }
        let _ = BUFS.try_with(|b| {
            if let Ok(mut slot) = b.try_borrow_mut() {
                *slot = bufs;
            }
        });
        result
    }
}

/// Puts [`fast::check`] in place of the generated `check` export (the generated one stays as the
/// typed declaration and the fallback if this hook cannot run).
#[napi(module_exports)]
pub fn install_fast_check(exports: napi::bindgen_prelude::Object<'_>, env: napi::Env) -> napi::Result<()> {
    use napi::JsValue;
    unsafe {
        let env = env.raw();
        let mut f = std::ptr::null_mut();
        let status = napi::sys::napi_create_function(env, c"check".as_ptr(), 5, Some(fast::check), std::ptr::null_mut(), &mut f);
        if status == napi::sys::Status::napi_ok {
            napi::sys::napi_set_named_property(env, exports.raw(), c"check".as_ptr(), f);
        }
    }
    Ok(())
}

const RELEASED_WIRE: &str = "\nrejected\nbad_arguments\n\nThis gate has been released; the call was not run.";
const RELEASED_CALLER_WIRE: &str = "\nrejected\nbad_arguments\n\nThis caller has been released; the call was not run.";

/// [`check`] for a caller: `ctx` is the `CallContext` as JSON text. The whole pipeline (a gate
/// with plugged engines decides in two steps: `checkStep`, `pending_call.rs`). Throws `E_CONFIG`
/// only for a context the host got wrong (unknown key, wrong type); never on model output.
#[napi]
pub fn check_as(handle: u32, tool: String, args: String, ctx: String) -> std::result::Result<String, Error<String>> {
    let Some(gate) = lookup(handle) else {
        return Ok(RELEASED_WIRE.to_string());
    };
    let ctx = context(&ctx)?;
    Ok(catch_unwind(AssertUnwindSafe(|| to_wire(&gate.check_as(&tool, &args, &gate.who(&ctx, Stage::Full))))).unwrap_or_else(|_| PANIC_WIRE.to_string()))
}

/// The second step of confirm-before-write (see `Gate::confirm`); `engine` is absent for the
/// whole pipeline, `""` to stop where plugged engines must be asked (nothing recorded, the token
/// left in place), or their answer (`allow` / `deny` / `delegate`) to finish.
/// Answers `TOOL \n WIRE`: the confirmed tool's name (empty for an invalid token), then the
/// verdict in the `check` wire.
#[napi]
pub fn confirm(handle: u32, token: String, ctx: String, engine: Option<String>) -> std::result::Result<String, Error<String>> {
    let gate = gate_of(handle)?;
    let ctx = context(&ctx)?;
    with_stage(engine.as_deref(), |stage| {
        catch_unwind(AssertUnwindSafe(|| {
            let (tool, v) = gate.confirm(&token, &gate.who(&ctx, stage));
            // a tool name holding a newline cannot be declared… but JSON-encode it anyway
            format!("{}\n{}", serde_json::to_string(&tool.unwrap_or_default()).unwrap_or_default(), to_wire(&v))
        }))
        .unwrap_or_else(|_| format!("\"\"\n{PANIC_WIRE}"))
    })
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

/// Options of a turn, from the JSON text the TS layer sends (`""` when there are none):
/// `protocolVersion`, and the caller as `context` or a prepared `caller` handle. A gate with
/// plugged engines decides a turn in two steps (`guardStep`, `pending_turn.rs`); an `engines`
/// member here is refused (`E_CONFIG`) rather than ignored, so a turn is never decided without the
/// engines it was meant to be put to.
struct TurnArgs {
    opts: TurnOptions,
    ctx: Arc<CallContext>,
}

fn turn_options(json: &str) -> std::result::Result<TurnArgs, GateError> {
    let mut out = TurnArgs { opts: TurnOptions::default(), ctx: Arc::new(CallContext::default()) };
    if json.is_empty() {
        return Ok(out);
    }
    // the common case, a prepared caller and nothing else (`{"caller":N}`, as src-ts/gate.ts
    // writes it): read without building a JSON tree
    if let Some(h) = json.strip_prefix("{\"caller\":").and_then(|r| r.strip_suffix('}')).filter(|h| is_json_uint(h)).and_then(|h| h.parse::<u32>().ok()) {
        out.ctx = caller::known(h)?;
        return Ok(out);
    }
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| GateError::Payload(format!("options: {e}")))?;
    out.opts.protocol_version = v.get("protocolVersion").and_then(|p| p.as_str()).map(str::to_owned);
    if let Some(c) = v.get("context") {
        out.ctx = Arc::new(CallContext::from_json(&c.to_string())?);
    }
    // a prepared caller (`BindingCaller` handle) instead of a context
    if let Some(c) = v.get("caller") {
        let handle =
            c.as_u64().and_then(|h| u32::try_from(h).ok()).ok_or_else(|| GateError::Config(format!("options.caller: expected a caller handle, got {c}")))?;
        out.ctx = caller::known(handle)?;
    }
    if v.get("engines").is_some() {
        return Err(GateError::Config("options.engines: a gate with plugged engines decides a turn in two steps (guardStep, then finishTurn)".to_string()));
    }
    Ok(out)
}

/// Whether `h` is a JSON unsigned integer literal (digits, no leading zero, no sign).
fn is_json_uint(h: &str) -> bool {
    !h.is_empty() && h.bytes().all(|b| b.is_ascii_digit()) && (h == "0" || !h.starts_with('0'))
}

/// Guards a whole turn (`payload` is JSON text) in `dialect` (or `"auto"`); answers the report as
/// JSON (see `toolgate_wire::report_with_patches`: repairs come as patches to the caller's payload). Throws `E_PAYLOAD` / `E_DIALECT` with a message naming the
/// dialect and the JSON path.
#[napi]
pub fn guard(handle: u32, dialect: String, payload: String, options: String) -> std::result::Result<String, Error<String>> {
    guard_into(handle, &dialect, &payload, &options, toolgate_wire::report_with_patches)
}

/// [`guard`] answering in `toolgate_wire::single_call`'s shape: a turn of one plain call in a
/// short line-oriented answer, anything else as `guard`'s report. For a host that forwards the
/// very text it decided (the MCP proxy's `tools/call`); same decisions, same errors.
#[napi]
pub fn guard_single(handle: u32, dialect: String, payload: String, options: String) -> std::result::Result<String, Error<String>> {
    guard_into(handle, &dialect, &payload, &options, toolgate_wire::single_call)
}

/// One turn decided in place, its report written by `wire`.
fn guard_into(handle: u32, dialect: &str, payload: &str, options: &str, wire: fn(&TurnReport) -> String) -> std::result::Result<String, Error<String>> {
    let gate = gate_of(handle)?;
    guarded("payload", || {
        let choice: DialectChoice = dialect.parse()?;
        let args = turn_options(options)?;
        Ok(wire(&gate.guard_as(choice, payload, &args.opts, &gate.who(&args.ctx, Stage::Full))?))
    })
}

/// Verifies a receipt against a verifying key (base64url); `expect` is `""` or JSON
/// `{ tool?, arguments?, sub? }`. Answers the claims as JSON; throws `E_RECEIPT` whose message
/// starts with the stable reason (`bad_signature: …`).
#[napi]
pub fn verify_receipt(receipt: String, public_key: String, expect: String, now_ms: f64) -> std::result::Result<String, Error<String>> {
    let run = || -> std::result::Result<String, GateError> {
        let exp: serde_json::Value =
            if expect.is_empty() { serde_json::Value::Null } else { serde_json::from_str(&expect).map_err(|e| GateError::Config(format!("expect: {e}")))? };
        let args = exp.get("arguments");
        let e =
            toolgate_core::receipt::Expect { tool: exp.get("tool").and_then(|v| v.as_str()), arguments: args, sub: exp.get("sub").and_then(|v| v.as_str()) };
        let now_s = if now_ms.is_finite() && now_ms > 0.0 { (now_ms / 1000.0) as u64 } else { 0 };
        let claims = toolgate_core::receipt::verify(&receipt, &public_key, now_s, &e).map_err(|err| GateError::Receipt(err.reason(), err.to_string()))?;
        Ok(serde_json::to_string(&claims).unwrap_or_default())
    };
    match catch_unwind(AssertUnwindSafe(run)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(to_js_error(e)),
        Err(_) => Err(Error::new("E_RECEIPT".to_string(), "malformed: the receipt could not be read".to_string())),
    }
}

/// A fresh receipt key pair: `{"privateKey":…,"publicKey":…,"kid":…}` (base64url), for `toolgate keygen`.
#[napi]
pub fn generate_receipt_key() -> std::result::Result<String, Error<String>> {
    let key = toolgate_core::receipt::ReceiptKey::generate().map_err(|e| Error::new("E_CONFIG".to_string(), e))?;
    Ok(serde_json::json!({ "privateKey": key.seed(), "publicKey": key.public_key(), "kid": key.kid() }).to_string())
}

/// Filters a tool list (JSON text in `dialect`'s request shape) to what a caller may call;
/// answers the same shape as JSON text.
#[napi]
pub fn filter_tools(handle: u32, dialect: String, tools: String, ctx: String) -> std::result::Result<String, Error<String>> {
    tool_list(handle, &dialect, &tools, &ctx, Gate::filter_tools_as)
}

/// What [`filter_tools`] would take out of `tools`, for a host that holds the list as objects:
/// the paths of the removed definitions into the list as sent (`toolgate_wire::paths`, in
/// document order, none a prefix of another). Same checks and errors as [`filter_tools`].
#[napi]
pub fn filter_tools_removals(handle: u32, dialect: String, tools: String, ctx: String) -> std::result::Result<String, Error<String>> {
    tool_list(handle, &dialect, &tools, &ctx, Gate::filter_tools_removals).map(|removed| toolgate_wire::paths(&removed))
}

/// A tool list (JSON text in `dialect`'s request shape) through one of the core's filters, for
/// the caller whose context is `ctx` (JSON text).
fn tool_list<T>(
    handle: u32,
    dialect: &str,
    tools: &str,
    ctx: &str,
    filter: fn(&Gate, Dialect, &str, &Who<'_>) -> std::result::Result<T, GateError>,
) -> std::result::Result<T, Error<String>> {
    let gate = gate_of(handle)?;
    guarded("tool list", || {
        let d: Dialect = dialect.parse()?;
        let ctx = CallContext::from_json(ctx)?;
        filter(&gate, d, tools, &gate.who(&ctx, Stage::Full))
    })
}

/// Which of `names` a caller may see (for tool lists held as live objects: AI SDK records,
/// LangChain tool instances).
#[napi]
pub fn visible_tools(handle: u32, names: Vec<String>, ctx: String) -> std::result::Result<Vec<bool>, Error<String>> {
    let gate = gate_of(handle)?;
    guarded("tool list", || {
        let ctx = CallContext::from_json(&ctx)?;
        Ok(gate.visible(&names, &gate.who(&ctx, Stage::Full)))
    })
}

//! `toolgate._native.Gate`: one compiled gate. Frozen and `Send + Sync` (the core's `Gate` is
//! immutable after construction; its state store is shared and locked inside the core), so one
//! instance may be used from many Python threads at once; every decision runs without the GIL.

use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyList, PyString, PyTuple};
use toolgate_core::{CallContext, CallStep, Dialect, DialectChoice, EngineAnswer, Gate as CoreGate, GateError, Stage, TurnOptions, TurnStep, Verdict, Who};

use crate::caller::{context, CallerArg};
use crate::convert::{report_tuple, verdict_tuple};
use crate::errors::{from_core, run_detached, tool_gate_error};

/// The refusal given if the core ever panics on a call: fail closed, nothing runs.
fn panic_verdict() -> Verdict {
    Verdict::rejected(toolgate_core::Reason::BadArguments, "toolgate could not process these arguments; the call was not run.".to_owned())
}

/// What text that cannot cross into UTF-8 (a lone surrogate) is called in messages.
const LONE_SURROGATE: &str = "the text holds a lone UTF-16 surrogate";

/// A compiled gate (raw binding: use `toolgate.ToolGate`).
#[pyclass(frozen, module = "toolgate._native")]
pub struct Gate {
    pub(crate) inner: Arc<CoreGate>,
    /// The Redis store built from the config's `state.redis`, when it has one.
    redis: Option<Arc<toolgate_redis::RedisStore>>,
}

/// An [`EngineAnswer`] word (`allow`, `deny`, `delegate`, `unasked`); `E_CONFIG` otherwise.
fn engine_answer(text: &str) -> Result<EngineAnswer, GateError> {
    text.parse()
}

/// The engine answers of a two-step decision: `None` the whole pipeline, `Some("")` stage one
/// (stop where engines must be asked), else the answer.
fn answers(py: Python<'_>, engine: Option<&str>) -> PyResult<Option<Vec<EngineAnswer>>> {
    match engine {
        None | Some("") => Ok(None),
        Some(a) => engine_answer(a).map(|a| Some(vec![a])).map_err(|e| from_core(py, &e)),
    }
}

fn stage<'a>(ask: bool, answers: &'a Option<Vec<EngineAnswer>>) -> Stage<'a> {
    match (ask, answers) {
        (true, _) => Stage::Ask,
        (false, Some(a)) => Stage::Answers(a),
        (false, None) => Stage::Full,
    }
}

/// The tool name and the arguments as Rust text; a text holding a lone UTF-16 surrogate is
/// answered instead by the refusal `check` gives it (`Err`: the verdict tuple).
#[allow(clippy::type_complexity)] // a pair of texts, or the refusal to answer with
fn readable<'py, 'a>(
    py: Python<'py>,
    gate: &CoreGate,
    ctx: &CallContext,
    tool: &'a Bound<'py, PyString>,
    args: &'a Bound<'py, PyString>,
) -> Result<(Cow<'a, str>, Cow<'a, str>), PyResult<Bound<'py, PyTuple>>> {
    match (tool.to_cow(), args.to_cow()) {
        (Ok(t), Ok(a)) => Ok((t, a)),
        (t, _) => {
            let tool = t.unwrap_or_else(|_| Cow::Owned(tool.to_string_lossy().into_owned()));
            let v = py.detach(|| {
                catch_unwind(AssertUnwindSafe(|| gate.check_unreadable(&tool, LONE_SURROGATE, &gate.who(ctx, Stage::Full)))).unwrap_or_else(|_| panic_verdict())
            });
            Err(verdict_tuple(py, &v, false))
        }
    }
}

/// JSON text of a payload or tool list, or `E_PAYLOAD` naming `what`.
pub(crate) fn payload_text<'a>(py: Python<'_>, text: &'a Bound<'_, PyString>, what: &str) -> PyResult<Cow<'a, str>> {
    text.to_cow().map_err(|_| tool_gate_error(py, "E_PAYLOAD", &format!("{what}: cannot be read as JSON ({LONE_SURROGATE})")))
}

#[pymethods]
impl Gate {
    /// Compiles a gate from config JSON text; `ToolGateError` `E_CONFIG` naming what is wrong.
    /// A config with `state.redis` gets a Redis store of its own (no connection is made here:
    /// the first decision connects, and an unreachable Redis refuses it, `state_unavailable`).
    #[new]
    fn new(py: Python<'_>, config_json: PyBackedStr) -> PyResult<Self> {
        let text: &str = &config_json;
        // the core leaves the host blocks (`proxy`) unread: checked once it compiled the config
        let gate = match py.detach(|| catch_unwind(|| CoreGate::from_json(text).and_then(|g| toolgate_host_config::check(text).map(|()| g)))) {
            Ok(Ok(gate)) => gate,
            Ok(Err(e)) => return Err(from_core(py, &e)),
            Err(_) => return Err(tool_gate_error(py, "E_CONFIG", "toolgate could not compile this config")),
        };
        match toolgate_redis::redis_config_of(text) {
            None => Ok(Gate { inner: Arc::new(gate), redis: None }),
            Some(rc) => {
                let store = Arc::new(toolgate_redis::RedisStore::new(&rc).map_err(|e| tool_gate_error(py, "E_CONFIG", &e.to_string()))?);
                let inner = Arc::new(gate.with_store(Arc::clone(&store) as Arc<dyn toolgate_core::state::StateStore>));
                Ok(Gate { inner, redis: Some(store) })
            }
        }
    }

    /// Whether this gate's state is remote (Redis): the package refuses its sync decisions
    /// (`E_ASYNC`) and runs the async ones off the event loop.
    #[getter]
    fn remote_state(&self) -> bool {
        self.inner.has_remote_state()
    }

    /// Drops the Redis store's connections (a no-op in memory); decisions after it are refused
    /// (`state_unavailable`).
    fn close(&self) {
        if let Some(r) = &self.redis {
            r.close();
        }
    }

    /// Decides one call: `args` is the arguments' JSON text (`""` means `{}`), `ctx` the caller as
    /// JSON text. The whole pipeline (a gate with plugged engines decides in two steps:
    /// [`Gate::check_step`]). Answers the verdict tuple (`arguments_json` `None` when the
    /// caller's own text runs untouched). Never raises on model output; `E_CONFIG` only for a
    /// context the host got wrong.
    #[pyo3(signature = (tool, args, ctx=None))]
    fn check<'py>(
        &self,
        py: Python<'py>,
        tool: &Bound<'py, PyString>,
        args: &Bound<'py, PyString>,
        ctx: Option<CallerArg<'_>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let ctx = context(py, &ctx)?;
        let gate = &self.inner;
        let (tool, args) = match readable(py, gate, &ctx, tool, args) {
            Ok(texts) => texts,
            Err(refused) => return refused,
        };
        let v = py.detach(|| catch_unwind(AssertUnwindSafe(|| gate.check_as(&tool, &args, &gate.who(&ctx, Stage::Full)))).unwrap_or_else(|_| panic_verdict()));
        verdict_tuple(py, &v, true)
    }

    /// The first of the engines' two steps for one call: the final verdict tuple (as
    /// [`Gate::check`] answers it) when the call is refused before the engines' stage, else a
    /// [`crate::pending_call::PendingCall`] holding the decided call, its gate and this caller.
    #[pyo3(signature = (tool, args, ctx=None))]
    fn check_step<'py>(
        &self,
        py: Python<'py>,
        tool: &Bound<'py, PyString>,
        args: &Bound<'py, PyString>,
        ctx: Option<CallerArg<'_>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ctx = Arc::new(context(py, &ctx)?.into_owned());
        let gate = &self.inner;
        let (tool, args) = match readable(py, gate, &ctx, tool, args) {
            Ok(texts) => texts,
            Err(refused) => return refused.map(Bound::into_any),
        };
        let step = py.detach(|| catch_unwind(AssertUnwindSafe(|| gate.check_step(&tool, &args, ctx))));
        match step {
            Ok(CallStep::Final(v)) => Ok(verdict_tuple(py, &v, true)?.into_any()),
            Ok(CallStep::Pending(call)) => Ok(Bound::new(py, crate::pending_call::PendingCall::new(call))?.into_any()),
            Err(_) => Ok(verdict_tuple(py, &panic_verdict(), true)?.into_any()),
        }
    }

    /// Refuses arguments the host could not turn into JSON text (a cycle, a set, NaN): unknown
    /// tool and surface first, else `bad_arguments` quoting `detail` (cut at 200 characters).
    #[pyo3(signature = (tool, detail, ctx=None))]
    fn check_unreadable<'py>(
        &self,
        py: Python<'py>,
        tool: &Bound<'py, PyString>,
        detail: &Bound<'py, PyString>,
        ctx: Option<CallerArg<'_>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let ctx = context(py, &ctx)?;
        let tool = tool.to_string_lossy().into_owned();
        let detail = detail.to_string_lossy().into_owned();
        let gate = &self.inner;
        let v = py.detach(|| {
            catch_unwind(AssertUnwindSafe(|| gate.check_unreadable(&tool, &detail, &gate.who(&ctx, Stage::Full)))).unwrap_or_else(|_| panic_verdict())
        });
        verdict_tuple(py, &v, false)
    }

    /// The second step of confirm-before-write: `(tool, verdict tuple)`; `tool` is `None` for an
    /// invalid token (`token_invalid`). `engine` as for [`Gate::check`].
    #[pyo3(signature = (token, ctx=None, engine=None))]
    fn confirm<'py>(
        &self,
        py: Python<'py>,
        token: &Bound<'py, PyString>,
        ctx: Option<CallerArg<'_>>,
        engine: Option<PyBackedStr>,
    ) -> PyResult<(Option<String>, Bound<'py, PyTuple>)> {
        let ctx = context(py, &ctx)?;
        let ask = engine.as_deref() == Some("");
        let answers = answers(py, engine.as_deref())?;
        let token = token.to_string_lossy().into_owned();
        let gate = &self.inner;
        let (tool, v) = py.detach(|| {
            catch_unwind(AssertUnwindSafe(|| gate.confirm(&token, &gate.who(&ctx, stage(ask, &answers))))).unwrap_or_else(|_| (None, panic_verdict()))
        });
        Ok((tool, verdict_tuple(py, &v, false)?))
    }

    /// Guards a whole turn (`payload` JSON text) in `dialect` (or `"auto"`); answers the report
    /// as Python values (`convert::report_tuple`: where repairs go in the caller's payload, which
    /// `python/toolgate/_report.py` writes in only when it is read).
    /// On a gate with plugged engines the host calls [`Gate::guard_step`] instead.
    /// `E_PAYLOAD` / `E_DIALECT` name the dialect and the JSON path.
    #[pyo3(signature = (dialect, payload, ctx=None, protocol_version=None))]
    fn guard<'py>(
        &self,
        py: Python<'py>,
        dialect: PyBackedStr,
        payload: &Bound<'_, PyString>,
        ctx: Option<CallerArg<'_>>,
        protocol_version: Option<String>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let ctx = context(py, &ctx)?;
        let report =
            self.turn(py, &dialect, payload, protocol_version, |gate, choice, text, opts| gate.guard_as(choice, text, opts, &gate.who(&ctx, Stage::Full)))?;
        report_tuple(py, &report, false)
    }

    /// The first of the engines' two steps for a whole turn: the report (as [`Gate::guard`]
    /// answers it) when no call reaches the plugged engines, else a
    /// [`crate::pending_turn::PendingTurn`] holding the decided turn, its gate and this caller.
    /// The same errors as `guard`.
    #[pyo3(signature = (dialect, payload, ctx=None, protocol_version=None))]
    fn guard_step<'py>(
        &self,
        py: Python<'py>,
        dialect: PyBackedStr,
        payload: &Bound<'_, PyString>,
        ctx: Option<CallerArg<'_>>,
        protocol_version: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ctx = Arc::new(context(py, &ctx)?.into_owned());
        let step = self.turn(py, &dialect, payload, protocol_version, |gate, choice, text, opts| gate.guard_step(choice, text, opts, ctx))?;
        match step {
            TurnStep::Final(report) => Ok(report_tuple(py, &report, false)?.into_any()),
            TurnStep::Pending(turn) => Ok(Bound::new(py, crate::pending_turn::PendingTurn::new(turn))?.into_any()),
        }
    }

    /// Filters a tool list (JSON text in `dialect`'s request shape) to what this caller may call;
    /// answers the same shape as JSON text.
    #[pyo3(signature = (dialect, tools, ctx=None))]
    fn filter_tools(&self, py: Python<'_>, dialect: PyBackedStr, tools: &Bound<'_, PyString>, ctx: Option<CallerArg<'_>>) -> PyResult<String> {
        self.tool_list(py, &dialect, tools, &ctx, CoreGate::filter_tools_as)
    }

    /// What [`Self::filter_tools`] would take out of `tools`, for a list held as Python values:
    /// the paths of the removed definitions into the list as sent (lists of keys and indices,
    /// in document order, none a prefix of another). Same checks and errors.
    #[pyo3(signature = (dialect, tools, ctx=None))]
    fn filter_tools_removals<'py>(
        &self,
        py: Python<'py>,
        dialect: PyBackedStr,
        tools: &Bound<'_, PyString>,
        ctx: Option<CallerArg<'_>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let removed = self.tool_list(py, &dialect, tools, &ctx, CoreGate::filter_tools_removals)?;
        crate::convert::path_lists(py, &removed)
    }

    /// Which of `names` this caller may see (tool lists held as live objects).
    #[pyo3(signature = (names, ctx=None))]
    fn visible_tools(&self, py: Python<'_>, names: Vec<String>, ctx: Option<CallerArg<'_>>) -> PyResult<Vec<bool>> {
        let ctx = context(py, &ctx)?;
        let gate = &self.inner;
        run_detached(py, "tool list", "E_PAYLOAD", || Ok(gate.visible(&names, &gate.who(&ctx, Stage::Full))))
    }

    /// Raises a session's taint to `label`; `E_CONFIG` for a label `labels` does not declare.
    fn mark_session(&self, py: Python<'_>, session: PyBackedStr, label: PyBackedStr) -> PyResult<()> {
        let gate = &self.inner;
        run_detached(py, "session", "E_STATE", || gate.mark_session(&session, &label))
    }

    /// Takes the buffered audit records (each line ending in `\n`; `""` when none or no audit).
    fn drain_audit(&self) -> String {
        catch_unwind(AssertUnwindSafe(|| self.inner.audit().map(|a| a.drain()).unwrap_or_default())).unwrap_or_default()
    }

    /// The host's audit sink failed (`True`) or recovered (`False`).
    fn set_audit_failed(&self, failed: bool) {
        if let Some(a) = self.inner.audit() {
            a.set_failed(failed);
        }
    }

    /// The config's hash as audit records carry it (`None` without an `audit` block).
    #[getter]
    fn audit_config_hash(&self) -> Option<String> {
        self.inner.audit().map(|a| a.config_hash().to_owned())
    }

    /// Audit records lost since the gate was built.
    #[getter]
    fn audit_dropped(&self) -> u64 {
        self.inner.audit().map_or(0, |a| a.dropped())
    }

    /// The receipts' verifying key (base64url), when receipts are configured.
    #[getter]
    fn public_key(&self) -> Option<String> {
        self.inner.public_key().map(str::to_owned)
    }

    /// Whether the config has a `policy` block (deny by default).
    #[getter]
    fn has_policy(&self) -> bool {
        self.inner.has_policy()
    }

    /// Declared tool names, in config order.
    fn tool_names(&self) -> Vec<String> {
        self.inner.tool_names().map(str::to_owned).collect()
    }
}

/// What one of the core's tool-list filters answers for a list (JSON text), for a caller.
type ToolListFilter<T> = fn(&CoreGate, Dialect, &str, &Who<'_>) -> Result<T, GateError>;

impl Gate {
    /// A tool list (JSON text in `dialect`'s request shape) through one of the core's filters,
    /// for this caller: the text and the caller read here, the filter run off the GIL.
    fn tool_list<T: Send>(
        &self,
        py: Python<'_>,
        dialect: &str,
        tools: &Bound<'_, PyString>,
        ctx: &Option<CallerArg<'_>>,
        filter: ToolListFilter<T>,
    ) -> PyResult<T> {
        let text = payload_text(py, tools, &format!("{dialect} tool list"))?;
        let ctx = context(py, ctx)?;
        let gate = &self.inner;
        run_detached(py, "tool list", "E_PAYLOAD", || {
            let d: Dialect = dialect.parse()?;
            filter(gate, d, &text, &gate.who(&ctx, Stage::Full))
        })
    }
}

impl Gate {
    /// One turn of `payload` (text) in `dialect` decided by `decide` with the GIL released: the
    /// text and options read as `guard` reads them, errors as it raises them.
    fn turn<T: Send>(
        &self,
        py: Python<'_>,
        dialect: &str,
        payload: &Bound<'_, PyString>,
        protocol_version: Option<String>,
        decide: impl FnOnce(&Arc<CoreGate>, DialectChoice, &str, &TurnOptions) -> Result<T, GateError> + Send,
    ) -> PyResult<T> {
        let text = payload_text(py, payload, &format!("{dialect} payload"))?;
        let gate = &self.inner;
        let opts = TurnOptions { protocol_version };
        run_detached(py, "payload", "E_PAYLOAD", || decide(gate, dialect.parse()?, &text, &opts))
    }
}

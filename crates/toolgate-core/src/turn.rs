//! `guard`: one whole model turn in a dialect's wire shape → a [`TurnReport`]. Written once
//! against the [`Codec`] trait; the stream assemblers finish through the same
//! [`Gate::finish_turn`], so a streamed turn and a whole one are answered alike.

use ahash::AHashSet;
use serde_json::Value;

use crate::audit::RawArgs;
use crate::dialect::{self, Args, Call, Dialect, Found, ProviderCall, Refusal, TurnOptions, TurnRefusal};
use crate::error::GateError;
use crate::gate::record::Origin;
use crate::gate::who::{Stage, Who};
use crate::gate::Gate;
use crate::json::parse::{parse_payload, ParseError};
use crate::json::pointer::Seg;
use crate::verdict::{Outcome, Verdict};

/// One call of a turn and its verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnCall {
    /// The wire id as a string, or `"{index}"` where the payload has none.
    pub call_id: String,
    /// The tool the model asked for.
    pub tool: String,
    /// The decision.
    pub verdict: Verdict,
    /// Present iff allowed: the caller's own text when it runs unchanged, else the arguments
    /// serialized.
    pub arguments_json: Option<String>,
}

/// The answer for a whole turn (`TurnReport` in docs/api.md).
#[derive(Debug, Clone, PartialEq)]
pub struct TurnReport {
    /// The dialect read (what `auto` recognized).
    pub dialect: Dialect,
    /// Every call in payload order; empty for a text-only turn.
    pub calls: Vec<TurnCall>,
    /// The turn with repaired (and normalised: `""` / `null` / missing → `{}`) arguments written
    /// back; `None` when nothing changed (the payload as given is then the answer).
    pub payload: Option<Value>,
    /// The answers for refused calls, grouped as the dialect's API requires.
    pub feedback: Vec<Value>,
    /// Tools the provider ran itself: reported, not gated.
    pub provider_executed: Vec<ProviderCall>,
    /// Where repairs were written into `payload`: one per repaired or normalised call, so a host
    /// holding the payload it sent can apply them itself instead of receiving the whole payload
    /// back.
    pub patches: Vec<Patch>,
    /// Refusals of the turn as a whole (a call the model tried to make but that cannot be
    /// read); their answers are in `feedback` too. Empty for most turns.
    pub turn_refusals: Vec<TurnRefusal>,
}

/// One repair (or normalisation) written back into the payload: the call's arguments member at
/// `path` now holds that call's `arguments_json` — as a JSON string when `as_text` (OpenAI
/// `arguments`), else as the value it serializes.
#[derive(Debug, Clone, PartialEq)]
pub struct Patch {
    /// Index of the call in [`TurnReport::calls`].
    pub call: usize,
    /// Path from the payload root to the arguments member (it may be inserted, e.g. MCP
    /// `params.arguments`).
    pub path: Vec<Seg>,
    /// The member holds JSON text rather than a value.
    pub as_text: bool,
}

/// What the audit record of a turn's call holds of its arguments: the value as the payload held
/// it (kept before the decision took it), the call's own text, or nothing.
pub(crate) fn raw_of<'a>(kept: &'a Option<Value>, call: &'a Call, keep_raw: bool) -> RawArgs<'a> {
    match (kept, &call.args, keep_raw) {
        (Some(v), _, _) => RawArgs::Value(v),
        (None, Args::Text(t), true) => RawArgs::Text(t),
        _ => RawArgs::None,
    }
}

/// What the audit record of a call decided at [`Stage::Ask`] needs when it is finished later: the
/// arguments as the payload held them (only when records include arguments) and when its
/// decision started.
#[derive(Debug)]
pub(crate) struct Held {
    pub(crate) raw: Option<Value>,
    pub(crate) started: Option<std::time::Instant>,
}

/// A turn read and its calls decided ([`Gate::decide_calls`]), before the report is assembled.
#[derive(Debug)]
pub(crate) struct DecidedCalls {
    /// The dialect read.
    pub(crate) dialect: Dialect,
    /// The payload as parsed (arguments given as values are moved out into their decisions).
    pub(crate) payload: Value,
    /// The calls the codec found.
    pub(crate) found: Found,
    /// One verdict per call, in payload order.
    pub(crate) verdicts: Vec<Verdict>,
    /// At [`Stage::Ask`], one per call: what finishing it needs; empty otherwise.
    pub(crate) held: Vec<Held>,
    /// Whether audit records include the arguments as received.
    pub(crate) keep_raw: bool,
}

impl DecidedCalls {
    /// True when some call puts a question to the plugged engines (decided at [`Stage::Ask`]).
    pub(crate) fn asks(&self) -> bool {
        self.verdicts.iter().any(|v| v.engine_question.is_some())
    }
}

/// How `guard` is told which dialect to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialectChoice {
    /// This dialect.
    Is(Dialect),
    /// Recognize it from the payload's shape.
    Auto,
}

impl std::str::FromStr for DialectChoice {
    type Err = GateError;
    fn from_str(s: &str) -> Result<Self, GateError> {
        if s == "auto" {
            Ok(DialectChoice::Auto)
        } else {
            s.parse().map(DialectChoice::Is)
        }
    }
}

/// Most tool calls one turn (or one stream) may hold: a model answers with a handful; a turn of
/// thousands of one-byte calls would make megabytes of refusal messages from a payload of one
/// (each refused call is answered with its own message). More is `E_PAYLOAD`, before any call
/// is decided.
pub const MAX_TURN_CALLS: usize = 1024;

impl Gate {
    /// Guards a whole turn given as raw JSON text (parsed once, strictly: a duplicate or
    /// prototype key inside one call's arguments refuses that call; anywhere else it is
    /// `E_PAYLOAD`).
    pub fn guard(&self, choice: DialectChoice, payload: &str, opts: &TurnOptions) -> Result<TurnReport, GateError> {
        self.guard_as(choice, payload, opts, &self.anonymous())
    }

    /// [`Gate::guard`] for a caller: calls are decided in payload order, so an allowed labelled
    /// call taints the session before a later sink in the same turn is decided.
    pub fn guard_as(&self, choice: DialectChoice, payload: &str, opts: &TurnOptions, who: &Who<'_>) -> Result<TurnReport, GateError> {
        let result = self.guard_inner(choice, payload, opts, who);
        self.audit_turn_error(choice, who, result)
    }

    /// Records a turn refused whole (a broken payload, an unknown dialect) in the audit log, and
    /// answers `result` as it is. Such a refusal is final at either engine step (a host never
    /// goes on to the second).
    pub(crate) fn audit_turn_error<T>(&self, choice: DialectChoice, who: &Who<'_>, result: Result<T, GateError>) -> Result<T, GateError> {
        if let (Err(e), Some(log)) = (&result, self.audit()) {
            let d = match choice {
                DialectChoice::Is(d) => Some(d.as_str()),
                DialectChoice::Auto => None,
            };
            log.record_error(who.ctx, d, e.code(), &e.to_string(), who.now_ms);
        }
        result
    }

    fn guard_inner(&self, choice: DialectChoice, payload: &str, opts: &TurnOptions, who: &Who<'_>) -> Result<TurnReport, GateError> {
        let mut turn = self.decide_calls(choice, payload, opts, who)?;
        // at the engines' first step a turn is final only when no call has a question for them:
        // its calls are finished (recorded) after all are decided, and only then
        if matches!(who.stage, Stage::Ask) && !turn.asks() {
            self.record_held(&mut turn, who);
        }
        self.finish_turn(turn.dialect, turn.payload, turn.found, turn.verdicts)
    }

    /// Parses the payload, reads its calls and decides each, in payload order. Outside
    /// [`Stage::Ask`] each verdict is finished (signed, recorded) as it is decided; at
    /// [`Stage::Ask`] none is, and what recording needs is held in the answer
    /// ([`Gate::record_held`]).
    pub(crate) fn decide_calls(&self, choice: DialectChoice, payload: &str, opts: &TurnOptions, who: &Who<'_>) -> Result<DecidedCalls, GateError> {
        let parsed = parse_payload(payload, self.limits(), self.max_payload_bytes()).map_err(|e| payload_parse_error(choice, &e))?;
        // no single argument can be larger than the whole text
        let check_size = payload.len() > self.limits().max_bytes;
        let (d, mut found) = match choice {
            DialectChoice::Is(d) => (d, d.codec().read(&parsed.value, opts)?),
            DialectChoice::Auto => dialect::detect(&parsed.value, opts)?,
        };
        if found.calls.len() > MAX_TURN_CALLS {
            return Err(GateError::Payload(format!("{d} payload: {} tool calls in one turn; at most {MAX_TURN_CALLS} are decided", found.calls.len())));
        }
        // a turn refused whole is refused before any of its calls is decided: none is recorded,
        // none counts toward a loop or rate limit, none is put to the engines
        unique_call_ids(d, &found)?;
        let mut broken: Vec<Option<ParseError>> = vec![None; found.calls.len()];
        for (path, problem) in parsed.problems {
            let owner = found.calls.iter().position(|c| matches!(c.args, Args::Value(_)) && path.starts_with(&c.slot));
            match owner {
                Some(i) => {
                    broken[i].get_or_insert(problem);
                }
                None => return Err(dialect::shape::broken(d, &path, problem_text(&problem))),
            }
        }
        // a member spelled with other letter case: a host binding names case-insensitively would
        // read what the codec did not (inside a call's arguments, the case-twin hazard decides)
        if parsed.case_keys {
            let in_args = |p: &[Seg]| found.calls.iter().any(|c| matches!(c.args, Args::Value(_)) && p == c.slot.as_slice());
            if let Some((path, what)) = dialect::members::find(&parsed.value, &in_args) {
                return Err(dialect::shape::broken(d, &path, what));
            }
        }
        let keep_raw = self.audit().is_some_and(|a| a.includes_arguments());
        let asking = matches!(who.stage, Stage::Ask);
        let mut held: Vec<Held> = Vec::new();
        let verdicts: Vec<Verdict> = found
            .calls
            .iter_mut()
            .zip(broken)
            .enumerate()
            .map(|(i, (call, problem))| {
                let started = self.decision_start();
                let who = who.at(i);
                let raw_value = match (&call.args, keep_raw) {
                    (Args::Value(v), true) => Some(v.clone()),
                    _ => None,
                };
                let v = match problem {
                    Some(p) => self.refuse_arguments(&call.tool, &p, &who),
                    None => self.check_call(call, parsed.big_integer, check_size, &who),
                };
                if asking {
                    held.push(Held { raw: raw_value, started });
                    return v;
                }
                let origin =
                    Origin { dialect: Some(d), call_id: Some(&call.call_id), tool: &call.tool, raw: raw_of(&raw_value, call, keep_raw), started, step: None };
                self.finish(&who, origin, v)
            })
            .collect();
        Ok(DecidedCalls { dialect: d, payload: parsed.value, found, verdicts, held, keep_raw })
    }

    /// Finishes (signs, records) every held verdict of a turn decided at [`Stage::Ask`] whose
    /// calls put no question to the engines: the first step's answer is then the turn's.
    pub(crate) fn record_held(&self, turn: &mut DecidedCalls, who: &Who<'_>) {
        let verdicts = std::mem::take(&mut turn.verdicts);
        turn.verdicts = verdicts
            .into_iter()
            .zip(turn.found.calls.iter().zip(&turn.held))
            .enumerate()
            .map(|(i, (v, (call, held)))| {
                let origin = Origin {
                    dialect: Some(turn.dialect),
                    call_id: Some(&call.call_id),
                    tool: &call.tool,
                    raw: raw_of(&held.raw, call, turn.keep_raw),
                    started: held.started,
                    step: None,
                };
                self.finish(&who.at(i), origin, v)
            })
            .collect();
    }

    /// Decides one call found in a payload. Arguments given as a value are moved out of `call`
    /// (left `null`) into the decision rather than copied; the rest of the call is untouched.
    pub fn check_call(&self, call: &mut Call, big_integer: bool, check_size: bool, who: &Who<'_>) -> Verdict {
        if let Some(what) = &call.malformed {
            return Verdict::rejected(crate::verdict::Reason::BadArguments, what.clone());
        }
        match &mut call.args {
            Args::Text(text) => self.decide_text(&call.tool, text, who),
            Args::Missing => self.decide_text(&call.tool, "", who),
            Args::Value(v) => {
                if check_size {
                    let bytes = crate::json::serialized_len(v);
                    let limit = self.limits().max_bytes;
                    if bytes > limit {
                        return self.refuse_arguments(&call.tool, &ParseError::TooLarge { bytes, limit }, who);
                    }
                }
                self.check_value(&call.tool, std::mem::take(v), big_integer, who)
            }
        }
    }

    /// Assembles the report from calls already decided: writes repairs back into `payload`,
    /// builds the dialect's feedback for refused calls. Duplicate call ids are `E_PAYLOAD` (a
    /// host could not answer each id exactly once) — the ids given to calls without one (their
    /// position) included: a call without an id named `"1"` beside a call whose id is `"1"`
    /// would let a host that looks verdicts up by id run one call on the other's verdict.
    pub fn finish_turn(&self, d: Dialect, mut payload: Value, found: Found, verdicts: Vec<Verdict>) -> Result<TurnReport, GateError> {
        unique_call_ids(d, &found)?;
        // each allowed call's arguments as text, serialized once: the call's own text when it
        // runs unchanged; the same text is what a repair writes back into a text member
        let mut arguments_json: Vec<Option<String>> = found
            .calls
            .iter()
            .zip(&verdicts)
            .map(|(call, v)| {
                v.arguments.as_ref().map(|a| match (&call.args, v.untouched) {
                    (Args::Text(t), true) => t.clone(),
                    _ => serde_json::to_string(a).unwrap_or_default(),
                })
            })
            .collect();
        let mut patches = Vec::new();
        for (i, (call, v)) in found.calls.iter().zip(&verdicts).enumerate() {
            // repaired, or passed after normalisation (`""` / `null` / missing → `{}`): what
            // runs is not what the payload holds, so it is written back the same way
            if matches!(v.outcome, Outcome::Repaired | Outcome::Passed) && !v.untouched {
                if let (Some(args), Some(text)) = (&v.arguments, &arguments_json[i]) {
                    let as_text = matches!(call.args, Args::Text(_));
                    let replacement = if as_text { Value::String(text.clone()) } else { args.clone() };
                    if write_at(&mut payload, &call.slot, replacement) {
                        patches.push(Patch { call: i, path: call.slot.clone(), as_text });
                    }
                }
            }
        }
        let changed = !patches.is_empty();
        let refused: Vec<Refusal<'_>> =
            found.calls.iter().zip(&verdicts).filter(|(_, v)| !v.allowed()).map(|(call, verdict)| Refusal { call, verdict }).collect();
        let mut feedback = if refused.is_empty() { Vec::new() } else { d.codec().feedback(&payload, &refused) };
        let turn_refusals = d.codec().turn_refusals(&payload);
        if !turn_refusals.is_empty() {
            d.codec().turn_feedback(&turn_refusals, &mut feedback);
        }
        let calls = found
            .calls
            .into_iter()
            .zip(verdicts)
            .zip(arguments_json.iter_mut())
            .map(|((call, verdict), text)| TurnCall { call_id: call.call_id, tool: call.tool, verdict, arguments_json: text.take() })
            .collect();
        Ok(TurnReport { dialect: d, calls, payload: changed.then_some(payload), feedback, provider_executed: found.provider_executed, patches, turn_refusals })
    }
}

/// `E_PAYLOAD` when two calls of a turn have the same id (see [`Gate::finish_turn`]), naming the
/// second one's place.
fn unique_call_ids(d: Dialect, found: &Found) -> Result<(), GateError> {
    let mut seen = AHashSet::with_capacity(found.calls.len());
    for c in &found.calls {
        if !seen.insert(c.call_id.as_str()) {
            let why =
                if found.calls.iter().any(|o| o.wire_id.is_none() && o.call_id == c.call_id) { " (a call without an id is named by its position)" } else { "" };
            return Err(dialect::shape::broken(
                d,
                &c.slot[..c.slot.len().saturating_sub(1)],
                format!("the call id {:?} appears twice in one turn{why}", c.call_id),
            ));
        }
    }
    Ok(())
}

/// Replaces (or inserts, for a missing last key) the value at `path`; false if the path does not
/// lead anywhere (it always does for a path a codec found).
fn write_at(root: &mut Value, path: &[Seg], value: Value) -> bool {
    let Some((last, parents)) = path.split_last() else {
        *root = value;
        return true;
    };
    let mut cur = root;
    for seg in parents {
        cur = match (seg, cur) {
            (Seg::Key(k), Value::Object(m)) => match m.get_mut(k) {
                Some(v) => v,
                None => return false,
            },
            (Seg::Index(i), Value::Array(a)) => match a.get_mut(*i) {
                Some(v) => v,
                None => return false,
            },
            _ => return false,
        };
    }
    match (last, cur) {
        (Seg::Key(k), Value::Object(m)) => {
            m.insert(k.clone(), value);
            true
        }
        (Seg::Index(i), Value::Array(a)) if *i < a.len() => {
            a[*i] = value;
            true
        }
        _ => false,
    }
}

fn problem_text(p: &ParseError) -> String {
    match p {
        ParseError::DuplicateKey { key } => format!("the key {key:?} appears twice in one object"),
        ParseError::ProtoKey { key } => format!("the key {key:?} is not allowed"),
        other => other.to_string(),
    }
}

fn payload_parse_error(choice: DialectChoice, e: &ParseError) -> GateError {
    let who = match choice {
        DialectChoice::Is(d) => format!("{d} payload"),
        DialectChoice::Auto => "payload".to_owned(),
    };
    let what = match e {
        ParseError::TooLarge { bytes, limit } => format!("{bytes} bytes, over the limit of {limit} bytes (limits.maxPayloadBytes)"),
        ParseError::TooDeep { limit } => format!("nested deeper than {limit} levels"),
        ParseError::Syntax { detail, line, column } => format!("not valid JSON ({detail} at line {line}, column {column})"),
        ParseError::NonFinite => "a number is out of range (NaN, Infinity and values beyond 64-bit floats are not allowed)".to_owned(),
        other => problem_text(other),
    };
    GateError::Payload(format!("{who}: {what}"))
}

/// Filters a tool list in `d`'s request shape to what this gate lets a caller call (every
/// declared tool until a policy exists; undeclared tools are always removed).
impl Gate {
    /// See the module docs: `tools` is JSON text in `d`'s request shape; the answer is the same
    /// shape, serialized.
    pub fn filter_tools(&self, d: Dialect, tools: &str) -> Result<String, GateError> {
        self.filter_tools_as(d, tools, &self.anonymous())
    }

    /// [`Gate::filter_tools`] for a caller: a tool stays when this caller could call it with
    /// some arguments (see `Policy::could_allow`).
    pub fn filter_tools_as(&self, d: Dialect, tools: &str, who: &Who<'_>) -> Result<String, GateError> {
        let (value, _) = self.sieve_tools(d, tools, who)?;
        Ok(serde_json::to_string(&value).unwrap_or_default())
    }

    /// [`Gate::filter_tools_as`] answering what it would take out instead of what is left: the
    /// paths, into the list as sent, of the tool definitions (and Gemini capabilities, and
    /// containers left empty) a caller may not see, in document order, none a prefix of another
    /// — so removing them from last to first, from the caller's own parsed copy of `tools`,
    /// gives exactly the list [`Gate::filter_tools_as`] answers. Same checks, same errors.
    pub fn filter_tools_removals(&self, d: Dialect, tools: &str, who: &Who<'_>) -> Result<Vec<Vec<Seg>>, GateError> {
        Ok(self.sieve_tools(d, tools, who)?.1)
    }

    /// The one filter behind both answers: the list parsed strictly, filtered in place by the
    /// dialect's codec, and the removals it made.
    fn sieve_tools(&self, d: Dialect, tools: &str, who: &Who<'_>) -> Result<(Value, Vec<Vec<Seg>>), GateError> {
        let mut value = self.read_tool_list(d, tools)?;
        let listing = self.listing(who);
        let keep = |name: &str| listing.shows_name(name);
        let removed = dialect::sieve::filter_list(d, &mut value, &keep)?;
        Ok((value, removed))
    }

    /// A tool list's text read as every filter reads it: strictly, under this gate's limits, and
    /// refused (`E_PAYLOAD`, naming where) when it holds a key written twice or a prototype key
    /// anywhere — another reader may take the other copy (a different name or schema than the
    /// one filtered), so the list is refused rather than read one way here and another there.
    pub(crate) fn read_tool_list(&self, d: Dialect, tools: &str) -> Result<Value, GateError> {
        let parsed = parse_payload(tools, self.limits(), self.max_payload_bytes()).map_err(|e| payload_parse_error(DialectChoice::Is(d), &e))?;
        if let Some((path, problem)) = parsed.problems.first() {
            return Err(dialect::shape::broken(d, path, problem_text(problem)));
        }
        Ok(parsed.value)
    }

    /// Which of `names` this caller may see (for tool lists the host holds as live objects).
    pub fn visible(&self, names: &[String], who: &Who<'_>) -> Vec<bool> {
        let listing = self.listing(who);
        names.iter().map(|n| listing.shows_name(n)).collect()
    }
}

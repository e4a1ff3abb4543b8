//! The gate: compiled once from a config, then answers `check` for every call.

use ahash::AHashMap;

use serde_json::{Map, Value};

use crate::config::Config;
use crate::error::GateError;
use crate::json::parse::{parse_str_info, Limits, ParseError};
use crate::schema::coerce::Repair;
use crate::schema::flag::{Flag, FlagCode};
use crate::schema::message::{invalid_message, problems_of, Problem};
use crate::schema::CompiledSchema;
use crate::suggest::unknown_tool_message;
use crate::json::pointer::to_display;
use crate::verdict::{Outcome, Reason, Verdict};

/// A declared tool, compiled.
#[derive(Debug, Clone)]
struct Tool {
    name: String,
    lower: String,
    destructive: bool,
    schema: CompiledSchema,
}

/// A compiled gate. Immutable after construction; `check` takes `&self` and is safe to call
/// from many threads.
#[derive(Debug, Clone)]
pub struct Gate {
    tools: Vec<Tool>,
    by_name: AHashMap<String, usize>,
    limits: Limits,
}

fn open_object_schema() -> Value {
    serde_json::json!({ "type": "object" })
}

impl Gate {
    /// Builds a gate from config JSON text. Every schema is compiled here, once.
    pub fn from_json(text: &str) -> Result<Gate, GateError> {
        Gate::new(Config::from_json(text)?)
    }

    /// Builds a gate from a parsed config.
    pub fn new(config: Config) -> Result<Gate, GateError> {
        let limits = config.parse_limits();
        let mut tools = Vec::with_capacity(config.tools.len());
        let mut by_name = AHashMap::with_capacity(config.tools.len());
        for t in config.tools {
            let schema_value = t.input_schema.unwrap_or_else(open_object_schema);
            let schema = CompiledSchema::compile(&t.name, &schema_value)?;
            by_name.insert(t.name.clone(), tools.len());
            tools.push(Tool { lower: t.name.to_lowercase(), name: t.name, destructive: t.destructive, schema });
        }
        Ok(Gate { tools, by_name, limits })
    }

    /// Declared tool names, in config order.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.name.as_str())
    }

    fn unknown(&self, tool: &str) -> Verdict {
        let visible = self.tools.iter().map(|t| (t.name.as_str(), t.lower.as_str()));
        Verdict::rejected(Reason::UnknownTool, unknown_tool_message(tool, visible))
    }

    /// Decides one call: `args` is the raw JSON text the model sent (empty means `{}`).
    pub fn check(&self, tool: &str, args: &str) -> Verdict {
        let Some(&idx) = self.by_name.get(tool) else {
            return self.unknown(tool);
        };
        let t = &self.tools[idx];
        let (value, normalized, mut flags, big_integer) = match self.root_value(t, args) {
            Ok(x) => x,
            Err(message) => return Verdict::rejected(Reason::BadArguments, message),
        };
        // Fast path: valid as sent, nothing to inject, no integer beyond 64 bits: repair would
        // change nothing, so it is skipped.
        let valid = t.schema.validator.is_valid(&value);
        if valid && !big_integer && (t.destructive || !t.schema.has_defaults) {
            return allowed(value, flags, normalized);
        }
        self.decide(t, value, valid, normalized, &mut flags)
    }

    /// Refuses arguments the host could not turn into JSON text (a cycle, a BigInt, a
    /// function), after the unknown-tool check, as `bad_arguments`.
    pub fn check_unreadable(&self, tool: &str, detail: &str) -> Verdict {
        if !self.by_name.contains_key(tool) {
            return self.unknown(tool);
        }
        let detail: String = detail.chars().take(200).collect();
        Verdict::rejected(
            Reason::BadArguments,
            format!("Invalid arguments for tool `{tool}`: they could not be read as JSON ({detail}). {OBJECT_FIX}"),
        )
    }

    /// Parses the arguments text and brings the root to an object (`""`/`null` → `{}`, a
    /// string holding a JSON object → that object, flagged).
    fn root_value(&self, t: &Tool, args: &str) -> Result<(Value, bool, Vec<Flag>, bool), String> {
        let bad = |what: String, fix: &str| format!("Invalid arguments for tool `{}`: {what}. {fix}", t.name);
        if args.trim().is_empty() {
            return Ok((Value::Object(Map::new()), true, Vec::new(), false));
        }
        let (value, info) = parse_str_info(args, &self.limits).map_err(|e| bad(e.to_string(), parse_fix(&e)))?;
        match value {
            Value::Object(_) => Ok((value, false, Vec::new(), info.big_integer)),
            Value::Null => Ok((Value::Object(Map::new()), true, Vec::new(), false)),
            Value::String(s) if !t.destructive && s.trim_start().starts_with('{') => {
                match parse_str_info(&s, &self.limits) {
                    Ok((inner @ Value::Object(_), inner_info)) => {
                        let flag = Flag { code: FlagCode::UnpackedStringifiedJson, path: String::new(), from: Some(Value::String(s)), to: None };
                        Ok((inner, true, vec![flag], inner_info.big_integer))
                    }
                    Ok(_) => Err(bad("the arguments must be a JSON object".into(), OBJECT_FIX)),
                    Err(e) => Err(bad(format!("the arguments are a string holding JSON, and {e}"), parse_fix(&e))),
                }
            }
            other => Err(bad(
                format!("the arguments must be a JSON object, got {}", crate::schema::types::type_name(&other)),
                OBJECT_FIX,
            )),
        }
    }

    /// The full path: repair (or, for strict tools, only look for problems), then the
    /// authoritative validation. `valid` is the validation of `value` as it arrived.
    fn decide(&self, t: &Tool, mut value: Value, valid: bool, normalized: bool, flags: &mut Vec<Flag>) -> Verdict {
        let mut problems: Vec<Problem> = Vec::new();
        let before = flags.len();
        {
            // strict (destructive) tools walk too, but only to find problems; nothing changes
            let mut repair = Repair::new(&t.schema, &self.limits, t.destructive);
            repair.run(&mut value);
            flags.extend(repair.flags.into_iter().map(|f| f.finish()));
            for p in repair.problems {
                let mut segs = p.segs_rev;
                segs.reverse();
                problems.push(Problem { path: to_display(&segs), text: p.text });
            }
        }
        let changed = flags.len() != before;
        if problems.is_empty() && (if changed { t.schema.validator.is_valid(&value) } else { valid }) {
            return allowed(value, std::mem::take(flags), normalized);
        }
        for err in t.schema.validator.iter_errors(&value) {
            problems.extend(problems_of(&err, &value));
        }
        Verdict::rejected(Reason::Invalid, invalid_message(&t.name, &problems))
    }
}

/// The verdict for arguments that may run: `passed` when nothing changed (and, unless the root
/// was normalized, the caller's own text is runnable as is), else `repaired`.
fn allowed(value: Value, flags: Vec<Flag>, normalized: bool) -> Verdict {
    let outcome = if flags.is_empty() { Outcome::Passed } else { Outcome::Repaired };
    Verdict {
        outcome,
        untouched: outcome == Outcome::Passed && !normalized,
        arguments: Some(value),
        flags,
        message: None,
        reason: None,
    }
}

const OBJECT_FIX: &str = "Send the arguments as one JSON object, e.g. {\"name\": \"value\"}.";

fn parse_fix(e: &ParseError) -> &'static str {
    match e {
        ParseError::DuplicateKey { .. } => "Send each key only once.",
        ParseError::ProtoKey { .. } => "Remove that key.",
        ParseError::TooLarge { .. } | ParseError::TooDeep { .. } => "Send smaller, flatter arguments.",
        ParseError::NonFinite => "Send finite numbers only.",
        ParseError::Syntax { .. } => "Send the arguments as one complete JSON object.",
    }
}

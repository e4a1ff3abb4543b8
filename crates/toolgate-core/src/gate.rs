//! The gate: compiled once from a config, then answers `check` for every call.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::config::Config;
use crate::error::GateError;
use crate::json::parse::{parse_str, Limits, ParseError};
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
    destructive: bool,
    schema: CompiledSchema,
}

/// A compiled gate. Immutable after construction; `check` takes `&self` and is safe to call
/// from many threads.
#[derive(Debug, Clone)]
pub struct Gate {
    tools: Vec<Tool>,
    by_name: HashMap<String, usize>,
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
        let mut by_name = HashMap::with_capacity(config.tools.len());
        for t in config.tools {
            let schema_value = t.input_schema.unwrap_or_else(open_object_schema);
            let schema = CompiledSchema::compile(&t.name, &schema_value)?;
            by_name.insert(t.name.clone(), tools.len());
            tools.push(Tool { name: t.name, destructive: t.destructive, schema });
        }
        Ok(Gate { tools, by_name, limits })
    }

    /// Declared tool names, in config order.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.name.as_str())
    }

    /// Decides one call: `args` is the raw JSON text the model sent (empty means `{}`).
    pub fn check(&self, tool: &str, args: &str) -> Verdict {
        let Some(&idx) = self.by_name.get(tool) else {
            return Verdict::rejected(Reason::UnknownTool, unknown_tool_message(tool, self.tool_names()));
        };
        let t = &self.tools[idx];
        let (value, normalized, mut flags) = match self.root_value(t, args) {
            Ok(x) => x,
            Err(message) => return Verdict::rejected(Reason::BadArguments, message),
        };
        self.decide(t, value, normalized, &mut flags)
    }

    /// Refuses arguments the host could not turn into JSON text (a cycle, a BigInt, a
    /// function), after the unknown-tool check, as `bad_arguments`.
    pub fn check_unreadable(&self, tool: &str, detail: &str) -> Verdict {
        if !self.by_name.contains_key(tool) {
            return Verdict::rejected(Reason::UnknownTool, unknown_tool_message(tool, self.tool_names()));
        }
        let detail: String = detail.chars().take(200).collect();
        Verdict::rejected(
            Reason::BadArguments,
            format!("Invalid arguments for tool `{tool}`: they could not be read as JSON ({detail}). {OBJECT_FIX}"),
        )
    }

    /// Parses the arguments text and brings the root to an object (`""`/`null` → `{}`, a
    /// string holding a JSON object → that object, flagged).
    fn root_value(&self, t: &Tool, args: &str) -> Result<(Value, bool, Vec<Flag>), String> {
        let bad = |what: String, fix: &str| format!("Invalid arguments for tool `{}`: {what}. {fix}", t.name);
        if args.trim().is_empty() {
            return Ok((Value::Object(Map::new()), true, Vec::new()));
        }
        let value = parse_str(args, &self.limits).map_err(|e| bad(e.to_string(), parse_fix(&e)))?;
        match value {
            Value::Object(_) => Ok((value, false, Vec::new())),
            Value::Null => Ok((Value::Object(Map::new()), true, Vec::new())),
            Value::String(s) if !t.destructive && s.trim_start().starts_with('{') => {
                match parse_str(&s, &self.limits) {
                    Ok(inner @ Value::Object(_)) => {
                        let flag = Flag { code: FlagCode::UnpackedStringifiedJson, path: String::new(), from: Some(Value::String(s)), to: None };
                        Ok((inner, true, vec![flag]))
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

    fn decide(&self, t: &Tool, mut value: Value, normalized: bool, flags: &mut Vec<Flag>) -> Verdict {
        let mut problems: Vec<Problem> = Vec::new();
        if !t.destructive {
            let mut repair = Repair::new(&t.schema, &self.limits);
            repair.run(&mut value);
            flags.extend(repair.flags.into_iter().map(|f| f.finish()));
            for p in repair.problems {
                let mut segs = p.segs_rev;
                segs.reverse();
                problems.push(Problem { path: to_display(&segs), text: p.text });
            }
        }
        if problems.is_empty() && t.schema.validator.is_valid(&value) {
            let outcome = if flags.is_empty() { Outcome::Passed } else { Outcome::Repaired };
            return Verdict {
                outcome,
                untouched: outcome == Outcome::Passed && !normalized,
                arguments: Some(value),
                flags: std::mem::take(flags),
                message: None,
                reason: None,
            };
        }
        for err in t.schema.validator.iter_errors(&value) {
            problems.extend(problems_of(&err, &value));
        }
        Verdict::rejected(Reason::Invalid, invalid_message(&t.name, &problems))
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

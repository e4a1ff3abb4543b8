//! The gate: compiled once from a config, then answers `check` for every call.

use ahash::AHashMap;

use serde_json::{Map, Value};

use crate::config::Config;
use crate::error::GateError;
use crate::json::parse::{parse_str_info, Limits, ParseError};
use crate::json::depth_of;
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
    max_payload_bytes: usize,
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
        let max_payload_bytes = config.limits.max_payload_bytes;
        let mut tools = Vec::with_capacity(config.tools.len());
        let mut by_name = AHashMap::with_capacity(config.tools.len());
        for t in config.tools {
            let schema_value = t.input_schema.unwrap_or_else(open_object_schema);
            let schema = CompiledSchema::compile(&t.name, &schema_value)?;
            by_name.insert(t.name.clone(), tools.len());
            tools.push(Tool { lower: t.name.to_lowercase(), name: t.name, destructive: t.destructive, schema });
        }
        Ok(Gate { tools, by_name, limits, max_payload_bytes })
    }

    /// Declared tool names, in config order.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.name.as_str())
    }

    /// The refusal for an undeclared tool, naming the closest declared names.
    pub fn unknown(&self, tool: &str) -> Verdict {
        let visible = self.tools.iter().map(|t| (t.name.as_str(), t.lower.as_str()));
        Verdict::rejected(Reason::UnknownTool, unknown_tool_message(tool, visible))
    }

    /// Decides one call: `args` is the raw JSON text the model sent (empty means `{}`).
    pub fn check(&self, tool: &str, args: &str) -> Verdict {
        let Some(t) = self.tool(tool) else {
            return self.unknown(tool);
        };
        if args.trim().is_empty() {
            return self.judge(t, Value::Object(Map::new()), true, Vec::new(), false);
        }
        match parse_str_info(args, &self.limits) {
            Ok((value, info)) => self.check_root(t, value, info.big_integer),
            Err(e) => self.refuse_parse(t, &e),
        }
    }

    /// Decides one call whose arguments arrived already parsed (an object in a payload, such as
    /// Anthropic `input`). `big_integer`: some number in them may lie beyond the i64 range.
    /// The same rules as [`Gate::check`] apply, depth included; size is the caller's to bound.
    pub fn check_value(&self, tool: &str, args: Value, big_integer: bool) -> Verdict {
        let Some(t) = self.tool(tool) else {
            return self.unknown(tool);
        };
        if depth_of(&args) > self.limits.max_depth {
            return self.refuse_parse(t, &ParseError::TooDeep { limit: self.limits.max_depth });
        }
        self.check_root(t, args, big_integer)
    }

    /// Refuses a known tool's call whose arguments failed to parse; unknown tools are refused
    /// as unknown first (pipeline order).
    pub fn refuse_arguments(&self, tool: &str, e: &ParseError) -> Verdict {
        match self.tool(tool) {
            Some(t) => self.refuse_parse(t, e),
            None => self.unknown(tool),
        }
    }

    /// The limits every parse of this gate's input runs under.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The largest whole turn `guard` accepts, in bytes.
    pub fn max_payload_bytes(&self) -> usize {
        self.max_payload_bytes
    }

    /// Whether `tool` is declared.
    pub fn declares(&self, tool: &str) -> bool {
        self.by_name.contains_key(tool)
    }

    fn tool(&self, name: &str) -> Option<&Tool> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    fn refuse_parse(&self, t: &Tool, e: &ParseError) -> Verdict {
        Verdict::rejected(
            Reason::BadArguments,
            format!("Invalid arguments for tool `{}`: {e}. {}", t.name, parse_fix(e)),
        )
    }

    /// Brings the root to an object (`null`/`""` → `{}`, a string holding a JSON object → that
    /// object, flagged), then judges it.
    fn check_root(&self, t: &Tool, value: Value, big_integer: bool) -> Verdict {
        match value {
            Value::Object(_) => self.judge(t, value, false, Vec::new(), big_integer),
            Value::Null => self.judge(t, Value::Object(Map::new()), true, Vec::new(), false),
            Value::String(s) if s.trim().is_empty() => self.judge(t, Value::Object(Map::new()), true, Vec::new(), false),
            Value::String(s) if !t.destructive && s.trim_start().starts_with('{') => match parse_str_info(&s, &self.limits) {
                Ok((inner @ Value::Object(_), info)) => {
                    let flag = Flag { code: FlagCode::UnpackedStringifiedJson, path: String::new(), from: Some(Value::String(s)), to: None };
                    self.judge(t, inner, true, vec![flag], info.big_integer)
                }
                Ok(_) => self.refuse_shape(t, "the arguments must be a JSON object".into()),
                Err(e) => Verdict::rejected(
                    Reason::BadArguments,
                    format!("Invalid arguments for tool `{}`: the arguments are a string holding JSON, and {e}. {}", t.name, parse_fix(&e)),
                ),
            },
            other => self.refuse_shape(
                t,
                format!("the arguments must be a JSON object, got {}", crate::schema::types::type_name(&other)),
            ),
        }
    }

    fn refuse_shape(&self, t: &Tool, what: String) -> Verdict {
        Verdict::rejected(Reason::BadArguments, format!("Invalid arguments for tool `{}`: {what}. {OBJECT_FIX}", t.name))
    }

    /// Validates (and, unless strict, repairs) an object root.
    fn judge(&self, t: &Tool, value: Value, normalized: bool, mut flags: Vec<Flag>, big_integer: bool) -> Verdict {
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
        if !self.declares(tool) {
            return self.unknown(tool);
        }
        let detail: String = detail.chars().take(200).collect();
        Verdict::rejected(
            Reason::BadArguments,
            format!("Invalid arguments for tool `{tool}`: they could not be read as JSON ({detail}). {OBJECT_FIX}"),
        )
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

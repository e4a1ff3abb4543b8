//! What a tool's declaration means in policy terms, compiled once: its action, resource
//! template, argument globs and pins, surface, loop thresholds and taint labels.

use serde_json::{Map, Value};

use super::glob::Glob;
use super::resource::ResourceTemplate;
use crate::config::{LoopConfig, Surface, ToolConfig};
use crate::context::CallContext;
use crate::error::GateError;
use crate::schema::flag::{Flag, FlagCode};
use crate::state::Level;
use crate::verdict::{Reason, Verdict};

/// Where a pinned argument's value comes from.
#[derive(Debug, Clone)]
pub enum Pin {
    /// The caller's subject.
    Subject,
    /// A fact of the caller's identity (`identity.a.b`).
    Identity(Vec<String>),
}

/// One tool's policy declarations, compiled.
#[derive(Debug, Clone)]
pub struct ToolPolicy {
    /// The policy action (the tool name unless declared).
    pub action: String,
    /// The resource template, if declared.
    pub resource: Option<ResourceTemplate>,
    /// `args.<name>.glob`, in name order.
    pub globs: Vec<(String, Glob)>,
    /// `args.<name>.pin`, in name order.
    pub pins: Vec<(String, Pin)>,
    /// Never callable from the visitor surface.
    pub operator: bool,
    /// Needs confirmation unless a rule says otherwise.
    pub writes: bool,
    /// This tool's loop thresholds (else the gate's).
    pub loop_guard: Option<LoopConfig>,
    /// Taint an allowed call raises the session to.
    pub output: Option<Level>,
    /// Highest taint this tool may run under.
    pub sink: Option<Level>,
    /// Shadow mode for this tool (its own `mode`, else the gate's).
    pub shadow: bool,
}

impl ToolPolicy {
    /// Compiles `tools[i]`'s declarations; `labels` is the taint lattice.
    pub fn compile(t: &ToolConfig, i: usize, labels: &[String]) -> Result<ToolPolicy, GateError> {
        let at = |key: &str, msg: String| GateError::Config(format!("config at `tools[{i}].{key}`: {msg}"));
        let label = |key: &str, name: &str| -> Result<Level, GateError> {
            labels
                .iter()
                .position(|l| l == name)
                .map(|p| p as Level)
                .ok_or_else(|| at(key, format!("unknown label `{name}`; `labels` declares [{}]", labels.join(", "))))
        };
        let action = t.action.clone().unwrap_or_else(|| t.name.clone());
        if action.is_empty() || action.chars().any(char::is_control) {
            return Err(at("action", "must be a non-empty name without control characters".into()));
        }
        let resource = match &t.resource {
            Some(r) => Some(ResourceTemplate::compile(r).map_err(|e| at("resource", e))?),
            None => None,
        };
        let mut globs = Vec::new();
        let mut pins = Vec::new();
        for (name, a) in t.args.iter().flatten() {
            if let Some(g) = &a.glob {
                globs.push((name.clone(), Glob::compile(g).map_err(|e| at(&format!("args.{name}.glob"), e.to_string()))?));
            }
            if let Some(p) = &a.pin {
                let pin = match p.as_str() {
                    "subject" => Pin::Subject,
                    other => match other.strip_prefix("identity.") {
                        Some(path) if !path.is_empty() && path.split('.').all(|s| !s.is_empty()) => Pin::Identity(path.split('.').map(str::to_owned).collect()),
                        _ => return Err(at(&format!("args.{name}.pin"), format!("`{other}` is not a pin; use \"subject\" or \"identity.<fact>\""))),
                    },
                };
                pins.push((name.clone(), pin));
            }
        }
        if let Some(l) = t.loop_guard {
            l.check().map_err(|m| at("loop", m))?;
        }
        Ok(ToolPolicy {
            action,
            resource,
            globs,
            pins,
            operator: t.surface == Surface::Operator,
            writes: t.writes,
            loop_guard: t.loop_guard,
            output: t.output.as_ref().map(|o| label("output.label", &o.label)).transpose()?,
            sink: t.sink.as_ref().map(|s| label("sink.maxLabel", &s.max_label)).transpose()?,
            shadow: false,
        })
    }

    /// Sets every pinned argument from the caller, flagging each change (`PinnedArgument`). A
    /// pin the context cannot fill refuses the call (`no_subject`): `Some(refusal)`.
    pub fn apply_pins(&self, tool: &str, args: &mut Map<String, Value>, ctx: &CallContext, flags: &mut Vec<Flag>) -> Option<Verdict> {
        for (name, pin) in &self.pins {
            let value = match pin {
                Pin::Subject => ctx.subject.as_ref().map(|s| Value::String(s.clone())),
                Pin::Identity(path) => identity_fact(ctx, path).filter(|v| !v.is_null()).cloned(),
            };
            let Some(value) = value else {
                let who = match pin {
                    Pin::Subject => "no subject (signed-in user)".to_owned(),
                    Pin::Identity(p) => format!("no identity fact `{}`", p.join(".")),
                };
                return Some(Verdict::denied(
                    Reason::NoSubject,
                    format!(
                        "Cannot run `{tool}`: it acts on behalf of a known user, and this call has {who}. Ask the user to sign in; do not guess an identity."
                    ),
                ));
            };
            let from = args.get(name);
            if from != Some(&value) {
                let from = args.insert(name.clone(), value.clone());
                flags.push(Flag { code: FlagCode::PinnedArgument, path: format!("/{}", pointer_escape(name)), from, to: Some(value) });
            }
        }
        None
    }

    /// Checks `args.<name>.glob`: a present argument must be a string or number matching its
    /// glob, and never holds a `..` path segment, a backslash or a NUL (a tool reading
    /// `reports/../secrets` would leave the glob's scope even though `reports/**` matches the
    /// text). `None` when every glob holds, else the refusal.
    pub fn check_globs(&self, tool: &str, args: &Map<String, Value>, subject: Option<&str>) -> Option<Verdict> {
        for (name, glob) in &self.globs {
            let text = match args.get(name) {
                None => continue,
                Some(Value::String(s)) => std::borrow::Cow::Borrowed(s.as_str()),
                Some(Value::Number(n)) => std::borrow::Cow::Owned(n.to_string()),
                Some(_) => return Some(glob_refusal(tool, name, glob)),
            };
            if text.contains(['\\', '\0']) || text.split('/').any(|seg| seg == "..") {
                return Some(glob_refusal(tool, name, glob));
            }
            match glob.matches_with(&text, subject) {
                Some(true) => {}
                Some(false) => return Some(glob_refusal(tool, name, glob)),
                None => {
                    return Some(Verdict::denied(
                        Reason::NoSubject,
                        format!("Cannot run `{tool}`: argument `{name}` is scoped to the signed-in user, and no user is known here."),
                    ))
                }
            }
        }
        None
    }
}

fn glob_refusal(tool: &str, name: &str, glob: &Glob) -> Verdict {
    Verdict::denied(
        Reason::ArgGlob,
        format!("Cannot run `{tool}`: argument `{name}` must be a string matching `{}`. Use a value inside that scope.", glob.source()),
    )
}

fn identity_fact<'a>(ctx: &'a CallContext, path: &[String]) -> Option<&'a Value> {
    let mut cur: Option<&Value> = None;
    let mut map = ctx.identity.as_ref()?;
    for (i, key) in path.iter().enumerate() {
        let v = map.get(key)?;
        if i + 1 == path.len() {
            cur = Some(v);
        } else {
            map = v.as_object()?;
        }
    }
    cur
}

fn pointer_escape(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

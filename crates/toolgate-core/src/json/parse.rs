//! Strict JSON parsing of untrusted arguments.
//!
//! Guarantees beyond RFC 8259: no duplicate keys (compared after unescaping, so `{"a":1,"\u0061":2}`
//! is refused), no prototype keys unless allowed (`__proto__`, and `constructor` holding a
//! `prototype` member), a bounded size and nesting depth, and only finite numbers. A validator and
//! a tool therefore never see different values, and no JavaScript tool behind the gate can be
//! prototype-polluted through it.

use std::cell::{Cell, RefCell};
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};

use super::hazards::case_twins;
use super::pointer::Seg;
use crate::dialect::members::{self, KeyCase};

/// The largest integer every JSON consumer represents exactly (JavaScript's
/// `Number.MAX_SAFE_INTEGER`).
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Hard ceiling for nesting, below serde_json's own recursion guard, so the configured limit
/// is always the one that answers.
pub const MAX_DEPTH_CEILING: usize = 120;

/// Bounds applied to every parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Deepest nesting of arrays and objects (the root object is depth 1).
    pub max_depth: usize,
    /// Largest input, in UTF-8 bytes.
    pub max_bytes: usize,
    /// Let `__proto__` / `constructor.prototype` keys through as plain data.
    pub allow_proto_keys: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_depth: 64, max_bytes: 1 << 20, allow_proto_keys: false }
    }
}

/// Why a text was refused. Each renders as one model-readable sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// Larger than `max_bytes`.
    TooLarge {
        /// The input's size.
        bytes: usize,
        /// The configured limit.
        limit: usize,
    },
    /// Nested deeper than `max_depth`.
    TooDeep {
        /// The configured limit.
        limit: usize,
    },
    /// The same key twice in one object.
    DuplicateKey {
        /// The repeated key, unescaped.
        key: String,
    },
    /// A prototype-polluting key.
    ProtoKey {
        /// `__proto__` or `constructor.prototype`.
        key: String,
    },
    /// A number that is not a finite f64.
    NonFinite,
    /// An integer literal beyond ±(2^53 − 1), which a JavaScript tool would receive rounded
    /// (found after the parse: see `json::hazards`).
    UnsafeInteger {
        /// The integer as written.
        value: String,
        /// Where it is, for display.
        at: String,
    },
    /// Two keys of one object equal under Unicode case folding (found after the parse).
    CaseTwinKeys {
        /// The first key, in key order.
        first: String,
        /// Its twin.
        second: String,
        /// The object holding them, for display.
        at: String,
    },
    /// Not valid JSON (including invalid UTF-8), with 1-based position.
    Syntax {
        /// What the parser expected or found.
        detail: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::TooLarge { bytes, limit } => {
                write!(f, "the arguments are {bytes} bytes, over the limit of {limit} bytes")
            }
            ParseError::TooDeep { limit } => {
                write!(f, "the arguments are nested deeper than {limit} levels")
            }
            ParseError::DuplicateKey { key } => write!(f, "the key {} appears twice in one object", quote(key)),
            ParseError::ProtoKey { key } => write!(f, "the key {} is not allowed", quote(key)),
            ParseError::NonFinite => write!(f, "a number is out of range (NaN, Infinity and values beyond 64-bit floats are not allowed)"),
            ParseError::UnsafeInteger { value, at } => {
                write!(f, "the integer {value} at `{at}` is beyond ±9007199254740991, which tools written in JavaScript cannot receive exactly")
            }
            ParseError::CaseTwinKeys { first, second, at } => {
                write!(f, "the keys {} and {} in `{at}` differ only by letter case", quote(first), quote(second))
            }
            ParseError::Syntax { detail, line, column } => {
                write!(f, "the arguments are not valid JSON ({detail} at line {line}, column {column})")
            }
        }
    }
}

fn quote(s: &str) -> String {
    let mut q = serde_json::to_string(s).unwrap_or_default();
    if q.len() > 60 {
        let mut cut = 56;
        while !q.is_char_boundary(cut) {
            cut -= 1;
        }
        q.truncate(cut);
        q.push_str("…\"");
    }
    q
}

/// Whether an integral float lies outside the i64 range (where "integer" stops being exact).
pub(crate) fn beyond_i64(f: f64) -> bool {
    f.fract() == 0.0 && !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f)
}

/// What a successful parse noticed on the way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParseInfo {
    /// Some integral number lies beyond ±(2^53 − 1): an integer literal a JavaScript tool cannot
    /// receive exactly, or an integral float beyond the i64 range (it may still be a valid `number`).
    pub big_integer: bool,
}

/// Parses `text` strictly under `limits`.
pub fn parse_str(text: &str, limits: &Limits) -> Result<Value, ParseError> {
    parse_str_info(text, limits).map(|(v, _)| v)
}

/// Parses `text` strictly under `limits`, also reporting what it noticed. Text is read as the
/// `&str` it is (serde_json's `StrRead`): its UTF-8 is not validated a second time.
pub fn parse_str_info(text: &str, limits: &Limits) -> Result<(Value, ParseInfo), ParseError> {
    parse_with(serde_json::de::StrRead::new(text), text.len(), limits)
}

/// Parses UTF-8 bytes strictly under `limits`; invalid UTF-8 is a syntax error.
pub fn parse_slice(bytes: &[u8], limits: &Limits) -> Result<Value, ParseError> {
    parse_with(serde_json::de::SliceRead::new(bytes), bytes.len(), limits).map(|(v, _)| v)
}

fn parse_with<'de, R: serde_json::de::Read<'de>>(read: R, len: usize, limits: &Limits) -> Result<(Value, ParseInfo), ParseError> {
    if len > limits.max_bytes {
        return Err(ParseError::TooLarge { bytes: len, limit: limits.max_bytes });
    }
    let state = State::new(limits, None);
    let (value, state) = run(read, state)?;
    Ok((value, ParseInfo { big_integer: state.big_integer.get() }))
}

fn run<'de, 'a, R: serde_json::de::Read<'de>>(read: R, state: State<'a>) -> Result<(Value, State<'a>), ParseError> {
    let mut de = serde_json::Deserializer::new(read);
    let seed = ValueSeed { depth: 0, state: &state, path: None };
    let result = seed.deserialize(&mut de).and_then(|v| de.end().map(|()| v));
    match result {
        Ok(v) => Ok((v, state)),
        Err(e) => Err(match state.failure.take() {
            Some(kind) => kind,
            None => classify(&e),
        }),
    }
}

/// Extra nesting a payload's envelope may add around arguments (a chat completion holds its
/// arguments five levels down; an MCP batch six).
pub const ENVELOPE_DEPTH: usize = 12;

/// A whole model turn, parsed strictly, with what the parse noticed on the way.
#[derive(Debug, Clone, Default)]
pub struct ParsedPayload {
    /// The payload (duplicate keys keep their first value; prototype keys are left out).
    pub value: Value,
    /// Some integral number lies beyond the i64 range.
    pub big_integer: bool,
    /// Duplicate and prototype keys, each with the path of the offending key. The caller decides
    /// whether a problem lies inside one call's arguments (that call is refused) or in the
    /// envelope (the payload is broken).
    pub problems: Vec<(Vec<Seg>, ParseError)>,
    /// Some key is a member name a codec reads spelled with other letter case (`Tool_Calls`), or
    /// some object holds two keys equal under case folding. Noticed only: the caller finds where
    /// (`dialect::members::find`), since such keys are allowed inside a call's arguments.
    pub case_keys: bool,
}

/// Parses a whole model turn under `limits` (size bounded by `max_payload_bytes`, depth by the
/// arguments limit plus [`ENVELOPE_DEPTH`]). Unlike [`parse_str`], duplicate and prototype keys do
/// not end the parse: they are recorded with their path so one broken call does not hide the
/// turn's other calls. Syntax errors, size, depth and non-finite numbers still fail.
pub fn parse_payload(text: &str, limits: &Limits, max_payload_bytes: usize) -> Result<ParsedPayload, ParseError> {
    if text.len() > max_payload_bytes {
        return Err(ParseError::TooLarge { bytes: text.len(), limit: max_payload_bytes });
    }
    let wide = Limits { max_depth: (limits.max_depth + ENVELOPE_DEPTH).min(PAYLOAD_DEPTH_CEILING), max_bytes: max_payload_bytes, ..*limits };
    let problems = RefCell::new(Vec::new());
    let state = State::new(&wide, Some(&problems));
    let (value, state) = run(serde_json::de::StrRead::new(text), state)?;
    let (big_integer, case_keys) = (state.big_integer.get(), state.case_keys.get());
    drop(state);
    Ok(ParsedPayload { value, big_integer, problems: problems.into_inner(), case_keys })
}

/// Below serde_json's own recursion limit (128), so ours always answers first.
const PAYLOAD_DEPTH_CEILING: usize = 124;

fn classify(e: &serde_json::Error) -> ParseError {
    let text = e.to_string();
    if text.starts_with("number out of range") {
        return ParseError::NonFinite;
    }
    let detail = match text.find(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    };
    ParseError::Syntax { detail, line: e.line(), column: e.column() }
}

type Problems = RefCell<Vec<(Vec<Seg>, ParseError)>>;

struct State<'a> {
    limits: &'a Limits,
    failure: Cell<Option<ParseError>>,
    big_integer: Cell<bool>,
    /// Payload mode: a key looks like a member under case folding (see [`ParsedPayload::case_keys`]).
    case_keys: Cell<bool>,
    /// Payload mode: key problems are recorded here instead of failing the parse.
    record: Option<&'a Problems>,
}

impl<'a> State<'a> {
    fn new(limits: &'a Limits, record: Option<&'a Problems>) -> Self {
        State { limits, failure: Cell::new(None), big_integer: Cell::new(false), case_keys: Cell::new(false), record }
    }

    /// Fails the parse, or in payload mode records the problem at `path` and goes on.
    fn key_problem<E: de::Error>(&self, path: Option<&PathNode<'_>>, kind: ParseError) -> Result<(), E> {
        match self.record {
            Some(list) => {
                list.borrow_mut().push((PathNode::collect(path), kind));
                Ok(())
            }
            None => Err(self.fail(kind)),
        }
    }
    /// Payload mode: notes an object holding a key that looks like a member under case folding,
    /// or two keys equal under folding (see [`ParsedPayload::case_keys`]). Out of line, after the
    /// object is read, so the parse loop itself is unchanged.
    #[inline(never)]
    fn note_keys(&self, m: &Map<String, Value>) {
        let mut cased = false;
        for k in m.keys() {
            match members::classify(k) {
                KeyCase::Plain => {}
                KeyCase::Cased => cased = true,
                KeyCase::Variant => {
                    self.case_keys.set(true);
                    return;
                }
            }
        }
        if cased && case_twins(m).is_some() {
            self.case_keys.set(true);
        }
    }
    fn fail<E: de::Error>(&self, kind: ParseError) -> E {
        let msg = kind.to_string();
        self.failure.set(Some(kind));
        E::custom(msg)
    }
}

/// The path to the value being parsed, as a chain of stack frames (built only by reference).
struct PathNode<'p> {
    parent: Option<&'p PathNode<'p>>,
    key: Option<&'p str>,
    index: usize,
}

impl PathNode<'_> {
    fn collect(mut node: Option<&PathNode<'_>>) -> Vec<Seg> {
        let mut segs = Vec::new();
        while let Some(n) = node {
            segs.push(match n.key {
                Some(k) => Seg::Key(k.to_owned()),
                None => Seg::Index(n.index),
            });
            node = n.parent;
        }
        segs.reverse();
        segs
    }
}

#[derive(Clone, Copy)]
struct ValueSeed<'s, 'a, 'p> {
    depth: usize,
    state: &'s State<'a>,
    path: Option<&'p PathNode<'p>>,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_, '_, '_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_, '_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        if v.unsigned_abs() > MAX_SAFE_INTEGER {
            self.state.big_integer.set(true);
        }
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        if v > MAX_SAFE_INTEGER {
            self.state.big_integer.set(true);
        }
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        if beyond_i64(v) {
            self.state.big_integer.set(true);
        }
        match Number::from_f64(v) {
            Some(n) => Ok(Value::Number(n)),
            None => Err(self.state.fail(ParseError::NonFinite)),
        }
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let inner = self.enter()?;
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        loop {
            let node = PathNode { parent: self.path, key: None, index: out.len() };
            let seed = ValueSeed { path: Some(&node), ..inner };
            match seq.next_element_seed(seed)? {
                Some(v) => out.push(v),
                None => break,
            }
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let inner = self.enter()?;
        let mut out = Map::with_capacity(8);
        while let Some(key) = map.next_key::<String>()? {
            let value = {
                let node = PathNode { parent: self.path, key: Some(&key), index: 0 };
                let seed = ValueSeed { path: Some(&node), ..inner };
                if !self.state.limits.allow_proto_keys && key == "__proto__" {
                    self.state.key_problem(Some(&node), ParseError::ProtoKey { key: key.clone() })?;
                    map.next_value_seed(seed)?; // payload mode: left out
                    continue;
                }
                let value = map.next_value_seed(seed)?;
                if !self.state.limits.allow_proto_keys && key == "constructor" && value.as_object().is_some_and(|o| o.contains_key("prototype")) {
                    self.state.key_problem(Some(&node), ParseError::ProtoKey { key: "constructor.prototype".into() })?;
                    continue;
                }
                value
            };
            // one hash per key: a duplicate is found where it would be inserted
            match out.entry(key) {
                Entry::Vacant(slot) => {
                    slot.insert(value);
                }
                Entry::Occupied(first) => {
                    // payload mode: the first value stays
                    let node = PathNode { parent: self.path, key: Some(first.key()), index: 0 };
                    self.state.key_problem(Some(&node), ParseError::DuplicateKey { key: first.key().clone() })?;
                }
            }
        }
        // payload mode only, and only until the first such key: the caller walks the payload then
        if self.state.record.is_some() && !self.state.case_keys.get() {
            self.state.note_keys(&out);
        }
        Ok(Value::Object(out))
    }
}

impl<'s, 'a, 'p> ValueSeed<'s, 'a, 'p> {
    fn enter<E: de::Error>(self) -> Result<Self, E> {
        let depth = self.depth + 1;
        let ceiling = if self.state.record.is_some() { PAYLOAD_DEPTH_CEILING } else { MAX_DEPTH_CEILING };
        let limit = self.state.limits.max_depth.min(ceiling);
        if depth > limit {
            return Err(self.state.fail(ParseError::TooDeep { limit }));
        }
        Ok(ValueSeed { depth, ..self })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(s: &str) -> Result<Value, ParseError> {
        parse_str(s, &Limits::default())
    }

    #[test]
    fn parses_plain_json_in_key_order() {
        let v = p(r#"{"b":1,"a":[true,null,"x",-2.5]}"#).unwrap();
        assert_eq!(v, json!({"b":1,"a":[true,null,"x",-2.5]}));
        assert_eq!(v.as_object().unwrap().keys().collect::<Vec<_>>(), ["b", "a"]);
    }

    #[test]
    fn duplicate_keys_are_refused_even_when_escaped() {
        assert_eq!(p(r#"{"a":1,"a":2}"#), Err(ParseError::DuplicateKey { key: "a".into() }));
        assert_eq!(p(r#"{"a":1,"\u0061":2}"#), Err(ParseError::DuplicateKey { key: "a".into() }));
        assert!(matches!(p(r#"{"x":{"k":1,"k":1}}"#), Err(ParseError::DuplicateKey { .. })));
    }

    #[test]
    fn prototype_keys_are_refused_unless_allowed() {
        assert!(matches!(p(r#"{"__proto__":{"admin":true}}"#), Err(ParseError::ProtoKey { .. })));
        assert!(matches!(p(r#"{"a":[{"\u005f_proto__":1}]}"#), Err(ParseError::ProtoKey { .. })));
        assert!(matches!(p(r#"{"constructor":{"prototype":{}}}"#), Err(ParseError::ProtoKey { .. })));
        assert!(p(r#"{"constructor":"a string is fine"}"#).is_ok());
        let open = Limits { allow_proto_keys: true, ..Limits::default() };
        assert!(parse_str(r#"{"__proto__":{"admin":true}}"#, &open).is_ok());
    }

    #[test]
    fn depth_and_size_are_bounded() {
        let deep = "[".repeat(65) + &"]".repeat(65);
        assert_eq!(p(&deep), Err(ParseError::TooDeep { limit: 64 }));
        let ok = "[".repeat(64) + &"]".repeat(64);
        assert!(p(&ok).is_ok());
        let huge = "[".repeat(100_000);
        assert!(matches!(p(&huge), Err(ParseError::TooDeep { .. })));
        let small = Limits { max_bytes: 8, ..Limits::default() };
        assert_eq!(parse_str(r#"{"a":"long"}"#, &small), Err(ParseError::TooLarge { bytes: 12, limit: 8 }));
        let unbounded = Limits { max_depth: 10_000, ..Limits::default() };
        assert!(parse_str(&deep.repeat(2), &unbounded).is_err());
    }

    #[test]
    fn non_finite_and_malformed_numbers_are_refused() {
        assert_eq!(p(r#"{"a":1e400}"#), Err(ParseError::NonFinite));
        assert!(matches!(p(r#"{"a":NaN}"#), Err(ParseError::Syntax { .. })));
        assert!(matches!(p(r#"{"a":Infinity}"#), Err(ParseError::Syntax { .. })));
        assert!(matches!(p(r#"{"a":-}"#), Err(ParseError::Syntax { .. })));
    }

    #[test]
    fn numbers_are_read_as_the_nearest_double_as_hosts_read_them() {
        // the values JavaScript's JSON.parse and Python's json.loads give (correctly rounded);
        // serde_json's default parser reads each one unit in the last place lower
        for (text, nearest) in [
            ("2.034415605924831064403", 2.0344156059248313),
            ("4540119328.070877816473e-8", 45.40119328070878),
            ("3.295123870185882130e-7", 3.295123870185882e-7),
            ("7720384.35814304490241e-7", 0.7720384358143045),
        ] {
            let v = p(&format!(r#"{{"a":{text}}}"#)).unwrap();
            assert_eq!(v["a"].as_f64().map(f64::to_bits), Some(f64::to_bits(nearest)), "{text}");
            assert_eq!(Some(nearest), text.parse().ok(), "{text}: Rust's own parse is correctly rounded");
        }
    }

    #[test]
    fn big_integers_are_noticed() {
        let l = Limits::default();
        assert!(!parse_str_info(r#"{"a":9007199254740991,"b":-1.5e3,"c":-9007199254740991}"#, &l).unwrap().1.big_integer);
        assert!(parse_str_info(r#"{"a":9223372036854775807}"#, &l).unwrap().1.big_integer);
        assert!(parse_str_info(r#"{"a":-9007199254740992}"#, &l).unwrap().1.big_integer);
        assert!(parse_str_info(r#"{"a":9223372036854775808}"#, &l).unwrap().1.big_integer);
        assert!(parse_str_info(r#"{"a":[1e19]}"#, &l).unwrap().1.big_integer);
    }

    #[test]
    fn payload_mode_records_key_problems_with_their_path() {
        let text = r#"{"content":[{"input":{"a":1,"a":2}},{"input":{"__proto__":{}}}],"x":1}"#;
        let parsed = parse_payload(text, &Limits::default(), 1 << 20).unwrap();
        assert_eq!(parsed.value, serde_json::json!({"content":[{"input":{"a":1}},{"input":{}}],"x":1}));
        let k = |s: &str| Seg::Key(s.into());
        assert_eq!(parsed.problems[0], (vec![k("content"), Seg::Index(0), k("input"), k("a")], ParseError::DuplicateKey { key: "a".into() }));
        assert_eq!(parsed.problems[1].0, vec![k("content"), Seg::Index(1), k("input"), k("__proto__")]);
        assert!(!parsed.case_keys);
        let flagged = |t: &str| parse_payload(t, &Limits::default(), 1 << 20).unwrap().case_keys;
        assert!(flagged(r#"{"choices":[{"message":{"Tool_Calls":[]}}]}"#));
        assert!(flagged(r#"{"x":{"Path":1,"path":2}}"#));
        assert!(flagged(r#"{"tool_call\u017f":[]}"#));
        assert!(!flagged(r#"{"functionCall":{"args":{"Path":1}},"toolCallId":"a"}"#));
        assert!(matches!(parse_payload("{\"a\":", &Limits::default(), 1 << 20), Err(ParseError::Syntax { .. })));
        assert!(matches!(parse_payload("[1,2]", &Limits::default(), 3), Err(ParseError::TooLarge { .. })));
        let deep = "[".repeat(77) + &"]".repeat(77);
        assert!(parse_payload(&deep, &Limits::default(), 1 << 20).is_err());
        let ok = "[".repeat(76) + &"]".repeat(76);
        assert!(parse_payload(&ok, &Limits::default(), 1 << 20).is_ok());
    }

    #[test]
    fn syntax_errors_carry_a_position() {
        match p("{\"query\":\"x\",\"limit\":") {
            Err(ParseError::Syntax { line, column, .. }) => assert_eq!((line, column), (1, 21)),
            other => panic!("{other:?}"),
        }
        assert!(matches!(p(r#"{"a":1} trailing"#), Err(ParseError::Syntax { .. })));
        assert!(matches!(parse_slice(b"{\"a\":\"\xff\"}", &Limits::default()), Err(ParseError::Syntax { .. })));
    }
}

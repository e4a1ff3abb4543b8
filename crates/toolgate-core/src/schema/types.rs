//! JSON Schema `type` sets as a bitmask, with JSON-Schema semantics (1.0 is an integer).

use serde_json::Value;

/// A set of JSON Schema types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TypeSet(pub u8);

impl TypeSet {
    /// `null`
    pub const NULL: u8 = 1;
    /// `boolean`
    pub const BOOLEAN: u8 = 2;
    /// `integer`
    pub const INTEGER: u8 = 4;
    /// `number`
    pub const NUMBER: u8 = 8;
    /// `string`
    pub const STRING: u8 = 16;
    /// `array`
    pub const ARRAY: u8 = 32;
    /// `object`
    pub const OBJECT: u8 = 64;

    /// Parses one type name; unknown names give `None`.
    pub fn bit(name: &str) -> Option<u8> {
        Some(match name {
            "null" => Self::NULL,
            "boolean" => Self::BOOLEAN,
            "integer" => Self::INTEGER,
            "number" => Self::NUMBER,
            "string" => Self::STRING,
            "array" => Self::ARRAY,
            "object" => Self::OBJECT,
            _ => return None,
        })
    }

    /// Whether the set holds this type bit.
    pub fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }

    /// Whether `v` is of one of these types (`number` admits integers, `integer` admits
    /// integral floats).
    pub fn admits(self, v: &Value) -> bool {
        match v {
            Value::Null => self.has(Self::NULL),
            Value::Bool(_) => self.has(Self::BOOLEAN),
            Value::String(_) => self.has(Self::STRING),
            Value::Array(_) => self.has(Self::ARRAY),
            Value::Object(_) => self.has(Self::OBJECT),
            Value::Number(n) => {
                self.has(Self::NUMBER) || (self.has(Self::INTEGER) && (n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)))
            }
        }
    }

    /// Names of the types, in a fixed order, for messages: `integer or null`.
    pub fn describe(self) -> String {
        let names: Vec<&str> = [
            (Self::OBJECT, "object"),
            (Self::ARRAY, "array"),
            (Self::STRING, "string"),
            (Self::INTEGER, "integer"),
            (Self::NUMBER, "number"),
            (Self::BOOLEAN, "boolean"),
            (Self::NULL, "null"),
        ]
        .iter()
        .filter(|(b, _)| self.has(*b))
        .map(|(_, n)| *n)
        .collect();
        names.join(" or ")
    }
}

/// The JSON type name of a value, as a model would read it.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

//! The condition language of rule and persona `when` clauses (docs/conditions.md): compiled
//! once at config load, evaluated on every call against a [`Scope`] with three-valued logic.
//!
//! ```text
//! roles has 'verifier' and purpose == 'audit'
//! identity.tenant == context.tenant and not (args.amount > 100)
//! now.weekday in [1, 2, 3, 4, 5] and now.hour >= 9 and now.hour < 17
//! resource matches 'file:reports/**'
//! ```
//!
//! Why a hand-written lexer and recursive-descent parser (`lex.rs`, `parse.rs`) rather than a
//! parser generator: the language is a dozen tokens; errors must name line and column in words
//! an operator can act on; depth and list sizes are bounded while parsing (config files are
//! attacker-shaped); and type errors are found at load (`check.rs`). The `condition` fuzz target
//! runs the parser and the evaluator on arbitrary text.

mod ast;
mod check;
mod eval;
mod lex;
mod parse;
#[cfg(test)]
mod tests;
mod time;

use thiserror::Error;

use super::scope::Scope;

/// The longest condition accepted, in characters.
pub const MAX_SOURCE_CHARS: usize = 4096;
/// The deepest nesting of parentheses and `not` accepted.
pub const MAX_DEPTH: usize = 32;
/// The most values a list literal may hold.
pub const MAX_LIST: usize = 256;

/// A condition that does not parse: where (1-based line and column, columns counted in
/// characters) and what was expected or found.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("line {line}, column {column}: {message}")]
pub struct ConditionError {
    /// 1-based line of the offending token.
    pub line: usize,
    /// 1-based column, in characters, of the offending token.
    pub column: usize,
    /// What was expected or found, naming the token.
    pub message: String,
}

/// The outcome of a three-valued evaluation. `Unknown` arises only while listing tools
/// (`Scope::listing`), where `args.*` and `resource` are not known yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Truth {
    /// Holds.
    True,
    /// Does not hold (a missing fact never satisfies a comparison).
    False,
    /// Depends on values not known yet.
    Unknown,
}

impl From<bool> for Truth {
    fn from(b: bool) -> Truth {
        if b {
            Truth::True
        } else {
            Truth::False
        }
    }
}

impl std::ops::Not for Truth {
    type Output = Truth;

    /// Kleene negation: `not Unknown` is `Unknown`.
    fn not(self) -> Truth {
        match self {
            Truth::True => Truth::False,
            Truth::False => Truth::True,
            Truth::Unknown => Truth::Unknown,
        }
    }
}

impl Truth {
    /// Kleene conjunction: `False` wins, then `Unknown`.
    pub fn and(self, other: Truth) -> Truth {
        match (self, other) {
            (Truth::False, _) | (_, Truth::False) => Truth::False,
            (Truth::Unknown, _) | (_, Truth::Unknown) => Truth::Unknown,
            _ => Truth::True,
        }
    }

    /// Kleene disjunction: `True` wins, then `Unknown`.
    pub fn or(self, other: Truth) -> Truth {
        !(!self).and(!other)
    }
}

/// A compiled condition. Immutable and `Send + Sync`; evaluation allocates nothing.
#[derive(Debug, Clone)]
pub struct Condition {
    source: Box<str>,
    root: ast::Node,
    reads_call: bool,
}

impl Condition {
    /// Parses and checks `src`: unknown names, malformed literals (strings, numbers, dates,
    /// globs), operators applied to types that can never satisfy them, more than
    /// [`MAX_SOURCE_CHARS`] characters, nesting deeper than [`MAX_DEPTH`] and lists longer than
    /// [`MAX_LIST`] are all errors located at the offending token.
    pub fn parse(src: &str) -> Result<Condition, ConditionError> {
        if let Some((at, _)) = src.char_indices().nth(MAX_SOURCE_CHARS) {
            let before = &src[..at];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            return Err(ConditionError { line, column, message: format!("condition is longer than {MAX_SOURCE_CHARS} characters") });
        }
        let toks = lex::lex(src)?;
        let mut p = parse::Parser { src, toks, pos: 0, depth: 0, reads_call: false };
        let root = p.condition()?;
        Ok(Condition { source: src.into(), root, reads_call: p.reads_call })
    }

    /// Evaluates against `scope`. A decision allows only on [`Truth::True`]; tool listing keeps
    /// a tool unless the result is [`Truth::False`]. Never panics, never allocates.
    pub fn eval(&self, scope: &Scope<'_>) -> Truth {
        eval::eval(&self.root, scope, eval::Mode::Lenient)
    }

    /// Evaluates a deny rule's condition: a comparison that cannot be decided — a missing value,
    /// or types that never compare (`args.amount > 1000` for `"5000"`) — is [`Truth::Unknown`]
    /// instead of false, and a deny applies unless its condition is [`Truth::False`] (fails
    /// closed). Bare names stay flags: absent or `null` is false.
    pub fn eval_deny(&self, scope: &Scope<'_>) -> Truth {
        eval::eval(&self.root, scope, eval::Mode::Strict)
    }

    /// True iff the condition reads a fact that exists only for a call: `args.*`, `tool`,
    /// `action` or `resource` (personas, evaluated before any call, must not).
    pub fn reads_call(&self) -> bool {
        self.reads_call
    }

    /// The condition as written.
    pub fn source(&self) -> &str {
        &self.source
    }
}
